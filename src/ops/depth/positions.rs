//! Two position structures the depth commands share: a window of per-position cells that slides
//! along a reference (memory bounded by the longest read span), and BED intervals by reference.

use std::collections::VecDeque;

/// Cells for the positions `first..first + len` of one reference, filled as reads arrive and
/// handed out in position order once no later read can reach them.
pub struct PositionRing<T> {
    first: i64,
    cells: VecDeque<T>,
}

impl<T: Default> Default for PositionRing<T> {
    fn default() -> Self {
        PositionRing { first: 0, cells: VecDeque::new() }
    }
}

impl<T: Default> PositionRing<T> {
    /// The cells of `beg..end` (`beg` at or after every position handed out), as two slices
    /// in position order (the ring may wrap).
    pub fn span_mut(&mut self, beg: i64, end: i64) -> (&mut [T], &mut [T]) {
        if self.cells.is_empty() {
            self.first = beg;
        }
        // Positions already handed out cannot change (unsorted input is refused upstream).
        let beg = beg.max(self.first);
        let want = (end - self.first).max(beg - self.first) as usize;
        while self.cells.len() < want {
            self.cells.push_back(T::default());
        }
        let (a, b) = self.cells.as_mut_slices();
        let from = (beg - self.first) as usize;
        let to = want;
        let split = a.len();
        if to <= split {
            (&mut a[from..to], &mut [])
        } else if from >= split {
            (&mut b[from - split..to - split], &mut [])
        } else {
            (&mut a[from..], &mut b[..to - split])
        }
    }

    /// Hands `done` every cell before `pos`, in order, with its position.
    pub fn flush_before(&mut self, pos: i64, mut done: impl FnMut(i64, T)) {
        while self.first < pos {
            match self.cells.pop_front() {
                Some(cell) => done(self.first, cell),
                None => break,
            }
            self.first += 1;
        }
    }

    /// Hands out every cell (the end of a reference).
    pub fn flush_all(&mut self, done: impl FnMut(i64, T)) {
        self.flush_before(i64::MAX, done);
    }
}

/// Applies `add` to the cells of `beg..end` in `ring`, with each cell's offset from `beg`.
pub fn for_span<T: Default>(
    ring: &mut PositionRing<T>,
    beg: i64,
    end: i64,
    mut add: impl FnMut(usize, &mut T),
) {
    let (a, b) = ring.span_mut(beg, end);
    let n = a.len();
    a.iter_mut().enumerate().for_each(|(k, c)| add(k, c));
    b.iter_mut().enumerate().for_each(|(k, c)| add(n + k, c));
}

/// Where a read comes too early for htslib's pileup (`bam_plp_push`).
#[derive(Default)]
pub struct SortCheck {
    last: Option<(i32, i64)>,
}

impl SortCheck {
    /// The pileup's complaint about a read at `pos` of `tid`, if it is out of order.
    pub fn check(&mut self, tid: i32, pos: i64) -> Result<(), &'static str> {
        match self.last {
            Some((t, _)) if tid < t => Err("The input is not sorted (chromosomes out of order)"),
            Some((t, p)) if tid == t && pos < p => {
                Err("The input is not sorted (reads out of order)")
            }
            _ => {
                self.last = Some((tid, pos));
                Ok(())
            }
        }
    }
}

/// BED intervals per reference id, sorted and merged, as samtools' `bed_read` and `bed_overlap`
/// use them.
#[derive(Default)]
pub struct BedMask {
    by_tid: Vec<Vec<(i64, i64)>>,
}

impl BedMask {
    /// `intervals` as (reference id, start, end); ids outside `0..n_refs` are dropped.
    pub fn new(n_refs: usize, intervals: impl IntoIterator<Item = (i32, i64, i64)>) -> Self {
        let mut by_tid = vec![Vec::new(); n_refs];
        for (tid, beg, end) in intervals {
            if let Some(list) = usize::try_from(tid).ok().and_then(|t| by_tid.get_mut(t)) {
                list.push((beg, end));
            }
        }
        for list in &mut by_tid {
            list.sort_unstable();
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(list.len());
            for &(b, e) in list.iter() {
                match merged.last_mut() {
                    Some(m) if b <= m.1 => m.1 = m.1.max(e),
                    _ => merged.push((b, e)),
                }
            }
            *list = merged;
        }
        BedMask { by_tid }
    }

    /// Whether position `pos` of `tid` lies in an interval (`bed_overlap(tid, pos, pos + 1)`).
    pub fn contains(&self, tid: i32, pos: i64) -> bool {
        let Some(list) = usize::try_from(tid).ok().and_then(|t| self.by_tid.get(t)) else {
            return false;
        };
        let i = list.partition_point(|&(_, e)| e <= pos);
        list.get(i).is_some_and(|&(b, _)| b <= pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_hands_out_positions_in_order() {
        let mut ring = PositionRing::<u32>::default();
        for_span(&mut ring, 10, 15, |_, c| *c += 1);
        for_span(&mut ring, 12, 18, |_, c| *c += 1);
        let mut seen = Vec::new();
        ring.flush_before(13, |p, c| seen.push((p, c)));
        for_span(&mut ring, 13, 14, |_, c| *c += 1);
        ring.flush_all(|p, c| seen.push((p, c)));
        let depths: Vec<u32> = seen.iter().map(|s| s.1).collect();
        assert_eq!(seen[0].0, 10);
        assert_eq!(depths, [1, 1, 2, 3, 2, 1, 1, 1]);
    }

    #[test]
    fn bed_mask_is_half_open() {
        let mask = BedMask::new(2, [(0, 5, 10), (0, 8, 12), (1, 0, 1)]);
        assert!(!mask.contains(0, 4));
        assert!(mask.contains(0, 5) && mask.contains(0, 11));
        assert!(!mask.contains(0, 12));
        assert!(mask.contains(1, 0) && !mask.contains(1, 1) && !mask.contains(2, 0));
    }
}
