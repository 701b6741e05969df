//! One phase on a shared-memory target (the profiling host, the blade, the Superdome Flex, or a
//! host whose data lives in fabric-attached memory): roofline-style bounds over the phase's work
//! (design §2.4).
//!
//! ```text
//! C_eff(w) = min(w, cores) + y_smt·max(0, min(w, hw_threads) − cores)
//! W'       = s_core·(compute + inflate + deflate) + allocations·c_alloc(w) + accesses·miss·L_eff
//! T_cpu    = f·W' + (1 − f)·W'/C_eff(w)                (f: the phase's serial share; Amdahl)
//! T_mem    = mem_bytes / BW_eff(w);  T_sto = read/B_read + written/B_write
//! T        = max(T_cpu, T_mem, T_sto), the arg-max is the phase's bottleneck
//! ```

use serde::Serialize;

use crate::fam;
use crate::numa::numa;
use crate::params::{Kind, Machine};
use crate::work::PhaseWork;

/// What limits a phase (or a run) on a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    CpuSerial,
    CpuParallel,
    Latency,
    Memory,
    Fabric,
    Storage,
    Pcie,
    IspCompute,
    Flash,
    Queue,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::CpuSerial => "cpu-serial",
            Bound::CpuParallel => "cpu-parallel",
            Bound::Latency => "latency",
            Bound::Memory => "dram-bw",
            Bound::Fabric => "fabric",
            Bound::Storage => "storage",
            Bound::Pcie => "pcie",
            Bound::IspCompute => "isp-compute",
            Bound::Flash => "flash-channel",
            Bound::Queue => "queue",
        }
    }
}

/// Bytes moved per link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Links {
    pub storage: f64,
    pub dram: f64,
    /// Socket-to-socket (UPI) and chassis-to-chassis (fabric) traffic.
    pub numa: f64,
    pub fam: f64,
    pub pcie: f64,
    pub flash_internal: f64,
    pub pipe: f64,
}

impl Links {
    pub fn add(&mut self, o: &Links) {
        self.storage += o.storage;
        self.dram += o.dram;
        self.numa += o.numa;
        self.fam += o.fam;
        self.pcie += o.pcie;
        self.flash_internal += o.flash_internal;
        self.pipe += o.pipe;
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseTime {
    pub name: String,
    pub kind: String,
    /// CPU seconds that must run on one thread, and the rest (to spread over C_eff).
    pub serial_s: f64,
    pub parallel_s: f64,
    pub c_eff: f64,
    pub cpu_t: f64,
    pub mem_t: f64,
    pub sto_t: f64,
    pub time: f64,
    pub bound: Bound,
    pub links: Links,
    /// Where the phase ran (host unless the CSD split moved part of it).
    pub placement: String,
    /// Share of the phase's input processed off the host.
    pub offloaded: f64,
}

/// Effective parallel capacity of `workers` threads.
pub fn c_eff(m: &Machine, workers: f64) -> f64 {
    let cores = m.get("cores");
    let hw = m.get("hw_threads").max(cores);
    let w = workers.max(1.0);
    (w * m.get("single_rate")).min(cores) + m.get("y_smt") * (w.min(hw) - cores.ceil()).max(0.0)
}

/// Extra CPU for running more threads than hardware threads (context switches).
pub fn oversubscription(m: &Machine, threads: f64) -> f64 {
    let over = (threads / m.get("hw_threads")).max(1.0);
    1.0 + m.get("oversub_penalty") * (over - 1.0)
}

pub fn phase_time(w: &PhaseWork, m: &Machine, workers: f64) -> PhaseTime {
    let s = m.get("s_core");
    let n = numa(m, workers);
    let miss = m.get("miss_fraction");
    let threads = workers.min(m.get("hw_threads"));
    let alloc_ns = w.alloc_ns1 * s * (1.0 + m.get("alloc_kappa") * (threads - 1.0).max(0.0));
    let accesses = w.random_accesses * miss;
    let stall_ns = if m.kind == Kind::Fam {
        // Per access beyond its own compute: S3(a)'s τ(L) − t_c.
        let t_c =
            if w.random_accesses > 0.0 { s * w.compute_s * 1e9 / w.random_accesses } else { 0.0 };
        let l = m.get("fam_latency_ns");
        fam::access_ns(t_c, l, m.get("n_ctx"), m.get("t_sw_ns"), m.get("prefetch_p")) - t_c
    } else {
        n.latency_ns
    };
    let work = s * (w.compute_s + w.inflate_s + w.deflate_s)
        + w.allocations * alloc_ns * 1e-9
        + accesses * stall_ns * 1e-9;
    let work = work * oversubscription(m, workers);
    let serial_s = w.serial_frac * work;
    let parallel_s = work - serial_s;
    let c = c_eff(m, workers);
    // The serial part runs on one thread at the CPU rate one thread gets.
    let cpu_t = serial_s / m.get("single_rate") + parallel_s / c;
    let mut links = Links { dram: w.mem_bytes, ..Links::default() };
    let (mem_t, sto_t) = if m.kind == Kind::Fam {
        // Input, records and output live in FAM: file I/O becomes FAM traffic.
        let bytes = w.mem_bytes + w.bytes_read + w.bytes_written;
        links.fam = bytes;
        links.dram = 0.0;
        (bytes / (m.get("fam_bw_gbs") * 1e9), 0.0)
    } else {
        links.storage = w.bytes_read + w.bytes_written;
        links.numa = w.mem_bytes * (1.0 - n.local);
        (
            w.mem_bytes / (n.bandwidth_gbs * 1e9),
            w.bytes_read / (m.get("storage_read_gbs") * 1e9)
                + w.bytes_written / (m.get("storage_write_gbs") * 1e9),
        )
    };
    let time = cpu_t.max(mem_t).max(sto_t);
    let bound = if time == sto_t && sto_t > cpu_t {
        Bound::Storage
    } else if time == mem_t && mem_t > cpu_t {
        if n.flex > 0.0 || m.kind == Kind::Fam { Bound::Fabric } else { Bound::Memory }
    } else if accesses * stall_ns * 1e-9 > 0.5 * work {
        Bound::Latency
    } else if serial_s / m.get("single_rate") >= parallel_s / c {
        Bound::CpuSerial
    } else {
        Bound::CpuParallel
    };
    PhaseTime {
        name: w.name.clone(),
        kind: w.kind.clone(),
        serial_s,
        parallel_s,
        c_eff: c,
        cpu_t,
        mem_t,
        sto_t,
        time,
        bound,
        links,
        placement: "host".into(),
        offloaded: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{blade, fam as fam_target, host, sdflex};
    use crate::profile::tests::sample;
    use crate::work::decompose;

    fn run() -> (crate::profile::Profile, Vec<PhaseWork>) {
        let p = sample(
            "markdup",
            "staged",
            &[("read", "inflate_parse", 0.2, 3.8), ("decide", "dup_lookup", 2.0, 0.0)],
        );
        let w = decompose(&p).phases;
        (p, w)
    }

    #[test]
    fn test_host_at_the_profiled_workers_reproduces_cpu() {
        let (p, w) = run();
        let m = host(&p);
        let t = phase_time(&w[0], &m, 1.0);
        assert!((t.cpu_t - p.phases[0].cpu_s).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn test_c_eff_counts_smt_at_its_yield_and_caps() {
        let m = blade();
        assert_eq!(c_eff(&m, 16.0), 16.0);
        assert_eq!(c_eff(&m, 64.0), 32.0 + 0.25 * 32.0);
        assert_eq!(c_eff(&m, 500.0), c_eff(&m, 64.0));
    }

    #[test]
    fn test_more_threads_never_slower_below_hw_threads_and_latency_never_helps() {
        let (p, w) = run();
        for m in [blade(), sdflex(false), sdflex(true)] {
            let mut prev = f64::MAX;
            for n in [1.0, 2.0, 4.0, 16.0, 32.0] {
                let t = phase_time(&w[0], &m, n).time;
                assert!(t <= prev * 1.0001, "{} at {n}: {t} > {prev}", m.name);
                prev = t;
            }
        }
        let mut prev = 0.0;
        for l in [90.0, 400.0, 1000.0, 5000.0] {
            let t = phase_time(&w[1], &fam_target(&p, l), 1.0).time;
            assert!(t >= prev);
            prev = t;
        }
        // The serial lookup phase is latency-bound in slow FAM.
        assert_eq!(phase_time(&w[1], &fam_target(&p, 5000.0), 1.0).bound, Bound::Latency);
    }

    #[test]
    fn test_fam_at_dram_latency_and_bandwidth_equals_host() {
        let (p, w) = run();
        let h = host(&p);
        let mut f = fam_target(&p, h.get("l_local_ns"));
        f.fix("fam_bw_gbs", h.get("b_local_gbs"), "test");
        for ph in &w {
            let (a, b) = (phase_time(ph, &h, 2.0).cpu_t, phase_time(ph, &f, 2.0).cpu_t);
            assert!((a - b).abs() <= 0.01 * a, "{}: {a} vs {b}", ph.name);
        }
    }
}
