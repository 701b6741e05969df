//! Newport-class computational storage drives (seed 001) and arrays of N of them (design §2.7).
//!
//! A drive: a quad Cortex-A53 ISP engine (each core `s_arm` times slower than a host core),
//! 16 flash channels inside, PCIe Gen3 x4 outside. Work is split between the host and the
//! drives in proportion to their throughput, as seed 001's scheduler does, subject to PCIe:
//!
//! ```text
//! T(s) = max( (1−s)·W/R_host,  s·W/(N·R_isp),  ((1−s)·b_in + s·b_out)·W/B_pcie,  b_in·W/(N·B_flash) )
//! ```
//! minimised over the share `s` processed in the drives. Without a PCIe limit the optimum is
//! `s = N·R_isp/(R_host + N·R_isp)` and the speed-up `1 + N·R_isp/R_host`: the gain comes from
//! aggregating many weak engines, not from one drive being near the data.

use serde::Serialize;

use crate::host::{Bound, PhaseTime, phase_time};
use crate::params::Machine;
use crate::pipeline::{RunTime, compose_times};
use crate::work::{PhaseWork, RunWork};

/// Where a phase kind may run, and why (printed in every CSD report).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Eligibility {
    pub isp: bool,
    pub pud_ifp: bool,
    pub why: &'static str,
}

pub fn eligibility(kind: &str) -> Eligibility {
    match kind {
        "inflate_parse" => Eligibility {
            isp: true,
            pud_ifp: false,
            why: "ISP can inflate+parse but ships ~3x more bytes over PCIe; PuD/IFP cannot decode DEFLATE (BGZF row records)",
        },
        "parse" | "filter" => Eligibility {
            isp: true,
            pud_ifp: false,
            why: "ISP fused with reading; PuD/IFP only with an uncompressed columnar sidecar, which BAM lacks",
        },
        "format_deflate" | "format" => Eligibility {
            isp: true,
            pud_ifp: false,
            why: "write path: records cross PCIe uncompressed, the ISP deflates; not bulk bitwise",
        },
        "sort" | "merge" | "mate_pair" | "dup_key" | "dup_lookup" => Eligibility {
            isp: false,
            pud_ifp: false,
            why: "global state or ordering across all drives (or larger than ISP DRAM); host only",
        },
        _ => Eligibility { isp: false, pud_ifp: false, why: "unknown phase kind; host only" },
    }
}

/// The result of splitting one unit of work between host and drives.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Split {
    /// Share of the work done in the drives.
    pub share: f64,
    pub time: f64,
    pub pcie_bytes: f64,
    pub bound: Bound,
}

/// Host rate `r_host` and per-drive rate `r_drive` in work units per second; `b_in` bytes per
/// unit cross PCIe when the host does the unit, `b_out` when a drive does it.
#[allow(clippy::too_many_arguments)]
pub fn hybrid(
    work: f64,
    r_host: f64,
    r_drive: f64,
    drives: f64,
    b_in: f64,
    b_out: f64,
    b_pcie: f64,
    b_flash: f64,
) -> Split {
    let t = |s: f64| {
        let host = if s < 1.0 { (1.0 - s) * work / r_host } else { 0.0 };
        let isp = if s > 0.0 { s * work / (drives * r_drive).max(1e-300) } else { 0.0 };
        let pcie = ((1.0 - s) * b_in + s * b_out) * work / b_pcie;
        let flash = if drives > 0.0 { b_in * work / (drives * b_flash) } else { 0.0 };
        [
            (host, Bound::CpuParallel),
            (isp, Bound::IspCompute),
            (pcie, Bound::Pcie),
            (flash, Bound::Flash),
        ]
        .into_iter()
        .fold((0.0, Bound::CpuParallel), |a, b| if b.0 > a.0 { b } else { a })
    };
    // T(s) is a maximum of linear functions, so convex: ternary search finds its minimum.
    let (mut lo, mut hi) = (0.0f64, if drives > 0.0 && r_drive > 0.0 { 1.0f64 } else { 0.0 });
    for _ in 0..200 {
        let (a, b) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if t(a).0 <= t(b).0 { hi = b } else { lo = a }
    }
    let s = (lo + hi) / 2.0;
    let (time, bound) = t(s);
    Split { share: s, time, pcie_bytes: ((1.0 - s) * b_in + s * b_out) * work, bound }
}

/// One phase on the CSD target: host-only phases as on the host (their input crosses PCIe);
/// ISP-eligible phases split by [`hybrid`] in bytes of the phase's input.
pub fn phase_on_csd(w: &PhaseWork, m: &Machine, workers: f64) -> PhaseTime {
    let mut t = phase_time(w, m, workers);
    let drives = m.get("drives");
    let pcie = (drives * m.get("pcie_gbs")).min(m.get("host_pcie_cap_gbs")) * 1e9;
    let flash = m.get("flash_channels") * m.get("b_ch_gbs") * 1e9;
    let input = if w.kind == "format_deflate" || w.kind == "format" {
        w.bytes_inflated.max(w.bytes_written * 3.0)
    } else {
        w.bytes_read
    };
    if !eligibility(&w.kind).isp || drives <= 0.0 || input <= 0.0 {
        // Host-only: whatever it reads or writes crosses PCIe.
        t.links.pcie = w.bytes_read + w.bytes_written;
        t.links.flash_internal = t.links.pcie;
        return t;
    }
    let host_cpu_per_byte = (t.serial_s + t.parallel_s) / input;
    let r_host = input / t.time.max(1e-12);
    let r_drive = m.get("isp_cores") / (m.get("s_arm") * host_cpu_per_byte.max(1e-18));
    let (b_in, b_out) = match w.kind.as_str() {
        // Reading: the host gets compressed bytes, a drive sends inflated records.
        "inflate_parse" => (1.0, (w.bytes_inflated / w.bytes_read).max(1.0)),
        // Writing: the host sends compressed blocks, or uncompressed records for the drive to deflate.
        _ => ((w.bytes_written / input).min(1.0), 1.0),
    };
    let split = hybrid(input, r_host, r_drive, drives, b_in, b_out, pcie, flash);
    t.time = split.time;
    t.bound = split.bound;
    t.offloaded = split.share;
    t.placement = if split.share > 0.005 {
        format!("host+{:.0}% ISP", split.share * 100.0)
    } else {
        "host".into()
    };
    // Host CPU shrinks with the share the drives took.
    t.serial_s *= 1.0 - split.share;
    t.parallel_s *= 1.0 - split.share;
    t.links.pcie = split.pcie_bytes;
    t.links.flash_internal = w.bytes_read + w.bytes_written;
    t.links.storage = 0.0;
    t
}

/// A command on the CSD target (host plus `drives` drives).
pub fn compose(run: &RunWork, m: &Machine, workers: f64) -> RunTime {
    let phases = run.phases.iter().map(|p| phase_on_csd(p, m, workers)).collect();
    compose_times(&run.command, run.composition, phases, m, workers)
}

/// Seconds the ISP engines were busy, summed over drives, for a CSD run.
pub fn isp_busy_s(r: &RunTime, m: &Machine) -> f64 {
    r.phases.iter().map(|p| p.offloaded * p.time * m.get("drives")).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// V-S1-1: speech-to-text, host 96 words/s, one CSD 5.3 words/s, 36 drives: 3.1x measured.
    #[test]
    fn test_s1_speech_speedup_and_share_in_drives() {
        let host_only = hybrid(1000.0, 96.0, 5.3, 0.0, 0.0, 0.0, 1e12, 1e12).time;
        let split = hybrid(1000.0, 96.0, 5.3, 36.0, 0.0, 0.0, 1e12, 1e12);
        let speedup = host_only / split.time;
        assert!((speedup / 3.1 - 1.0).abs() <= 0.10, "{speedup}");
        // V-S1-2: "68 % of data processed in CSDs" is the work share 1 − 1/S.
        assert!((split.share / 0.68 - 1.0).abs() <= 0.10, "{}", split.share);
    }

    /// Sentiment: host 9,496 q/s, one CSD 364 q/s: measured 2.2x and 56 % in the drives.
    #[test]
    fn test_s1_sentiment_speedup_and_share() {
        let split = hybrid(1e6, 9496.0, 364.0, 36.0, 0.0, 0.0, 1e12, 1e12);
        let speedup = (1e6 / 9496.0) / split.time;
        assert!((speedup / 2.2 - 1.0).abs() <= 0.10, "{speedup}");
        assert!((split.share / 0.56 - 1.0).abs() <= 0.10, "{}", split.share);
    }

    #[test]
    fn test_single_drive_loses_on_decompression_and_pcie_can_bind() {
        // Host 16 cores at 0.4 GB/s each vs one ISP (4 A53 cores, 8x slower): ~30x slower alone.
        let one_isp_only = 30e9 / (4.0 * 0.4e9 / 8.0);
        let host = 30e9 / (16.0 * 0.4e9);
        assert!(one_isp_only / host > 25.0);
        // Drives send 3x inflated bytes: a narrow PCIe caps how much they can take.
        let free = hybrid(30e9, 6.4e9, 0.2e9, 36.0, 1.0 / 3.0, 1.0, 1e15, 1e15);
        let tight = hybrid(30e9, 6.4e9, 0.2e9, 36.0, 1.0 / 3.0, 1.0, 3.94e9, 1e15);
        assert!(tight.share < free.share && tight.time > free.time * 1.2, "{free:?} {tight:?}");
        assert!(
            (tight.pcie_bytes / 3.94e9 - tight.time).abs() < 0.01 * tight.time,
            "PCIe saturated: {tight:?}"
        );
    }

    #[test]
    fn test_more_drives_never_slower_and_zero_drives_is_host() {
        let mut prev = f64::MAX;
        for n in [0.0, 1.0, 8.0, 24.0, 36.0] {
            let t = hybrid(1e9, 1e8, 1e7, n, 1.0, 3.0, 47e9, 12e9).time;
            assert!(t <= prev);
            prev = t;
        }
        assert_eq!(hybrid(1e9, 1e8, 1e7, 0.0, 1.0, 3.0, 47e9, 12e9).time, 10.0);
    }

    #[test]
    fn test_compressed_bam_rules_out_pud_and_ifp() {
        for k in [
            "inflate_parse",
            "parse",
            "filter",
            "sort",
            "mate_pair",
            "dup_lookup",
            "format_deflate",
        ] {
            assert!(!eligibility(k).pud_ifp, "{k}");
        }
        assert!(!eligibility("dup_lookup").isp);
    }
}
