//! A Conduit-style placement scheduler (seed 002, Eq. 1-2) at **chunk** granularity (a 4 MiB
//! extent or a BGZF batch of a phase; one 16 KiB vector instruction for seed 002's own
//! workloads in [`crate::s2`]), not Conduit's instruction stream from a compiler pass.
//!
//! For each chunk, in issue order, and each resource the policy may use that supports its op:
//!
//! ```text
//! cost_r = comp_r + dm_r + max(dd, queue_r) (+ offload overhead off the host)      (S2 Eq. 1)
//!   comp_r  = occupancy_r(op)·bytes + latency_r(op)
//!   dm_r    = Σ bytes/B(link) + latency of the move, without contention (S2 §4.3.2)
//!             flash → DRAM: t_R + T_DMA;  DRAM → flash: T_DMA + t_PROG;  ↔ host: PCIe
//!   dd      = producers' finish − now
//!   queue_r = work placed on r and not finished at `now`, over r's units
//! ```
//!
//! Policies on the same chunks (S2 §3.2, §5.3): `conduit` (argmin cost), `dm` (argmin data
//! movement: operands stay where they are, so it favours in-flash computing), `bw` (the
//! least-loaded resource, blind to moving operands), `ideal` (argmin compute, no queues, no
//! movement: a critical-path bound), `host-only`, `isp-only`. The offloading policies choose
//! among [`System::offload`] (S2: ISP, PuD-SSD, IFP; an mdsam run: host and ISP).
//!
//! Execution: each resource has `units` that run chunks at once, each unit a timeline that a
//! chunk whose operands arrive late does not block for the chunks issued after it; the flash
//! channels and PCIe are shared servers of the same kind. Moves out of or into flash also
//! hold an IFP unit for the sensing or the program (the planes in-flash computing uses).

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

/// What one chunk of `op` costs on `resource`: the resource is occupied for `occupancy_s_per_byte
/// × bytes` (its throughput), and the result appears `latency_s` after that (work that overlaps
/// other chunks: a flash sensing, a bit-serial sequence on one plane); `energy_j_per_byte`.
#[derive(Clone, Debug, PartialEq)]
pub struct OpCost {
    pub resource: Resource,
    pub op: String,
    pub occupancy_s_per_byte: f64,
    pub latency_s: f64,
    pub energy_j_per_byte: f64,
}

/// Resources, their costs per op, and the links between where operands live.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    pub ops: Vec<OpCost>,
    /// Units of each resource that run chunks at once (host, ISP, PuD, IFP; 1 if absent): a
    /// chunk waiting for its operands holds one unit, not the whole resource.
    pub units: [usize; 4],
    /// The resources the offloading policies (conduit, dm, bw, ideal) choose among. Seed 002's
    /// Eq. 2 takes the argmin over ISP, PuD-SSD and IFP only: the host is the "CPU" baseline.
    pub offload: Vec<Resource>,
    /// Flash channels in aggregate, and PCIe (bytes/s).
    pub channel_bw: f64,
    pub pcie_bw: f64,
    /// Latency of a move out of flash (sensing, t_R), into flash (programming, t_PROG), and of
    /// each transfer (T_DMA): they delay the data but do not occupy the link.
    pub flash_read_latency_s: f64,
    pub flash_program_latency_s: f64,
    pub transfer_latency_s: f64,
    /// Time a byte sensed out of, or programmed into, flash holds an IFP unit (the planes that
    /// in-flash computing uses too: moves contend with IFP).
    pub flash_read_occupancy_s_per_byte: f64,
    pub flash_program_occupancy_s_per_byte: f64,
    /// Offloader time per chunk placed off the host (cost-function evaluation, ISA translation).
    pub offload_overhead_s: f64,
    /// Static power of the system (W), energy per byte moved on PCIe and on the channels (J).
    pub static_w: f64,
    pub e_pcie_per_byte: f64,
    pub e_channel_per_byte: f64,
}

impl System {
    pub fn cost(&self, r: Resource, op: &str) -> Option<&OpCost> {
        self.ops.iter().find(|c| c.resource == r && c.op == op)
    }

    /// Bytes per second of `op` on `r` (throughput, latency aside).
    pub fn rate(&self, r: Resource, op: &str) -> Option<f64> {
        self.cost(r, op).map(|c| 1.0 / c.occupancy_s_per_byte.max(1e-300))
    }

    /// The links `bytes` cross from `from` to `to` (with the time each is occupied) and the
    /// latency on top; without contention the move takes `Σ occupancy + latency`.
    fn path(&self, from: Location, to: Location, bytes: f64) -> Path {
        use Location::*;
        let chan = (Link::Channel, bytes / self.channel_bw);
        let pcie = (Link::Pcie, bytes / self.pcie_bw);
        let (read, prog, dma) =
            (self.flash_read_latency_s, self.flash_program_latency_s, self.transfer_latency_s);
        match (from, to) {
            (a, b) if a == b => Path::default(),
            (Flash, SsdDram) => Path { hops: vec![chan], latency: read + dma },
            (SsdDram, Flash) => Path { hops: vec![chan], latency: dma + prog },
            (Flash, Host) => Path { hops: vec![chan, pcie], latency: read + dma },
            (Host, Flash) => Path { hops: vec![pcie, chan], latency: dma + prog },
            _ => Path { hops: vec![pcie], latency: dma },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Channel,
    Pcie,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Path {
    hops: Vec<(Link, f64)>,
    latency: f64,
}

impl Path {
    /// Seed 002's latency_dm: a static estimate without contention.
    fn uncontended(&self) -> f64 {
        self.hops.iter().map(|h| h.1).sum::<f64>() + self.latency
    }
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

/// A resource that can take a chunk, with the cost function's terms.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    r: Resource,
    /// Expected computation latency (occupancy + latency), data movement without contention,
    /// and queueing delay.
    comp: f64,
    dm: f64,
    queue: f64,
}

/// The resources `policy` may place a chunk of `op` on.
fn allowed(sys: &System, policy: Policy, op: &str) -> Vec<Resource> {
    let supported = |r: Resource| sys.cost(r, op).is_some();
    let pick: Vec<Resource> = match policy {
        Policy::HostOnly => vec![Resource::Host],
        Policy::IspOnly => vec![Resource::Isp],
        _ => sys.offload.clone(),
    };
    let ok: Vec<Resource> = pick.into_iter().filter(|&r| supported(r)).collect();
    if ok.is_empty() && policy == Policy::IspOnly {
        // What the ISP cannot run stays on the host.
        return vec![Resource::Host].into_iter().filter(|&r| supported(r)).collect();
    }
    ok
}

/// Runs `chunks` (issued `issue_gap_s` apart, in order) on `sys` under `policy`.
pub fn schedule(sys: &System, chunks: &[Chunk], policy: Policy, issue_gap_s: f64) -> Outcome {
    // Each unit's busy intervals; and per resource, the work placed on it (for the queue term).
    let mut units: Vec<Vec<Timeline>> =
        sys.units.iter().map(|&n| vec![Timeline::default(); n.max(1)]).collect();
    let mut pending: [Pending; 4] = Default::default();
    let mut energy_ops = 0.0;
    // The flash channels (in aggregate) and PCIe, each one shared server.
    let (mut channel, mut pcie) = (Timeline::default(), Timeline::default());
    let mut finish = vec![0.0f64; chunks.len()];
    let mut prefix_max = vec![0.0f64; chunks.len() + 1];
    let mut placed: Vec<Resource> = Vec::with_capacity(chunks.len());
    let mut latencies = Vec::with_capacity(chunks.len());
    let (mut pcie_bytes, mut channel_bytes) = (0.0, 0.0);
    for (i, c) in chunks.iter().enumerate() {
        let now = i as f64 * issue_gap_s;
        let mut ready = c.deps.iter().map(|&d| finish[d]).fold(0.0, f64::max);
        if let Some(b) = c.barrier {
            ready = ready.max(prefix_max[b.min(i)]);
        }
        // Operands live where the producer ran: the dependence's, else (a barrier) the previous
        // chunk's; input data starts in flash.
        let from = match (c.deps.first(), c.barrier) {
            (Some(&d), _) => placed_loc(&placed, d),
            (None, Some(b)) if b > 0 => placed_loc(&placed, b.min(i) - 1),
            _ => Location::Flash,
        };
        let dd = (ready - now).max(0.0);
        let candidates: Vec<Candidate> = allowed(sys, policy, &c.op)
            .into_iter()
            .filter_map(|r| {
                let cost = sys.cost(r, &c.op)?;
                Some(Candidate {
                    r,
                    comp: c.bytes * cost.occupancy_s_per_byte + cost.latency_s,
                    dm: sys.path(from, r.location(), c.bytes).uncontended(),
                    queue: pending[r as usize].delay(now) / units[r as usize].len() as f64,
                })
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
            // Seed 002 Eq. 1: comp + dm + max(dd, queue), argmin over the resources (Eq. 2).
            Policy::Conduit | Policy::HostOnly | Policy::IspOnly => {
                by(&|k| (k.comp + k.dm + dd.max(k.queue) + overhead(k.r), k.comp))
            }
            // §5.3: "offloads each instruction to a computation resource that minimizes operand
            // data movement".
            Policy::Dm => by(&|k| (k.dm, k.comp)),
            // §5.3: "to a computation resource that has the lowest bandwidth utilization"; §3.2:
            // "without considering the cost of moving operands".
            Policy::Bw => by(&|k| (k.queue, k.comp)),
            // §5.3: no queueing, zero data movement, the least computation latency.
            Policy::Ideal => by(&|k| (k.comp, 0.0)),
        };
        let Some(Candidate { r, comp, .. }) = choice else {
            panic!("no resource supports operation \"{}\"", c.op);
        };
        let cost = sys.cost(r, &c.op).expect("a candidate supports its op");
        let occupancy = c.bytes * cost.occupancy_s_per_byte;
        let start_data = now.max(ready);
        let done = if policy == Policy::Ideal {
            start_data + comp
        } else {
            let path = sys.path(from, r.location(), c.bytes);
            let to = r.location();
            let planes = &mut units[Resource::Ifp as usize];
            let hold = if from == Location::Flash && to != Location::Flash {
                c.bytes * sys.flash_read_occupancy_s_per_byte
            } else if to == Location::Flash && from != Location::Flash {
                c.bytes * sys.flash_program_occupancy_s_per_byte
            } else {
                0.0
            };
            if hold > 0.0 {
                let (u, s) = earliest_fit(planes, start_data, hold);
                planes[u].insert(s, s + hold);
            }
            let mut t = start_data;
            for (link, occ) in &path.hops {
                let (line, moved) = match link {
                    Link::Channel => (&mut channel, &mut channel_bytes),
                    Link::Pcie => (&mut pcie, &mut pcie_bytes),
                };
                let s = line.fit(t, *occ);
                line.insert(s, s + occ);
                *moved += c.bytes;
                t = s + occ;
            }
            let arrive = t + path.latency + overhead(r);
            let (u, s) = earliest_fit(&units[r as usize], arrive, occupancy);
            units[r as usize][u].insert(s, s + occupancy);
            pending[r as usize].push(s + occupancy, occupancy);
            s + occupancy + cost.latency_s
        };
        energy_ops += c.bytes * cost.energy_j_per_byte;
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
    latencies.sort_by(f64::total_cmp);
    let p99 = latencies
        .get(((latencies.len() as f64 * 0.99) as usize).min(latencies.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0);
    Outcome {
        policy: policy.name().into(),
        makespan_s: makespan,
        energy_j: sys.static_w * makespan
            + energy_ops
            + sys.e_pcie_per_byte * pcie_bytes
            + sys.e_channel_per_byte * channel_bytes,
        pcie_bytes,
        channel_bytes,
        shares,
        p99_latency_s: p99,
        placed,
    }
}

/// One unit's busy intervals, sorted and disjoint: a chunk whose operands arrive late leaves
/// the time before it free for chunks issued after it (a unit is not a FIFO).
#[derive(Clone, Debug, Default)]
struct Timeline {
    busy: Vec<(f64, f64)>,
}

impl Timeline {
    /// The earliest start at or after `t` of a free stretch `len` long.
    fn fit(&self, t: f64, len: f64) -> f64 {
        let mut s = t;
        let first = self.busy.partition_point(|&(_, e)| e <= t);
        for &(a, e) in &self.busy[first..] {
            if a >= s + len {
                break;
            }
            s = s.max(e);
        }
        s
    }

    /// Marks `[a, e)` busy (free before: [`Timeline::fit`] found it), merging touching ends.
    fn insert(&mut self, a: f64, e: f64) {
        if e <= a {
            return;
        }
        let i = self.busy.partition_point(|&(x, _)| x < a);
        let joins_prev = i > 0 && self.busy[i - 1].1 >= a;
        let joins_next = i < self.busy.len() && self.busy[i].0 <= e;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1.max(e);
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = self.busy[i - 1].1.max(e),
            (false, true) => self.busy[i].0 = a,
            (false, false) => self.busy.insert(i, (a, e)),
        }
    }
}

/// The unit of a resource that can start `len` of work soonest at or after `t`, and when.
fn earliest_fit(units: &[Timeline], t: f64, len: f64) -> (usize, f64) {
    units
        .iter()
        .map(|u| u.fit(t, len))
        .enumerate()
        .fold((0, f64::MAX), |a, b| if b.1 < a.1 { b } else { a })
}

/// The chunks placed on a resource that have not finished: seed 002's delay_queue is "the
/// cumulative execution latency of pending instructions" in the resource's queue.
#[derive(Default)]
struct Pending {
    /// (finish, occupancy) as a min-heap on finish; `sum`: their occupancies.
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(Finish, u64)>>,
    sum: f64,
}

/// A finish time, ordered by `total_cmp` so it can key a heap.
#[derive(Clone, Copy, PartialEq)]
struct Finish(f64);

impl Eq for Finish {}

impl PartialOrd for Finish {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Finish {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl Pending {
    fn push(&mut self, finish: f64, occupancy: f64) {
        self.heap.push(std::cmp::Reverse((Finish(finish), occupancy.to_bits())));
        self.sum += occupancy;
    }

    /// Occupancy still pending at `now` (`now` never decreases between calls).
    fn delay(&mut self, now: f64) -> f64 {
        while let Some(std::cmp::Reverse((Finish(f), occ))) = self.heap.peek().copied() {
            if f > now {
                break;
            }
            self.heap.pop();
            self.sum -= f64::from_bits(occ);
        }
        self.sum.max(0.0)
    }
}

fn placed_loc(placed: &[Resource], d: usize) -> Location {
    placed.get(d).map_or(Location::Flash, |r| r.location())
}

/// An mdsam run on a CSD target as chunks and a [`System`]: each phase cut into up to 256
/// chunks of its data; streaming phases chain chunk to chunk, staged phases wait for the whole
/// previous phase. PuD and IFP get no costs: compressed BAM is not bulk-bitwise data.
///
/// The host's cost of a phase is its share of the run as the analytic model composes it
/// ([`crate::pipeline::compose`]): a staged run is the sum of its phase times, but a streaming
/// run overlaps its phases on the host's cores, so its chunks occupy the host for
/// `T_p · T_run / Σ T_p`, not for their phase's stand-alone time. The phase time already holds
/// the host's storage term, and moves over PCIe overlap with computing (as in
/// [`crate::csd::hybrid`]'s maximum), so with every chunk on the host the makespan is the
/// analytic time plus the first chunk's transfer. An ISP's rate comes from `s_arm`.
pub fn from_run(
    run: &crate::work::RunWork,
    m: &crate::params::Machine,
    workers: f64,
) -> (System, Vec<Chunk>) {
    use crate::csd::eligibility;
    use crate::host::phase_time;
    let drives = m.get("drives");
    let times: Vec<_> = run.phases.iter().map(|p| phase_time(p, m, workers)).collect();
    let summed: f64 = times.iter().map(|t| t.time).sum();
    let composed = crate::pipeline::compose(run, m, workers).time;
    let overlap = if summed > 0.0 { composed / summed } else { 1.0 };
    let host_w = m.get("p_core_w") * crate::host::c_eff(m, workers);
    let isp_w = drives * m.get("p_isp_w");
    let record_bytes = record_bytes(run);
    let mut ops = Vec::new();
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut prev: Option<(usize, usize)> = None; // (first index, count) of the previous phase
    for (g, (p, t)) in run.phases.iter().zip(&times).enumerate() {
        // The operands: what lies in flash for a reading phase, else the records it gets.
        let bytes = if p.bytes_read > 0.0 {
            p.bytes_read
        } else if p.records > 0.0 && record_bytes > 0.0 {
            p.records * record_bytes
        } else {
            p.bytes_inflated.max(p.bytes_written).max(p.records * 300.0)
        }
        .max(1.0);
        let op = format!("{g}:{}", p.kind);
        let host_s_per_byte = t.time * overlap / bytes;
        ops.push(OpCost {
            resource: Resource::Host,
            op: op.clone(),
            occupancy_s_per_byte: host_s_per_byte,
            latency_s: 0.0,
            energy_j_per_byte: host_w * host_s_per_byte,
        });
        if eligibility(&p.kind).isp && drives > 0.0 {
            let cpu_per_byte = (t.serial_s + t.parallel_s) / bytes;
            let isp_s_per_byte =
                m.get("s_arm") * cpu_per_byte / (drives * m.get("isp_cores")).max(1e-300);
            ops.push(OpCost {
                resource: Resource::Isp,
                op: op.clone(),
                occupancy_s_per_byte: isp_s_per_byte,
                latency_s: 0.0,
                energy_j_per_byte: isp_w * isp_s_per_byte,
            });
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
        ops,
        units: [1; 4],
        offload: vec![Resource::Host, Resource::Isp],
        channel_bw: (drives * m.get("flash_channels") * m.get("b_ch_gbs") * 1e9).max(1.0),
        pcie_bw: ((drives * m.get("pcie_gbs")).min(m.get("host_pcie_cap_gbs")) * 1e9)
            .max(m.get("storage_read_gbs") * 1e9),
        // BAM chunks are megabytes: a page's sensing and programming latencies vanish in them.
        flash_read_latency_s: 0.0,
        flash_program_latency_s: 0.0,
        transfer_latency_s: 3.3e-6,
        flash_read_occupancy_s_per_byte: 0.0,
        flash_program_occupancy_s_per_byte: 0.0,
        offload_overhead_s: m.get("offload_overhead_us") * 1e-6,
        static_w: m.get("p_idle_w") + drives * m.get("p_drive_idle_w"),
        e_pcie_per_byte: m.get("e_pcie_pj_per_bit") * 8.0 * 1e-12,
        e_channel_per_byte: m.get("e_flash_read_uj_per_page") * 1e-6 / 4096.0,
    };
    (sys, chunks)
}

/// Bytes of one record in memory: what the reading phase inflated per record it produced.
fn record_bytes(run: &crate::work::RunWork) -> f64 {
    run.phases
        .iter()
        .find(|p| p.bytes_inflated > 0.0 && p.records > 0.0)
        .map_or(0.0, |p| p.bytes_inflated / p.records)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-sized system for exact cost checks: rates in GB/s per resource and op, no
    /// latencies or overheads unless a test sets them.
    fn toy() -> System {
        use Resource::*;
        let g = 1e9;
        let rates = [
            (Host, "and", 3.0),
            (Host, "mul", 3.0),
            (Isp, "and", 1.0),
            (Isp, "mul", 0.8),
            (Pud, "and", 6.0),
            (Pud, "mul", 0.6),
            (Ifp, "and", 12.0),
        ];
        System {
            ops: rates
                .iter()
                .map(|&(r, op, gbs)| OpCost {
                    resource: r,
                    op: op.into(),
                    occupancy_s_per_byte: 1.0 / (gbs * g),
                    latency_s: 0.0,
                    energy_j_per_byte: 0.0,
                })
                .collect(),
            units: [1; 4],
            offload: Resource::ALL.to_vec(),
            channel_bw: 8.0 * 1.2 * g,
            pcie_bw: 8.0 * g,
            flash_read_latency_s: 0.0,
            flash_program_latency_s: 0.0,
            transfer_latency_s: 0.0,
            flash_read_occupancy_s_per_byte: 0.0,
            flash_program_occupancy_s_per_byte: 0.0,
            offload_overhead_s: 0.0,
            static_w: 0.0,
            e_pcie_per_byte: 0.0,
            e_channel_per_byte: 0.0,
        }
    }

    fn chunk(op: &str, bytes: f64) -> Chunk {
        Chunk { op: op.into(), bytes, deps: vec![], barrier: None, group: 0 }
    }

    fn copies(c: &Chunk, n: usize) -> Vec<Chunk> {
        (0..n).map(|_| c.clone()).collect()
    }

    /// V-S2-1: argmin selection with overlap of dependence and queueing, hand-computed.
    #[test]
    fn test_cost_argmin_and_eligibility() {
        let sys = toy();
        let and = chunk("and", 12e9);
        // "and" of 12 GB: IFP 1 s in place; PuD 2 s + 1.25 s over channels; host 4 s + 1.5 s PCIe.
        let o = schedule(&sys, &copies(&and, 1), Policy::Conduit, 0.0);
        assert_eq!(o.placed, vec![Resource::Ifp]);
        assert!((o.makespan_s - 1.0).abs() < 1e-9);
        // Multiplication is never placed on IFP here (unsupported).
        let o = schedule(&sys, &[chunk("mul", 12e9)], Policy::Dm, 0.0);
        assert_ne!(o.placed[0], Resource::Ifp);
        // A second "and" issued at once: IFP costs 1 s + 1 s queue = 2 s < PuD 3.25 s: IFP again.
        let o = schedule(&sys, &copies(&and, 2), Policy::Conduit, 0.0);
        assert_eq!(o.placed, vec![Resource::Ifp, Resource::Ifp]);
        // A third: IFP would finish at 3 s (cost 2 + 1), PuD at 3.25: IFP; the fourth goes to PuD.
        let o = schedule(&sys, &copies(&and, 4), Policy::Conduit, 0.0);
        assert_eq!(o.placed[3], Resource::Pud);
    }

    /// Moving data into flash costs a program (seed 002 Table 2: t_PROG 400 µs) and holds the
    /// planes; moving it out costs a sensing. Both are in the data-movement term.
    #[test]
    fn test_moves_into_flash_pay_the_program_latency() {
        let mut sys = toy();
        sys.flash_read_latency_s = 22.5e-6;
        sys.flash_program_latency_s = 400e-6;
        let b = 4096.0;
        let out = sys.path(Location::Flash, Location::SsdDram, b);
        let into = sys.path(Location::SsdDram, Location::Flash, b);
        assert!((out.uncontended() - (b / sys.channel_bw + 22.5e-6)).abs() < 1e-12);
        assert!((into.uncontended() - (b / sys.channel_bw + 400e-6)).abs() < 1e-12);
        // Flash to host crosses the channels and PCIe.
        assert_eq!(sys.path(Location::Flash, Location::Host, b).hops.len(), 2);
    }

    /// The policies choose among `System::offload` only (seed 002 Eq. 2: ISP, PuD-SSD, IFP).
    #[test]
    fn test_policies_choose_among_the_offload_resources() {
        let mut sys = toy();
        sys.offload = vec![Resource::Isp, Resource::Pud];
        let w = copies(&chunk("and", 1e6), 50);
        for p in [Policy::Conduit, Policy::Dm, Policy::Bw, Policy::Ideal] {
            let o = schedule(&sys, &w, p, 0.0);
            assert_eq!(o.share(Resource::Host) + o.share(Resource::Ifp), 0.0, "{p:?}");
        }
        let host = schedule(&sys, &w, Policy::HostOnly, 0.0).share(Resource::Host);
        assert!((host - 1.0).abs() < 1e-9, "{host}");
    }

    /// With every chunk on the host, the CSD scheduler is the analytic host model of the same
    /// run: a streaming run's phases overlap on the host's cores (its chunks occupy the host
    /// for their share of the composed time, not their phase's stand-alone time), and only the
    /// input in flash crosses PCIe, once, however many staged phases follow.
    #[test]
    fn test_host_only_schedule_is_the_analytic_host_model() {
        use crate::validate::{HOST_ONLY_TOLERANCE, csd_runs, host_only_vs_analytic};
        for p in csd_runs() {
            for (drives, workers) in [(1.0, 1.0), (36.0, 2.0), (8.0, 4.0)] {
                let (host_only, analytic) = host_only_vs_analytic(&p, drives, workers);
                assert!(
                    (host_only / analytic - 1.0).abs() <= HOST_ONLY_TOLERANCE,
                    "{} with {drives} drives, {workers} workers: {host_only} vs {analytic}",
                    p.run.command
                );
            }
            let m = crate::params::csd(&p, 36.0);
            let (sys, chunks) = from_run(&crate::work::decompose(&p), &m, 2.0);
            let o = schedule(&sys, &chunks, Policy::HostOnly, 0.0);
            let input: f64 = p.phases.iter().map(|ph| ph.bytes_read).sum();
            assert!((o.pcie_bytes - input).abs() < 1.0, "{} vs {input}", o.pcie_bytes);
        }
    }

    #[test]
    fn test_staged_barrier_waits_for_the_whole_previous_phase() {
        let sys = toy();
        let mut w = copies(&chunk("and", 3e9), 3);
        w.push(Chunk { barrier: Some(3), group: 1, ..chunk("and", 3e9) });
        let o = schedule(&sys, &w, Policy::HostOnly, 0.0);
        // Host runs them one after another (1 s each plus PCIe); the barrier chunk starts last.
        assert!(o.makespan_s >= 4.0);
        // Its operands are where the previous phase left them (the host): no second transfer.
        assert!((o.pcie_bytes - 9e9).abs() < 1.0, "{}", o.pcie_bytes);
    }
}
