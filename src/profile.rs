//! `--profile FILE`: per-phase counters of one run, written as JSON for `hw-model` through its own
//! types (`hw_model::profile`, the one definition of the format in `hw-model/PROFILE.md`).
//!
//! Off by default: [`phase`] then returns an inert guard and [`add`] is one relaxed load and a
//! branch, made per batch or per phase, never per record. On, every phase guard reads two clocks
//! (the thread's and the process's CPU time) at its start and end, and the counters are atomics
//! indexed by phase, so worker threads may add to them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use hw_model::profile as schema;

use crate::error::Error;

/// The phases every command reports, named the same across commands (`hw-model/PROFILE.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Read,
    Filter,
    Collate,
    Pair,
    Sort,
    Spill,
    Merge,
    Key,
    Decide,
    Write,
}

const PHASES: [Phase; 10] = [
    Phase::Read,
    Phase::Filter,
    Phase::Collate,
    Phase::Pair,
    Phase::Sort,
    Phase::Spill,
    Phase::Merge,
    Phase::Key,
    Phase::Decide,
    Phase::Write,
];

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Filter => "filter",
            Phase::Collate => "collate",
            Phase::Pair => "pair",
            Phase::Sort => "sort",
            Phase::Spill => "spill",
            Phase::Merge => "merge",
            Phase::Key => "key",
            Phase::Decide => "decide",
            Phase::Write => "write",
        }
    }

    /// What the work is, for the model's rate and eligibility tables.
    fn kind(self, run: &RunInfo) -> &'static str {
        match self {
            Phase::Read if run.input_format == "bam" => "inflate_parse",
            Phase::Read => "parse",
            Phase::Filter => "filter",
            Phase::Collate | Phase::Sort => "sort",
            Phase::Pair => "mate_pair",
            Phase::Spill | Phase::Write if run.output_format == "bam" && run.level != 0 => {
                "format_deflate"
            }
            Phase::Spill | Phase::Write => "format",
            Phase::Merge => "merge",
            Phase::Key => "dup_key",
            Phase::Decide => "dup_lookup",
        }
    }
}

/// What a phase counts besides time.
#[derive(Clone, Copy, Debug)]
pub enum Counter {
    BytesRead,
    BytesInflated,
    BytesDeflated,
    BytesWritten,
    Records,
    /// Data-dependent lookups: hash probes, mate lookups, record dereferences by a comparator.
    RandomAccesses,
}

const COUNTERS: usize = 6;

/// One phase's totals, summed over every time it was entered.
struct Slot {
    /// Order of first entry, 1-based; 0 = never entered.
    first_entry: AtomicU64,
    wall_ns: AtomicU64,
    thread_cpu_ns: AtomicU64,
    process_cpu_ns: AtomicU64,
    allocations: AtomicU64,
    peak_rss: AtomicU64,
    counters: [AtomicU64; COUNTERS],
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            first_entry: AtomicU64::new(0),
            wall_ns: AtomicU64::new(0),
            thread_cpu_ns: AtomicU64::new(0),
            process_cpu_ns: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            peak_rss: AtomicU64::new(0),
            counters: [const { AtomicU64::new(0) }; COUNTERS],
        }
    }
}

static ON: AtomicBool = AtomicBool::new(false);
static ENTRIES: AtomicU64 = AtomicU64::new(0);
static SLOTS: [Slot; PHASES.len()] = [const { Slot::new() }; PHASES.len()];
static RUN: Mutex<Option<Recording>> = Mutex::new(None);

/// What the driver of a command knows about its run (the profile's run header).
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The pool size: samtools' `-@` plus one.
    pub threads: usize,
    pub level: i32,
    pub input: String,
    pub output: String,
    /// `"sam"`, `"bam"` or `"none"`.
    pub input_format: &'static str,
    pub output_format: &'static str,
    /// Phases overlap in time (`view`, `fixmate`) rather than follow each other.
    pub streaming: bool,
    /// The memory budget past which the command spills to temporary files (0: it has none);
    /// hw-model needs it to tell whether a larger input would spill.
    pub memory_budget: u64,
}

impl RunInfo {
    /// A run whose phases follow each other (load all, process, write).
    pub fn staged(
        threads: usize,
        level: i32,
        (input, output): (&str, &str),
        (input_format, output_format): (&'static str, &'static str),
    ) -> RunInfo {
        RunInfo {
            threads,
            level,
            input: input.to_string(),
            output: output.to_string(),
            input_format,
            output_format,
            streaming: false,
            memory_budget: 0,
        }
    }

    /// The same run, spilling past `budget` bytes (`None`: it never spills).
    pub fn budgeted(self, budget: Option<u64>) -> RunInfo {
        RunInfo { memory_budget: budget.unwrap_or(0), ..self }
    }

    /// A run with overlapping phases (batches flow through read → process → write).
    pub fn streamed(
        threads: usize,
        level: i32,
        paths: (&str, &str),
        formats: (&'static str, &'static str),
    ) -> RunInfo {
        RunInfo { streaming: true, ..RunInfo::staged(threads, level, paths, formats) }
    }
}

struct Recording {
    path: String,
    command: String,
    argv: Vec<String>,
    started: Instant,
    process_cpu_start: u64,
    run: RunInfo,
}

/// Whether this run is being profiled.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Starts profiling the command `command` run as `argv`; the profile goes to `path` at [`finish`].
pub fn start(path: &str, command: &str, argv: &[String]) {
    crate::alloc::count_allocations(true);
    *RUN.lock().unwrap_or_else(|e| e.into_inner()) = Some(Recording {
        path: path.to_string(),
        command: command.to_string(),
        argv: argv.to_vec(),
        started: Instant::now(),
        process_cpu_start: cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID),
        run: RunInfo::default(),
    });
    ON.store(true, Ordering::Relaxed);
}

/// Records the run header's facts (called by each command's driver).
pub fn describe(run: RunInfo) {
    if !on() {
        return;
    }
    if let Some(r) = RUN.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        r.run = run;
    }
}

/// Adds `n` to a phase's counter.
#[inline]
pub fn add(phase: Phase, counter: Counter, n: u64) {
    if on() {
        SLOTS[phase as usize].counters[counter as usize].fetch_add(n, Ordering::Relaxed);
    }
}

thread_local! {
    /// The phase this thread is timing, if any.
    static ACTIVE: std::cell::Cell<Option<Phase>> = const { std::cell::Cell::new(None) };
}

/// The phase this thread is timing, else `default`: shared code (a reader used by `merge` to
/// read spilled runs back) counts its work to the phase it runs in.
pub fn current_or(default: Phase) -> Phase {
    ACTIVE.with(|a| a.get()).unwrap_or(default)
}

/// Times a phase until the guard is dropped. The thread holding the guard is the phase's
/// serial part; the rest of the process's CPU time meanwhile is its pool part. Inside another
/// phase on the same thread the guard is inert: the outer phase owns that time.
#[must_use]
pub fn phase(phase: Phase) -> PhaseGuard {
    if !on() || ACTIVE.with(|a| a.get()).is_some() {
        return PhaseGuard { phase, start: None };
    }
    ACTIVE.with(|a| a.set(Some(phase)));
    let slot = &SLOTS[phase as usize];
    if slot.first_entry.load(Ordering::Relaxed) == 0 {
        let order = ENTRIES.fetch_add(1, Ordering::Relaxed) + 1;
        let _ = slot.first_entry.compare_exchange(0, order, Ordering::Relaxed, Ordering::Relaxed);
    }
    PhaseGuard {
        phase,
        start: Some(Start {
            wall: Instant::now(),
            thread_cpu: cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID),
            process_cpu: cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID),
            allocations: crate::alloc::allocations(),
        }),
    }
}

struct Start {
    wall: Instant,
    thread_cpu: u64,
    process_cpu: u64,
    allocations: u64,
}

pub struct PhaseGuard {
    phase: Phase,
    start: Option<Start>,
}

impl Drop for PhaseGuard {
    fn drop(&mut self) {
        let Some(s) = self.start.take() else { return };
        ACTIVE.with(|a| a.set(None));
        let slot = &SLOTS[self.phase as usize];
        let add = |a: &AtomicU64, v: u64| a.fetch_add(v, Ordering::Relaxed);
        add(&slot.wall_ns, s.wall.elapsed().as_nanos() as u64);
        add(
            &slot.thread_cpu_ns,
            cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(s.thread_cpu),
        );
        add(
            &slot.process_cpu_ns,
            cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(s.process_cpu),
        );
        add(&slot.allocations, crate::alloc::allocations().saturating_sub(s.allocations));
        slot.peak_rss.fetch_max(peak_rss_bytes(), Ordering::Relaxed);
    }
}

/// Writes the profile, if one is being recorded. Called once at the end of a command, also
/// after an error (the phases that ran are still worth having).
pub fn finish() -> Result<(), Error> {
    if !on() {
        return Ok(());
    }
    ON.store(false, Ordering::Relaxed);
    let Some(rec) = RUN.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return Ok(());
    };
    let json = render(&rec).to_json();
    crate::io::output::write_file(&rec.path, json.as_bytes()).map_err(|e| Error::io(&rec.path, e))
}

/// The profile of the run so far, in hw-model's types (the schema of `hw-model/PROFILE.md`).
fn render(rec: &Recording) -> schema::Profile {
    let run = &rec.run;
    let wall = rec.started.elapsed().as_secs_f64();
    let cpu_total = cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID).saturating_sub(rec.process_cpu_start);
    let mut entered: Vec<(u64, Phase)> = PHASES
        .iter()
        .map(|&p| (SLOTS[p as usize].first_entry.load(Ordering::Relaxed), p))
        .filter(|&(order, _)| order > 0)
        .collect();
    entered.sort_unstable_by_key(|&(order, _)| order);
    // In a streaming run the phases overlap, so each phase's share of the process's CPU time
    // counts the others' work too; scale the pool parts so the phases add up to the run.
    let pool_scale = if run.streaming {
        let serial: u64 = entered.iter().map(|&(_, p)| thread_cpu(p)).sum();
        let pool: u64 = entered.iter().map(|&(_, p)| pool_cpu(p)).sum();
        if pool > 0 { cpu_total.saturating_sub(serial) as f64 / pool as f64 } else { 0.0 }
    } else {
        1.0
    };
    let header = schema::Run {
        command: rec.command.clone(),
        argv: rec.argv.clone(),
        mdsam_version: env!("CARGO_PKG_VERSION").to_string(),
        threads: run.threads.saturating_sub(1) as u32,
        pool_threads: run.threads as u32,
        allocator: crate::alloc::active().name().to_string(),
        level: run.level,
        input_format: run.input_format.to_string(),
        output_format: run.output_format.to_string(),
        input_bytes: file_size(&run.input) as f64,
        output_bytes: file_size(&run.output) as f64,
        composition: if run.streaming {
            schema::Composition::Streaming
        } else {
            schema::Composition::Staged
        },
        wall_s: seconds(wall),
        cpu_s: seconds(cpu_total as f64 / 1e9),
        peak_rss_bytes: peak_rss_bytes() as f64,
        memory_budget_bytes: run.memory_budget as f64,
        host: host(),
        calibration: None,
    };
    let phases = entered.iter().map(|&(_, p)| phase_record(p, run, pool_scale)).collect();
    schema::Profile { format: "mdsam-profile".to_string(), version: 1, run: header, phases }
}

/// One phase's totals; `pool_scale` corrects a streaming run's overlapping pool parts.
fn phase_record(p: Phase, run: &RunInfo, pool_scale: f64) -> schema::Phase {
    let slot = &SLOTS[p as usize];
    let serial = thread_cpu(p) as f64 / 1e9;
    let pool = pool_cpu(p) as f64 * pool_scale / 1e9;
    let count = |c: Counter| slot.counters[c as usize].load(Ordering::Relaxed);
    let mut bytes_read = count(Counter::BytesRead);
    let mut bytes_deflated = count(Counter::BytesDeflated);
    let mut bytes_written = count(Counter::BytesWritten);
    // Bytes moved through files are read off the files themselves: the whole input is read
    // once, the whole output written once.
    if p == Phase::Read && bytes_read == 0 {
        bytes_read = file_size(&run.input);
    }
    if p == Phase::Write && bytes_written == 0 {
        bytes_written = file_size(&run.output);
        if run.output_format == "bam" && run.level != 0 {
            bytes_deflated = bytes_written;
        }
    }
    schema::Phase {
        name: p.name().to_string(),
        kind: p.kind(run).to_string(),
        wall_s: seconds(slot.wall_ns.load(Ordering::Relaxed) as f64 / 1e9),
        cpu_s: seconds(serial + pool),
        serial_cpu_s: seconds(serial),
        pool_cpu_s: seconds(pool),
        bytes_read: bytes_read as f64,
        bytes_inflated: count(Counter::BytesInflated) as f64,
        bytes_deflated: bytes_deflated as f64,
        bytes_written: bytes_written as f64,
        records: count(Counter::Records) as f64,
        allocations: slot.allocations.load(Ordering::Relaxed) as f64,
        random_accesses: count(Counter::RandomAccesses) as f64,
        peak_rss_bytes: slot.peak_rss.load(Ordering::Relaxed) as f64,
    }
}

fn thread_cpu(p: Phase) -> u64 {
    SLOTS[p as usize].thread_cpu_ns.load(Ordering::Relaxed)
}

fn pool_cpu(p: Phase) -> u64 {
    let slot = &SLOTS[p as usize];
    slot.process_cpu_ns.load(Ordering::Relaxed).saturating_sub(thread_cpu(p))
}

/// Seconds to the microsecond: finer digits are clock noise.
fn seconds(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

/// The size of a regular file, or 0 (stdin, stdout, a pipe, no file).
fn file_size(path: &str) -> u64 {
    if path.is_empty() || path == "-" {
        return 0;
    }
    std::fs::metadata(path).map(|m| if m.is_file() { m.len() } else { 0 }).unwrap_or(0)
}

fn host() -> schema::Host {
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|v| v.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    schema::Host {
        cpus: cpus as u32,
        mem_bytes: (mem_kb * 1024) as f64,
        cpu_model: model,
        os: std::env::consts::OS.to_string(),
    }
}

#[allow(unsafe_code)] // clock_gettime
fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clocks used exist on Linux.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The process's peak resident set size so far.
#[allow(unsafe_code)] // getrusage
fn peak_rss_bytes() -> u64 {
    // SAFETY: rusage is integers and timevals, for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes into the valid struct it is lent.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    usage.ru_maxrss as u64 * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_header_survives_hw_models_reader_with_every_field_known() {
        let rec = Recording {
            path: String::new(),
            command: "view".into(),
            argv: vec!["mdsam".into(), "a\"b\\c\n\t\u{1}".into()],
            started: Instant::now(),
            process_cpu_start: 0,
            run: RunInfo::streamed(3, 6, ("", "-"), ("bam", "sam")).budgeted(Some(1 << 20)),
        };
        let json = render(&rec).to_json();
        let written: serde_json::Value = serde_json::from_str(&json).unwrap();
        // Unknown fields would be dropped and missing ones added by the round trip.
        let read = hw_model::profile::Profile::parse(&json, "p.json").unwrap();
        assert_eq!(serde_json::to_value(&read).unwrap(), written);
        assert_eq!(read.run.argv[1], "a\"b\\c\n\t\u{1}");
        assert_eq!(
            (written["run"]["threads"].as_u64(), written["run"]["pool_threads"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(written["run"]["memory_budget_bytes"].as_u64(), Some(1 << 20));
        assert_eq!(written["run"]["composition"], "streaming");
        assert!(written["run"]["calibration"].is_null());
    }

    #[test]
    fn kinds_follow_formats() {
        let bam =
            RunInfo { input_format: "bam", output_format: "bam", level: 6, ..Default::default() };
        assert_eq!(Phase::Read.kind(&bam), "inflate_parse");
        assert_eq!(Phase::Write.kind(&bam), "format_deflate");
        let sam =
            RunInfo { input_format: "sam", output_format: "sam", level: -1, ..Default::default() };
        assert_eq!(Phase::Read.kind(&sam), "parse");
        assert_eq!(Phase::Write.kind(&sam), "format");
    }
}
