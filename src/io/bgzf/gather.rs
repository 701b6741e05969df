//! Blocks planned from unit sizes, then gathered and deflated in one parallel pass.
//!
//! htslib's cut points depend only on the unit sizes (a unit starts a new block when it would
//! not fit the open one; a unit larger than a block is cut at 0xff00), so a run of units' blocks
//! are known before a byte is copied. Each task then copies its block's bytes straight from
//! wherever the units lie (records of a sorted store) and deflates them: no copy of the whole run
//! is made first, and no thread gathers while the others wait.

use rayon::prelude::*;

use super::block::{BLOCK_DATA_MAX, BLOCK_MAX, Deflater};
use super::codec::Engine;

/// Units addressed by number, in the order they are written.
pub trait Units: Sync {
    /// How many units there are.
    fn count(&self) -> usize;
    /// Unit `i`'s length; 0 leaves it out (not written, not tracked). Must not touch the unit's
    /// bytes where that costs a cache miss: the plan reads every size on one thread.
    fn size(&self, i: usize) -> usize;
    /// Unit `i`'s bytes (`size(i)` of them); called only for units of nonzero size.
    fn unit(&self, i: usize) -> &[u8];
    /// Called at unit `i` of a gather: units lying anywhere (records in sorted order) are worth
    /// asking for a few ahead.
    fn prefetch_ahead(&self, _i: usize) {}
}

impl Units for [&[u8]] {
    fn count(&self) -> usize {
        self.len()
    }

    fn size(&self, i: usize) -> usize {
        self[i].len()
    }

    fn unit(&self, i: usize) -> &[u8] {
        self[i]
    }

    fn prefetch_ahead(&self, i: usize) {
        use crate::record::prefetch::{PREFETCH_AHEAD, prefetch_record};
        if let Some(ahead) = self.get(i + PREFETCH_AHEAD) {
            prefetch_record(ahead, 0);
        }
    }
}

/// A block to build: its bytes start at byte `offset` of unit `unit`; it holds `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub unit: usize,
    pub offset: usize,
    pub len: usize,
}

/// The blocks of a run of units laid out after `open` bytes already in the open block.
pub struct Plan {
    /// Blocks closed by the run (the first one holds the `open` bytes first).
    pub closed: Vec<Spec>,
    /// What stays in the open block after the run (`len` counts the `open` bytes when no block
    /// was closed).
    pub tail: Spec,
}

/// Cuts the units into blocks as successive `bgzf_write`s of whole units would (see
/// `writer.rs`). `track(block, offset)` is told where each written unit starts: the number of
/// the block among those the plan closes (the open one is number 0) and the offset in it.
pub fn plan(
    units: &(impl Units + ?Sized),
    open: usize,
    mut track: impl FnMut(usize, usize),
) -> Plan {
    let mut closed = Vec::new();
    let mut open = open;
    let (mut start_unit, mut start_offset) = (0usize, 0usize);
    for i in 0..units.count() {
        let size = units.size(i);
        if size == 0 {
            continue;
        }
        if open + size > BLOCK_DATA_MAX && open > 0 {
            closed.push(Spec { unit: start_unit, offset: start_offset, len: open });
            (open, start_unit, start_offset) = (0, i, 0);
        }
        track(closed.len(), open);
        let mut at = 0;
        while at < size {
            let n = (BLOCK_DATA_MAX - open).min(size - at);
            open += n;
            at += n;
            if open == BLOCK_DATA_MAX {
                closed.push(Spec { unit: start_unit, offset: start_offset, len: open });
                open = 0;
                (start_unit, start_offset) = if at == size { (i + 1, 0) } else { (i, at) };
            }
        }
    }
    Plan { closed, tail: Spec { unit: start_unit, offset: start_offset, len: open } }
}

/// Copies `spec`'s bytes into `out` (cleared first), `lead` (bytes already in the open block)
/// in front.
pub fn gather(units: &(impl Units + ?Sized), spec: &Spec, lead: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(lead);
    let (mut i, mut offset) = (spec.unit, spec.offset);
    while out.len() < spec.len {
        units.prefetch_ahead(i);
        if units.size(i) > 0 {
            let u = units.unit(i);
            let n = (u.len() - offset).min(spec.len - out.len());
            out.extend_from_slice(&u[offset..offset + n]);
        }
        i += 1;
        offset = 0;
    }
}

/// Gathers and deflates the blocks `specs` on the pool, the first with `lead` in front; returns
/// the compressed blocks in order.
pub fn deflate_planned(
    units: &(impl Units + ?Sized),
    specs: &[Spec],
    lead: &[u8],
    (level, engine): (i32, Engine),
) -> Vec<Vec<u8>> {
    specs
        .par_iter()
        .enumerate()
        .map_init(
            || (Deflater::with_engine(level, engine), Vec::with_capacity(BLOCK_DATA_MAX)),
            |(deflater, raw), (k, spec)| {
                gather(units, spec, if k == 0 { lead } else { &[] }, raw);
                // Recycled: the writer thread gives each block back once written.
                let mut out = crate::io::recycle::take(BLOCK_MAX + 1024);
                deflater.deflate_into(raw, &mut out);
                out
            },
        )
        .collect()
}

/// [`deflate_planned`] on the calling thread alone: one job of
/// [`super::writer::Writer::write_units_shared`]. The thread's deflater is kept for its next job
/// (libdeflate's state at the default level is about 0.5 MiB, zeroed when made).
pub fn deflate_serial(
    units: &(impl Units + ?Sized),
    specs: &[Spec],
    lead: &[u8],
    (level, engine): (i32, Engine),
) -> Vec<Vec<u8>> {
    /// A thread's deflater for one level and engine, and its gathering buffer.
    type Kept = Option<(i32, Engine, Deflater, Vec<u8>)>;
    thread_local! {
        static KEPT: std::cell::RefCell<Kept> = const { std::cell::RefCell::new(None) };
    }
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if !matches!(&*kept, Some((l, e, _, _)) if *l == level && *e == engine) {
            *kept = None;
        }
        let (_, _, deflater, raw) = kept.get_or_insert_with(|| {
            (
                level,
                engine,
                Deflater::with_engine(level, engine),
                Vec::with_capacity(BLOCK_DATA_MAX),
            )
        });
        specs
            .iter()
            .enumerate()
            .map(|(k, spec)| {
                gather(units, spec, if k == 0 { lead } else { &[] }, raw);
                let mut out = crate::io::recycle::take(BLOCK_MAX + 1024);
                deflater.deflate_into(raw, &mut out);
                out
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_skips_empty_units_and_cuts_large_ones() {
        let a = vec![1u8; 40000];
        let b = vec![2u8; 30000];
        let c = vec![3u8; 70000];
        let units: Vec<&[u8]> = vec![&a, &[], &b, &c];
        let mut starts = Vec::new();
        let p = plan(units.as_slice(), 10, |blk, off| starts.push((blk, off)));
        assert_eq!(starts, vec![(0, 10), (1, 0), (2, 0)]);
        let lens: Vec<usize> = p.closed.iter().map(|s| s.len).collect();
        assert_eq!(lens, vec![40010, 30000, BLOCK_DATA_MAX]);
        assert_eq!(p.tail, Spec { unit: 3, offset: BLOCK_DATA_MAX, len: 70000 - BLOCK_DATA_MAX });
        let mut raw = Vec::new();
        gather(units.as_slice(), &p.closed[0], &[9; 10], &mut raw);
        assert_eq!(raw.len(), 40010);
        assert_eq!((raw[9], raw[10]), (9, 1));
        gather(units.as_slice(), &p.tail, &[], &mut raw);
        assert!(raw.iter().all(|&x| x == 3) && raw.len() == 70000 - BLOCK_DATA_MAX);
    }
}
