//! What a report computes in input order (samtools' `collect_stats` less the sums of
//! [`super::counters`]): which records it takes, then for sorted input the GC-depth bins,
//! coverage, mismatches per cycle and bases mapped.

use std::collections::HashSet;

use super::barcodes::Barcodes;
use super::coverage::Coverage;
use super::gc_depth::GcDepth;
use super::mismatches::ReferenceWindow;
use super::overlaps::PairTable;
use super::targets::Targets;
use super::{
    INITIAL_CYCLES, ReadOrder, ReferenceSource, Settings, gc_bases, is_original, read_order,
    unclipped_length,
};
use crate::record::layout::flags;
use crate::record::{Header, RecordRef, cigar};

/// Pending mates the overlap table may hold before it forgets the finished ones.
const PAIR_TABLE_LIMIT: u32 = 10000;

/// What every report of one input shares.
pub struct Context<'a> {
    pub settings: &'a Settings,
    pub header: &'a Header,
    pub reference: Option<&'a dyn ReferenceSource>,
    pub pairs: &'a mut PairTable,
    /// samtools' stderr lines, printed in order by the caller.
    pub warnings: &'a mut Vec<String>,
}

pub struct Tracker {
    /// Records the flag filters (`-f`, `-F`, `-d`) refused.
    pub filtered: u64,
    pub is_sorted: bool,
    /// samtools' `nbases`: the cycles its arrays hold.
    cycles: usize,
    /// The reference of the current GC-depth bin and the last read's position.
    tid: i32,
    pos: i64,
    gcd_pos: i64,
    pub gc_depth: GcDepth,
    pub coverage: Coverage,
    pub window: ReferenceWindow,
    /// Mismatches per cycle, `QUALITY_SLOTS` per cycle (only with a reference).
    pub mismatches: Vec<u64>,
    pub targets: Option<Targets>,
    /// `-I`: the read groups taken.
    read_groups: Option<HashSet<Vec<u8>>>,
    pair_count: u32,
    last_pair_tid: i32,
    last_read_flush: u32,
    /// Bases on the reference (M, I, =, X; inside the targets), less `-p`'s overlaps.
    pub bases_mapped_cigar: u64,
    pub barcodes: Barcodes,
}

impl Tracker {
    pub fn new(
        settings: &Settings,
        targets: Option<Targets>,
        read_groups: Option<HashSet<Vec<u8>>>,
    ) -> Tracker {
        let mut window = ReferenceWindow::new();
        window.reserve(INITIAL_CYCLES, settings.gcd_bin_size);
        Tracker {
            filtered: 0,
            is_sorted: true,
            cycles: INITIAL_CYCLES,
            tid: -1,
            pos: 0,
            gcd_pos: -1,
            gc_depth: GcDepth::default(),
            coverage: Coverage::new(settings.coverage, INITIAL_CYCLES),
            window,
            mismatches: Vec::new(),
            targets,
            read_groups,
            pair_count: 0,
            last_pair_tid: -2,
            last_read_flush: 0,
            bases_mapped_cigar: 0,
            barcodes: Barcodes::default(),
        }
    }

    /// The filters: whether the report takes `r` at all (then its sums count it).
    fn takes(&mut self, r: &RecordRef<'_>, settings: &Settings) -> Result<bool, String> {
        if let Some(targets) = &mut self.targets {
            let tid = r.ref_id();
            if tid >= 0 && (tid as usize) < targets.intervals.len() && !self.is_sorted {
                return Err("The BAM must be sorted in order for -t to work.".into());
            }
            if !targets.takes(r) {
                return Ok(false);
            }
        }
        if let Some(groups) = &self.read_groups {
            let rg = r.aux_get(*b"RG").map(|f| {
                let v = f.value;
                &v[..v.iter().position(|&b| b == 0).unwrap_or(v.len())]
            });
            if !rg.is_some_and(|rg| groups.contains(rg)) {
                return Ok(false);
            }
        }
        let flag = r.flag();
        if settings.flag_require != 0 && flag & settings.flag_require != settings.flag_require {
            self.filtered += 1;
            return Ok(false);
        }
        if settings.flag_filter != 0 && flag & settings.flag_filter != 0 {
            self.filtered += 1;
            return Ok(false);
        }
        if settings.read_length != -1 && r.l_seq() as i64 != i64::from(settings.read_length) {
            return Ok(false);
        }
        Ok(true)
    }

    /// Follows `r`; `Ok(true)` when the report's sums must count it.
    pub fn track(&mut self, r: &RecordRef<'_>, ctx: &mut Context<'_>) -> Result<bool, String> {
        if !self.takes(r, ctx.settings)? {
            return Ok(false);
        }
        let flag = r.flag();
        if flag & flags::SECONDARY != 0 || r.l_seq() == 0 {
            return Ok(true);
        }
        let read_len = unclipped_length(r);
        if read_len >= self.cycles {
            tables_fit(read_len)?;
            self.grow(read_len, ctx.settings);
        }
        let order = read_order(flag);
        if is_original(flag) && order == ReadOrder::First {
            self.barcodes.add(r, ctx.warnings);
        }
        if flag & flags::UNMAP != 0 {
            return Ok(true);
        }
        if r.n_cigar_op() == 0 {
            return Err("FIXME: mapped read with no cigar?".into());
        }
        let span = self.count_mapped_bases(r);
        if self.tid == r.ref_id() && r.pos() < self.pos {
            self.is_sorted = false;
        }
        self.pos = r.pos();
        if self.is_sorted {
            self.follow_sorted(r, read_len, span, order, ctx)?;
        }
        Ok(true)
    }

    /// samtools' `realloc_buffers`: room for cycles up to past `read_len` (see [`tables_fit`]
    /// for its failure).
    fn grow(&mut self, read_len: usize, settings: &Settings) {
        self.cycles = 2 * (1 + read_len - self.cycles) + self.cycles;
        self.coverage.grow(read_len);
        self.window.reserve(self.cycles, settings.gcd_bin_size);
    }

    /// Adds the bases the CIGAR puts on the reference (inside the current target, if any) to
    /// the bases mapped; returns the read's length plus its deletions.
    fn count_mapped_bases(&mut self, r: &RecordRef<'_>) -> i64 {
        let mut span = r.l_seq() as i64;
        let Some(targets) = &self.targets else {
            for c in r.cigar() {
                let (op, n) = (cigar::op(c), u64::from(cigar::len(c)));
                match op {
                    cigar::MATCH | cigar::INS | cigar::EQUAL | cigar::DIFF => {
                        self.bases_mapped_cigar = self.bases_mapped_cigar.wrapping_add(n)
                    }
                    cigar::DEL => span += n as i64,
                    _ => {}
                }
            }
            return span;
        };
        let (from, to) = (targets.from, targets.to);
        let mut iref = r.pos() + 1;
        for c in r.cigar() {
            let (op, n) = (cigar::op(c), i64::from(cigar::len(c)));
            if n == 0 {
                continue;
            }
            match op {
                cigar::DEL => span += n,
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                    let mut inside = n;
                    if iref < from {
                        inside -= from - iref;
                    }
                    if iref + n - 1 > to {
                        inside -= iref + n - 1 - to;
                    }
                    self.bases_mapped_cigar =
                        self.bases_mapped_cigar.wrapping_add(inside.max(0) as u64);
                    iref += n;
                }
                cigar::INS => {
                    iref += n;
                    if iref >= from && iref <= to {
                        self.bases_mapped_cigar = self.bases_mapped_cigar.wrapping_add(n as u64);
                    }
                }
                _ => {}
            }
        }
        span
    }

    /// The order-dependent parts of a read of sorted input.
    fn follow_sorted(
        &mut self,
        r: &RecordRef<'_>,
        read_len: usize,
        span: i64,
        order: ReadOrder,
        ctx: &mut Context<'_>,
    ) -> Result<(), String> {
        let (tid, pos) = (r.ref_id(), r.pos());
        if self.tid == -1 || self.tid != tid {
            self.coverage.flush(None)?;
        }
        self.last_read_flush += 1;
        if self.pair_count > PAIR_TABLE_LIMIT && self.last_read_flush > PAIR_TABLE_LIMIT {
            self.pair_count = self.pair_count.wrapping_sub(ctx.pairs.forget_before(pos));
            self.last_read_flush = 0;
        }
        if self.last_pair_tid != tid {
            self.pair_count = self.pair_count.wrapping_sub(ctx.pairs.forget_before(i64::MAX - 1));
            self.last_pair_tid = tid;
            self.last_read_flush = 0;
        }
        let bin = i64::from(ctx.settings.gcd_bin_size);
        if let Some(reference) = ctx.reference {
            self.follow_reference(r, read_len, span, reference, ctx)?;
        } else if self.gcd_pos == -1 || self.tid != tid || pos - self.gcd_pos > bin {
            self.tid = tid;
            self.gcd_pos = pos;
            self.gc_depth.advance();
        }
        let seq_len = r.l_seq();
        let bin = self.gc_depth.current_mut();
        bin.depth = bin.depth.wrapping_add(1);
        if ctx.reference.is_none() {
            // Without a reference, the bin's GC is the average of its reads'.
            let gc =
                if is_original(r.flag()) && order != ReadOrder::Other { gc_bases(r) } else { 0 };
            bin.gc += gc as f32 / seq_len as f32;
        }
        self.coverage.flush(Some(pos))?;
        self.add_coverage(r, ctx)?;
        if ctx.settings.remove_overlaps {
            self.remove_overlaps(r, -1, -1, ctx)?;
        }
        Ok(())
    }

    /// With `-r`: a new GC-depth bin (and reference window) when the read leaves the current
    /// one, then the read's mismatches.
    fn follow_reference(
        &mut self,
        r: &RecordRef<'_>,
        read_len: usize,
        span: i64,
        reference: &dyn ReferenceSource,
        ctx: &mut Context<'_>,
    ) -> Result<(), String> {
        let (tid, pos) = (r.ref_id(), r.pos());
        let bin = i64::from(ctx.settings.gcd_bin_size);
        let window_end = self.window.start + self.window.fetched;
        let (mut fetch_to, mut new_bin) = (0, false);
        if self.window.start == -1 || self.tid != tid || window_end < pos + span {
            fetch_to = pos + span;
            new_bin = true;
        } else if self.gcd_pos + bin < pos + span {
            new_bin = true;
            if window_end < pos + bin {
                fetch_to = pos + bin;
            }
        }
        if new_bin {
            self.gc_depth.advance();
            if fetch_to != 0 {
                self.window.fetch(reference, ctx.header, tid, pos, fetch_to)?;
                self.tid = tid;
            }
            self.gcd_pos = pos;
            self.gc_depth.current_mut().gc = self.window.gc_content(pos, bin);
        }
        self.window.count_mismatches(r, read_len, &mut self.mismatches, ctx.header)
    }

    /// The read's aligned bases into the coverage, clipped to the targets if any.
    fn add_coverage(&mut self, r: &RecordRef<'_>, ctx: &mut Context<'_>) -> Result<(), String> {
        let ops: Vec<u32> = r.cigar().collect();
        let mut p = r.pos();
        let aligned = |op| matches!(op, cigar::MATCH | cigar::EQUAL | cigar::DIFF);
        let Some(targets) = &self.targets else {
            for &c in &ops {
                let (op, n) = (cigar::op(c), i64::from(cigar::len(c)));
                if aligned(op) {
                    self.add_stretch(r, p, p + n, ctx)?;
                }
                if cigar::consumes_ref(op) {
                    p += n;
                }
            }
            return Ok(());
        };
        let chunks = targets.chunks.clone();
        let (mut j, mut i) = (0, 0);
        while j < ops.len() && i < chunks.len() {
            let (op, n) = (cigar::op(ops[j]), i64::from(cigar::len(ops[j])));
            if aligned(op) {
                let pmin = p.max(chunks[i].0 - 1);
                let pmax = (p + n).min(chunks[i].1);
                if pmax > pmin {
                    self.add_stretch(r, pmin, pmax, ctx)?;
                }
            }
            let next = p + if cigar::consumes_ref(op) { n } else { 0 };
            if next >= chunks[i].1 {
                i += 1;
            } else {
                j += 1;
                p = next;
            }
        }
        Ok(())
    }

    fn add_stretch(
        &mut self,
        r: &RecordRef<'_>,
        from: i64,
        to: i64,
        ctx: &mut Context<'_>,
    ) -> Result<(), String> {
        if ctx.settings.remove_overlaps {
            self.remove_overlaps(r, from, to, ctx)
        } else {
            self.coverage.insert(from, to)
        }
    }

    fn remove_overlaps(
        &mut self,
        r: &RecordRef<'_>,
        from: i64,
        to: i64,
        ctx: &mut Context<'_>,
    ) -> Result<(), String> {
        let removal = ctx.pairs.add(r, &mut self.coverage, from, to)?;
        self.bases_mapped_cigar = self.bases_mapped_cigar.wrapping_sub(removal.overlap as u64);
        self.pair_count = self.pair_count.wrapping_add_signed(removal.pending_change);
        Ok(())
    }
}

/// samtools' `realloc_buffers` fails the run with this message when the per-cycle tables of a
/// long read cannot be allocated (a 10 Mb read needs 20 GB of quality counts; mdsam aborted,
/// or was killed for memory). The largest table, a quality row of every cycle, is allocated
/// and freed once to find out; without touching its pages that costs no memory.
fn tables_fit(read_len: usize) -> Result<(), String> {
    let cells = read_len.saturating_mul(super::counters::QUALITY_COLUMNS);
    let mut probe: Vec<u64> = Vec::new();
    probe.try_reserve_exact(cells).map_err(|_| {
        let bytes = cells.saturating_mul(std::mem::size_of::<u64>());
        format!("Could not realloc buffers, the sequence too long: {read_len} ({bytes})")
    })
}
