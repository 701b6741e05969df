//! Parameters with provenance, and the target machines built from them.
//!
//! Every number a prediction uses is a [`Param`]: a nominal value, a range and where it comes
//! from, with a confidence class (design note §1: A = stated in a seed, B = public primary source
//! or measured dump, C = secondary source, D = our derivation or assumption, M = measured on the
//! profiling host by `calibrate` or the profile itself). Intervals come from sampling the ranges
//! ([`crate::mc`]); inconsistent seed figures stay visible as alternative presets (the two
//! Superdome Flex readings) instead of being "fixed".

use crate::mc::Rng;
use crate::profile::Profile;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    A,
    B,
    C,
    D,
    M,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub key: &'static str,
    pub nominal: f64,
    pub low: f64,
    pub high: f64,
    pub class: Class,
    pub source: String,
}

/// What kind of machine a target is; selects the model terms that apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The profiling host or a shared-memory server (blade, Superdome Flex).
    Server,
    /// A server whose data lives in fabric-attached memory (FAME-style, configurable latency).
    Fam,
    /// A server with an array of computational storage drives.
    Csd,
}

/// A target machine: a name and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub name: String,
    pub kind: Kind,
    pub params: Vec<Param>,
}

impl Machine {
    pub fn get(&self, key: &str) -> f64 {
        self.params
            .iter()
            .find(|p| p.key == key)
            .unwrap_or_else(|| panic!("machine {} has no parameter {key}", self.name))
            .nominal
    }

    pub fn param(&self, key: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.key == key)
    }

    /// Sets (or adds) a parameter's value, keeping its range wide enough to hold the value.
    pub fn set(&mut self, key: &'static str, value: f64, class: Class, source: &str) {
        match self.params.iter_mut().find(|p| p.key == key) {
            Some(p) => {
                p.nominal = value;
                p.low = p.low.min(value);
                p.high = p.high.max(value);
                p.class = class;
                p.source = source.to_string();
            }
            None => self.params.push(param(key, value, value, value, class, source)),
        }
    }

    /// Sets a parameter to one exact value (a sweep point chosen by the user).
    pub fn fix(&mut self, key: &'static str, value: f64, source: &str) {
        self.set(key, value, Class::D, source);
        if let Some(p) = self.params.iter_mut().find(|p| p.key == key) {
            p.low = value;
            p.high = value;
        }
    }

    /// The same machine with every parameter drawn uniformly from its range.
    pub fn sampled(&self, rng: &mut Rng) -> Machine {
        let mut m = self.clone();
        for p in &mut m.params {
            if p.high > p.low {
                p.nominal = p.low + (p.high - p.low) * rng.next_f64();
            }
        }
        m
    }

    /// The parameters whose class is C or D: predictions that rest on them say so.
    pub fn weak_params(&self) -> Vec<&Param> {
        self.params.iter().filter(|p| matches!(p.class, Class::C | Class::D)).collect()
    }
}

pub fn param(
    key: &'static str,
    nominal: f64,
    low: f64,
    high: f64,
    class: Class,
    source: &str,
) -> Param {
    Param { key, nominal, low, high, class, source: source.to_string() }
}

fn exact(key: &'static str, v: f64, class: Class, source: &str) -> Param {
    param(key, v, v, v, class, source)
}

/// Terms every server shares; the caller overrides what it knows.
fn common() -> Vec<Param> {
    use Class::*;
    vec![
        exact("single_rate", 1.0, D, "a dedicated CPU per thread"),
        param(
            "y_smt",
            0.25,
            0.1,
            0.4,
            D,
            "throughput a second hardware thread adds to a core (design §2.4)",
        ),
        param(
            "miss_fraction",
            0.6,
            0.3,
            1.0,
            D,
            "share of counted random accesses that miss the LLC",
        ),
        param("storage_read_gbs", 2.0, 0.5, 3.5, D, "input file read rate (page cache / NVMe)"),
        param("storage_write_gbs", 1.5, 0.5, 3.0, D, "output file write rate"),
        param(
            "pipe_ns_per_byte",
            0.4,
            0.2,
            0.8,
            D,
            "CPU per byte through a Unix pipe (write + read copy)",
        ),
        param("cmd_start_s", 0.005, 0.002, 0.02, D, "start and teardown of one command"),
        param(
            "oversub_penalty",
            0.05,
            0.0,
            0.15,
            D,
            "extra CPU time per unit of oversubscription (context switches)",
        ),
        param("p_core_w", 6.0, 4.0, 10.0, D, "power per busy core above idle"),
        param(
            "mlp",
            6.0,
            4.0,
            10.0,
            D,
            "outstanding misses one core sustains on data-dependent code (Intel LFB 10-12)",
        ),
    ]
}

/// The profiling host, from the profile's header and (when present) its calibration.
pub fn host(profile: &Profile) -> Machine {
    use Class::*;
    let cpus = profile.host_cpus() as f64;
    let cal = profile.run.calibration.clone().unwrap_or_default();
    let measured = profile.run.calibration.is_some();
    let (lat_class, lat_src) = if measured {
        (M, "calibrate: pointer chase")
    } else {
        (D, "default (no calibration in profile)")
    };
    let mut params: Vec<Param> =
        common().into_iter().filter(|p| !matches!(p.key, "single_rate" | "y_smt")).collect();
    params.extend([
        // On a shared host the cores that count are the CPU time we get: one thread's rate and
        // all threads' together, measured by calibrate (a dedicated host: 1 and cpus).
        if cal.cpu_rate_all > 0.0 {
            exact(
                "cores",
                cal.cpu_rate_all.min(cpus),
                M,
                "calibrate: CPU rate of one spinning thread per CPU",
            )
        } else {
            exact("cores", cpus, M, "profile run.host.cpus")
        },
        if cal.cpu_rate_1 > 0.0 {
            exact(
                "single_rate",
                cal.cpu_rate_1.min(1.0),
                M,
                "calibrate: CPU rate of one spinning thread",
            )
        } else {
            exact("single_rate", 1.0, D, "not calibrated: a dedicated CPU")
        },
        exact("hw_threads", cpus, M, "profile run.host.cpus"),
        exact("y_smt", 0.0, M, "logical CPUs counted as cores"),
        exact("sockets", 1.0, D, "profiling host treated as one NUMA node"),
        exact("sockets_per_chassis", 1.0, D, "one chassis"),
        exact("s_core", 1.0, M, "same cores as the profile"),
        param(
            "l_local_ns",
            cal.dram_latency_ns,
            cal.dram_latency_ns * 0.9,
            cal.dram_latency_ns * 1.1,
            lat_class,
            lat_src,
        ),
        exact("l_upi_ns", cal.dram_latency_ns, D, "single node"),
        exact("l_flex_ns", cal.dram_latency_ns, D, "single node"),
        param(
            "b_local_gbs",
            cal.mem_bw_all_gbs,
            cal.mem_bw_all_gbs * 0.8,
            cal.mem_bw_all_gbs * 1.2,
            lat_class,
            "calibrate: sequential read, all threads",
        ),
        exact("b_upi_gbs", cal.mem_bw_all_gbs, D, "single node"),
        exact("b_flex_gbs", cal.mem_bw_all_gbs, D, "single node"),
        param("p_idle_w", 40.0, 20.0, 80.0, D, "host idle power (no RAPL in the profile)"),
    ]);
    let (_, kappa) =
        crate::work::alloc_model(profile.run.calibration.as_ref(), &profile.run.allocator);
    let measured_alloc = profile
        .run
        .calibration
        .as_ref()
        .is_some_and(|c| c.alloc_ns(&profile.run.allocator, 2.0).is_some());
    params.push(if measured_alloc {
        exact("alloc_kappa", kappa, M, "calibrate: allocator cost at 1 and 2 threads")
    } else {
        param("alloc_kappa", kappa, 0.0, 0.05, D, "allocator contention growth per extra thread")
    });
    Machine { name: "host".into(), kind: Kind::Server, params }
}

/// Seed 000's Dell blade: 2 sockets, 32 cores, 64 threads, 768 GB.
pub fn blade() -> Machine {
    use Class::*;
    let mut params = common();
    params.extend([
        exact("cores", 32.0, A, "S0: Dell blade 2 sockets, 32 cores"),
        exact("hw_threads", 64.0, A, "S0: 64 threads"),
        exact("sockets", 2.0, A, "S0: 2 sockets"),
        exact("sockets_per_chassis", 2.0, A, "S0"),
        param(
            "s_core",
            1.0,
            0.7,
            1.5,
            D,
            "per-core time vs the profiling host: CPU model not in S0",
        ),
        param(
            "l_local_ns",
            90.0,
            80.0,
            100.0,
            B,
            "Skylake 2S MLC local idle latency (hpcleuven skylake_mlc.txt)",
        ),
        param(
            "l_upi_ns",
            144.0,
            130.0,
            165.0,
            B,
            "Skylake 2S MLC remote latency; Quartz sample 164 ns",
        ),
        exact("l_flex_ns", 144.0, D, "no second chassis"),
        param(
            "b_local_gbs",
            104.0,
            60.0,
            128.0,
            B,
            "MLC local read per socket (older blades lower)",
        ),
        param("b_upi_gbs", 34.0, 20.0, 40.0, B, "MLC cross-socket read"),
        exact("b_flex_gbs", 34.0, D, "no second chassis"),
        param("p_idle_w", 150.0, 100.0, 200.0, D, "2-socket server idle"),
        param("alloc_kappa", 0.02, 0.0, 0.05, D, "allocator contention growth per extra thread"),
    ]);
    Machine { name: "blade".into(), kind: Kind::Server, params }
}

/// HPE Superdome Flex as seed 000 ran it. `literal`: "16 sockets, 144 cores" (9 cores a socket,
/// no such SKU); otherwise the physically consistent 8 sockets × 18 cores (design §1.9.1).
pub fn sdflex(literal: bool) -> Machine {
    use Class::*;
    let (sockets, name, src) = if literal {
        (16.0, "sdflex-literal", "S0 literal: 16 sockets × 9 cores")
    } else {
        (8.0, "sdflex", "S0 consistent reading: 2 chassis × 4 sockets × 18 cores")
    };
    let mut params = common();
    params.extend([
        exact("cores", 144.0, A, "S0: 144 cores"),
        exact("hw_threads", 288.0, A, "S0: 288 threads"),
        exact("sockets", sockets, D, src),
        exact(
            "sockets_per_chassis",
            4.0,
            B,
            "SDF chassis holds 4 sockets (HPE architecture paper)",
        ),
        param("s_core", 1.0, 0.7, 1.5, D, "per-core time vs the profiling host: SKU not in S0"),
        param("l_local_ns", 90.0, 80.0, 100.0, B, "Skylake MLC local idle latency"),
        param("l_upi_ns", 144.0, 130.0, 165.0, B, "Skylake MLC 1-hop UPI latency"),
        param(
            "l_flex_ns",
            400.0,
            250.0,
            600.0,
            D,
            "cross-chassis Flex ASIC: no public figure (NUMAlink 7 ~500 ns, class C)",
        ),
        param("b_local_gbs", 104.0, 80.0, 128.0, B, "MLC local read per socket"),
        param("b_upi_gbs", 34.0, 20.0, 40.0, B, "MLC cross-socket read"),
        param("b_flex_gbs", 68.0, 34.0, 136.0, D, "per-chassis fabric bandwidth: 2× UPI (1-4×)"),
        param("p_idle_w", 1200.0, 800.0, 2000.0, D, "16-socket system idle"),
        param("alloc_kappa", 0.02, 0.0, 0.05, D, "allocator contention growth per extra thread"),
    ]);
    Machine { name: name.into(), kind: Kind::Server, params }
}

/// The profiling host with its data in fabric-attached memory of latency `latency_ns`.
/// FAME itself has no timing: this is "a fabric memory with L = x" (design §2.6).
pub fn fam(profile: &Profile, latency_ns: f64) -> Machine {
    use Class::*;
    let mut m = host(profile);
    m.name = format!("fam-{latency_ns}ns");
    m.kind = Kind::Fam;
    m.params.extend([
        exact(
            "fam_latency_ns",
            latency_ns,
            D,
            "chosen latency (Gen-Z ZMM 400 ns, class C; sweep 100 ns-10 us)",
        ),
        param("fam_bw_gbs", 30.0, 15.0, 60.0, C, "Gen-Z ZMM module 30 GB/s (AnandTech SC19)"),
        exact("n_ctx", 1.0, D, "contexts per thread: 1 for today's code (no coroutines)"),
        param(
            "t_sw_ns",
            10.0,
            5.0,
            20.0,
            A,
            "S3(c): < 10 ns per request with stackless coroutines",
        ),
        param("prefetch_p", 10.0, 8.0, 12.0, D, "outstanding prefetches per core (Intel LFB)"),
    ]);
    m
}

/// The profiling host with `drives` Newport-class computational storage drives (seed 001).
pub fn csd(profile: &Profile, drives: f64) -> Machine {
    use Class::*;
    let mut m = host(profile);
    m.name = format!("csd-x{drives}");
    m.kind = Kind::Csd;
    m.params.extend([
        exact("drives", drives, D, "chosen array size"),
        exact("pcie_gbs", 3.94, A, "S1: NVMe over PCIe Gen3 x4 = 3,940 MB/s"),
        param(
            "host_pcie_cap_gbs",
            47.0,
            30.0,
            47.0,
            D,
            "root-complex lanes (48 on a Xeon Silver 4108)",
        ),
        exact("flash_channels", 16.0, A, "S1: 16 flash channels"),
        param("b_ch_gbs", 0.8, 0.4, 1.2, D, "per-channel rate: S1 gives none; S2 1.2 GB/s"),
        exact("isp_cores", 4.0, A, "S1: quad Cortex-A53 @ 1 GHz"),
        param(
            "s_arm",
            8.0,
            5.0,
            13.0,
            D,
            "A53 core time vs one host core, derived from S1's host/CSD ratios",
        ),
        param("isp_dram_gb", 4.0, 4.0, 8.0, A, "S1 Table 2: 4-8 GB"),
        exact("p_drive_idle_w", 6.6, A, "S1: (405-167 W)/36 drives"),
        exact("p_isp_w", 0.28, A, "S1: (492-482 W)/36 ISP engines"),
        param("e_pcie_pj_per_bit", 5.0, 2.0, 10.0, D, "PCIe link energy"),
        exact("e_flash_read_uj_per_page", 20.5, A, "S2 Table 2: E_read 20.5 uJ per 4 KiB page"),
        exact("offload_overhead_us", 3.77, A, "S2: mean runtime overhead per offloaded unit"),
    ]);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_presets_carry_ranges_that_hold_the_nominal() {
        let p = crate::profile::tests::sample(
            "view",
            "streaming",
            &[("read", "inflate_parse", 0.1, 0.9)],
        );
        for m in [host(&p), blade(), sdflex(false), sdflex(true), fam(&p, 1000.0), csd(&p, 36.0)] {
            for q in &m.params {
                assert!(q.low <= q.nominal && q.nominal <= q.high, "{} {}", m.name, q.key);
                assert!(!q.source.is_empty());
            }
        }
        assert_eq!(sdflex(true).get("sockets"), 16.0);
        assert_eq!(sdflex(false).get("sockets"), 8.0);
        assert!(sdflex(false).weak_params().iter().any(|q| q.key == "l_flex_ns"));
    }

    #[test]
    fn test_sampled_stays_in_range_and_fix_pins() {
        let mut m = blade();
        m.fix("s_core", 1.0, "test");
        let mut rng = Rng::new(3);
        for _ in 0..50 {
            let s = m.sampled(&mut rng);
            assert_eq!(s.get("s_core"), 1.0);
            let l = s.get("l_local_ns");
            assert!((80.0..=100.0).contains(&l));
        }
    }
}
