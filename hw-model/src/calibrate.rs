//! `calibrate`: short measurements of the profiling host, stored in the profile header's
//! `calibration` object so that replay never guesses the host (design §2.3).
//!
//! Schema of `run.calibration` (owned by this crate, documented in PROFILE.md):
//! `dram_latency_ns` (dependent pointer chase over 64 MiB), `mem_bw_1_gbs` / `mem_bw_all_gbs`
//! (sequential read, one thread / one thread per CPU), `inflate_mbs` (uncompressed MB out per
//! second per core), `deflate_mbs` (compressed MB out per second per core at level 6) and
//! `deflate_in_mbs` (its uncompressed input rate), `alloc` (allocator cost: ns per
//! allocate+free pair by allocator and thread count), `seconds` (how long calibration took).
//!
//! Rates are per CPU second of the measuring thread (`CLOCK_THREAD_CPUTIME_ID`), not per wall
//! second, so a busy shared host does not make its own cores look slow.
//!
//! The inflate/deflate data is synthetic SAM-like text compressed in 64 KiB blocks as BGZF does;
//! real BAM compresses differently, so these rates apportion a phase's CPU time between
//! (de)compression and the rest, they do not replace it.

use std::hint::black_box;
use std::time::Instant;

/// CPU seconds the calling thread has used.
#[allow(unsafe_code)] // clock_gettime
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only into the timespec we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A stopwatch over the calling thread's CPU time.
struct CpuTimer(f64);

impl CpuTimer {
    fn start() -> CpuTimer {
        CpuTimer(thread_cpu_s())
    }

    fn seconds(&self) -> f64 {
        (thread_cpu_s() - self.0).max(1e-9)
    }
}

use serde::{Deserialize, Serialize};

use crate::mc::Rng;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Calibration {
    pub dram_latency_ns: f64,
    pub mem_bw_1_gbs: f64,
    pub mem_bw_all_gbs: f64,
    pub inflate_mbs: f64,
    pub deflate_mbs: f64,
    pub deflate_in_mbs: f64,
    pub alloc: Vec<AllocCost>,
    /// CPU seconds per wall second one spinning thread gets, and all threads together (one per
    /// CPU): below 1 and `cpus` when other tenants share the host; 0 when not measured.
    pub cpu_rate_1: f64,
    pub cpu_rate_all: f64,
    pub seconds: f64,
}

impl Default for Calibration {
    /// Class-D stand-ins used when a profile carries no calibration.
    fn default() -> Self {
        Calibration {
            dram_latency_ns: 90.0,
            mem_bw_1_gbs: 10.0,
            mem_bw_all_gbs: 15.0,
            inflate_mbs: 400.0,
            deflate_mbs: 25.0,
            deflate_in_mbs: 60.0,
            alloc: Vec::new(),
            cpu_rate_1: 0.0,
            cpu_rate_all: 0.0,
            seconds: 0.0,
        }
    }
}

/// Cost of one allocate + free pair with `threads` threads allocating at once.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct AllocCost {
    pub allocator: String,
    pub threads: u32,
    pub ns_per_op: f64,
}

impl Calibration {
    /// ns per allocation for `allocator` at `threads`: the measured point, interpolated
    /// linearly in threads (and extrapolated from the last two points), or `None` when that
    /// allocator was not measured.
    pub fn alloc_ns(&self, allocator: &str, threads: f64) -> Option<f64> {
        let mut pts: Vec<(f64, f64)> = self
            .alloc
            .iter()
            .filter(|a| a.allocator == allocator)
            .map(|a| (a.threads as f64, a.ns_per_op))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        match pts.as_slice() {
            [] => None,
            [(_, ns)] => Some(*ns),
            _ => {
                let i = pts.iter().position(|p| p.0 >= threads).unwrap_or(pts.len() - 1).max(1);
                let ((t0, c0), (t1, c1)) = (pts[i - 1], pts[i]);
                let slope = if t1 > t0 { (c1 - c0) / (t1 - t0) } else { 0.0 };
                Some((c0 + slope * (threads - t0)).max(0.0))
            }
        }
    }
}

/// Runs every measurement except the per-allocator ones (those need the mdsam binary, see
/// [`crate::cli`]); `threads` is the number of CPUs to load for the all-thread bandwidth.
pub fn measure(threads: usize) -> Calibration {
    let start = Instant::now();
    let dram_latency_ns = pointer_chase_ns(64 << 20, 2_000_000);
    let mem_bw_1_gbs = read_bandwidth_gbs(256 << 20, 1);
    let mem_bw_all_gbs = read_bandwidth_gbs(256 << 20, threads.max(1));
    let (inflate_mbs, deflate_mbs, deflate_in_mbs) = deflate_rates();
    let cpu_rate_1 = cpu_rate(1, 0.3);
    let cpu_rate_all = cpu_rate(threads.max(1), 0.3);
    Calibration {
        dram_latency_ns,
        mem_bw_1_gbs,
        mem_bw_all_gbs,
        inflate_mbs,
        deflate_mbs,
        deflate_in_mbs,
        alloc: Vec::new(),
        cpu_rate_1,
        cpu_rate_all,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// CPU seconds per wall second that `threads` spinning threads get together over `wall_s`:
/// how much of the host is ours while others run (a shared host gives less than `threads`).
pub fn cpu_rate(threads: usize, wall_s: f64) -> f64 {
    let start = Instant::now();
    let cpu: f64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    let t = CpuTimer::start();
                    let mut x = 1u64;
                    while start.elapsed().as_secs_f64() < wall_s {
                        for _ in 0..10_000 {
                            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                        }
                    }
                    t.seconds()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum()
    });
    cpu / start.elapsed().as_secs_f64()
}

/// Mean latency of a dependent load over a random cyclic permutation of `bytes` (Sattolo's
/// algorithm makes one cycle, so every hop is a fresh, unpredictable line).
pub fn pointer_chase_ns(bytes: usize, steps: usize) -> f64 {
    let n = bytes / std::mem::size_of::<usize>();
    let mut next: Vec<usize> = (0..n).collect();
    let mut rng = Rng::new(0x5eed);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        next.swap(i, j);
    }
    let mut at = 0usize;
    for _ in 0..steps / 10 {
        at = next[at];
    }
    let t = CpuTimer::start();
    for _ in 0..steps {
        at = next[at];
    }
    black_box(at);
    t.seconds() * 1e9 / steps as f64
}

/// Sequential read bandwidth with `threads` threads each summing its share of `bytes`.
pub fn read_bandwidth_gbs(bytes: usize, threads: usize) -> f64 {
    let data: Vec<u64> = (0..bytes / 8).map(|i| i as u64).collect();
    let chunk = data.len().div_ceil(threads);
    let mut best = f64::MAX;
    for _ in 0..2 {
        // The slowest thread's CPU time: what the memory system gave while they all ran.
        let slowest = std::thread::scope(|s| {
            let handles: Vec<_> = data
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        let t = CpuTimer::start();
                        black_box(part.iter().fold(0u64, |a, &v| a.wrapping_add(v)));
                        t.seconds()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(f64::MAX)).fold(0.0, f64::max)
        });
        best = best.min(slowest);
    }
    bytes as f64 / best / 1e9
}

/// BAM-like records: a fixed core, a name, 4-bit packed bases, binned qualities, a few tags;
/// deterministic. (Text would compress better than BAM and make deflate look slower.)
fn bam_like_records(bytes: usize) -> Vec<u8> {
    let mut rng = Rng::new(11);
    let mut out = Vec::with_capacity(bytes + 512);
    let mut pos = 1000u32;
    while out.len() < bytes {
        pos += (rng.next_u64() % 300) as u32;
        out.extend_from_slice(&[0x4c, 0x01, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&pos.to_le_bytes());
        out.extend_from_slice(&[12, 60, 0x49, 0x12, 1, 0, 99, 0, 150, 0, 0, 0]);
        out.extend_from_slice(&(pos + 200).to_le_bytes());
        out.extend_from_slice(format!("read{}\0", rng.next_u64() % 1_000_000).as_bytes());
        out.extend_from_slice(&(150u32 << 4).to_le_bytes());
        for _ in 0..75 {
            let (a, b) = (rng.next_u64() % 4, rng.next_u64() % 4);
            out.push(((1u8 << a) << 4) | (1u8 << b));
        }
        for _ in 0..150 {
            out.push([37u8, 37, 37, 25, 11, 37, 37][(rng.next_u64() % 7) as usize]);
        }
        out.extend_from_slice(b"NMC\0RGZrg1\0");
    }
    out.truncate(bytes);
    out
}

/// (inflate MB/s uncompressed out, deflate MB/s compressed out, deflate MB/s uncompressed in),
/// per core, in 64 KiB blocks at level 6.
pub fn deflate_rates() -> (f64, f64, f64) {
    const BLOCK: usize = 65_280; // BGZF's maximum uncompressed block
    let text = bam_like_records(16 << 20);
    let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(6).expect("level 6"));
    let mut blocks = Vec::new();
    let t = CpuTimer::start();
    for b in text.chunks(BLOCK) {
        let mut out = vec![0u8; c.deflate_compress_bound(b.len())];
        let n = c.deflate_compress(b, &mut out).expect("deflate into a bound-sized buffer");
        out.truncate(n);
        blocks.push((out, b.len()));
    }
    let deflate_s = t.seconds();
    let compressed: usize = blocks.iter().map(|b| b.0.len()).sum();
    let mut d = libdeflater::Decompressor::new();
    let mut out = vec![0u8; BLOCK];
    let t = CpuTimer::start();
    for _ in 0..3 {
        for (b, len) in &blocks {
            let n = d.deflate_decompress(b, &mut out[..*len]).expect("inflate what we deflated");
            black_box(n);
        }
    }
    let inflate_s = t.seconds() / 3.0;
    (
        text.len() as f64 / inflate_s / 1e6,
        compressed as f64 / deflate_s / 1e6,
        text.len() as f64 / deflate_s / 1e6,
    )
}

/// ns per allocate+free with `threads` threads, record-like sizes (a fixed part and a variable
/// part per record, as S0 counts them) and a window of live blocks, so frees hit other sizes.
pub fn alloc_ns_per_op(threads: usize, ops_per_thread: usize) -> f64 {
    // Mean CPU time per op over the threads (contention shows up as more CPU per op).
    let total: f64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    let t = CpuTimer::start();
                    let mut rng = Rng::new(k as u64 + 1);
                    let mut live: Vec<Vec<u8>> = Vec::with_capacity(1024);
                    for i in 0..ops_per_thread {
                        let size =
                            if i % 2 == 0 { 64 } else { 200 + (rng.next_u64() % 400) as usize };
                        let v = black_box(Vec::<u8>::with_capacity(size));
                        if live.len() == 1024 {
                            live.swap_remove((rng.next_u64() % 1024) as usize);
                        }
                        live.push(v);
                    }
                    black_box(live.len());
                    t.seconds()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum()
    });
    total / threads as f64 * 1e9 / ops_per_thread as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_measurements_are_plausible() {
        let lat = pointer_chase_ns(8 << 20, 200_000);
        assert!(lat > 0.5 && lat < 2000.0, "{lat}");
        let bw = read_bandwidth_gbs(16 << 20, 1);
        assert!(bw > 0.1 && bw < 1000.0, "{bw}");
        let a = alloc_ns_per_op(1, 100_000);
        let r = cpu_rate(1, 0.05);
        assert!(r > 0.0 && r <= 1.05, "{r}");
        assert!(a > 0.1 && a < 10_000.0, "{a}");
    }

    #[test]
    fn test_deflate_is_slower_than_inflate() {
        let (inf, def_out, def_in) = deflate_rates();
        assert!(inf > def_in, "inflate {inf} MB/s vs deflate {def_in} MB/s");
        assert!(def_in > def_out, "BAM-like records must compress");
    }

    #[test]
    fn test_alloc_ns_interpolates_and_extrapolates() {
        let mut c = Calibration::default();
        for (t, ns) in [(1, 20.0), (2, 30.0)] {
            c.alloc.push(AllocCost { allocator: "system".into(), threads: t, ns_per_op: ns });
        }
        assert_eq!(c.alloc_ns("system", 1.0), Some(20.0));
        assert_eq!(c.alloc_ns("system", 4.0), Some(50.0));
        assert_eq!(c.alloc_ns("jemalloc", 4.0), None);
    }
}
