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
use crate::io::sink::{Encoded, RecordSink};
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::ops::sort::keys;
use crate::ops::sort::merge::RunHeap;
use crate::ops::sort::{NameOrder, SortOrder};
use crate::pipeline::read_ahead::ReadAhead;
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

/// The sorted runs on disk, in input order: whether they are stored uncompressed, and the namer
/// that gave them their names (a staged merge writes its runs the same way).
pub struct Runs<'a> {
    pub files: Vec<TempFile>,
    pub uncompressed: bool,
    pub namer: &'a mut TempNamer,
    /// The command's threads (its pool's size): the merged run's writer and the runs' readers.
    pub threads: usize,
}

/// How runs are read back: stored uncompressed or not, on how many threads.
#[derive(Clone, Copy)]
struct Reading {
    uncompressed: bool,
    threads: usize,
}

/// About the least memory one run's reader takes: a read buffer of a piece, a BGZF block read
/// ahead and inflated, its batch (64 KiB pieces at the least).
const RUN_READER_BYTES: u64 = 256 << 10;

/// Runs merged at once however small the budget: fewer would merge the same records again and
/// again.
const MIN_FAN_IN: usize = 16;

/// Descriptors left to the rest of the process under the open-file limit: standard streams,
/// the input, the output and its index, a staged merge's output, the allocator's and the
/// thread pool's own.
const FILE_HEADROOM: usize = 32;

/// How many runs are merged at once: as many as a quarter of the budget keeps small readers
/// for (at least [`MIN_FAN_IN`]), and no more than the open-file limit allows.
fn fan_in(budget: u64) -> usize {
    let by_memory = ((budget / 4 / RUN_READER_BYTES) as usize).max(MIN_FAN_IN);
    let by_files = crate::io::open_files::open_file_limit()
        .map_or(usize::MAX, |n| (n as usize).saturating_sub(FILE_HEADROOM));
    by_memory.min(by_files).max(2)
}

/// Merges the sorted runs, and `last` (the records read after them, already in sorted order)
/// when given, into `sink`; ties go to the earlier run.
pub fn merge(
    runs: Runs<'_>,
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
    merge_runs(runs, last, input_header, order, budget, |framed| {
        if bam {
            out.data.extend_from_slice(framed);
        } else {
            format_record(&mut out.data, &RecordRef::new(&framed[4..]), header);
        }
        end_record(&mut out, sink, flush_at)
    })?;
    sink.write(&out)
}

/// Merges the sorted runs (written by [`super::spill`] under `input_header`), then `last` (the
/// records read after them, in sorted order) when given, handing each record, framed (its 4-byte
/// length first), to `visit` in merged order; ties go to the earlier run.
///
/// More runs than [`fan_in`] allows (the open-file limit, or small readers within the budget)
/// are first merged in stages, as samtools does past 64 temporary files: consecutive runs into
/// one new run, which keeps its place, so ties still come out in input order.
pub fn merge_runs(
    mut runs: Runs<'_>,
    last: Option<&RecordStore>,
    input_header: &Header,
    order: SortOrder,
    budget: u64,
    visit: impl FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let fan_in = fan_in(budget);
    let in_memory = usize::from(last.is_some());
    let mut at = 0;
    while runs.files.len() + in_memory > fan_in {
        let excess = runs.files.len() + in_memory - fan_in;
        if at + 1 >= runs.files.len() {
            // Every run was merged once this pass: another pass over the merged ones.
            at = 0;
        }
        let k = (excess + 1).min(fan_in).min(runs.files.len() - at);
        let group: Vec<TempFile> = runs.files.drain(at..at + k).collect();
        let merged = merge_into_run(&group, &mut runs, input_header, order, budget)?;
        drop(group);
        runs.files.insert(at, merged);
        at += 1;
    }
    let reading = Reading { uncompressed: runs.uncompressed, threads: runs.threads };
    merge_open(&runs.files, last, input_header, order, budget, reading, visit)
}

/// Merges `group` (consecutive runs) into one new run, stored as the runs are.
fn merge_into_run(
    group: &[TempFile],
    runs: &mut Runs<'_>,
    header: &Header,
    order: SortOrder,
    budget: u64,
) -> Result<TempFile, Error> {
    let (file, created) = runs.namer.create_next().map_err(|e| Error::CannotCreate {
        path: runs.namer.last_path(),
        reason: crate::error::c_message(&e),
    })?;
    let path = file.path_str();
    let threads = runs.threads.max(1);
    let mut sink = if runs.uncompressed {
        RecordSink::create_uncompressed_temporary(&path, created, threads, header)?
    } else {
        RecordSink::create_temporary(&path, created, threads, header)?
    };
    let flush_at = ((budget / 32) as usize).clamp(64 << 10, 4 << 20);
    let mut out = Encoded::default();
    let reading = Reading { uncompressed: runs.uncompressed, threads };
    merge_open(group, None, header, order, budget, reading, |framed| {
        out.data.extend_from_slice(framed);
        end_record(&mut out, &mut sink, flush_at)
    })?;
    sink.write(&out)?;
    sink.finish()?;
    Ok(file)
}

/// [`merge_runs`] of runs few enough to open side by side.
fn merge_open(
    runs: &[TempFile],
    last: Option<&RecordStore>,
    input_header: &Header,
    order: SortOrder,
    budget: u64,
    reading: Reading,
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
        let opened = if reading.uncompressed {
            open::open_streamed_direct(&path, 1, piece)?
        } else {
            open::open_streamed(&path, 1, piece)?
        };
        let (pending, batch) = (Default::default(), Batch::default());
        let reader = ReadAhead::new(&path, opened.reader, reading.threads);
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

/// Ends the record just added to `out`, handing `out` to `sink` once it holds `flush_at` bytes.
fn end_record(out: &mut Encoded, sink: &mut RecordSink, flush_at: usize) -> Result<(), Error> {
    out.end_unit();
    if out.data.len() >= flush_at {
        sink.write(out)?;
        out.data.clear();
        out.ends.clear();
    }
    Ok(())
}
