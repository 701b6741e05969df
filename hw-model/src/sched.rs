//! A Conduit-style placement scheduler (seed 002, Eq. 1-2) at **chunk** granularity (a 4 MiB
//! extent or a BGZF batch of a phase), not Conduit's instruction granularity (design §2.8).
//!
//! For each chunk, in issue order, and each resource that supports its operation:
//!
//! ```text
//! cost_r = comp_r + dm_r + max(dd, queue_r) (+ offload overhead off the host)
//!   comp_r  = bytes / rate_r(op)            dm_r = bytes / B(path from operands to r) + latency
//!   dd      = producers' finish − now        queue_r = busy_until(r) − now
//! ```
//!
//! Policies on the same chunks: `conduit` (argmin cost), `dm` (argmin data movement: everything
//! goes where the data is, and the in-flash engine's queue grows), `bw` (least-busy resource,
//! blind to speed), `ideal` (argmin compute, no queues, no movement: a bound), `host-only`,
//! `isp-only`. Links (flash channels, PCIe) are shared servers, so transfers queue too.

use serde::Serialize;

/// Where a chunk can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, PartialOrd, Ord)]
pub enum Resource {
    Host,
    Isp,
    Pud,
    Ifp,
}

impl Resource {
    pub const ALL: [Resource; 4] = [Resource::Host, Resource::Isp, Resource::Pud, Resource::Ifp];

    pub fn name(self) -> &'static str {
        match self {
            Resource::Host => "host",
            Resource::Isp => "ISP",
            Resource::Pud => "PuD-SSD",
            Resource::Ifp => "IFP",
        }
    }

    /// Where a resource keeps its operands.
    fn location(self) -> Location {
        match self {
            Resource::Host => Location::Host,
            Resource::Isp | Resource::Pud => Location::SsdDram,
            Resource::Ifp => Location::Flash,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Location {
    Flash,
    SsdDram,
    Host,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    Conduit,
    Dm,
    Bw,
    Ideal,
    HostOnly,
    IspOnly,
}

impl Policy {
    pub const ALL: [Policy; 6] =
        [Policy::Conduit, Policy::Dm, Policy::Bw, Policy::Ideal, Policy::HostOnly, Policy::IspOnly];

    pub fn parse(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Policy::Conduit => "conduit",
            Policy::Dm => "dm",
            Policy::Bw => "bw",
            Policy::Ideal => "ideal",
            Policy::HostOnly => "host-only",
            Policy::IspOnly => "isp-only",
        }
    }
}

/// One unit of work.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Operation kind (an mdsam phase kind or a bulk op such as "and", "add", "mul").
    pub op: String,
    pub bytes: f64,
    /// Chunks whose output this one reads.
    pub deps: Vec<usize>,
    /// Depends on every chunk before this index (a staged phase's barrier).
    pub barrier: Option<usize>,
    /// The phase it belongs to (for per-phase placement).
    pub group: usize,
}

/// Rates (bytes/s) per resource and op; `None`: not supported there.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    pub rates: Vec<(Resource, String, f64)>,
    /// Flash channels in aggregate, and PCIe (bytes/s).
    pub channel_bw: f64,
    pub pcie_bw: f64,
    /// Per-transfer latency (T_DMA 3.3 us per page in S2).
    pub transfer_latency_s: f64,
    pub offload_overhead_s: f64,
    /// Busy power of each resource (W), static power of the system (W), energy per byte moved
    /// on PCIe and channels (J/byte).
    pub busy_w: Vec<(Resource, f64)>,
    pub static_w: f64,
    pub e_pcie_per_byte: f64,
    pub e_channel_per_byte: f64,
}

impl System {
    pub fn rate(&self, r: Resource, op: &str) -> Option<f64> {
        self.rates.iter().find(|(res, o, _)| *res == r && o == op).map(|x| x.2)
    }

    /// (seconds, link) to move `bytes` from `from` to `to` without contention.
    fn path(&self, from: Location, to: Location, bytes: f64) -> (f64, Option<Link>) {
        use Location::*;
        match (from, to) {
            (a, b) if a == b => (0.0, None),
            (Flash, SsdDram) | (SsdDram, Flash) => {
                (bytes / self.channel_bw + self.transfer_latency_s, Some(Link::Channel))
            }
            _ => (bytes / self.pcie_bw + self.transfer_latency_s, Some(Link::Pcie)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Channel,
    Pcie,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Outcome {
    pub policy: String,
    pub makespan_s: f64,
    pub energy_j: f64,
    pub pcie_bytes: f64,
    pub channel_bytes: f64,
    /// Share of chunks placed on each resource (host, ISP, PuD, IFP).
    pub shares: [f64; 4],
    pub p99_latency_s: f64,
    /// Per chunk: where it ran.
    #[serde(skip)]
    pub placed: Vec<Resource>,
}

impl Outcome {
    pub fn share(&self, r: Resource) -> f64 {
        self.shares[r as usize]
    }

    /// The resource that got the most chunks, and its share.
    pub fn max_share(&self) -> (Resource, f64) {
        Resource::ALL
            .into_iter()
            .map(|r| (r, self.share(r)))
            .fold((Resource::Host, 0.0), |a, b| if b.1 > a.1 { b } else { a })
    }
}

/// A resource that can take a chunk: (resource, compute s, data-movement s, queue s).
type Candidate = (Resource, f64, f64, f64);

/// Runs `chunks` (issued `issue_gap_s` apart, in order) on `sys` under `policy`.
pub fn schedule(sys: &System, chunks: &[Chunk], policy: Policy, issue_gap_s: f64) -> Outcome {
    let mut busy = [0.0f64; 4];
    let mut busy_time = [0.0f64; 4];
    let (mut chan_free, mut pcie_free) = (0.0f64, 0.0f64);
    let mut finish = vec![0.0f64; chunks.len()];
    let mut prefix_max = vec![0.0f64; chunks.len() + 1];
    let mut placed = Vec::with_capacity(chunks.len());
    let mut latencies = Vec::with_capacity(chunks.len());
    let (mut pcie_bytes, mut channel_bytes) = (0.0, 0.0);
    for (i, c) in chunks.iter().enumerate() {
        let now = i as f64 * issue_gap_s;
        let mut ready = c.deps.iter().map(|&d| finish[d]).fold(0.0, f64::max);
        if let Some(b) = c.barrier {
            ready = ready.max(prefix_max[b.min(i)]);
        }
        // Operands live where the producer ran (in flash for input data).
        let from = c.deps.first().map_or(Location::Flash, |&d| placed_loc(&placed, d));
        let dd = (ready - now).max(0.0);
        let candidates: Vec<Candidate> = Resource::ALL
            .into_iter()
            .filter(|&r| match policy {
                Policy::HostOnly => r == Resource::Host,
                Policy::IspOnly => {
                    r == Resource::Isp
                        || sys.rate(Resource::Isp, &c.op).is_none() && r == Resource::Host
                }
                _ => true,
            })
            .filter_map(|r| {
                let rate = sys.rate(r, &c.op)?;
                let comp = c.bytes / rate;
                let dm = sys.path(from, r.location(), c.bytes).0;
                let queue = (busy[r as usize] - now).max(0.0);
                Some((r, comp, dm, queue))
            })
            .collect();
        let overhead = |r: Resource| if r == Resource::Host { 0.0 } else { sys.offload_overhead_s };
        let by = |key: &dyn Fn(&Candidate) -> (f64, f64)| {
            candidates
                .iter()
                .min_by(|a, b| {
                    let (ka, kb) = (key(a), key(b));
                    ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
                })
                .copied()
        };
        let choice = match policy {
            Policy::Conduit | Policy::HostOnly | Policy::IspOnly => {
                by(&|&(r, comp, dm, q)| (comp + dm + dd.max(q) + overhead(r), comp))
            }
            Policy::Dm => by(&|&(_, comp, dm, _)| (dm, comp)),
            Policy::Bw => by(&|&(_, comp, _, q)| (q, comp)),
            Policy::Ideal => by(&|&(_, comp, _, _)| (comp, 0.0)),
        };
        let Some((r, comp, _, _)) = choice else {
            panic!("no resource supports operation \"{}\"", c.op);
        };
        let start_data = now.max(ready);
        let done = if policy == Policy::Ideal {
            start_data + comp
        } else {
            let (t, link) = sys.path(from, r.location(), c.bytes);
            let arrive = match link {
                Some(Link::Channel) => {
                    let s = start_data.max(chan_free);
                    chan_free = s + t;
                    channel_bytes += c.bytes;
                    s + t
                }
                Some(Link::Pcie) => {
                    let s = start_data.max(pcie_free);
                    pcie_free = s + t;
                    pcie_bytes += c.bytes;
                    s + t
                }
                None => start_data,
            };
            let s = arrive.max(busy[r as usize]) + overhead(r);
            busy[r as usize] = s + comp;
            s + comp
        };
        busy_time[r as usize] += comp;
        finish[i] = done;
        prefix_max[i + 1] = prefix_max[i].max(done);
        latencies.push(done - now);
        placed.push(r);
    }
    let makespan = finish.iter().copied().fold(0.0, f64::max);
    let mut shares = [0.0; 4];
    for r in &placed {
        shares[*r as usize] += 1.0 / placed.len().max(1) as f64;
    }
    let busy_j: f64 = sys.busy_w.iter().map(|(r, w)| w * busy_time[*r as usize]).sum();
    latencies.sort_by(f64::total_cmp);
    let p99 = latencies
        .get(((latencies.len() as f64 * 0.99) as usize).min(latencies.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0);
    Outcome {
        policy: policy.name().into(),
        makespan_s: makespan,
        energy_j: sys.static_w * makespan
            + busy_j
            + sys.e_pcie_per_byte * pcie_bytes
            + sys.e_channel_per_byte * channel_bytes,
        pcie_bytes,
        channel_bytes,
        shares,
        p99_latency_s: p99,
        placed,
    }
}

fn placed_loc(placed: &[Resource], d: usize) -> Location {
    placed.get(d).map_or(Location::Flash, |r| r.location())
}

/// Seed 002's simulated SSD (Table 2) with a host, as a [`System`] for bulk operations: IFP is
/// fast at bitwise work in place and slow at arithmetic, PuD fast at bitwise and arithmetic in
/// SSD DRAM, the ISP cores slow but general, the host fast but across PCIe (rates class D,
/// chosen to respect S2's qualitative table: IFP avoided for multiplication).
pub fn s2_system() -> System {
    use Resource::*;
    let g = 1e9;
    let rates = vec![
        (Host, "and", 3.0 * g),
        (Host, "add", 3.0 * g),
        (Host, "mul", 3.0 * g),
        (Host, "complex", 3.0 * g),
        (Isp, "and", 1.0 * g),
        (Isp, "add", 1.0 * g),
        (Isp, "mul", 0.8 * g),
        (Isp, "complex", 0.5 * g),
        (Pud, "and", 6.0 * g),
        (Pud, "add", 3.0 * g),
        (Pud, "mul", 0.6 * g),
        (Ifp, "and", 12.0 * g),
        (Ifp, "add", 0.8 * g),
    ];
    System {
        rates: rates.into_iter().map(|(r, o, v)| (r, o.to_string(), v)).collect(),
        channel_bw: 8.0 * 1.2e9,
        pcie_bw: 8.0e9,
        transfer_latency_s: 3.3e-6,
        offload_overhead_s: 3.77e-6,
        busy_w: vec![(Host, 100.0), (Isp, 2.0), (Pud, 1.5), (Ifp, 1.0)],
        static_w: 60.0,
        e_pcie_per_byte: 5e-12 * 8.0,
        e_channel_per_byte: 7.656e-6 / 4096.0,
    }
}

/// A mixed, contention-heavy bulk workload (S2 §6: bitwise-heavy with arithmetic and some
/// general code), `chains` independent dependence chains of 4 MiB chunks.
pub fn s2_mixed_workload(chunks: usize, chains: usize) -> Vec<Chunk> {
    let ops = ["and", "and", "add", "and", "mul", "and", "add", "complex", "and", "add"];
    (0..chunks)
        .map(|i| Chunk {
            op: ops[i % ops.len()].to_string(),
            bytes: 4.0 * 1024.0 * 1024.0,
            deps: if i >= chains { vec![i - chains] } else { Vec::new() },
            barrier: None,
            group: 0,
        })
        .collect()
}

/// An mdsam run on a CSD target as chunks and a [`System`]: each phase cut into up to 256
/// chunks of its data; streaming phases chain chunk to chunk, staged phases wait for the whole
/// previous phase. Host rates come from the host model, ISP rates from `s_arm`; PuD and IFP get
/// no rates: compressed BAM is not bulk-bitwise data.
pub fn from_run(
    run: &crate::work::RunWork,
    m: &crate::params::Machine,
    workers: f64,
) -> (System, Vec<Chunk>) {
    use crate::csd::eligibility;
    use crate::host::phase_time;
    let drives = m.get("drives");
    let mut rates = Vec::new();
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut prev: Option<(usize, usize)> = None; // (first index, count) of the previous phase
    for (g, p) in run.phases.iter().enumerate() {
        let bytes =
            p.bytes_read.max(p.bytes_inflated).max(p.bytes_written).max(p.records * 300.0).max(1.0);
        let op = format!("{g}:{}", p.kind);
        let t = phase_time(p, m, workers);
        rates.push((Resource::Host, op.clone(), bytes / t.time.max(1e-12)));
        if eligibility(&p.kind).isp && drives > 0.0 {
            let cpu_per_byte = (t.serial_s + t.parallel_s) / bytes;
            rates.push((
                Resource::Isp,
                op.clone(),
                drives * m.get("isp_cores") / (m.get("s_arm") * cpu_per_byte.max(1e-18)),
            ));
        }
        let n = ((bytes / (4.0 * 1024.0 * 1024.0)).ceil() as usize).clamp(1, 256);
        let first = chunks.len();
        for j in 0..n {
            let (deps, barrier) = match (prev, run.composition) {
                (Some((pf, pn)), crate::profile::Composition::Streaming) => {
                    (vec![pf + j.min(pn - 1)], None)
                }
                (Some(_), crate::profile::Composition::Staged) => (Vec::new(), Some(first)),
                (None, _) => (Vec::new(), None),
            };
            chunks.push(Chunk { op: op.clone(), bytes: bytes / n as f64, deps, barrier, group: g });
        }
        prev = Some((first, n));
    }
    let sys = System {
        rates,
        channel_bw: (drives * m.get("flash_channels") * m.get("b_ch_gbs") * 1e9).max(1.0),
        pcie_bw: ((drives * m.get("pcie_gbs")).min(m.get("host_pcie_cap_gbs")) * 1e9)
            .max(m.get("storage_read_gbs") * 1e9),
        transfer_latency_s: 3.3e-6,
        offload_overhead_s: m.get("offload_overhead_us") * 1e-6,
        busy_w: vec![
            (Resource::Host, m.get("p_core_w") * crate::host::c_eff(m, workers)),
            (Resource::Isp, drives * m.get("p_isp_w")),
        ],
        static_w: m.get("p_idle_w") + drives * m.get("p_drive_idle_w"),
        e_pcie_per_byte: m.get("e_pcie_pj_per_bit") * 8.0 * 1e-12,
        e_channel_per_byte: m.get("e_flash_read_uj_per_page") * 1e-6 / 4096.0,
    };
    (sys, chunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// V-S2-1: argmin selection with overlap of dependence and queueing, hand-computed.
    #[test]
    fn test_cost_argmin_and_eligibility() {
        let mut sys = s2_system();
        sys.transfer_latency_s = 0.0;
        sys.offload_overhead_s = 0.0;
        let one = |op: &str| {
            vec![Chunk { op: op.into(), bytes: 12e9, deps: vec![], barrier: None, group: 0 }]
        };
        // "and" of 12 GB: IFP 1 s in place; PuD 2 s + 1.25 s over channels; host 4 s + 1.5 s PCIe.
        let o = schedule(&sys, &one("and"), Policy::Conduit, 0.0);
        assert_eq!(o.placed, vec![Resource::Ifp]);
        assert!((o.makespan_s - 1.0).abs() < 1e-9);
        // Multiplication is never placed on IFP (unsupported there).
        let o = schedule(&sys, &one("mul"), Policy::Dm, 0.0);
        assert_ne!(o.placed[0], Resource::Ifp);
        // A second "and" issued at once: IFP costs 1 s + 1 s queue = 2 s < PuD 3.25 s: IFP again.
        let two: Vec<Chunk> = (0..2).map(|_| one("and")[0].clone()).collect();
        let o = schedule(&sys, &two, Policy::Conduit, 0.0);
        assert_eq!(o.placed, vec![Resource::Ifp, Resource::Ifp]);
        // A third: IFP would finish at 3 s (cost 2 + 1), PuD at 3.25: IFP; the fourth goes to PuD.
        let four: Vec<Chunk> = (0..4).map(|_| one("and")[0].clone()).collect();
        let o = schedule(&sys, &four, Policy::Conduit, 0.0);
        assert_eq!(o.placed[3], Resource::Pud);
    }

    /// V-S2-2: on the mixed workload, ideal <= conduit < dm and conduit < bw (S2: Conduit 1.8x
    /// over DM, 2.0x over BW, and less energy), and DM piles work onto one resource (where the
    /// data already is) more than Conduit does.
    #[test]
    fn test_s2_conduit_beats_dm_and_bw() {
        let sys = s2_system();
        let w = s2_mixed_workload(2000, 16);
        let run = |p| schedule(&sys, &w, p, 0.0);
        let (c, dm, bw, ideal, host) = (
            run(Policy::Conduit),
            run(Policy::Dm),
            run(Policy::Bw),
            run(Policy::Ideal),
            run(Policy::HostOnly),
        );
        assert!(ideal.makespan_s <= c.makespan_s);
        assert!(c.makespan_s < dm.makespan_s, "conduit {} dm {}", c.makespan_s, dm.makespan_s);
        assert!(c.makespan_s < bw.makespan_s, "conduit {} bw {}", c.makespan_s, bw.makespan_s);
        assert!(c.makespan_s < host.makespan_s);
        assert!(c.energy_j < dm.energy_j && c.energy_j < bw.energy_j);
        assert!(dm.max_share().1 > c.max_share().1, "{:?} {:?}", dm.shares, c.shares);
    }

    #[test]
    fn test_staged_barrier_waits_for_the_whole_previous_phase() {
        let sys = s2_system();
        let mut w: Vec<Chunk> = (0..3)
            .map(|_| Chunk {
                op: "complex".into(),
                bytes: 3e9,
                deps: vec![],
                barrier: None,
                group: 0,
            })
            .collect();
        w.push(Chunk {
            op: "complex".into(),
            bytes: 3e9,
            deps: vec![],
            barrier: Some(3),
            group: 1,
        });
        let o = schedule(&sys, &w, Policy::HostOnly, 0.0);
        // Host runs them one after another (1 s each plus PCIe); the barrier chunk starts last.
        assert!(o.makespan_s >= 4.0);
    }
}
