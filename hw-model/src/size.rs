//! `predict --reads N`: a measured profile projected to another input size of the same shape.
//!
//! Work grows with the reads, so every counter is first scaled by the ratio of reads
//! ([`Profile::scaled`]). Three things do not follow that rule, and each is a term here rather
//! than a fitted factor:
//! - a streaming command's memory (`view`, `fixmate`, `markdup`) is its read-ahead and write-behind
//!   pieces: the same at any size;
//! - a staged command's memory is the process base plus its records, which grow with the input
//!   up to the command's budget (`memory_budget_bytes`);
//! - past the budget, a staged command that held everything when profiled spills: its records
//!   are written to temporary runs at the spill level and read back. That adds a `spill` phase (the
//!   write phase's work at that level) and a `merge` phase (the read phase's work again, plus, for
//!   sorted runs, a heap step per record and per doubling of the runs).
//!
//! A fourth term is the host's: memory the process has not touched before costs a page fault and
//! a clear of each page ([`FRESH_PAGE_S`]), and a projection that holds more than the profiled run
//! pays that for every page past the profiled peak. What it still cannot see: cache and TLB misses
//! as the working set leaves the LLC. `benches/hw-model-size.sh` measures how much that leaves
//! out.

use crate::error::Error;
use crate::profile::{Composition, Phase, Profile};

/// Resident memory of an mdsam process before it holds records (mdsam's `sort::PROCESS_BASE`).
pub const PROCESS_BASE: f64 = 20.0 * 1024.0 * 1024.0;
/// The share of a budget past its process base that mdsam lets records use before spilling
/// (mdsam's `sort::data_budget`).
pub const DATA_SHARE: f64 = 0.66;
/// Bytes besides its own that a record costs in memory (handle, key, slack: `sort::PER_RECORD`).
pub const PER_RECORD_BYTES: f64 = 68.0;

/// Work of a BAM write phase at a deflate level, relative to the default level (zlib's 6):
/// stored blocks cost the format and CRC only. From this project's host (two Xeon cores,
/// libdeflate): level 0 is the write phase of `markdup-pipeline -u` over that of the default level
/// at 0.5 M reads (0.095); level 1 is `sort`'s spill phase at 12 M reads (runs sorted and written at
/// level 1) over its write phase at 0.5 M reads scaled to 12 M (0.57 of the CPU, 0.60 of the wall).
pub fn write_cost(level: i32) -> f64 {
    match level {
        0 => 0.1,
        1 => 0.57,
        _ => 1.0,
    }
}

/// Reading back a temporary run costs the read phase's work times this (with the heap steps
/// below): the same `sort` runs, merge phase less the output's write, over the read phase
/// (0.87 of the CPU, 0.99 of the wall).
pub const RUN_READ_COST: f64 = 0.9;
/// One heap step of the k-way merge per record and per doubling of the runs (ns).
pub const MERGE_NS_PER_RECORD_LEVEL: f64 = 10.0;

/// Time a 4 KiB page costs the first time the process touches it, past what the profiled run
/// already paid, on the project's VM (2 Xeon cores, Firecracker with free page reporting): a C
/// program writing one byte a page of 4 GB of fresh anonymous memory took 8.3-8.8 µs a page when
/// the host had taken the guest's free memory back and 1.3 µs when it had not; the warm cost is
/// in the profiled run's own time. Under perf, markdup-pipeline `-u` at 12 M reads spent 37 % of
/// its samples in the kernel's `clear_page_erms` (about 15 µs of CPU a page of its 5.6 GB, both
/// cores faulting). On a bare-metal host a fault and a clear cost well under 1 µs (`--page-us`).
pub const FRESH_PAGE_S: f64 = 8.5e-6;
const PAGE_BYTES: f64 = 4096.0;

/// A profile projected to another size, with what changed besides scale.
#[derive(Clone, Debug)]
pub struct Projection {
    /// The projected run; its `run.peak_rss_bytes` is the projected peak resident memory.
    pub profile: Profile,
    /// The projection spills where the profiled run did not.
    pub spills: bool,
    pub notes: Vec<String>,
}

/// The reads a profile was measured on: the first phase's records.
pub fn measured_reads(p: &Profile) -> Result<f64, Error> {
    match p.phases.first() {
        Some(ph) if ph.records > 0.0 => Ok(ph.records),
        _ => Err(Error::Usage("--reads needs a profile whose first phase counts records".into())),
    }
}

/// Projects `p` to an input of `reads` reads, with `fresh_page_s` seconds a page of memory the
/// projected run holds past the profiled peak ([`FRESH_PAGE_S`] on the project's host).
pub fn project(p: &Profile, reads: f64, fresh_page_s: f64) -> Result<Projection, Error> {
    if !(reads.is_finite() && reads > 0.0) {
        return Err(Error::Usage(format!("--reads must be a positive number, not {reads}")));
    }
    let measured = measured_reads(p)?;
    let factor = reads / measured;
    let mut profile = p.scaled(factor);
    let mut notes =
        vec![format!("projected from {measured:.0} to {reads:.0} reads ({factor:.2}x)")];
    let measured_peak = p.run.peak_rss_bytes;
    if p.run.composition == Composition::Streaming {
        profile.run.peak_rss_bytes = measured_peak;
        notes.push("streaming: peak RSS stays the profiled run's".into());
        return Ok(Projection { profile, spills: false, notes });
    }
    let base = PROCESS_BASE.min(measured_peak);
    let mut peak = base + (measured_peak - base) * factor;
    let budget = p.run.memory_budget_bytes;
    let spilled = p.phases.iter().any(|ph| ph.name == "spill");
    let mut spills = false;
    if budget > 0.0 {
        let data = records_in_memory(p) * factor;
        let share = (budget - PROCESS_BASE.min(budget / 8.0)) * DATA_SHARE;
        if data > share {
            // mdsam keeps records within the data share; the rest of the budget is headroom
            // (allocator slack, pieces, writer blocks) that the measured peaks rarely reach:
            // at 12 M reads sort peaked at 0.59 of its budget, collate 0.72, sort -n 0.77.
            peak = peak.min(PROCESS_BASE.min(budget / 8.0) + share);
            let runs = (data / share).ceil().max(2.0);
            if !spilled && add_spill(&mut profile, p.run.command.as_str(), runs) {
                spills = true;
                notes.push(format!(
                    "{:.2} GB of records pass the {:.2} GB budget's data share: {runs:.0} \
                     temporary runs, spilled and merged back",
                    data / 1e9,
                    share / 1e9
                ));
            }
        }
    }
    profile.run.peak_rss_bytes = peak;
    let fresh = (peak - measured_peak).max(0.0) / PAGE_BYTES * fresh_page_s;
    if fresh > 0.0 {
        charge_fresh_pages(&mut profile, p, fresh);
        notes.push(format!(
            "{:.2} GB more resident than profiled: {fresh:.1} s of first-touch page faults",
            (peak - measured_peak) / 1e9
        ));
    }
    Ok(Projection { profile, spills, notes })
}

/// Adds `seconds` of page faults to the phases that grew the profiled run's memory, in proportion
/// to how much each grew it (all to the first phase when the profile has no phase peaks). A
/// fault stalls the thread that touched the page, and on the project's VM concurrent faults did
/// not overlap, so the time is serial.
fn charge_fresh_pages(profile: &mut Profile, measured: &Profile, seconds: f64) {
    let mut before = PROCESS_BASE.min(measured.run.peak_rss_bytes);
    let growth: Vec<f64> = measured
        .phases
        .iter()
        .map(|ph| {
            let grew = (ph.peak_rss_bytes - before).max(0.0);
            before = before.max(ph.peak_rss_bytes);
            grew
        })
        .collect();
    let total: f64 = growth.iter().sum();
    if total > 0.0 {
        for (ph, grew) in profile.phases.iter_mut().zip(&growth) {
            add_serial(ph, seconds * grew / total);
        }
    } else if let Some(first) = profile.phases.first_mut() {
        add_serial(first, seconds);
    }
    profile.run.wall_s += seconds;
    profile.run.cpu_s += seconds;
}

fn add_serial(ph: &mut Phase, seconds: f64) {
    ph.wall_s += seconds;
    ph.cpu_s += seconds;
    ph.serial_cpu_s += seconds;
}

/// The bytes the profiled run's records held in memory: their BAM bytes and per-record structures.
fn records_in_memory(p: &Profile) -> f64 {
    p.phases.first().map_or(0.0, |ph| ph.bytes_inflated + ph.records * PER_RECORD_BYTES)
}

/// The level temporary runs are written at: sort's runs at level 1; collate's bins and
/// markdup-pipeline's bins and runs stored.
fn spill_level(command: &str) -> i32 {
    if command == "sort" { 1 } else { 0 }
}

/// Whether the runs are merged through a heap (sorted runs) or read back one after another
/// (collate's bins).
fn heap_merged(command: &str) -> bool {
    command != "collate"
}

/// How many times the records go through temporary files, with `runs` runs: collate's bins take
/// every record; sorted runs all but the last run's, which stays in memory for the merge (mdsam's
/// `sort::merge`). markdup-pipeline goes through bins and then sorted runs.
fn spill_passes(command: &str, runs: f64) -> f64 {
    let sorted_runs = (runs - 1.0) / runs;
    match command {
        "markdup-pipeline" => 1.0 + sorted_runs,
        "collate" => 1.0,
        _ => sorted_runs,
    }
}

/// Adds the spill and merge phases of `runs` temporary runs to a scaled profile; false when it
/// has no read and write phase to take their work from.
fn add_spill(profile: &mut Profile, command: &str, runs: f64) -> bool {
    let (Some(read), Some(write)) =
        (profile.phase("read").cloned(), profile.phase("write").cloned())
    else {
        return false;
    };
    let level = spill_level(command);
    let passes = spill_passes(command, runs);
    // A text write is taken as a BAM write at the default level: the nearest work measured.
    let out_level = if profile.run.output_format == "bam" { profile.run.level } else { -1 };
    let write_ratio = write_cost(level) / write_cost(out_level);
    let spill = Phase {
        name: "spill".into(),
        kind: if level == 0 { "format" } else { "format_deflate" }.into(),
        bytes_read: 0.0,
        bytes_inflated: 0.0,
        bytes_written: write.bytes_inflated.max(read.bytes_inflated) * passes,
        ..times(&write, write_ratio * passes)
    };
    let heap_s = if heap_merged(command) {
        read.records * runs.log2() * MERGE_NS_PER_RECORD_LEVEL * 1e-9
    } else {
        0.0
    };
    let mut merge = Phase {
        name: "merge".into(),
        kind: "merge".into(),
        bytes_read: 0.0,
        ..times(&read, RUN_READ_COST * passes)
    };
    merge.serial_cpu_s += heap_s;
    merge.cpu_s += heap_s;
    merge.wall_s += heap_s;
    profile.run.wall_s += spill.wall_s + merge.wall_s;
    profile.run.cpu_s += spill.cpu_s + merge.cpu_s;
    let at = profile.phases.iter().position(|ph| ph.name == "write").unwrap_or(0);
    profile.phases.insert(at, merge);
    profile.phases.insert(at, spill);
    true
}

/// `ph` with its times multiplied by `k`, counters kept.
fn times(ph: &Phase, k: f64) -> Phase {
    Phase {
        wall_s: ph.wall_s * k,
        cpu_s: ph.cpu_s * k,
        serial_cpu_s: ph.serial_cpu_s * k,
        pool_cpu_s: ph.pool_cpu_s * k,
        ..ph.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample;

    fn staged(command: &str, budget: f64) -> Profile {
        let mut p = sample(
            command,
            "staged",
            &[
                ("read", "inflate_parse", 0.2, 2.0),
                ("sort", "sort", 0.3, 1.5),
                ("write", "format_deflate", 0.1, 4.0),
            ],
        );
        p.run.memory_budget_bytes = budget;
        p.run.peak_rss_bytes = 500e6;
        p
    }

    #[test]
    fn test_work_scales_with_the_reads() {
        let p = staged("sort", 0.0);
        let q = project(&p, measured_reads(&p).unwrap() * 4.0, 0.0).unwrap();
        assert!(!q.spills);
        assert!((q.profile.run.wall_s / p.run.wall_s - 4.0).abs() < 1e-9);
        assert_eq!(q.profile.phases.len(), p.phases.len());
        // Memory: the process base stays, the records grow.
        assert!(
            (q.profile.run.peak_rss_bytes - (PROCESS_BASE + (500e6 - PROCESS_BASE) * 4.0)).abs()
                < 1.0
        );
    }

    #[test]
    fn test_streaming_memory_stays_put() {
        let mut p = staged("markdup", 0.0);
        p.run.composition = Composition::Streaming;
        let q = project(&p, measured_reads(&p).unwrap() * 20.0, FRESH_PAGE_S).unwrap();
        assert_eq!(q.profile.run.peak_rss_bytes, 500e6);
        assert!((q.profile.run.wall_s / p.run.wall_s - 20.0).abs() < 1e-9);
    }

    #[test]
    fn test_past_the_budget_it_spills_and_stays_within_it() {
        // The sample holds 300 MB inflated and a million records (0.37 GB in memory); a 1 GB
        // budget's data share is 0.65 GB.
        let p = staged("sort", 1e9);
        let reads = measured_reads(&p).unwrap();
        let fits = project(&p, reads * 1.5, 0.0).unwrap();
        assert!(!fits.spills, "{:?}", fits.notes);
        let over = project(&p, reads * 10.0, 0.0).unwrap();
        assert!(over.spills);
        assert!(over.profile.run.peak_rss_bytes <= 1e9);
        let names: Vec<&str> = over.profile.phases.iter().map(|ph| ph.name.as_str()).collect();
        assert_eq!(names, ["read", "sort", "spill", "merge", "write"]);
        let linear = p.run.wall_s * 10.0;
        assert!(over.profile.run.wall_s > linear, "spilling costs time");
        // The pipeline's spill is stored blocks: dearer in passes (bins, then all but the last
        // sorted run), cheaper per pass. 3.7 GB against 0.65 GB: 6 runs.
        let pipe = project(&staged("markdup-pipeline", 1e9), reads * 10.0, 0.0).unwrap();
        let spill = |q: &Projection| q.profile.phase("spill").unwrap().cpu_s;
        let passes = (1.0 + 5.0 / 6.0) / (5.0 / 6.0);
        let want = passes * write_cost(0) / write_cost(1);
        assert!(
            (spill(&pipe) / spill(&over) - want).abs() < 1e-9,
            "{}",
            spill(&pipe) / spill(&over)
        );
    }

    #[test]
    fn test_a_profile_that_spilled_scales_as_measured() {
        let mut p = staged("sort", 1e8);
        p.phases.insert(2, Phase { name: "spill".into(), ..p.phases[2].clone() });
        let q = project(&p, measured_reads(&p).unwrap() * 3.0, 0.0).unwrap();
        assert!(!q.spills);
        assert_eq!(q.profile.phases.len(), p.phases.len());
        assert!(q.profile.run.peak_rss_bytes <= 1e8);
    }

    #[test]
    fn test_memory_past_the_profiled_peak_costs_its_page_faults_where_it_grew() {
        // 500 MB at the peak: the read phase grew it by 380 MB past the process base, the sort
        // phase by 100 MB more.
        let mut p = staged("sort", 0.0);
        p.phases[0].peak_rss_bytes = 400e6;
        p.phases[1].peak_rss_bytes = 500e6;
        p.phases[2].peak_rss_bytes = 480e6;
        let reads = measured_reads(&p).unwrap() * 10.0;
        let free = project(&p, reads, 0.0).unwrap();
        let paid = project(&p, reads, 1e-5).unwrap();
        let grown = free.profile.run.peak_rss_bytes - 500e6;
        let seconds = grown / 4096.0 * 1e-5;
        let added = |i: usize| paid.profile.phases[i].wall_s - free.profile.phases[i].wall_s;
        let grew = 500e6 - PROCESS_BASE;
        assert!((added(0) - seconds * (400e6 - PROCESS_BASE) / grew).abs() < 1e-9);
        assert!((added(1) - seconds * 100e6 / grew).abs() < 1e-9);
        assert_eq!(added(2), 0.0, "a phase that freed memory faults none in");
        assert!((paid.profile.run.wall_s - free.profile.run.wall_s - seconds).abs() < 1e-9);
        assert!(paid.notes.iter().any(|n| n.contains("page faults")), "{:?}", paid.notes);
        // The profiled size adds nothing.
        let same = project(&p, measured_reads(&p).unwrap(), 1e-5).unwrap();
        assert_eq!(same.profile.run.wall_s, p.run.wall_s);
    }

    #[test]
    fn test_bad_reads_are_refused() {
        let p = staged("sort", 0.0);
        assert!(project(&p, 0.0, 0.0).is_err());
        assert!(project(&p, f64::NAN, 0.0).is_err());
        let mut none = p.clone();
        none.phases.clear();
        assert!(project(&none, 1e6, 0.0).is_err());
    }
}
