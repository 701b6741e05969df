//! Markdup's write phase to BAM: records go from the store straight into deflated blocks.
//!
//! A window of records in sorted order at a time: on the pool, each record's output size is
//! found (0 when `-r` removes it) and the few records markdup edits are finalised into a side
//! buffer; then the window's BGZF blocks are planned from the sizes alone and each block is
//! gathered (from the store, or the side buffer) and deflated by one task
//! ([`crate::io::bgzf::gather`]), as a job of a few blocks spawned in a scope: the next window
//! is sized while they run, and no worker waits for a window's last block. The only
//! thread-alone work is the plan, an addition per record. Before, every record was copied into
//! an encoded run, then copied again into blocks, the second copy's cut points computed per run
//! on the thread that wrote.

use std::sync::Arc;

use rayon::prelude::*;

use super::{CHUNK, Marked, RecordHash, count_hashed};
use crate::error::Error;
use crate::io::bgzf::gather::Units;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::markdup::decide::Outcome;
use crate::ops::markdup::{self as md, MarkdupOptions as Md};
use crate::record::layout;
use crate::record::{RecordIdx, RecordRef, RecordStore};

/// Windows of this many chunks a thread: a few hundred blocks each, so the workers rarely wait
/// at a window's end, while the window's sizes and edited records stay a few MiB.
const WINDOW_CHUNKS_PER_THREAD: usize = 8;

/// `side_at` of a record written as it is in the store.
const FROM_STORE: u32 = u32::MAX;

/// One chunk of a window, after the size pass.
#[derive(Default)]
struct Part {
    /// Per record: its framed output size, 0 when it is not written.
    sizes: Vec<u32>,
    /// Per record: where its finalised bytes start in `side`, or [`FROM_STORE`].
    side_at: Vec<u32>,
    /// Finalised records, framed, back to back.
    side: Vec<u8>,
    marked: Marked,
    /// A record with a name extension (a long CIGAR, or values BAM cannot hold): the window is
    /// written record by record, through the BAM writer's checks.
    extended: bool,
}

/// What the decisions and options mean for each record.
pub struct Finaliser<'a> {
    pub store: &'a RecordStore,
    pub outcomes: &'a [Outcome],
    pub md: &'a Md,
    pub name: &'a (dyn Fn(u32) -> &'a [u8] + Sync),
    pub umi: Option<&'a regex::bytes::Regex>,
    pub hash: Option<&'a RecordHash>,
}

/// Writes every record of `f.store` in its order to the BAM `sink`; returns what was written
/// and removed (with `f.hash`).
pub fn write_all(
    f: &Finaliser<'_>,
    sink: &mut RecordSink,
    threads: usize,
) -> Result<Marked, Error> {
    let n = f.store.len();
    let window = CHUNK * WINDOW_CHUNKS_PER_THREAD * threads.max(1);
    let mut marked = Marked::default();
    // The windows' deflate jobs borrow the store: they run in a scope that ends with the last.
    rayon::in_place_scope(|scope| {
        let mut start = 0;
        while start < n {
            let end = (start + window).min(n);
            let order = &f.store.order[start..end];
            let parts: Vec<Part> = order
                .par_chunks(CHUNK)
                .enumerate()
                .map(|(c, handles)| size_chunk(f, start + c * CHUNK, handles))
                .collect();
            for p in &parts {
                marked.merge(&p.marked);
            }
            let units = WindowUnits { store: f.store, order, parts };
            if units.parts.iter().any(|p| p.extended) {
                sink.write(&units.encoded())?;
            } else {
                sink.write_planned_shared(Arc::new(units), scope)?;
            }
            start = end;
        }
        Ok(marked)
    })
}

/// The size pass over the records `handles`, the first at position `first` of the order.
fn size_chunk(f: &Finaliser<'_>, first: usize, handles: &[RecordIdx]) -> Part {
    let mut p = Part {
        sizes: Vec::with_capacity(handles.len()),
        side_at: Vec::with_capacity(handles.len()),
        ..Part::default()
    };
    for (k, &idx) in handles.iter().enumerate() {
        f.store.prefetch_ahead(handles, k);
        let r = f.store.get(idx);
        let o = &f.outcomes[first + k];
        if !md::is_written(o, r.flag(), f.md) {
            count_hashed(&mut p.marked.removed, f.hash, &r);
            p.sizes.push(0);
            p.side_at.push(FROM_STORE);
            continue;
        }
        if md::is_unchanged(o, r.flag(), f.md) {
            count_hashed(&mut p.marked.written, f.hash, &r);
            p.extended |= layout::uses_name_ext(r.bytes());
            p.sizes.push(4 + r.bytes().len() as u32);
            p.side_at.push(FROM_STORE);
        } else {
            let b = md::finalize(r.bytes(), o, f.md, f.name, f.umi);
            count_hashed(&mut p.marked.written, f.hash, &RecordRef::new(&b));
            p.extended |= layout::uses_name_ext(&b);
            p.sizes.push(4 + b.len() as u32);
            p.side_at.push(p.side.len() as u32);
            p.side.extend_from_slice(&(b.len() as u32).to_le_bytes());
            p.side.extend_from_slice(&b);
        }
    }
    p
}

/// A window's records as the BGZF writer's units: framed, from the store or the side buffers.
struct WindowUnits<'a> {
    store: &'a RecordStore,
    order: &'a [RecordIdx],
    parts: Vec<Part>,
}

impl WindowUnits<'_> {
    /// The window's written records copied into one run, for the record-by-record path.
    fn encoded(&self) -> Encoded {
        let mut out = Encoded::default();
        for i in (0..self.count()).filter(|&i| self.size(i) > 0) {
            out.data.extend_from_slice(self.unit(i));
            out.end_unit();
        }
        out
    }
}

impl Units for WindowUnits<'_> {
    fn count(&self) -> usize {
        self.order.len()
    }

    fn size(&self, i: usize) -> usize {
        self.parts[i / CHUNK].sizes[i % CHUNK] as usize
    }

    fn unit(&self, i: usize) -> &[u8] {
        let part = &self.parts[i / CHUNK];
        match part.side_at[i % CHUNK] {
            FROM_STORE => {
                let h = self.order[i];
                self.store.batches[h.batch as usize].framed(h.record as usize)
            }
            at => {
                let at = at as usize;
                &part.side[at..at + part.sizes[i % CHUNK] as usize]
            }
        }
    }

    fn prefetch_ahead(&self, i: usize) {
        self.store.prefetch_ahead(self.order, i);
    }
}
