//! Composing phases into a command, and commands into the markdup chain (design §2.4).
//!
//! - *staged* (load all, process, write): `T = Σ_p T_p`; a serial phase adds its full time.
//! - *streaming* (batches flow through): the phases overlap, so the run is bounded by its
//!   busiest resource: `T = max(Σ serial (the driver thread), Σ work / C_eff, Σ T_mem, Σ T_sto)`.
//!   This is why a streaming fixmate hides its serial pairing behind inflate/deflate on the pool
//!   while a load-all fixmate pays for every phase in turn (seed 000).
//! - the chain `collate → fixmate → sort → markdup` three ways: *files* (one command after
//!   another through intermediate files), *pipe* (all four at once through pipes, each staged
//!   command a barrier that must consume all input before emitting), *fused* (one process,
//!   one in-memory record list: the `markdup-pipeline` profile itself).

use serde::Serialize;

use crate::host::{Bound, Links, PhaseTime, c_eff, oversubscription, phase_time};
use crate::params::Machine;
use crate::profile::Composition;
use crate::work::{PhaseWork, RunWork};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunTime {
    pub name: String,
    /// Pool workers per command (`-@` + 1).
    pub workers: f64,
    pub phases: Vec<PhaseTime>,
    pub time: f64,
    pub bound: Bound,
    pub links: Links,
    /// CPU seconds of work on the target (for energy).
    pub cpu_s: f64,
}

fn links_of(phases: &[PhaseTime]) -> Links {
    let mut l = Links::default();
    for p in phases {
        l.add(&p.links);
    }
    l
}

/// A streaming group's time: the busiest of its resources. `serial` is the longest single
/// driver thread's serial work, `threads` all threads competing for the cores.
fn overlapped(m: &Machine, phases: &[PhaseTime], serial: f64, threads: f64) -> (f64, Bound) {
    let work: f64 = phases.iter().map(|p| p.serial_s + p.parallel_s).sum::<f64>();
    let cpu = work / c_eff(m, threads);
    let mem: f64 = phases.iter().map(|p| p.mem_t).sum();
    let sto: f64 = phases.iter().map(|p| p.sto_t).sum();
    let serial = serial / m.get("single_rate");
    let t = serial.max(cpu).max(mem).max(sto);
    let bound = if t == sto && sto > cpu.max(serial) {
        Bound::Storage
    } else if t == mem && mem > cpu.max(serial) {
        Bound::Memory
    } else if t == serial {
        // The serial driver bounds the run; say whether its time is mostly memory stalls.
        phases
            .iter()
            .filter(|p| p.serial_s > 0.0)
            .max_by(|a, b| a.serial_s.total_cmp(&b.serial_s))
            .map_or(Bound::CpuSerial, |p| {
                if p.bound == Bound::Latency { Bound::Latency } else { Bound::CpuSerial }
            })
    } else {
        Bound::CpuParallel
    };
    (t, bound)
}

/// One command on `m` with `workers` pool workers.
pub fn compose(run: &RunWork, m: &Machine, workers: f64) -> RunTime {
    let phases: Vec<PhaseTime> = run.phases.iter().map(|p| phase_time(p, m, workers)).collect();
    compose_times(&run.command, run.composition, phases, m, workers)
}

/// Composes already-computed phase times (the CSD target computes them itself).
pub fn compose_times(
    name: &str,
    composition: Composition,
    phases: Vec<PhaseTime>,
    m: &Machine,
    workers: f64,
) -> RunTime {
    let cpu_s = phases.iter().map(|p| p.serial_s + p.parallel_s).sum();
    let (time, bound) = match composition {
        Composition::Staged => {
            let t = phases.iter().map(|p| p.time).sum();
            let b = phases
                .iter()
                .max_by(|a, b| a.time.total_cmp(&b.time))
                .map_or(Bound::CpuSerial, |p| p.bound);
            (t, b)
        }
        Composition::Streaming => {
            let serial = phases.iter().map(|p| p.serial_s).sum();
            overlapped(m, &phases, serial, workers)
        }
    };
    RunTime {
        name: name.to_string(),
        workers,
        links: links_of(&phases),
        phases,
        time,
        bound,
        cpu_s,
    }
}

/// Commands one after another through intermediate files (each pays its start-up).
pub fn files(cmds: &[RunWork], m: &Machine, workers: f64) -> RunTime {
    let runs: Vec<RunTime> = cmds.iter().map(|c| compose(c, m, workers)).collect();
    let time = runs.iter().map(|r| r.time + m.get("cmd_start_s")).sum();
    let slowest =
        runs.iter().max_by(|a, b| a.time.total_cmp(&b.time)).map_or(Bound::CpuSerial, |r| r.bound);
    let mut links = Links::default();
    runs.iter().for_each(|r| links.add(&r.links));
    RunTime {
        name: "files".into(),
        workers,
        phases: runs.into_iter().flat_map(|r| r.phases).collect(),
        time,
        bound: slowest,
        links,
        cpu_s: 0.0,
    }
    .with_cpu()
}

impl RunTime {
    fn with_cpu(mut self) -> RunTime {
        self.cpu_s = self.phases.iter().map(|p| p.serial_s + p.parallel_s).sum();
        self
    }
}

/// Commands all running at once through pipes. A staged command (collate, sort, markdup) is a
/// barrier: its phases before `write` finish a segment, its `write` starts the next. Inside a
/// segment everything overlaps: the bound is the busiest driver thread, all work over the cores
/// shared by every command's workers (with oversubscription), memory or storage. Bytes between
/// commands cross pipes (CPU per byte on both ends) instead of storage.
pub fn pipe(cmds: &[RunWork], m: &Machine, workers: f64) -> RunTime {
    let last = cmds.len().saturating_sub(1);
    // (command index, phase) per segment
    let mut segments: Vec<Vec<(usize, PhaseWork)>> = vec![Vec::new()];
    let mut pipe_bytes = 0.0;
    for (i, c) in cmds.iter().enumerate() {
        for p in &c.phases {
            let mut p = p.clone();
            if i > 0 {
                p.bytes_read = 0.0; // from the pipe
            }
            if i < last && p.bytes_written > 0.0 {
                pipe_bytes += p.bytes_written;
                p.bytes_written = 0.0; // into the pipe
            }
            let is_emit = c.composition == Composition::Staged && p.name == "write";
            if is_emit {
                segments.push(Vec::new());
            }
            segments.last_mut().expect("at least one segment").push((i, p));
        }
    }
    let pipe_serial_per_cmd =
        pipe_bytes / cmds.len().max(1) as f64 * m.get("pipe_ns_per_byte") * 1e-9 * 2.0;
    let mut all = Vec::new();
    let mut time = 0.0;
    let mut worst = (0.0, Bound::CpuSerial);
    for seg in segments.iter().filter(|s| !s.is_empty()) {
        let alive: std::collections::BTreeSet<usize> = seg.iter().map(|(i, _)| *i).collect();
        let threads = workers * alive.len() as f64;
        let over = oversubscription(m, threads) / oversubscription(m, workers);
        let mut times: Vec<PhaseTime> =
            seg.iter().map(|(_, p)| phase_time(p, m, workers)).collect();
        // Oversubscription slows the pool work; each command's driver thread keeps running.
        for t in &mut times {
            t.parallel_s *= over;
        }
        let serial = alive
            .iter()
            .map(|&c| {
                seg.iter()
                    .zip(&times)
                    .filter(|((i, _), _)| *i == c)
                    .map(|(_, t)| t.serial_s)
                    .sum::<f64>()
                    + pipe_serial_per_cmd / 2.0
            })
            .fold(0.0, f64::max);
        let (t, b) = overlapped(m, &times, serial, threads);
        if t > worst.0 {
            worst = (t, b);
        }
        time += t;
        all.extend(times);
    }
    time += m.get("cmd_start_s") * cmds.len() as f64;
    let mut links = links_of(&all);
    links.pipe = pipe_bytes;
    RunTime { name: "pipe".into(), workers, phases: all, time, bound: worst.1, links, cpu_s: 0.0 }
        .with_cpu()
}

/// The chain's commands as they run in a pipe: every intermediate is uncompressed BAM (`-u`),
/// so the writers before the last skip deflate and the readers after the first skip inflate.
pub fn as_piped(cmds: &[RunWork]) -> Vec<RunWork> {
    let last = cmds.len().saturating_sub(1);
    cmds.iter()
        .enumerate()
        .map(|(i, c)| {
            let mut c = c.clone();
            for p in &mut c.phases {
                if i < last && p.name == "write" {
                    p.deflate_s = 0.0;
                    p.bytes_deflated = 0.0;
                    p.kind = "format".into();
                }
                if i > 0 && p.name == "read" {
                    p.inflate_s = 0.0;
                }
            }
            c
        })
        .collect()
}

/// The fused in-memory pipeline: the `markdup-pipeline` profile composed as it ran.
pub fn fused(run: &RunWork, m: &Machine, workers: f64) -> RunTime {
    let mut r = compose(run, m, workers);
    r.time += m.get("cmd_start_s");
    r.name = "fused".into();
    r
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::params::{blade, host};
    use crate::profile::tests::sample;
    use crate::work::decompose;

    /// Synthetic chain profiles with the shape of real ones (CPU seconds per phase).
    pub(crate) fn chain() -> (Vec<RunWork>, Vec<RunWork>, RunWork) {
        let cmd = |name: &str, comp: &str, mid: &[(&str, &str, f64, f64)], write: f64| {
            let mut ph = vec![("read", "inflate_parse", 0.05, 1.0)];
            ph.extend_from_slice(mid);
            ph.push(("write", "format_deflate", 0.05, write));
            decompose(&sample(name, comp, &ph))
        };
        let mk = |w: f64| {
            vec![
                cmd("collate", "staged", &[("collate", "sort", 0.1, 0.4)], w),
                cmd("fixmate", "streaming", &[("pair", "mate_pair", 0.3, 0.3)], w),
                cmd("sort", "staged", &[("sort", "sort", 0.1, 0.6)], w),
                cmd(
                    "markdup",
                    "staged",
                    &[("key", "dup_key", 0.05, 0.3), ("decide", "dup_lookup", 0.3, 0.2)],
                    2.5,
                ),
            ]
        };
        let fused = decompose(&sample(
            "markdup-pipeline",
            "staged",
            &[
                ("read", "inflate_parse", 0.05, 1.0),
                ("collate", "sort", 0.1, 0.4),
                ("pair", "mate_pair", 0.3, 0.3),
                ("sort", "sort", 0.1, 0.6),
                ("key", "dup_key", 0.05, 0.3),
                ("decide", "dup_lookup", 0.3, 0.2),
                ("write", "format_deflate", 0.05, 2.5),
            ],
        ));
        (mk(2.5), mk(0.3), fused)
    }

    #[test]
    fn test_staged_sums_and_streaming_overlaps() {
        let p = sample(
            "fixmate",
            "streaming",
            &[
                ("read", "inflate_parse", 0.1, 2.0),
                ("pair", "mate_pair", 1.0, 0.0),
                ("write", "format_deflate", 0.1, 2.0),
            ],
        );
        let mut w = decompose(&p);
        let m = blade();
        let stream = compose(&w, &m, 16.0).time;
        w.composition = Composition::Staged;
        let staged = compose(&w, &m, 16.0).time;
        assert!(staged > stream, "{staged} vs {stream}");
        // On one worker both are the total work.
        let h = host(&p);
        let one = compose(&w, &h, 1.0).time;
        assert!((one - p.run.cpu_s).abs() < 1e-6 * one.max(1.0) || one >= p.run.cpu_s * 0.99);
    }

    /// V-S0-4 on synthetic profiles: fused < pipe < files on the blade and both SDF readings.
    #[test]
    fn test_s0_fused_beats_pipe_beats_files_on_synthetic_profiles() {
        let (f, p, fu) = chain();
        for (n, m) in crate::s0::tests::every_s0_point() {
            // S0's files and pipe modes ran samtools 1.9's commands.
            let f: Vec<RunWork> = f.iter().map(|c| crate::s0::orig_command(c, n)).collect();
            let p: Vec<RunWork> = p.iter().map(|c| crate::s0::orig_command(c, n)).collect();
            let (tf, tp, tu) =
                (files(&f, &m, n).time, pipe(&p, &m, n).time, fused(&fu, &m, n).time);
            assert!(tu < tp && tp < tf, "{} n={n}: fused {tu} pipe {tp} files {tf}", m.name);
        }
    }

    #[test]
    fn test_pipe_moves_intermediate_bytes_through_pipes() {
        let (_, p, _) = chain();
        let r = pipe(&p, &blade(), 16.0);
        assert!(r.links.pipe > 0.0);
        let f = files(&p, &blade(), 16.0);
        assert!(f.links.storage > r.links.storage);
    }
}
