//! `mpileup` of one indexed BAM in blocks: each reference (or the `-r` region) is cut
//! into blocks, each block's reads are fetched through the index and piled up afresh on a pool
//! worker, which writes the block's lines; this thread writes the blocks' lines in order, with
//! `-a`'s lines for the stretches no block covers. samtools walks the file once on one thread;
//! the blocks give the same bytes, faster.
//!
//! Why a block's lines equal the serial walk's: a column depends on the reads covering it, and
//! a block fetches every read that overlaps it or the position before it (all reads the
//! pileup list can hold when a read of the block arrives). Two things can still differ, and a
//! block reports them ([`Pileup::unsure`], [`Pileup::max_reads`]): the depth cap (`-d`), which
//! in the serial walk counts reads the block does not see at a reference's start, and reads
//! with namesakes (supplementary alignments) paired across the block's start. Then the serial
//! walk takes over from that block on ([`Gate`]): the blocks cannot be wrong, only slower.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::sync::mpsc::sync_channel;

use crate::error::Error;
use crate::io::fasta::Fasta;
use crate::io::index::Region;
use crate::io::input_spec::InputSpec;
use crate::io::open::{InputFormat, RecordReader};
use crate::ops::mpileup::format::{self, LineContext};
use crate::ops::mpileup::pileup::Pileup;
use crate::pipeline::checked_open::{LEAN_PIECE, open_sequence_input_in_pieces};
use crate::pipeline::sorted_input::{RegionIndex, SortedInput};

use super::reads::{Reader, ReferenceSource, SharedReferences, Source, next_column};
use super::{Gate, WORDING, Walk};

/// A reference, or the `-r` region on it, that the blocks cover: `beg..end` within the
/// reference (a block's reads may run past `end`).
#[derive(Clone, Copy, Debug)]
struct Span {
    tid: i32,
    beg: i64,
    end: i64,
    has_reads: bool,
}

/// One block of a span: `beg..end`, and whether it is the span's first or last.
#[derive(Clone, Copy, Debug)]
struct Block {
    tid: i32,
    beg: i64,
    end: i64,
    first: bool,
    last: bool,
}

/// What a block made.
struct Done {
    text: Vec<u8>,
    /// The lines of its reads' messages (`mplp_func`'s, BAQ's).
    messages: Vec<u8>,
    /// The first and last column it met (those `-l` leaves out included), if any.
    columns: Option<(i64, i64)>,
    max_reads: usize,
    unsure: bool,
}

/// The blocks of one indexed input.
pub struct Plan<'a> {
    path: &'a str,
    cram_reference: Option<&'a str>,
    index: RegionIndex,
    spans: Vec<Span>,
    workers: usize,
    readers: Mutex<Vec<SortedInput>>,
    /// Text buffers written out, for the next blocks (a block's lines are megabytes; made on
    /// one thread and freed on another, they were kept by the allocator: 4x the memory).
    spare_text: Mutex<Vec<Vec<u8>>>,
}

/// A block's bases at first; then sized from the last block's lines to about this much text.
const FIRST_BLOCK: i64 = 2 << 10;
const BLOCK_TEXT: i64 = 2 << 20;
/// Text a base past which the serial walk takes over (about depth 3000).
const MAX_TEXT_PER_BASE: i64 = 8 << 10;

impl<'a> Plan<'a> {
    /// The blocks of `walk`'s one input, where its index is there and not older than the data,
    /// and `-f`'s FASTA has every reference (a missing one's lines come from the serial walk).
    pub fn new(walk: &Walk<'a>, fasta: Option<&Fasta>, workers: usize) -> Option<Plan<'a>> {
        let o = walk.o;
        let [path] = &o.inputs[..] else { return None };
        let path = path.strip_prefix("file://").unwrap_or(path);
        if path == "-" || crate::io::remote::is_url(path) {
            return None;
        }
        let header = walk.header;
        if let Some(f) = fasta
            && !(0..header.refs().len())
                .all(|t| header.ref_name(t as i32).is_some_and(|n| f.has(n)))
        {
            return None;
        }
        // Secondary alignments kept (`--ff`) would pair in the overlap hash without `SA` tags.
        if o.overlaps && o.filter_flags & crate::record::layout::flags::SECONDARY == 0 {
            return None;
        }
        let cram_reference = o.cram_reference();
        let spec = InputSpec::new(1, cram_reference);
        let opened = open_sequence_input_in_pieces(path, spec, &WORDING, LEAN_PIECE, false).ok()?;
        let explicit = o.index_files.as_ref().map(|x| x[0].as_str());
        // A CRAM stays serial: its containers span far more bases than a block, and each
        // block decoded every container it touched again (0.5 M reads: 2x the CPU, 140 MB).
        if !matches!((&opened.reader, opened.format), (RecordReader::Bam(_), InputFormat::Bam)) {
            return None;
        }
        let index = RegionIndex::Bam(crate::pipeline::region::load_index(path, explicit).ok()?);
        let (suffixes, data_suffix) = (&[".bai", ".csi"][..], ".bam");
        // samtools reads the whole file without its index: an index older than the data
        // (the file rewritten since) may not list its reads.
        let candidates =
            crate::pipeline::region::index_candidates(path, explicit, suffixes, data_suffix);
        let index_time = candidates.iter().find_map(|c| std::fs::metadata(c).ok()?.modified().ok());
        let data_time = std::fs::metadata(path).ok()?.modified().ok()?;
        if index_time.is_none_or(|t| t < data_time) {
            return None;
        }
        let spans = match walk.region {
            Some(r) => {
                let len = walk.len_of(i64::from(r.tid));
                vec![Span { tid: r.tid, beg: r.beg, end: r.end.min(len), has_reads: true }]
            }
            None => (0..header.refs().len() as i32)
                .map(|tid| {
                    let len = walk.len_of(i64::from(tid));
                    let has_reads = index.has_reads(tid, 0, len.max(1));
                    Span { tid, beg: 0, end: len, has_reads }
                })
                .collect(),
        };
        Some(Plan {
            path,
            cram_reference,
            index,
            spans,
            workers,
            readers: Mutex::new(Vec::new()),
            spare_text: Mutex::new(Vec::new()),
        })
    }

    /// The input queried for `region`: a reader an earlier block handed back, else a new one.
    fn block_input(&self, region: Region) -> Result<SortedInput, Error> {
        let reused = self.readers.lock().ok().and_then(|mut readers| readers.pop());
        if let Some(mut input) = reused {
            self.index.requery(&mut input, region);
            return Ok(input);
        }
        let spec = InputSpec::new(1, self.cram_reference);
        let opened = open_sequence_input_in_pieces(self.path, spec, &WORDING, LEAN_PIECE, false)?;
        let path = self.path;
        let failed = || Error::Bare(format!("[mpileup] fail to load index for {path}"));
        self.index.query(path, opened, region).ok_or_else(failed)
    }

    /// Piles up the reads of `block` and writes its lines.
    fn run_block(
        &self,
        walk: &Walk<'_>,
        refs: &SharedReferences<'_>,
        block: Block,
    ) -> Result<Done, Error> {
        let o = walk.o;
        let Block { tid, beg, end, first, last } = block;
        let whole_file = walk.region.is_none();
        let query_end = if last && whole_file { i64::MAX } else { end };
        // The last block writes the columns of reads that run past the reference's end.
        let emit_end = match (last, walk.region) {
            (false, _) => end,
            (true, Some(r)) => r.end,
            (true, None) => i64::MAX,
        };
        let input = self.block_input(Region { tid, beg, end: query_end })?;
        let mut src = Source::Sorted(input);
        let reader = Reader { o, bed: walk.bed };
        let mut plp = Pileup::new(walk.max_depth, o.overlaps, o.mods);
        // The first block of a region has the serial walk's reads exactly.
        if !first || whole_file {
            plp.guard(tid, beg, walk.name_of(i64::from(tid)), first);
        }
        let mut shared = refs;
        let reference = if refs.fasta.is_some() { shared.get(tid) } else { None };
        let r = reference.as_deref().map(|v| &v[..]);
        let mut messages = Vec::new();
        let mut log = |_: i32, pos: i64, line: &str| {
            if (first || pos >= beg) && (last || pos < end) {
                messages.extend_from_slice(line.as_bytes());
                messages.push(b'\n');
            }
        };
        let mut text = self.spare_text.lock().ok().and_then(|mut t| t.pop()).unwrap_or_default();
        text.reserve(BLOCK_TEXT as usize * 5 / 4);
        let mut columns: Option<(i64, i64)> = None;
        let (mut seq, mut qual) = (Vec::new(), Vec::new());
        let name = walk.name_of(i64::from(tid));
        while let Some((_, pos)) = next_column(&reader, &mut src, &mut plp, &mut shared, &mut log)?
        {
            if pos < beg {
                continue;
            }
            if pos >= emit_end {
                break;
            }
            if o.all > 0
                && let Some((_, prev)) = columns
            {
                walk.empty_lines(&mut text, i64::from(tid), (prev + 1, pos), r);
            }
            columns = Some((columns.map_or(pos, |c| c.0), pos));
            if !walk.in_bed(i64::from(tid), pos) {
                continue;
            }
            format::line_start(&mut text, name, pos, r);
            let line = LineContext { pos, reference: r, header: walk.header, options: &o.format };
            format::input_columns(&mut text, &plp.reads, &plp.column, &line, (&mut seq, &mut qual));
            text.push(b'\n');
        }
        if let (Source::Sorted(input), Ok(mut readers)) = (src, self.readers.lock()) {
            readers.push(input);
        }
        let unsure = plp.unsure || refs.failed.load(Ordering::Relaxed);
        Ok(Done { text, messages, columns, max_reads: plp.max_reads, unsure })
    }

    /// Runs the blocks on the pool, a few ahead, and writes their lines in order. `Some`: a
    /// block could differ from the serial walk, which is to go on from the gate.
    pub fn run(
        &self,
        walk: &Walk<'_>,
        fasta: Option<&Fasta>,
        out: &mut dyn Write,
    ) -> std::io::Result<Option<Gate>> {
        let refs = SharedReferences {
            fasta,
            header: walk.header,
            cache: Mutex::new(Vec::new()),
            failed: Default::default(),
        };
        let refs = &refs;
        let mut joiner = Joiner { walk, refs, out, buf: Vec::with_capacity(1 << 17) };
        let gate = rayon::in_place_scope(|scope| -> std::io::Result<Option<Gate>> {
            let mut pending: VecDeque<(Block, std::sync::mpsc::Receiver<_>)> = VecDeque::new();
            let mut size = FIRST_BLOCK;
            let mut spans = self.spans.iter().filter(|s| s.has_reads || walk.o.all > 1).peekable();
            let mut next_beg: Option<i64> = None;
            // Where the current span's lines have reached, whether it had a column, and the
            // last block's list size.
            let (mut filled_to, mut seen, mut previous_max) = (0, false, 0usize);
            loop {
                while pending.len() < self.workers + 1 {
                    let Some(&&span) = spans.peek() else { break };
                    if !span.has_reads {
                        break;
                    }
                    let beg = next_beg.unwrap_or(span.beg);
                    let end = block_end(beg, size).min(span.end.max(span.beg + 1));
                    let last = end >= span.end;
                    let block = Block { tid: span.tid, beg, end, first: beg == span.beg, last };
                    let (tx, rx) = sync_channel(1);
                    scope.spawn(move |_| {
                        let _ = tx.send(self.run_block(walk, refs, block));
                    });
                    pending.push_back((block, rx));
                    next_beg = Some(end);
                    if last {
                        next_beg = None;
                        spans.next();
                    }
                }
                let Some((block, rx)) = pending.pop_front() else {
                    // A span without reads (`-aa`): its lines are all empty.
                    let Some(span) = spans.next() else { return Ok(None) };
                    joiner.fill(span.tid, (span.beg, span.end))?;
                    continue;
                };
                if block.first {
                    (filled_to, seen) = (block.beg, false);
                }
                let gate = Gate {
                    lines: (i64::from(block.tid), filled_to),
                    messages: (block.tid, if block.first { i64::MIN } else { block.beg }),
                };
                let Ok(Ok(done)) = rx.recv() else { return Ok(Some(gate)) };
                std::io::stderr().write_all(&done.messages)?;
                // The serial list can also hold the reads that end where the block starts (or
                // the last reads of the reference before): no more than the last block held.
                let cap_reached = (done.max_reads + previous_max) as i64 > walk.max_depth;
                // Past some depth a block's lines outgrow any block worth fetching: the
                // serial walk writes them as it goes.
                let bases = (block.end - block.beg).max(1);
                let too_deep = done.text.len() as i64 / bases > MAX_TEXT_PER_BASE;
                if done.unsure || cap_reached || too_deep {
                    return Ok(Some(gate));
                }
                previous_max = done.max_reads;
                if !done.text.is_empty() {
                    let per_base = (done.text.len() as i64 / bases).max(1);
                    size = (BLOCK_TEXT / per_base).clamp(1 << 10, 1 << 20);
                }
                if let Some((first, last)) = done.columns {
                    if walk.o.all > 0 {
                        joiner.fill(block.tid, (filled_to, first))?;
                    }
                    joiner.write(&done.text)?;
                    (filled_to, seen) = (last + 1, true);
                }
                // The blocks' inflated pieces go back to the recycler in many sizes; what the
                // next blocks can take again is a few pieces a worker (without the cap it held
                // 90 MB at depth 400).
                crate::io::recycle::trim_to(4 << 20);
                let mut text = done.text;
                text.clear();
                // A block that ran long (the first ones, before their size is known) would keep
                // its buffer's size in every later block.
                text.shrink_to(BLOCK_TEXT as usize * 5 / 4);
                if let Ok(mut spare) = self.spare_text.lock() {
                    spare.push(text);
                }
                if block.last && walk.o.all > 0 && (seen || walk.o.all > 1) {
                    let end = self.spans.iter().find(|s| s.tid == block.tid).map_or(0, |s| s.end);
                    joiner.fill(block.tid, (filled_to, end))?;
                }
            }
        })?;
        joiner.flush()?;
        Ok(gate)
    }
}

/// The end of a block of about `size` bases from `beg`: on the index's 16 kb grid when the
/// block spans one. A query reads from the start of the grid square its start is in, so a
/// block that starts off the grid reads reads it does not keep (1 kb blocks read 8x their
/// bases).
fn block_end(beg: i64, size: i64) -> i64 {
    const GRID: i64 = 1 << 14;
    let end = beg + size;
    if size >= GRID && end / GRID * GRID > beg { end / GRID * GRID } else { end }
}

/// Writes the blocks' lines, and `-a`'s empty ones between them.
struct Joiner<'w, 'a> {
    walk: &'w Walk<'a>,
    refs: &'w SharedReferences<'w>,
    out: &'w mut dyn Write,
    buf: Vec<u8>,
}

impl Joiner<'_, '_> {
    fn fill(&mut self, tid: i32, (from, to): (i64, i64)) -> std::io::Result<()> {
        if from >= to {
            return Ok(());
        }
        let mut refs = self.refs;
        let reference = if refs.fasta.is_some() { refs.get(tid) } else { None };
        let r = reference.as_deref().map(|v| &v[..]);
        let mut at = from;
        while at < to {
            let stop = (at + 4096).min(to);
            self.walk.empty_lines(&mut self.buf, i64::from(tid), (at, stop), r);
            at = stop;
            if self.buf.len() >= 1 << 16 {
                self.out.write_all(&self.buf)?;
                self.buf.clear();
            }
        }
        Ok(())
    }

    fn write(&mut self, text: &[u8]) -> std::io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.write_all(text)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}
