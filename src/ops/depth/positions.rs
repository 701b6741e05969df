//! Two position structures the depth commands share: a window of per-position cells that slides
//! along a reference, and BED intervals by reference.

use std::collections::VecDeque;

/// Positions per chunk of a [`PositionRing`].
const CHUNK: usize = 4096;

/// Cells for the positions from `first` on of one reference, filled as reads arrive and handed
/// out in position order once no later read can reach them.
///
/// The cells live in chunks of [`CHUNK`] positions, made only where a read touches them: a read
/// spanning 268 Mb with one base at each end (`1M268435000N1M`) takes two chunks, not a cell for
/// every position of its span (samtools' pileup walks it in 18 MB; a cell per position needed
/// 4 GB). Positions of chunks never made read as `T::default()`.
pub struct PositionRing<T> {
    /// The position of the first cell of `chunks[0]`.
    base: i64,
    /// The first position not yet handed out.
    first: i64,
    chunks: VecDeque<Option<Box<[T]>>>,
}

impl<T: Default> Default for PositionRing<T> {
    fn default() -> Self {
        PositionRing { base: 0, first: 0, chunks: VecDeque::new() }
    }
}

impl<T: Default> PositionRing<T> {
    /// The chunk holding `pos` (at or after every position handed out), made if missing, and
    /// the offset of `pos` in it.
    fn chunk_mut(&mut self, pos: i64) -> (&mut [T], usize) {
        if self.chunks.is_empty() {
            // Positions between the last handed out and `pos` were never touched.
            self.base = pos;
            self.first = self.first.min(pos);
        }
        // A read's first counted base may lie past a later read's start (`5N10M` at 100,
        // then `10M` at 101): reach back with chunks in front.
        while pos < self.base {
            self.chunks.push_front(None);
            self.base -= CHUNK as i64;
        }
        let offset = (pos - self.base) as usize;
        let index = offset / CHUNK;
        while self.chunks.len() <= index {
            self.chunks.push_back(None);
        }
        let chunk =
            self.chunks[index].get_or_insert_with(|| (0..CHUNK).map(|_| T::default()).collect());
        (chunk, offset % CHUNK)
    }

    /// The cell of `pos` (at or after every position handed out), made if missing.
    pub fn cell_mut(&mut self, pos: i64) -> &mut T {
        let (chunk, k) = self.chunk_mut(pos);
        &mut chunk[k]
    }

    /// The cell of `pos`, if its chunk was made and not yet handed out.
    pub fn get(&self, pos: i64) -> Option<&T> {
        if pos < self.first || pos < self.base {
            return None;
        }
        let offset = (pos - self.base) as usize;
        self.chunks.get(offset / CHUNK)?.as_ref().map(|c| &c[offset % CHUNK])
    }

    /// The first position after the last chunk (where the cells end).
    fn limit(&self) -> i64 {
        self.base + (self.chunks.len() * CHUNK) as i64
    }

    /// Drops the chunks wholly before `pos` (and marks the positions before it handed out).
    pub fn discard_before(&mut self, pos: i64) {
        while !self.chunks.is_empty() && self.base + CHUNK as i64 <= pos {
            self.chunks.pop_front();
            self.base += CHUNK as i64;
        }
        self.first = self.first.max(pos);
        if self.chunks.is_empty() {
            self.base = self.first;
        }
    }

    /// Hands `cell` every made cell before `pos`, in order, with its position, and `gap` each
    /// run `from..to` of positions whose chunk was never made (their cells are all default).
    /// Ends at the last chunk.
    pub fn flush_runs_before(
        &mut self,
        pos: i64,
        mut cell: impl FnMut(i64, T),
        mut gap: impl FnMut(i64, i64),
    ) {
        let stop = pos.min(self.limit());
        while self.first < stop {
            if self.first < self.base {
                // Before the first chunk made since the ring was last empty: nothing there.
                self.first = self.base.min(stop);
                continue;
            }
            let index = ((self.first - self.base) as usize) / CHUNK;
            let chunk_end = self.base + ((index + 1) * CHUNK) as i64;
            let to = stop.min(chunk_end);
            match self.chunks[index].as_mut() {
                Some(cells) => {
                    for p in self.first..to {
                        let k = (p - self.base) as usize % CHUNK;
                        cell(p, std::mem::take(&mut cells[k]));
                    }
                }
                None => gap(self.first, to),
            }
            self.first = to;
            if to == chunk_end {
                self.chunks.pop_front();
                self.base = chunk_end;
            }
        }
        if self.chunks.is_empty() {
            self.base = self.first;
        }
    }

    /// Hands `done` every cell before `pos`, in order, with its position; positions of chunks
    /// never made come as `T::default()`. Ends at the last chunk.
    pub fn flush_before(&mut self, pos: i64, done: impl FnMut(i64, T)) {
        let done = std::cell::RefCell::new(done);
        self.flush_runs_before(
            pos,
            |p, c| (done.borrow_mut())(p, c),
            |from, to| (from..to).for_each(|p| (done.borrow_mut())(p, T::default())),
        );
    }

    /// As [`PositionRing::flush_before`], but only cells of chunks that were made: for
    /// callers to whom a default cell means nothing.
    pub fn flush_made_before(&mut self, pos: i64, done: impl FnMut(i64, T)) {
        self.flush_runs_before(pos, done, |_, _| {});
    }

    /// Hands out every cell (the end of a reference).
    pub fn flush_all(&mut self, done: impl FnMut(i64, T)) {
        self.flush_before(i64::MAX, done);
        *self = PositionRing::default();
    }
}

/// Applies `add` to the cells of `beg..end` in `ring`, with each cell's offset from `beg`
/// (positions already handed out are left out: unsorted input is refused upstream).
pub fn for_span<T: Default>(
    ring: &mut PositionRing<T>,
    beg: i64,
    end: i64,
    mut add: impl FnMut(usize, &mut T),
) {
    let from = beg.max(ring.first);
    let mut p = from;
    while p < end {
        let (chunk, k) = ring.chunk_mut(p);
        let n = (chunk.len() - k).min((end - p) as usize);
        let at = (p - from) as usize;
        chunk[k..k + n].iter_mut().enumerate().for_each(|(j, c)| add(at + j, c));
        p += n as i64;
    }
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

    /// Whether `beg..end` of `tid` overlaps an interval (`bed_overlap` for a read's span).
    pub fn overlaps(&self, tid: i32, beg: i64, end: i64) -> bool {
        let Some(list) = usize::try_from(tid).ok().and_then(|t| self.by_tid.get(t)) else {
            return false;
        };
        let i = list.partition_point(|&(_, e)| e <= beg);
        list.get(i).is_some_and(|&(b, _)| b < end)
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
        assert_eq!(depths[..8], [1, 1, 2, 3, 2, 1, 1, 1]);
        // The rest of the last chunk comes out empty.
        assert!(depths[8..].iter().all(|&d| d == 0));
        assert!(seen.windows(2).all(|w| w[1].0 == w[0].0 + 1));
    }

    #[test]
    fn a_long_skip_makes_no_cells() {
        let mut ring = PositionRing::<u32>::default();
        for_span(&mut ring, 100, 101, |_, c| *c += 1);
        for_span(&mut ring, 268_435_100, 268_435_101, |_, c| *c += 1);
        assert_eq!(ring.chunks.iter().flatten().count(), 2);
        let mut seen = Vec::new();
        ring.flush_made_before(i64::MAX, |p, c| {
            if c > 0 {
                seen.push(p);
            }
        });
        assert_eq!(seen, [100, 268_435_100]);
        let mut gaps = 0;
        let mut ring = PositionRing::<u32>::default();
        for_span(&mut ring, 100, 101, |_, c| *c += 1);
        *ring.cell_mut(1_000_000) += 1;
        ring.flush_runs_before(i64::MAX, |_, _| {}, |from, to| gaps += to - from);
        assert!(gaps > 990_000);
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
