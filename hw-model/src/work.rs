//! A profile's phases as machine-independent work: CPU seconds split into serial and parallel
//! parts and into what the work is (plain compute, inflate, deflate, allocation, memory stalls),
//! so each part can be rescaled by the target's own rate for it.
//!
//! Serial versus parallel: mdsam's profile gives the driver thread's CPU (`serial_cpu_s`) and the
//! rest of the process (`pool_cpu_s`). The driver runs inside the pool and takes its share of
//! parallel work, so with `w` workers `serial_cpu_s ≈ S + P/w`, which gives the truly serial
//! part `S`. A one-worker run (`-@ 0`) cannot separate them at all (the driver does everything);
//! then the per-kind parallel fractions of [`parallel_prior`] apply. They come from the structure
//! of mdsam's code, not from a measurement (class D): profile at `-@ 1` or more to measure it.

use crate::calibrate::Calibration;
use crate::profile::{Composition, Phase, Profile};

/// Nominal share of LLC misses among counted random accesses on the profiling host (the
/// machine parameter `miss_fraction` has the same nominal).
pub const HOST_MISS_FRACTION: f64 = 0.6;

#[derive(Clone, Debug, PartialEq)]
pub struct PhaseWork {
    pub name: String,
    pub kind: String,
    /// Share of the CPU work that must run on one thread.
    pub serial_frac: f64,
    /// CPU seconds on the profiling host, by what the work is.
    pub compute_s: f64,
    pub inflate_s: f64,
    pub deflate_s: f64,
    pub alloc_s: f64,
    pub stall_s: f64,
    /// Allocation cost per op on the profiling host with one thread (ns).
    pub alloc_ns1: f64,
    pub allocations: f64,
    pub random_accesses: f64,
    pub bytes_read: f64,
    pub bytes_written: f64,
    pub bytes_inflated: f64,
    pub bytes_deflated: f64,
    pub records: f64,
    /// Bytes streamed through DRAM (estimate: compressed in, inflated out and back, written).
    pub mem_bytes: f64,
    /// Bytes of records the phase holds (its working set; ISP eligibility needs it to fit).
    pub state_bytes: f64,
}

impl PhaseWork {
    pub fn cpu_s(&self) -> f64 {
        self.compute_s + self.inflate_s + self.deflate_s + self.alloc_s + self.stall_s
    }
}

/// The whole run as work: phases, composition, and what the profile measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunWork {
    pub command: String,
    pub composition: Composition,
    pub phases: Vec<PhaseWork>,
    pub workers: f64,
    pub allocator: String,
    pub wall_s: f64,
    pub host_cpus: f64,
    pub input_bytes: f64,
    pub output_bytes: f64,
    /// "sam", "bam" or "none" (PROFILE.md).
    pub output_format: String,
}

/// How much of a phase kind mdsam runs on its pool, from the code's structure (class D).
pub fn parallel_prior(kind: &str) -> f64 {
    match kind {
        // BGZF blocks inflate and parse as batches on the pool; the file read is serial.
        "inflate_parse" => 0.95,
        // SAM splits into byte ranges resynchronised at newlines.
        "parse" => 0.9,
        "filter" => 0.95,
        // Parallel sort of handles; bin/run bookkeeping is serial.
        "sort" => 0.85,
        // fixmate pairs chunks of whole templates in parallel; building the new store is serial.
        "mate_pair" => 0.75,
        "dup_key" => 0.9,
        // markdup decides in parallel windows, then applies flags in order.
        "dup_lookup" => 0.7,
        "merge" => 0.3,
        // Deflate runs on the pool; the ordered write of finished blocks is serial.
        "format_deflate" => 0.95,
        "format" => 0.7,
        _ => 0.5,
    }
}

/// (serial, parallel) CPU seconds of a phase run with `workers` pool workers.
pub fn split_serial(ph: &Phase, workers: f64) -> (f64, f64) {
    let total = (ph.serial_cpu_s + ph.pool_cpu_s).max(ph.cpu_s);
    if total <= 0.0 {
        return (0.0, 0.0);
    }
    if workers <= 1.0 {
        let p = parallel_prior(&ph.kind);
        return (total * (1.0 - p), total * p);
    }
    let s = ((ph.serial_cpu_s - total / workers) / (1.0 - 1.0 / workers))
        .clamp(0.0, ph.serial_cpu_s.min(total));
    (s, total - s)
}

/// Allocation cost per op at one thread, and the contention growth κ per extra thread, for the
/// profile's allocator: measured when calibrated, else 20 ns and κ = 0.02 (class D).
pub fn alloc_model(cal: Option<&Calibration>, allocator: &str) -> (f64, f64) {
    let Some(c) = cal else { return (20.0, 0.02) };
    match (c.alloc_ns(allocator, 1.0), c.alloc_ns(allocator, 2.0)) {
        (Some(one), Some(two)) if one > 0.0 => (one, ((two / one) - 1.0).max(0.0)),
        (Some(one), _) => (one, 0.02),
        _ => (20.0, 0.02),
    }
}

/// Decomposes every phase of `profile`.
pub fn decompose(profile: &Profile) -> RunWork {
    let cal = profile.run.calibration.clone().unwrap_or_default();
    let workers = profile.workers() as f64;
    let (alloc_ns1, kappa) = alloc_model(profile.run.calibration.as_ref(), &profile.run.allocator);
    let alloc_ns_w0 = alloc_ns1 * (1.0 + kappa * (workers.min(profile.host_cpus() as f64) - 1.0));
    let phases = profile
        .phases
        .iter()
        .map(|ph| {
            let (serial, parallel) = split_serial(ph, workers);
            let total = serial + parallel;
            // Apportion the CPU: rates from calibration, never more than the phase used.
            let mut inflate = ph.bytes_inflated / (cal.inflate_mbs * 1e6);
            let mut deflate = ph.bytes_deflated / (cal.deflate_mbs * 1e6);
            let mut alloc = ph.allocations * alloc_ns_w0 * 1e-9;
            let mut stall = ph.random_accesses * HOST_MISS_FRACTION * cal.dram_latency_ns * 1e-9;
            let accounted = inflate + deflate + alloc + stall;
            let cap = 0.9 * total;
            if accounted > cap && accounted > 0.0 {
                let f = cap / accounted;
                inflate *= f;
                deflate *= f;
                alloc *= f;
                stall *= f;
            }
            let compute = (total - inflate - deflate - alloc - stall).max(0.0);
            // After capping, the counts the target rescales must reproduce the capped times.
            let effective_accesses = stall / (HOST_MISS_FRACTION * cal.dram_latency_ns * 1e-9);
            let effective_allocations =
                if alloc_ns_w0 > 0.0 { alloc / (alloc_ns_w0 * 1e-9) } else { 0.0 };
            PhaseWork {
                name: ph.name.clone(),
                kind: ph.kind.clone(),
                serial_frac: if total > 0.0 { serial / total } else { 0.0 },
                compute_s: compute,
                inflate_s: inflate,
                deflate_s: deflate,
                alloc_s: alloc,
                stall_s: stall,
                alloc_ns1,
                allocations: effective_allocations,
                random_accesses: effective_accesses,
                bytes_read: ph.bytes_read,
                bytes_written: ph.bytes_written,
                bytes_inflated: ph.bytes_inflated,
                bytes_deflated: ph.bytes_deflated,
                records: ph.records,
                mem_bytes: ph.bytes_read
                    + 2.0 * ph.bytes_inflated
                    + ph.bytes_deflated
                    + ph.bytes_written,
                state_bytes: ph.peak_rss_bytes,
            }
        })
        .collect();
    RunWork {
        command: profile.run.command.clone(),
        composition: profile.run.composition,
        phases,
        workers,
        allocator: profile.run.allocator.clone(),
        wall_s: profile.run.wall_s,
        host_cpus: profile.host_cpus() as f64,
        input_bytes: profile.run.input_bytes,
        output_bytes: profile.run.output_bytes,
        output_format: profile.run.output_format.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample;

    #[test]
    fn test_split_serial_removes_the_drivers_share_of_parallel_work() {
        // 4 workers, 1 s truly serial, 8 s parallel: the driver also ran 8/4 = 2 s of it.
        let ph = Phase {
            kind: "sort".into(),
            serial_cpu_s: 3.0,
            pool_cpu_s: 6.0,
            cpu_s: 9.0,
            ..Default::default()
        };
        let (s, p) = split_serial(&ph, 4.0);
        assert!((s - 1.0).abs() < 1e-9 && (p - 8.0).abs() < 1e-9, "{s} {p}");
        // One worker: the prior decides.
        let (s1, p1) = split_serial(&ph, 1.0);
        assert!((s1 / (s1 + p1) - 0.15).abs() < 1e-9);
    }

    #[test]
    fn test_decompose_conserves_cpu() {
        let p = sample(
            "markdup",
            "staged",
            &[("read", "inflate_parse", 0.5, 1.5), ("decide", "dup_lookup", 1.0, 0.0)],
        );
        let w = decompose(&p);
        for (ph, pw) in p.phases.iter().zip(&w.phases) {
            assert!((pw.cpu_s() - ph.cpu_s).abs() < 1e-9, "{}", ph.name);
            assert!(pw.compute_s >= 0.0);
        }
        assert!(w.phases[0].inflate_s > 0.0 && w.phases[1].stall_s > 0.0);
    }
}
