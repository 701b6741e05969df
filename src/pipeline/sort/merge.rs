//! The k-way merge of sorted runs: the temporary files [`super::spill`] wrote, and optionally
//! the last records read, sorted but kept in memory.
//!
//! Keeping the last run in memory is what samtools does ("merging from 6 files and 2 in-memory
//! blocks"): the records read after the last spill are never written to a temporary file and
//! read back. They are the last stretch of the input, so they go last on ties, and the merge
//! stays stable.

use crate::error::Error;
use crate::io::open;
use crate::io::sam::format::format_record;
use crate::io::tempfiles::TempFile;
use crate::ops::sort::keys;
use crate::ops::sort::merge::RunHeap;
use crate::ops::sort::{NameOrder, SortOrder};
use crate::pipeline::read_ahead::ReadAhead;
use crate::pipeline::sink::{Encoded, RecordSink};
use crate::record::{Batch, Header, RecordRef, RecordStore};

/// Where a run's records come from.
enum Source<'a> {
    /// A temporary BAM file.
    File(Box<FileRun>),
    /// A store in memory, in its order.
    Memory(&'a RecordStore),
}

/// A run in a temporary file: its reader (which inflates the next piece on the pool while the
/// merge walks the current one; read in turn, every run's inflate ran on the merging thread),
/// the batches read ahead and the current one.
struct FileRun {
    reader: ReadAhead,
    pending: std::collections::VecDeque<Batch>,
    batch: Batch,
}

/// One sorted run being merged: its source, the current record and that record's keys.
struct Run<'a> {
    source: Source<'a>,
    at: usize,
    coord: u128,
    name: Vec<u8>,
    rank: u32,
}

impl<'a> Run<'a> {
    fn new(source: Source<'a>) -> Self {
        Run { source, at: usize::MAX, coord: 0, name: Vec::new(), rank: 0 }
    }

    /// The current record with its 4-byte length first.
    fn framed(&self) -> &[u8] {
        match &self.source {
            Source::File(f) => f.batch.framed(self.at),
            Source::Memory(store) => {
                let h = store.order[self.at];
                store.batches[h.batch as usize].framed(h.record as usize)
            }
        }
    }

    fn record(&self) -> RecordRef<'_> {
        RecordRef::new(&self.framed()[4..])
    }

    /// Moves to the next record (the first when `at` is `usize::MAX`); false at the end.
    fn advance(&mut self, n_refs: usize, names: Option<NameOrder>) -> Result<bool, Error> {
        self.at = self.at.wrapping_add(1);
        match &mut self.source {
            Source::File(f) => {
                let FileRun { reader, pending, batch } = &mut **f;
                while self.at >= batch.len() {
                    if let Some(b) = pending.pop_front() {
                        crate::pipeline::prefetch::recycle([std::mem::replace(batch, b)]);
                        self.at = 0;
                        continue;
                    }
                    match reader.next_group()? {
                        Some((batches, _)) => pending.extend(batches),
                        None => {
                            *batch = Batch::default();
                            return Ok(false);
                        }
                    }
                }
            }
            Source::Memory(store) => {
                if self.at >= store.order.len() {
                    return Ok(false);
                }
            }
        }
        // The name buffer is reused; it is taken out while the record borrows the run.
        let mut name = std::mem::take(&mut self.name);
        let r = self.record();
        let coord = keys::coordinate_key(&r, n_refs);
        let rank = names.map(|o| {
            name.clear();
            o.key(r.read_name(), &mut name);
            keys::flag_rank(r.flag())
        });
        self.coord = coord;
        self.name = name;
        if let Some(rank) = rank {
            self.rank = rank;
        }
        Ok(true)
    }
}

/// The order of two runs' current records under `order` (ties: equal).
fn cmp_runs(
    order: SortOrder,
    libraries: &std::collections::HashMap<&[u8], &[u8]>,
    a: &Run,
    b: &Run,
) -> std::cmp::Ordering {
    let names = || a.name.cmp(&b.name).then(a.rank.cmp(&b.rank));
    match order {
        SortOrder::Coordinate => a.coord.cmp(&b.coord),
        SortOrder::Name(_) => names(),
        SortOrder::Tag { tag, then } => {
            let (ra, rb) = (a.record(), b.record());
            keys::cmp_tag(&keys::tag_value(&ra, tag), &keys::tag_value(&rb, tag)).then_with(|| {
                match then {
                    None => a.coord.cmp(&b.coord),
                    Some(_) => names(),
                }
            })
        }
        SortOrder::TemplateCoordinate => {
            let (ra, rb) = (a.record(), b.record());
            match (keys::template_key(&ra, libraries), keys::template_key(&rb, libraries)) {
                (Ok(x), Ok(y)) => keys::cmp_template(&x, &y),
                _ => std::cmp::Ordering::Equal,
            }
        }
        SortOrder::MinHash(_) => std::cmp::Ordering::Equal,
    }
}

/// Merges the sorted runs, and `last` (the records read after them, already in sorted order)
/// when given, into `sink`; ties go to the earlier run.
pub fn merge(
    runs: &[TempFile],
    last: Option<&RecordStore>,
    (input_header, header): (&Header, &Header),
    order: SortOrder,
    budget: u64,
    sink: &mut RecordSink,
) -> Result<(), Error> {
    let flush_at = ((budget / 32) as usize).clamp(64 << 10, 4 << 20);
    let bam = sink.format().takes_bam_records();
    // One buffer, emptied after each write (which copies it): a new one each time grew by
    // doubling into fresh pages, and those faults were 40 % of a 6 M-read sort's.
    let mut out = Encoded::default();
    out.data.reserve(flush_at + (1 << 20));
    merge_runs(runs, last, input_header, order, budget, false, |framed| {
        if bam {
            out.data.extend_from_slice(framed);
        } else {
            format_record(&mut out.data, &RecordRef::new(&framed[4..]), header);
        }
        out.end_unit();
        if out.data.len() >= flush_at {
            sink.write(&out)?;
            out.data.clear();
            out.ends.clear();
        }
        Ok(())
    })?;
    sink.write(&out)
}

/// Merges the sorted runs (written by [`super::spill`] under `input_header`, `uncompressed` or
/// not), then `last` (the records read after them, in sorted order) when given, handing each
/// record, framed (its 4-byte length first), to `visit` in merged order; ties go to the earlier
/// run.
pub fn merge_runs(
    runs: &[TempFile],
    last: Option<&RecordStore>,
    input_header: &Header,
    order: SortOrder,
    budget: u64,
    uncompressed: bool,
    mut visit: impl FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let n_refs = input_header.refs().len();
    let names = match order {
        SortOrder::Name(n) | SortOrder::Tag { then: Some(n), .. } => Some(n),
        _ => None,
    };
    let libraries = keys::library_lookup(input_header.lines());
    // Each run's reader holds about two pieces (one read ahead) and a batch: keep them all
    // within a quarter budget.
    let piece = ((budget / 16) as usize / runs.len().max(1)).clamp(16 << 10, 2 << 20);
    let mut open_runs = Vec::with_capacity(runs.len() + 1);
    for f in runs {
        let path = f.path_str();
        // Uncompressed runs were written past the page cache ([`super::spill`]).
        let opened = if uncompressed {
            open::open_streamed_direct(&path, 1, piece)?
        } else {
            open::open_streamed(&path, 1, piece)?
        };
        let (pending, batch) = (Default::default(), Batch::default());
        let reader = ReadAhead::new(&path, opened.reader);
        let file = FileRun { reader, pending, batch };
        open_runs.push(Run::new(Source::File(Box::new(file))));
    }
    if let Some(store) = last {
        open_runs.push(Run::new(Source::Memory(store)));
    }
    let mut live = Vec::new();
    for (i, r) in open_runs.iter_mut().enumerate() {
        if r.advance(n_refs, names)? {
            live.push(i);
        }
    }
    let mut runs = open_runs;
    let mut heap = {
        let cmp = |a: usize, b: usize| cmp_runs(order, &libraries, &runs[a], &runs[b]);
        RunHeap::new(live.into_iter(), &cmp)
    };
    while let Some(top) = heap.top() {
        visit(runs[top].framed())?;
        let alive = runs[top].advance(n_refs, names)?;
        let cmp = |a: usize, b: usize| cmp_runs(order, &libraries, &runs[a], &runs[b]);
        heap.advanced(alive, &cmp);
    }
    Ok(())
}
