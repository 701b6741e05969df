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

/// One position of one input: reads spanning it, and those with an aligned base there.
#[derive(Default, Clone, Copy)]
struct Cell {
    spanning: u32,
    aligned: u32,
}

pub struct IntervalSweep {
    beg: i64,
    end: i64,
    options: BedcovOptions,
    rings: Vec<PositionRing<Cell>>,
    spanned: PositionRing<bool>,
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
            spanned: PositionRing::default(),
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
                    for_span(ring, i, i + len, |_, cell| {
                        cell.spanning += 1;
                        cell.aligned += 1;
                    });
                }
                cigar::DEL | cigar::REF_SKIP => {
                    for_span(ring, i, i + len, |_, cell| cell.spanning += 1);
                }
                _ => continue,
            }
            i += len;
        }
        if i > pos {
            for_span(&mut self.spanned, pos, i, |_, s| *s = true);
        }
        Ok(())
    }

    fn flush_before(&mut self, pos: i64) {
        let (beg, end) = (self.beg, self.end);
        let aligned_only = self.options.skip_deletions || self.options.min_depth.is_some();
        let min_depth = self.options.min_depth;
        for (ring, counts) in self.rings.iter_mut().zip(self.counts.iter_mut()) {
            ring.flush_before(pos, |p, cell| {
                if p < beg || p >= end {
                    return;
                }
                let depth = if aligned_only { cell.aligned } else { cell.spanning };
                counts.bases += i64::from(depth);
                if min_depth.is_some_and(|d| d > 0 && i64::from(depth) >= d) {
                    counts.positions_at_depth += 1;
                }
            });
        }
        let spanned = &mut self.spanned_positions;
        self.spanned.flush_before(pos, |p, s| {
            if s && p >= beg && p < end {
                *spanned += 1;
            }
        });
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
