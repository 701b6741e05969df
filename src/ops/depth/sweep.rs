//! `samtools depth` (samtools 1.24 `bam2depth.c`, `add_depth`): per-position counts per input,
//! flushed as the sorted reads move on. samtools keeps them in a ring sized to the longest read
//! span (1 GB for one `1M268435000N1M` read); here they are chunks made only where a base is
//! counted ([`PositionRing`]), and a position inside a read's span without one prints 0.
//!
//! The quirks are samtools': a read's `bam_endpos` marks positions as seen even where only a
//! deletion or nothing covers them (they print with depth 0); `-J` counts a deletion only when
//! the base quality before it passes `-q`; `-s` clips a read's bases before its mate's end; the
//! sortedness check compares a read's end, not its start, with the last position printed.

use crate::record::layout::flags;
use crate::record::{Header, RecordRef, cigar};

use super::positions::for_span;
use super::{BedMask, PositionRing};

#[derive(Default)]
pub struct SweepOptions {
    /// `-a` given once (1) or twice (2).
    pub all_positions: u8,
    /// Counts deletions too (`-J`).
    pub count_deletions: bool,
    /// `-q`.
    pub min_base_quality: i32,
    /// `-r`: the region's id and its bounds, which clip what is printed.
    pub region: Option<(i32, i64, i64)>,
    /// `-b`: only positions inside these intervals print.
    pub bed: Option<BedMask>,
}

/// The sweep's state; lines go to [`DepthSweep::out`] for the caller to write.
pub struct DepthSweep<'h> {
    options: SweepOptions,
    header: &'h Header,
    hist: Vec<PositionRing<i32>>,
    end_pos: Vec<i64>,
    last_output: i64,
    last_ref: i32,
    beg: i64,
    end: i64,
    pub out: Vec<u8>,
}

/// Why the sweep stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum SweepError {
    NotSorted,
    UnsupportedCigarOp(u8),
}

impl<'h> DepthSweep<'h> {
    pub fn new(options: SweepOptions, header: &'h Header, n_files: usize) -> Self {
        let (beg, end) = options.region.map_or((-1, -1), |r| (r.1, r.2));
        DepthSweep {
            options,
            header,
            hist: (0..n_files).map(|_| PositionRing::default()).collect(),
            end_pos: vec![0; n_files],
            last_output: beg.max(0),
            last_ref: -99,
            beg,
            end,
            out: Vec::with_capacity(1 << 16),
        }
    }

    fn ref_name(&self, tid: i32) -> &'h [u8] {
        self.header.ref_name(tid).unwrap_or(b"")
    }

    fn ref_len(&self, tid: i32) -> i64 {
        self.header.refs().get(tid as usize).map_or(0, |r| r.len as i64)
    }

    fn in_bed(&self, tid: i32, pos: i64) -> bool {
        self.options.bed.as_ref().is_none_or(|b| b.contains(tid, pos))
    }

    fn push_line_start(&mut self, name: &[u8], pos: i64) {
        self.out.extend_from_slice(name);
        self.out.push(b'\t');
        self.out.extend_from_slice(itoa::Buffer::new().format(pos + 1).as_bytes());
    }

    /// Zero-depth lines for `start..end` of `tid`, clipped to the region (`zero_region`).
    fn zero_region(&mut self, tid: i32, mut start: i64, mut end: i64) {
        if self.beg >= 0 && start < self.beg {
            start = self.beg;
        }
        if self.end >= 0 && end > self.end {
            end = self.end;
        }
        let name = self.ref_name(tid);
        for i in start..end {
            if !self.in_bed(tid, i) {
                continue;
            }
            self.push_line_start(name, i);
            for _ in 0..self.hist.len() {
                self.out.extend_from_slice(b"\t0");
            }
            self.out.push(b'\n');
        }
    }

    /// Prints the depths from `last_output` up to `until` or to where no input has data;
    /// returns the position it stopped at.
    fn flush(&mut self, until: i64) -> i64 {
        let tid = self.last_ref;
        let name = self.ref_name(tid);
        let mut i = self.last_output;
        while i < until {
            if !self.end_pos.iter().any(|&e| i < e) {
                break;
            }
            if self.in_bed(tid, i) {
                self.push_line_start(name, i);
                for n in 0..self.hist.len() {
                    let counted = self.hist[n].get(i).copied().unwrap_or(0);
                    let d = if i < self.end_pos[n] { counted } else { 0 };
                    self.out.push(b'\t');
                    self.out.extend_from_slice(itoa::Buffer::new().format(d as u32).as_bytes());
                }
                self.out.push(b'\n');
            }
            i += 1;
        }
        self.hist.iter_mut().for_each(|h| h.discard_before(i));
        i
    }

    /// Ends the current reference and prints the unused ones before `next_tid` (`-aa`).
    fn change_reference(&mut self, next_tid: Option<i32>) {
        if self.last_ref >= 0 {
            let i = self.flush(i64::MAX);
            if self.options.all_positions > 0 {
                self.zero_region(self.last_ref, i, self.ref_len(self.last_ref));
            }
        }
        if self.options.all_positions > 1 && self.options.region.is_none() {
            let from = if self.last_ref < 0 { 0 } else { self.last_ref + 1 };
            let to = next_tid.unwrap_or(self.header.refs().len() as i32);
            for r in from..to {
                self.zero_region(r, 0, self.ref_len(r));
            }
        }
    }

    /// The end of the input (`add_depth` with no read).
    pub fn finish(&mut self) {
        self.change_reference(None);
        if self.options.all_positions > 0
            && let Some((tid, beg, end)) = self.options.region
            && self.last_ref < 0
        {
            self.zero_region(tid, beg, end.min(self.ref_len(tid)));
        }
    }

    /// Adds one read of input `file`; `overlap_clip` (from `-s`) is its mate's end, or 0.
    pub fn add(
        &mut self,
        r: &RecordRef<'_>,
        overlap_clip: i64,
        file: usize,
    ) -> Result<(), SweepError> {
        let (tid, pos) = (r.ref_id(), r.pos());
        if tid != self.last_ref {
            self.change_reference(Some(tid));
            self.end_pos.iter_mut().for_each(|e| *e = 0);
            self.hist.iter_mut().for_each(|h| *h = PositionRing::default());
            self.last_output = if self.beg >= 0 { pos.max(self.beg) } else { pos };
            self.last_ref = tid;
            if self.options.all_positions > 0 {
                self.zero_region(tid, 0, pos);
            }
        } else if self.last_output < pos {
            let i = self.flush(pos);
            if self.options.all_positions > 0 && i < pos {
                self.zero_region(tid, i, pos);
            }
            self.last_output = pos;
        }
        let end_pos = r.end_pos();
        if tid < self.last_ref || (tid == self.last_ref && end_pos < self.last_output) {
            return Err(SweepError::NotSorted);
        }
        self.accumulate(r, overlap_clip, file, end_pos)
    }

    fn accumulate(
        &mut self,
        r: &RecordRef<'_>,
        overlap_clip: i64,
        file: usize,
        end_pos: i64,
    ) -> Result<(), SweepError> {
        let hist = &mut self.hist[file];
        // Positions already printed take no more counts (a read reaching back before `-r`).
        let printed = self.last_output;
        // samtools reads qualities from the record even without a SEQ (then the aux bytes).
        let l_seq = r.l_seq();
        let quals = &r.bytes()[r.aux_offset() - l_seq..];
        let min_qual = self.options.min_base_quality;
        let passes = |spos: usize| i32::from(quals.get(spos).copied().unwrap_or(0)) >= min_qual;
        let (mut i, mut spos) = (r.pos(), 0usize);
        for c in r.cigar() {
            let (op, len) = (cigar::op(c), cigar::len(c) as i64);
            match op {
                cigar::DEL | cigar::REF_SKIP
                    if op == cigar::REF_SKIP || !self.options.count_deletions =>
                {
                    i += len;
                }
                cigar::DEL => {
                    let mut k = 0;
                    if overlap_clip != 0 {
                        if i + len <= overlap_clip {
                            i += len;
                            continue;
                        } else if i < overlap_clip {
                            k = overlap_clip - i;
                            i = overlap_clip;
                        }
                    }
                    let add = if spos < l_seq { i32::from(passes(spos)) } else { 1 };
                    for _ in k..len {
                        if i >= printed {
                            *hist.cell_mut(i) += add;
                        }
                        i += 1;
                    }
                }
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                    let mut len = len;
                    if overlap_clip != 0 {
                        if i + len <= overlap_clip {
                            i += len;
                            spos += len as usize;
                            continue;
                        } else if i < overlap_clip {
                            len -= overlap_clip - i;
                            spos += (overlap_clip - i) as usize;
                            i = overlap_clip;
                        }
                    }
                    let from = printed.clamp(i, i + len);
                    if min_qual == 0 {
                        for_span(hist, from, i + len, |_, c| *c += 1);
                    } else {
                        let skipped = (from - i) as usize;
                        for_span(hist, from, i + len, |k, c| {
                            *c += i32::from(passes(spos + skipped + k));
                        });
                    }
                    spos += len as usize;
                    i += len;
                }
                cigar::INS | cigar::SOFT_CLIP => spos += len as usize,
                cigar::PAD | cigar::HARD_CLIP => {}
                other => return Err(SweepError::UnsupportedCigarOp(other)),
            }
        }
        let end_pos = if self.end >= 0 { end_pos.min(self.end) } else { end_pos };
        if self.end_pos[file] < end_pos {
            self.end_pos[file] = end_pos;
        }
        Ok(())
    }
}

/// `qlen_used`: the query bases aligned to the reference or inserted (soft clips at the ends
/// left out), which `-l` compares.
pub fn used_query_len(r: &RecordRef<'_>) -> i64 {
    let ops: Vec<u32> = r.cigar().collect();
    if r.l_seq() > 0 {
        let is_clip = |c: &u32| cigar::op(*c) == cigar::SOFT_CLIP;
        let left = ops.iter().take_while(|c| is_clip(c)).count();
        let right = ops[left..].iter().rev().take_while(|c| is_clip(c)).count();
        let clipped: i64 = ops[..left]
            .iter()
            .chain(&ops[ops.len() - right..])
            .map(|&c| cigar::len(c) as i64)
            .sum();
        r.l_seq() as i64 - clipped
    } else {
        ops.iter()
            .filter(|&&c| matches!(cigar::op(c), 0 | 1 | 7 | 8))
            .map(|&c| cigar::len(c) as i64)
            .sum()
    }
}

/// Whether `-s` should remember a paired read by name (its mate could overlap it).
pub fn mate_may_overlap(r: &RecordRef<'_>) -> bool {
    r.next_pos() == -1 || (r.ref_id() == r.next_ref_id() && r.next_pos() <= r.end_pos())
}

/// Whether `-s` applies to the read at all: paired with a mapped mate.
pub fn has_mapped_mate(r: &RecordRef<'_>) -> bool {
    r.flag() & flags::PAIRED != 0 && r.flag() & flags::MUNMAP == 0
}
