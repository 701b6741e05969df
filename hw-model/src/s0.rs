//! Seed 000's two programs, built from our own profiles: *orig* (samtools 1.9: streaming, only
//! BGZF inflate/deflate on the thread pool, parsing/formatting and the command's logic on the
//! main thread) and *mdc* (memory-driven: load everything with parallel parsing, process, write
//! in parallel; staged). Projected onto the blade (1-64 threads) and the Superdome Flex (144,
//! 288), they must show S0's orderings (design §3.1 V-S0-1…4).
//!
//! The mechanisms, each a term of the model rather than a fitted factor:
//! - `view`: orig parses and formats serially, mdc in parallel.
//! - `fixmate`: the pairing logic is serial in both (S0: "the logic is not parallel"). orig
//!   streams, so its pairing overlaps the pool's inflate/deflate and storage, and it touches
//!   each record while it is still in cache. mdc loads all first, so the serial pass meets every
//!   record cold, spread over all sockets' memory by the parallel loader (L_eff, NUMA/fabric),
//!   and nothing overlaps it.
//! - `sort`: orig keeps `-m` (768 MiB) per thread in memory and spills sorted runs at level 1 to
//!   temporary files when the input is larger, then merges them with a serial heap; with more
//!   threads it keeps more in memory and stops spilling. mdc sorts in memory.

use crate::profile::Composition;
use crate::work::{PhaseWork, RunWork};

/// samtools sort's default `-m`: 768 MiB per thread.
pub const SORT_MEM_PER_THREAD: f64 = 768.0 * 1024.0 * 1024.0;
/// Level-1 deflate CPU per byte relative to level 6 (libdeflate, class D).
pub const LEVEL1_DEFLATE_COST: f64 = 0.25;
/// One heap step of a k-way merge per record and per log2(runs) (ns, class D).
pub const MERGE_NS_PER_RECORD_LEVEL: f64 = 10.0;
/// samtools' main thread per BAM record: `bam_read1` from an inflated block (length, copy,
/// fix-ups) and `bam_write1` into the block being filled (ns, class D).
pub const BAM_DECODE_NS: f64 = 40.0;
pub const BAM_ENCODE_NS: f64 = 40.0;
/// CPU per byte to write and read back a temporary file in the page cache (ns, class D). On
/// S0's 768 GB machines temporary files stay in memory.
pub const TMP_NS_PER_BYTE: f64 = 0.2;

/// Serial share of a phase when only (de)compression runs on the pool.
fn bgzf_pool_only(p: &mut PhaseWork) {
    let cpu = p.cpu_s();
    if cpu > 0.0 {
        p.serial_frac = p.serial_frac.max(1.0 - (p.inflate_s + p.deflate_s) / cpu);
    }
}

/// What samtools 1.9 does for a phase: the same work, but only BGZF (de)compression on the
/// pool. BAM records are decoded/encoded one by one on the main thread (`bam_read1` /
/// `bam_write1` into one reused `bam1_t`: no allocation per record), and whatever else our
/// read/write phases spend runs beside it; SAM text parsing/formatting and the command's own
/// logic are serial.
fn as_samtools19(p: &mut PhaseWork, output_format: &str) {
    let cpu_before = p.cpu_s();
    let per_record = match p.kind.as_str() {
        "inflate_parse" => Some(BAM_DECODE_NS),
        // Uncompressed BAM (`-u`) still goes through BGZF blocks (CRC on the pool).
        "format_deflate" => Some(BAM_ENCODE_NS),
        "format" if output_format == "bam" => Some(BAM_ENCODE_NS),
        _ => None,
    };
    if let Some(ns) = per_record {
        p.allocations = 0.0;
        p.alloc_s = 0.0;
        let cpu = p.cpu_s();
        // Never more parallel than ours: our own serial part (ordered I/O) is there too.
        let serial = (p.records * ns * 1e-9).min(p.compute_s).max(p.serial_frac * cpu);
        p.serial_frac = if cpu > 0.0 { (serial / cpu).min(1.0) } else { 0.0 };
    } else {
        bgzf_pool_only(p);
    }
    debug_assert!(p.cpu_s() <= cpu_before + 1e-9);
}

/// samtools 1.9 streaming `view` / `fixmate` / `markdup`: only BGZF on the pool; in fixmate the
/// mates are adjacent in name order and just decoded, so pairing meets no DRAM misses.
pub fn orig_streaming(run: &RunWork) -> RunWork {
    let mut r = run.clone();
    r.composition = Composition::Streaming;
    for p in &mut r.phases {
        as_samtools19(p, &run.output_format);
        if p.kind == "mate_pair" {
            p.random_accesses = 0.0;
        }
    }
    r
}

/// The memory-driven `view` (what mdsam does): the profile as measured.
pub fn mdc(run: &RunWork) -> RunWork {
    run.clone()
}

/// The memory-driven `fixmate`: load all, a serial pairing pass over cold records, write all.
pub fn mdc_fixmate(run: &RunWork) -> RunWork {
    let mut r = run.clone();
    r.composition = Composition::Staged;
    for p in &mut r.phases {
        if p.kind == "mate_pair" {
            p.serial_frac = 1.0;
            p.random_accesses += p.records;
        }
    }
    r
}

/// Temporary runs written at level 1 and merged back (samtools sort over its memory budget,
/// and samtools collate always, into `runs` files).
fn spill_and_merge(r: &mut RunWork, runs: f64, heap_merge: bool) {
    let (Some(w), Some(rd)) = (
        r.phases.iter().find(|p| p.name == "write").cloned(),
        r.phases.iter().find(|p| p.name == "read").cloned(),
    ) else {
        return;
    };
    let in_memory = rd.bytes_inflated.max(rd.bytes_read);
    let tmp_bytes = rd.bytes_read * 1.3; // level 1 compresses a little worse
    let deflate_per_byte = w.deflate_s / w.bytes_inflated.max(in_memory).max(1.0);
    let tmp_cpu = tmp_bytes * TMP_NS_PER_BYTE * 1e-9;
    let spill = PhaseWork {
        name: "spill".into(),
        kind: "format_deflate".into(),
        serial_frac: 0.0,
        compute_s: rd.records * BAM_ENCODE_NS * 1e-9 + tmp_cpu,
        deflate_s: deflate_per_byte * in_memory * LEVEL1_DEFLATE_COST,
        inflate_s: 0.0,
        alloc_s: 0.0,
        stall_s: 0.0,
        allocations: 0.0,
        random_accesses: 0.0,
        bytes_read: 0.0,
        bytes_written: 0.0,
        bytes_deflated: tmp_bytes,
        mem_bytes: in_memory + 2.0 * tmp_bytes,
        ..rd.clone()
    };
    let heap_s =
        if heap_merge { rd.records * runs.log2() * MERGE_NS_PER_RECORD_LEVEL * 1e-9 } else { 0.0 };
    let serial = heap_s + rd.records * BAM_DECODE_NS * 1e-9;
    let merge = PhaseWork {
        name: "merge".into(),
        kind: "merge".into(),
        serial_frac: serial / (serial + rd.inflate_s + tmp_cpu).max(1e-12),
        compute_s: serial + tmp_cpu,
        inflate_s: rd.inflate_s,
        deflate_s: 0.0,
        alloc_s: 0.0,
        stall_s: 0.0,
        allocations: 0.0,
        random_accesses: 0.0,
        bytes_read: 0.0,
        bytes_written: 0.0,
        bytes_deflated: 0.0,
        mem_bytes: 2.0 * tmp_bytes + in_memory,
        ..rd
    };
    let at = r.phases.iter().position(|p| p.name == "write").unwrap_or(r.phases.len());
    r.phases.insert(at, merge);
    r.phases.insert(at, spill);
}

/// samtools 1.9 `sort` with `workers` threads: records decoded on the main thread, `-m`-sized
/// runs sorted in parallel, and when the records exceed `-m × threads`, every run spilled at
/// level 1 and merged back with a serial heap. More threads keep more in memory.
pub fn orig_sort(run: &RunWork, workers: f64) -> RunWork {
    let mut r = run.clone();
    r.composition = Composition::Staged;
    let in_memory: f64 = r
        .phases
        .iter()
        .filter(|p| p.name == "read")
        .map(|p| p.bytes_inflated.max(p.bytes_read))
        .sum();
    for p in &mut r.phases {
        if p.name == "read" || p.name == "write" {
            as_samtools19(p, &run.output_format);
        }
    }
    if in_memory > SORT_MEM_PER_THREAD * workers {
        spill_and_merge(&mut r, (in_memory / SORT_MEM_PER_THREAD).ceil().max(2.0), true);
    }
    r
}

/// samtools 1.9 `collate`: single-threaded except BGZF; every record goes through one of 64
/// temporary bin files at level 1, each bin is then read back and sorted by name.
pub fn orig_collate(run: &RunWork) -> RunWork {
    let mut r = run.clone();
    r.composition = Composition::Staged;
    for p in &mut r.phases {
        as_samtools19(p, &run.output_format);
    }
    spill_and_merge(&mut r, 64.0, false);
    r
}

/// One command of the chain as samtools 1.9 runs it (S0's files and pipe modes).
pub fn orig_command(run: &RunWork, workers: f64) -> RunWork {
    match run.command.as_str() {
        "sort" => orig_sort(run, workers),
        "collate" => orig_collate(run),
        _ => orig_streaming(run),
    }
}

/// S0's "large" sample used to project our small profiles: 80 M records (about 30 GB in
/// memory, 10-12 GB of BAM; class D: S0's Table 1 values are missing). samtools 1.9 sort then
/// spills at 16 and 32 threads (12 and 24 GiB budgets) and not from 64 on. How much faster mdc
/// is at 16/32 depends on this size and on the profile's serial split; see V-S0-3b.
pub const S0_LARGE_RECORDS: f64 = 8e7;

/// The factor that takes a profile to S0's large sample (by the records it read).
pub fn s0_scale(p: &crate::profile::Profile) -> f64 {
    let records = p.phase("read").map_or(0.0, |r| r.records);
    if records > 0.0 { S0_LARGE_RECORDS / records } else { 1.0 }
}

/// S0's thread counts and machines: the blade for 16-64, the Superdome Flex for 144 and 288.
pub fn s0_points(literal: bool) -> Vec<(f64, crate::params::Machine)> {
    let mut v: Vec<(f64, crate::params::Machine)> =
        [16.0, 32.0, 64.0].into_iter().map(|n| (n, crate::params::blade())).collect();
    v.extend([144.0, 288.0].into_iter().map(|n| (n, crate::params::sdflex(literal))));
    v
}

fn order_check(id: &'static str, what: String, holds: bool) -> crate::validate::Check {
    crate::validate::Check {
        id,
        what,
        got: f64::from(holds),
        want: 1.0,
        tolerance: 0.0,
        asserted: true,
    }
}

/// Seed 000's orderings (V-S0-1…4) from real profiles, each scaled to S0's large sample:
/// `view` (SAM → BAM), `fixmate`, `sort -n`, and the chain (files: the four commands with
/// compressed output; pipe: the same with `-u`; fused: `markdup-pipeline`).
pub fn orderings(
    view: &crate::profile::Profile,
    fixmate: &crate::profile::Profile,
    sort_n: &crate::profile::Profile,
    chain: &crate::report::Chain,
) -> Vec<crate::validate::Check> {
    use crate::pipeline::{compose, files, fused, pipe};
    use crate::work::decompose;
    let scale = |p: &crate::profile::Profile| decompose(&p.scaled(s0_scale(p)));
    let (v, f, s) = (scale(view), scale(fixmate), scale(sort_n));
    let factor = s0_scale(&chain.fused);
    let files_w: Vec<RunWork> = chain.files.iter().map(|p| decompose(&p.scaled(factor))).collect();
    // The pipe mode from the same runs as the files mode, intermediates uncompressed: separate
    // `-u` runs on a shared host differ more by noise in their serial/pool split than by mode.
    let pipe_w = crate::pipeline::as_piped(&files_w);
    let fused_w = decompose(&chain.fused.scaled(factor));
    let mut out = Vec::new();
    for literal in [false, true] {
        let tag = if literal { "sdflex-literal" } else { "sdflex" };
        let pts = s0_points(literal);
        let mut detail = Vec::new();
        let ok = pts.iter().all(|(n, m)| {
            let (a, b) = (compose(&mdc(&v), m, *n).time, compose(&orig_streaming(&v), m, *n).time);
            detail.push(format!("{n}:{:.2}", a / b));
            a < b
        });
        out.push(order_check(
            "V-S0-1",
            format!("view: mdc < orig at 16-288 ({tag}; mdc/orig {})", detail.join(" ")),
            ok,
        ));
        let mut detail = Vec::new();
        let ok = pts.iter().all(|(n, m)| {
            let (a, b) =
                (compose(&mdc_fixmate(&f), m, *n).time, compose(&orig_streaming(&f), m, *n).time);
            detail.push(format!("{n}:{:.2}", a / b));
            a > b
        });
        out.push(order_check(
            "V-S0-2",
            format!(
                "fixmate: in-memory slower than streaming ({tag}; mdc/orig {})",
                detail.join(" ")
            ),
            ok,
        ));
        let m = crate::params::sdflex(literal);
        let flat =
            compose(&mdc_fixmate(&f), &m, 288.0).time / compose(&mdc_fixmate(&f), &m, 16.0).time;
        out.push(order_check(
            "V-S0-2",
            format!("fixmate: mdc flat, T(288)/T(16) = {flat:.2} >= 0.8 ({tag})"),
            flat >= 0.8,
        ));
        let ratios: Vec<(f64, f64)> = pts
            .iter()
            .map(|(n, m)| {
                (*n, compose(&mdc(&s), m, *n).time / compose(&orig_sort(&s, *n), m, *n).time)
            })
            .collect();
        let detail: Vec<String> = ratios.iter().map(|(n, r)| format!("{n}:{r:.2}")).collect();
        out.push(order_check(
            "V-S0-3",
            format!("sort -n: alike at >= 64 (mdc/orig in [0.9,1.1]), mdc not slower at 16/32 ({tag}; {})", detail.join(" ")),
            ratios.iter().all(|(n, r)| if *n < 64.0 { *r <= 1.0 } else { (0.9..=1.1).contains(r) }),
        ));
        out.push(order_check(
            "V-S0-3b",
            format!("sort -n: mdc/orig in [0.7,1) at 16/32, \"slightly faster\" ({tag}; sample-size dependent)"),
            ratios.iter().filter(|(n, _)| *n < 64.0).all(|(_, r)| (0.7..1.0).contains(r)),
        ));
        let mut detail = Vec::new();
        let ok = pts.iter().all(|(n, m)| {
            let fo: Vec<RunWork> = files_w.iter().map(|c| orig_command(c, *n)).collect();
            let po: Vec<RunWork> = pipe_w.iter().map(|c| orig_command(c, *n)).collect();
            let (tf, tp, tu) =
                (files(&fo, m, *n).time, pipe(&po, m, *n).time, fused(&fused_w, m, *n).time);
            detail.push(format!("{n}:{:.0}/{:.0}/{:.0}", tu, tp, tf));
            tu < tp && tp < tf
        });
        out.push(order_check(
            "V-S0-4",
            format!("chain: fused < pipe < files ({tag}; s fused/pipe/files {})", detail.join(" ")),
            ok,
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::params::{Machine, sdflex};
    use crate::pipeline::compose;
    use crate::profile::tests::sample;
    use crate::work::decompose;

    pub(crate) fn s0_machines(literal: bool) -> Vec<(f64, Machine)> {
        s0_points(literal)
    }

    /// Every (workers, machine) point S0 measured, under both Superdome Flex readings.
    pub(crate) fn every_s0_point() -> impl Iterator<Item = (f64, Machine)> {
        [false, true].into_iter().flat_map(s0_machines)
    }

    /// A profile of `read` → `middle` → BAM write (CPU seconds in proportion to the bytes:
    /// deflate at 25 MB/s out dominates), as (kind, serial, pool) and (name, kind, serial, pool).
    fn read_middle_write(
        command: &str,
        composition: &str,
        read: (&str, f64, f64),
        middle: (&str, &str, f64, f64),
    ) -> crate::profile::Profile {
        sample(
            command,
            composition,
            &[("read", read.0, read.1, read.2), middle, ("write", "format_deflate", 0.1, 4.4)],
        )
    }

    fn fixmate_like() -> RunWork {
        // 300 k pairs with CPU in proportion to the bytes (inflate 400 MB/s, deflate 25 MB/s
        // out), scaled 100x to an S0 "large" sample (10 GB of BAM, 60 M records).
        let mut p = read_middle_write(
            "fixmate",
            "streaming",
            ("inflate_parse", 0.05, 1.05),
            ("pair", "mate_pair", 0.3, 0.3),
        );
        for ph in &mut p.phases {
            ph.records = 6.0e5;
        }
        decompose(&p.scaled(100.0))
    }

    /// `sort` on the same sample: 3e8 inflated bytes × 100 = 30 GB.
    fn sort_like() -> RunWork {
        let p = read_middle_write(
            "sort",
            "staged",
            ("inflate_parse", 0.05, 1.05),
            ("sort", "sort", 0.1, 0.9),
        );
        decompose(&p.scaled(100.0))
    }

    #[test]
    fn test_s0_view_mdc_faster_than_orig() {
        // SAM in (S0's parallel SAM parse), BAM out.
        let p = read_middle_write(
            "view",
            "streaming",
            ("parse", 0.05, 1.5),
            ("filter", "filter", 0.02, 0.1),
        );
        let w = decompose(&p.scaled(10.0));
        for (n, m) in every_s0_point() {
            let (a, b) = (compose(&mdc(&w), &m, n).time, compose(&orig_streaming(&w), &m, n).time);
            assert!(a < b, "{} n={n}: mdc {a} orig {b}", m.name);
        }
    }

    #[test]
    fn test_s0_fixmate_mdc_slower_and_flat() {
        let w = fixmate_like();
        for (n, m) in every_s0_point() {
            let (a, b) =
                (compose(&mdc_fixmate(&w), &m, n).time, compose(&orig_streaming(&w), &m, n).time);
            assert!(a > b, "{} n={n}: mdc {a} orig {b}", m.name);
        }
        for literal in [false, true] {
            let m = sdflex(literal);
            let flat = compose(&mdc_fixmate(&w), &m, 288.0).time
                / compose(&mdc_fixmate(&w), &m, 16.0).time;
            assert!(flat >= 0.8, "T(288)/T(16) = {flat}");
        }
    }

    /// V-S0-3: mdc slightly faster at 16/32 threads (orig spills), similar at 64/144/288.
    #[test]
    fn test_s0_sort_alike_at_high_thread_counts() {
        let w = sort_like();
        for (n, m) in every_s0_point() {
            let ratio = compose(&mdc(&w), &m, n).time / compose(&orig_sort(&w, n), &m, n).time;
            let ok =
                if n < 64.0 { (0.7..1.0).contains(&ratio) } else { (0.9..=1.1).contains(&ratio) };
            assert!(ok, "{} n={n}: mdc/orig = {ratio}", m.name);
        }
    }

    #[test]
    fn test_orig_sort_spills_only_below_the_memory_budget() {
        // 30 GB inflated: spills at 16 and 32 threads (12/24 GiB), not at 64.
        let w = sort_like();
        assert!(orig_sort(&w, 16.0).phases.iter().any(|p| p.name == "spill"));
        assert!(orig_sort(&w, 32.0).phases.iter().any(|p| p.name == "merge"));
        assert!(!orig_sort(&w, 64.0).phases.iter().any(|p| p.name == "spill"));
    }
}
