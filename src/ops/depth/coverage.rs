//! `samtools coverage` (samtools 1.24 `coverage.c`): per-reference read counts, covered bases,
//! mean depth, base and mapping quality, from the positions htslib's pileup would report.
//!
//! A position's depth counts the reads with an aligned base there (`M`, `=`, `X`) whose quality
//! passes `-Q` (a read without SEQ always passes); deletions and skips do not count. A reference
//! is reported in pileup order once a selected mapped read spans a base of it; the others follow
//! in header order (tabular output without `-r` only).

use crate::record::{Header, RecordRef, cigar};

use super::PositionRing;
use super::positions::SortCheck;
use super::positions::for_span;
use super::printf_g::g;

/// One position's counts, all inputs together.
#[derive(Default, Clone, Copy)]
struct BaseCounts {
    depth: u32,
    summed_quality: u64,
    quality_bases: u32,
}

#[derive(Default, Clone, Copy)]
pub struct RefStats {
    pub covered_bases: u64,
    pub summed_coverage: u64,
    pub summed_base_quality: u64,
    pub summed_mapq: u64,
    pub quality_bases: u64,
    pub reads: u32,
    pub selected_reads: u32,
    pub covered: bool,
    pub beg: i64,
    pub end: i64,
    pub bin_width: i64,
}

pub enum Report {
    Table {
        header: bool,
    },
    /// `-m` (percent covered per bin), `-D` (`plot_depth`: mean depth per bin); `utf` unless `-A`.
    Histogram {
        bins: i64,
        utf: bool,
        plot_depth: bool,
    },
}

pub struct CoverageOptions {
    pub report: Report,
    pub min_base_quality: u32,
    pub min_depth: u64,
    /// `-r`: the region's reference id and bounds (end already clipped to the reference).
    pub region: Option<(i32, i64, i64)>,
}

pub struct Coverage<'h> {
    options: CoverageOptions,
    header: &'h Header,
    pub stats: Vec<RefStats>,
    ring: PositionRing<BaseCounts>,
    current: i32,
    order: SortCheck,
    hist: Vec<u32>,
    bins: i64,
    /// Some read had no SEQ (samtools warns at the end).
    pub missing_qualities: bool,
    pub out: Vec<u8>,
}

impl<'h> Coverage<'h> {
    pub fn new(options: CoverageOptions, header: &'h Header) -> Self {
        let mut stats = vec![RefStats::default(); header.refs().len()];
        let requested = match options.report {
            Report::Histogram { bins, .. } => bins,
            Report::Table { .. } => 50,
        };
        let mut bins = requested;
        if let Some((tid, beg, end)) = options.region
            && let Some(s) = stats.get_mut(tid as usize)
        {
            (s.beg, s.end) = (beg, end);
            bins = requested.min(end - beg);
            s.bin_width = (end - beg) / bins.max(1);
        }
        Coverage {
            options,
            header,
            stats,
            ring: PositionRing::default(),
            current: -1,
            order: SortCheck::default(),
            hist: vec![0; requested.max(0) as usize],
            bins,
            missing_qualities: false,
            out: Vec::new(),
        }
    }

    /// Every read of the input on a reference (`read_bam`'s `n_reads`).
    pub fn count_read(&mut self, tid: i32) {
        if let Some(s) = self.stats.get_mut(tid as usize) {
            s.reads += 1;
        }
    }

    /// A read that passed the filters.
    pub fn select_read(&mut self, tid: i32, mapq: u8) {
        if let Some(s) = self.stats.get_mut(tid as usize) {
            s.selected_reads += 1;
            s.summed_mapq += u64::from(mapq);
        }
    }

    /// Adds a selected mapped read's bases; a read out of coordinate order is refused with the
    /// pileup's message.
    pub fn add(&mut self, r: &RecordRef<'_>) -> Result<(), &'static str> {
        let (tid, pos) = (r.ref_id(), r.pos());
        self.order.check(tid, pos)?;
        if r.ref_len() == 0 {
            return Ok(());
        }
        if tid != self.current {
            self.flush_all();
            self.enter(tid);
        } else {
            self.flush_before(pos);
        }
        let min_qual = self.options.min_base_quality;
        let quals = r.qual();
        let has_seq = r.l_seq() > 0;
        let (mut i, mut q) = (pos, 0usize);
        for c in r.cigar() {
            let (op, len) = (cigar::op(c), cigar::len(c) as i64);
            match op {
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                    if has_seq {
                        for_span(&mut self.ring, i, i + len, |k, cell| {
                            let bq = u32::from(quals.get(q + k).copied().unwrap_or(0));
                            if bq >= min_qual {
                                cell.depth += 1;
                                cell.summed_quality += u64::from(bq);
                                cell.quality_bases += 1;
                            }
                        });
                    } else {
                        self.missing_qualities = true;
                        for_span(&mut self.ring, i, i + len, |_, cell| cell.depth += 1);
                    }
                    i += len;
                    q += len as usize;
                }
                cigar::DEL | cigar::REF_SKIP => i += len,
                cigar::INS | cigar::SOFT_CLIP => q += len as usize,
                _ => {}
            }
        }
        Ok(())
    }

    /// The pileup reaches reference `tid`: the previous one is reported.
    fn enter(&mut self, tid: i32) {
        if self.current >= 0 {
            self.report(self.current);
            if matches!(self.options.report, Report::Histogram { .. }) {
                self.out.push(b'\n');
                self.hist.iter_mut().for_each(|h| *h = 0);
            }
        }
        let len = self.ref_len(tid);
        let in_region = self.options.region.is_some();
        let requested = self.hist.len() as i64;
        let histogram = matches!(self.options.report, Report::Histogram { .. });
        if let Some(s) = self.stats.get_mut(tid as usize) {
            s.covered = true;
            if !in_region {
                s.end = len;
            }
            if histogram {
                self.bins = requested.min(s.end - s.beg);
                s.bin_width = (s.end - s.beg) / self.bins.max(1);
            }
        }
        self.current = tid;
    }

    fn ref_len(&self, tid: i32) -> i64 {
        self.header.refs().get(tid as usize).map_or(0, |r| r.len as i64)
    }

    fn flush_before(&mut self, pos: i64) {
        let mut ring = std::mem::take(&mut self.ring);
        // An empty cell counts for nothing: the positions of a long skip are not visited.
        ring.flush_made_before(pos, |p, c| self.count_position(p, c));
        self.ring = ring;
    }

    /// The end of a reference: the next one's positions start afresh.
    fn flush_all(&mut self) {
        self.flush_before(i64::MAX);
        self.ring = PositionRing::default();
    }

    fn count_position(&mut self, pos: i64, c: BaseCounts) {
        let tid = self.current;
        let Some(s) = self.stats.get_mut(tid as usize) else { return };
        if pos < s.beg || pos >= s.end {
            return;
        }
        let (histogram, plot_depth) = match self.options.report {
            Report::Histogram { plot_depth, .. } => (true, plot_depth),
            Report::Table { .. } => (false, false),
        };
        let bin = if histogram { (pos - s.beg) / s.bin_width.max(1) } else { 0 };
        if plot_depth && bin < self.bins {
            self.hist[bin as usize] += c.depth;
        }
        if c.depth > 0 && u64::from(c.depth) >= self.options.min_depth {
            s.summed_coverage += u64::from(c.depth);
            s.summed_base_quality += c.summed_quality;
            s.quality_bases += u64::from(c.quality_bases);
            s.covered_bases += 1;
            if histogram && !plot_depth && bin < self.bins {
                self.hist[bin as usize] += 1;
            }
        }
    }

    /// The end of the input: the last reference, then (tables without `-r`) the uncovered ones.
    pub fn finish(&mut self) {
        self.flush_all();
        let mut last = self.current;
        if last == -1
            && let Some((tid, _, _)) = self.options.region
        {
            last = tid;
        }
        if last >= 0 && (last as usize) < self.stats.len() {
            self.report(last);
        }
        if self.options.region.is_none() && matches!(self.options.report, Report::Table { .. }) {
            for tid in 0..self.stats.len() {
                if !self.stats[tid].covered {
                    self.stats[tid].end = self.ref_len(tid as i32);
                    self.report(tid as i32);
                }
            }
        }
    }

    fn report(&mut self, tid: i32) {
        match self.options.report {
            Report::Table { ref mut header } => {
                if *header {
                    self.out.extend_from_slice(TABLE_HEADER);
                    *header = false;
                }
                let s = self.stats[tid as usize];
                let name = self.header.ref_name(tid).unwrap_or(b"");
                table_line(&mut self.out, name, &s);
            }
            Report::Histogram { utf, plot_depth, .. } => {
                let s = self.stats[tid as usize];
                let name = self.header.ref_name(tid).unwrap_or(b"");
                let bins = &self.hist[..self.bins.clamp(0, self.hist.len() as i64) as usize];
                let look = super::histogram::Look { utf, plot_depth };
                let len = self.ref_len(tid);
                super::histogram::print(&mut self.out, name, len, &s, bins, look);
            }
        }
    }
}

const TABLE_HEADER: &[u8] =
    b"#rname\tstartpos\tendpos\tnumreads\tcovbases\tcoverage\tmeandepth\tmeanbaseq\tmeanmapq\n";

/// `a / b` as C divides doubles (0/0 is glibc's `-nan` on x86).
pub fn divide(a: f64, b: f64) -> f64 {
    if a == 0.0 && b == 0.0 { -f64::NAN } else { a / b }
}

pub fn mean_base_quality(s: &RefStats) -> f64 {
    if s.quality_bases > 0 { s.summed_base_quality as f64 / s.quality_bases as f64 } else { 0.0 }
}

fn table_line(out: &mut Vec<u8>, name: &[u8], s: &RefStats) {
    let len = (s.end - s.beg) as f64;
    let mapq =
        if s.selected_reads > 0 { s.summed_mapq as f64 / f64::from(s.selected_reads) } else { 0.0 };
    out.extend_from_slice(name);
    let line = format!(
        "\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
        s.beg + 1,
        s.end,
        s.selected_reads,
        s.covered_bases,
        g(divide(100.0 * s.covered_bases as f64, len), 6),
        g(divide(s.summed_coverage as f64, len), 6),
        g(mean_base_quality(s), 3),
        g(mapq, 3),
    );
    out.extend_from_slice(line.as_bytes());
}
