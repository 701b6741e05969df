//! `samtools bedcov` (samtools 1.24 `bedcov.c`) for one BED interval: per input, the sum of the
//! depths over the interval's positions, the positions at or above `-d`, and the reads counted.
//!
//! As samtools' pileup: a read spans `pos..pos + rlen` (deletions and skips included unless
//! `-j`); with `-d` the depths leave deletions and skips out even without `-j`; `-d 0` counts
//! every position some input's read spans.

use crate::record::{RecordRef, cigar};

use super::PositionRing;
use super::positions::SortCheck;
use super::positions::for_span;

#[derive(Clone, Copy)]
pub struct BedcovOptions {
    /// `-j`.
    pub skip_deletions: bool,
    /// `-d`, or `None`.
    pub min_depth: Option<i64>,
}

/// What one input gives for an interval.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalCounts {
    pub bases: i64,
    pub positions_at_depth: i64,
    pub reads: i64,
}

/// One position of one input: reads whose span starts there less those whose span ends there
/// (the running sum is the reads spanning a position, without touching every position of a
/// long skip), and the reads with an aligned base there.
#[derive(Default, Clone, Copy)]
struct Cell {
    span_starts: i32,
    aligned: u32,
}

pub struct IntervalSweep {
    beg: i64,
    end: i64,
    options: BedcovOptions,
    rings: Vec<PositionRing<Cell>>,
    /// Per input, the reads spanning the next position to hand out.
    spanning: Vec<i64>,
    /// Span starts less span ends of every input's reads (as `Cell::span_starts`).
    spanned: PositionRing<i32>,
    spanned_now: i64,
    spanned_positions: i64,
    order: Vec<SortCheck>,
    pub counts: Vec<IntervalCounts>,
}

impl IntervalSweep {
    pub fn new(beg: i64, end: i64, n_files: usize, options: BedcovOptions) -> Self {
        IntervalSweep {
            beg,
            end,
            options,
            rings: (0..n_files).map(|_| PositionRing::default()).collect(),
            spanning: vec![0; n_files],
            spanned: PositionRing::default(),
            spanned_now: 0,
            spanned_positions: 0,
            order: (0..n_files).map(|_| SortCheck::default()).collect(),
            counts: vec![IntervalCounts::default(); n_files],
        }
    }

    /// Adds a mapped read of input `file` that passed the filters (reads of all inputs together
    /// in coordinate order); a read out of order is refused with the pileup's message.
    pub fn add(&mut self, file: usize, r: &RecordRef<'_>) -> Result<(), &'static str> {
        let pos = r.pos();
        self.order[file].check(r.ref_id(), pos)?;
        self.counts[file].reads += 1;
        self.flush_before(pos);
        let ring = &mut self.rings[file];
        let mut i = pos;
        for c in r.cigar() {
            let (op, len) = (cigar::op(c), cigar::len(c) as i64);
            match op {
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                    for_span(ring, i, i + len, |_, cell| cell.aligned += 1);
                }
                cigar::DEL | cigar::REF_SKIP => {}
                _ => continue,
            }
            i += len;
        }
        if i > pos {
            ring.cell_mut(pos).span_starts += 1;
            ring.cell_mut(i).span_starts -= 1;
            *self.spanned.cell_mut(pos) += 1;
            *self.spanned.cell_mut(i) -= 1;
        }
        Ok(())
    }

    fn flush_before(&mut self, pos: i64) {
        let (beg, end) = (self.beg, self.end);
        let aligned_only = self.options.skip_deletions || self.options.min_depth.is_some();
        let min_depth = self.options.min_depth;
        let inputs = self.rings.iter_mut().zip(self.counts.iter_mut()).zip(&mut self.spanning);
        for ((ring, counts), spanning) in inputs {
            let counts = std::cell::RefCell::new(counts);
            let spanning = std::cell::RefCell::new(spanning);
            // `n` positions at `depth` inside the interval.
            let count = |depth: i64, n: i64| {
                let mut counts = counts.borrow_mut();
                counts.bases += depth * n;
                if min_depth.is_some_and(|d| d > 0 && depth >= d) {
                    counts.positions_at_depth += n;
                }
            };
            ring.flush_runs_before(
                pos,
                |p, cell| {
                    let mut now = spanning.borrow_mut();
                    **now += i64::from(cell.span_starts);
                    if p >= beg && p < end {
                        count(if aligned_only { i64::from(cell.aligned) } else { **now }, 1);
                    }
                },
                // A long skip: every position has the same depth, counted at once.
                |from, to| {
                    let n = (to.min(end) - from.max(beg)).max(0);
                    let now = **spanning.borrow();
                    count(if aligned_only { 0 } else { now }, n);
                },
            );
        }
        let spanned = std::cell::RefCell::new((&mut self.spanned_positions, &mut self.spanned_now));
        self.spanned.flush_runs_before(
            pos,
            |p, starts| {
                let (spanned, now) = &mut *spanned.borrow_mut();
                **now += i64::from(starts);
                if **now > 0 && p >= beg && p < end {
                    **spanned += 1;
                }
            },
            |from, to| {
                let (spanned, now) = &mut *spanned.borrow_mut();
                if **now > 0 {
                    **spanned += (to.min(end) - from.max(beg)).max(0);
                }
            },
        );
    }

    /// The counts once every read is in.
    pub fn finish(mut self) -> Vec<IntervalCounts> {
        self.flush_before(i64::MAX);
        if self.options.min_depth.is_some_and(|d| d <= 0) {
            // Every position the pileup visits passes a threshold of 0.
            for c in &mut self.counts {
                c.positions_at_depth = self.spanned_positions;
            }
        }
        self.counts
    }
}
