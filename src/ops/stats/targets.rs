//! Target regions (`-t FILE`, or the regions after the input): a read is taken when it overlaps
//! one, and its coverage counts only inside them (samtools' `is_in_regions`). The regions are
//! walked forward with the input, so the input must be sorted.

use crate::record::RecordRef;

/// samtools' `HTS_POS_MAX`: an interval to the end of its reference.
pub const TO_END: i64 = (i32::MAX as i64) << 32 | i32::MAX as i64;

pub struct Targets {
    /// Per reference: intervals, 1-based inclusive, sorted and merged.
    pub intervals: Vec<Vec<(i64, i64)>>,
    /// Per reference: the first interval a later read can overlap.
    next: Vec<usize>,
    /// The intervals the current read overlaps, clipped to it (1-based inclusive).
    pub chunks: Vec<(i64, i64)>,
    /// The first interval the current read overlaps.
    pub from: i64,
    pub to: i64,
    /// Reference bases the intervals cover.
    pub base_count: u64,
}

impl Targets {
    /// `-t`'s intervals per reference as read: sorted, overlapping ones merged (samtools'
    /// `init_regions`); `ref_lens` sizes the intervals that run to the end.
    pub fn from_file_intervals(mut intervals: Vec<Vec<(i64, i64)>>, ref_lens: &[u64]) -> Targets {
        for list in &mut intervals {
            list.sort();
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(list.len());
            for &(beg, end) in list.iter() {
                match merged.last_mut() {
                    Some(last) if last.1 >= beg => last.1 = last.1.max(end),
                    _ => merged.push((beg, end)),
                }
            }
            *list = merged;
        }
        Targets::new(intervals, ref_lens)
    }

    /// Intervals already sorted and merged (the command line's regions, as htslib merges them).
    pub fn new(intervals: Vec<Vec<(i64, i64)>>, ref_lens: &[u64]) -> Targets {
        let mut base_count = 0u64;
        for (tid, list) in intervals.iter().enumerate() {
            for &(beg, end) in list {
                if end < TO_END {
                    base_count = base_count.wrapping_add((end - beg + 1) as u64);
                } else {
                    let len = ref_lens.get(tid).copied().unwrap_or(0);
                    if len != 0 {
                        base_count = base_count.wrapping_add(len.wrapping_sub(beg as u64) + 1);
                    }
                }
            }
        }
        let next = vec![0; intervals.len()];
        Targets { intervals, next, chunks: Vec::new(), from: 0, to: 0, base_count }
    }

    /// Whether `r` overlaps an interval; if so the overlapping ones become [`Self::chunks`].
    pub fn takes(&mut self, r: &RecordRef<'_>) -> bool {
        let tid = r.ref_id();
        if tid < 0 || tid as usize >= self.intervals.len() {
            return false;
        }
        let tid = tid as usize;
        let list = &self.intervals[tid];
        if self.next[tid] == list.len() {
            return false;
        }
        let pos = r.pos();
        let mut i = self.next[tid];
        while i < list.len() && list[i].1 <= pos {
            i += 1;
        }
        if i >= list.len() {
            self.next[tid] = list.len();
            return false;
        }
        let end = r.end_pos();
        if end < list[i].0 {
            return false;
        }
        self.next[tid] = i;
        (self.from, self.to) = list[i];
        self.chunks.clear();
        for &(beg, stop) in &list[i..] {
            if pos < stop && end >= beg {
                self.chunks.push(((pos + 1).max(beg), end.min(stop)));
            }
        }
        true
    }
}
