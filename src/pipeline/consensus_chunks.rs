//! `samtools consensus -@` on an indexed BAM or CRAM (samtools 1.24 `pileup_loop_parallel`): each
//! reference (or the `-r` region) is cut into `-Z` blocks, each block's reads are fetched through
//! the index and piled up afresh on a pool worker, which turns the block's columns into its
//! sequence (FASTA/FASTQ, joined in block order by [`Joined`] as `append_cons` joins them) or
//! its pileup lines (`-a`'s included), as samtools' threads do. Both differ from samtools'
//! serial walk on some inputs (a block's uncovered tail, reads that start with a deletion at a
//! block's start), so `-@` follows the threaded path wherever samtools takes it.
//!
//! A column's call depends only on the reads covering it, and a block fetches exactly the reads
//! that overlap it. The one piece of state a pileup carries from read to read (a new read's
//! stale quality, taken from the free list) is reset at each block as samtools resets it, at the
//! same block boundaries.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::Mutex;
use std::sync::mpsc::sync_channel;

use crate::error::Error;
use crate::io::index::Region;
use crate::io::input_spec::InputSpec;
use crate::ops::consensus::blocks::{GapReference, Joined};
use crate::ops::consensus::emit::{BaseCaller, BlockSequence, Emitter, ReferenceSequences, Span};
use crate::ops::consensus::pileup::Column;
use crate::ops::consensus::pileup::PileupRead;
use crate::ops::consensus::{ConsensusError, Format, Options, read_scores};
use crate::pipeline::checked_open::{LEAN_PIECE, Wording, open_sequence_input_in_pieces};
use crate::pipeline::consensus::WalkError;
use crate::pipeline::sorted_input::{RegionIndex, SortedInput};

/// What every block's job needs.
pub struct Blocks<'a> {
    pub options: &'a Options,
    pub path: &'a str,
    pub cram_reference: Option<&'a str>,
    pub index: &'a RegionIndex,
    /// `-@`: the blocks called at once.
    pub threads: usize,
    pub wording: &'a Wording,
    /// Makes a block's own caller (the callers keep scratch state).
    pub new_caller: &'a (dyn Fn() -> Box<dyn BaseCaller> + Sync),
    /// `-f pileup`: the references' names and lengths, and a block's own `-T` reader.
    pub names: &'a [Vec<u8>],
    pub lens: &'a [i64],
    pub new_reference: &'a (dyn Fn() -> Option<Box<dyn ReferenceSequences>> + Sync),
    /// Readers whose blocks are done, for the next blocks.
    pub readers: Mutex<Vec<SortedInput>>,
}

/// What the main thread does next, in output order.
#[derive(Clone, Copy)]
pub enum Job {
    Block(Span),
    /// FASTA/FASTQ: the reference (or region) whose blocks came before is complete.
    End(Span),
    /// `-aa`: a reference without reads.
    Empty(i32),
}

/// A block's result: its sequence, or (`-f pileup`) its text.
enum Done {
    Sequence(BlockSequence),
    Text(Vec<u8>),
}

/// `span`'s blocks of `size` bases, as samtools cuts them.
pub fn cut(span: Span, size: i64) -> impl Iterator<Item = Span> {
    let size = size.max(2);
    (0..)
        .map(move |k| span.beg + k * size)
        .take_while(move |&b| b < span.end)
        .map(move |beg| Span { tid: span.tid, beg, end: (beg + size).min(span.end) })
}

impl Blocks<'_> {
    /// Whether the index lists any reads on `tid` (a block of a reference without reads
    /// would only open the file to find nothing).
    pub fn has_reads(&self, tid: i32, len: i64) -> bool {
        self.index.has_reads(tid, 0, len.max(1))
    }

    /// The input queried for `region`: a reader an earlier block handed back, else a new one
    /// (whose buffers would be freed at its block's end and faulted in again by the next).
    fn block_input(&self, region: Region) -> Result<SortedInput, WalkError> {
        let reused = self.readers.lock().ok().and_then(|mut readers| readers.pop());
        if let Some(mut input) = reused {
            self.index.requery(&mut input, region);
            return Ok(input);
        }
        let spec = InputSpec::new(1, self.cram_reference);
        // Blocks are read a small piece at a time: `threads + 1` of them are open at once (a
        // MiB a read per block in flight was most of the threaded path's memory).
        let opened =
            open_sequence_input_in_pieces(self.path, spec, self.wording, LEAN_PIECE, false)
                .map_err(WalkError::Other)?;
        let no_index = || {
            WalkError::Other(Error::Bare(format!(
                "samtools consensus: Cannot load index for input file \"{}\"",
                self.path
            )))
        };
        self.index.query(self.path, opened, region).ok_or_else(no_index)
    }

    /// Every column of the reads that overlap `block`, from a fresh pileup.
    fn walk(&self, block: Span, column: &mut Column<'_, WalkError>) -> Result<(), WalkError> {
        let o = self.options;
        let region = Region { tid: block.tid, beg: block.beg, end: block.end };
        let mut input = self.block_input(region)?;
        let mut keep = |p: &mut PileupRead| Ok(read_scores::init_read(o, p));
        let mut pileup = crate::ops::consensus::new_pileup(o);
        while let Some(r) = input.current().map_err(WalkError::Other)? {
            if o.keeps(r.flag(), r.mapq()) {
                pileup.add(r, &mut keep, column)?;
            }
            input.advance();
        }
        if let Ok(mut readers) = self.readers.lock() {
            readers.push(input);
        }
        pileup.finish(column)
    }

    /// The block's sequence (FASTA/FASTQ) or its pileup lines (`pileup_job`).
    fn run_block(&self, block: Span) -> Result<Done, WalkError> {
        let o = self.options;
        let mut caller = (self.new_caller)();
        let mut reference = (self.new_reference)();
        let reference = reference.as_deref_mut().map(|r| r as &mut dyn ReferenceSequences);
        let mut emitter = Emitter::new(o, self.names, self.lens, reference);
        emitter.iter = Some(block);
        let pileup = o.format == Format::Pileup;
        let walked = self.walk(block, &mut |reads, counts, pos, nth| {
            let caller = caller.as_mut();
            if pileup {
                emitter.pileup_column(caller, reads, block.tid, pos, nth)?;
            } else {
                // A block is one reference's: its sequence is taken whole, never dumped.
                let at = (block.tid, pos, nth);
                emitter.fasta_column(caller, reads, counts, at, &mut |_| Ok(()))?;
            }
            Ok(())
        });
        past_missing_reference(walked)?;
        if !pileup {
            return Ok(Done::Sequence(emitter.take_block()));
        }
        past_missing_reference(emitter.finish_block_pileup(block).map_err(WalkError::from))?;
        Ok(Done::Text(std::mem::take(&mut emitter.out)))
    }

    /// The jobs for `spans` (`-r`, or the BED intervals; `None`: every reference), in
    /// samtools' order.
    pub fn jobs(&self, spans: Option<&[Span]>, block_size: i64) -> Vec<Job> {
        let o = self.options;
        let mut jobs = Vec::new();
        let whole_file = spans.is_none();
        let spans = match spans {
            Some(spans) => spans.to_vec(),
            None => (0..self.lens.len() as i32)
                .map(|tid| Span { tid, beg: 0, end: self.lens[tid as usize] })
                .collect(),
        };
        for span in spans {
            // samtools skips a reference without reads (`-aa`: its Ns or empty lines instead).
            if whole_file && !self.has_reads(span.tid, span.end) {
                if o.all_bases > 1 {
                    jobs.push(Job::Empty(span.tid));
                }
                continue;
            }
            jobs.extend(cut(span, block_size).map(Job::Block));
            if o.format != Format::Pileup {
                jobs.push(Job::End(span));
            }
        }
        jobs
    }

    /// Calls `blocks` on the pool, a few ahead, and hands each block's calls to `emitter` in
    /// order, writing its text to `out` as it grows.
    ///
    /// This thread only joins and writes: it waits for the oldest block without taking blocks
    /// itself, so `-@ N` keeps N workers calling, as samtools' N threads do. (Helping the pool
    /// while waiting ran N+1 callers on N cores, and polling for the oldest block woke this
    /// thread 20,000 times a second.)
    pub fn run(&self, jobs: &[Job], out: &mut dyn Write) -> Result<(), WalkError> {
        let o = self.options;
        // Each block's buffers are made on one worker and freed on another thread; mimalloc
        // kept such pages for 10 ms, and with a block done every few ms the resident set grew
        // to 36 MB at 0.5 M reads (samtools: 13 MB). Purged at once: 23 MB, for about 0.2 s
        // more system time and no more user time.
        crate::alloc::purge_freed_memory();
        let mut joined = Joined::default();
        let mut reference = GapReference::new((self.new_reference)());
        // Two blocks a worker: a worker that ends its block while the oldest is still being
        // called starts another instead of waiting for it; more would only hold more calls in
        // memory.
        let workers = self.threads.saturating_sub(1).max(1);
        let ahead = 2 * workers;
        rayon::in_place_scope(|scope| {
            let mut pending = VecDeque::new();
            let mut in_flight = 0;
            let mut next = jobs.iter();
            loop {
                while in_flight < ahead {
                    let Some(&job) = next.next() else { break };
                    let (tx, rx) = sync_channel(1);
                    if let Job::Block(block) = job {
                        in_flight += 1;
                        scope.spawn(move |_| {
                            let _ = tx.send(self.run_block(block));
                        });
                    }
                    pending.push_back((job, rx));
                }
                let Some((job, rx)) = pending.pop_front() else { return Ok(()) };
                let block = match job {
                    Job::Block(block) => block,
                    Job::Empty(tid) => {
                        let len = self.lens[tid as usize];
                        if o.format == Format::Pileup {
                            let mut reference = (self.new_reference)();
                            let reference =
                                reference.as_deref_mut().map(|r| r as &mut dyn ReferenceSequences);
                            let mut e = Emitter::new(o, self.names, self.lens, reference);
                            // A reference `-T` lacks: its lines (Ns) are written, then
                            // samtools fails.
                            let made = e.empty_reference_pileup(tid);
                            out.write_all(&e.out).map_err(WalkError::Io)?;
                            made?;
                        } else {
                            let seq = reference.get(tid)?;
                            Joined::uncovered(o, len, seq).dump_to(
                                o,
                                &self.names[tid as usize],
                                &mut |piece| out.write_all(piece).map_err(WalkError::Io),
                            )?;
                        }
                        continue;
                    }
                    Job::End(span) => {
                        let name = &self.names[span.tid as usize];
                        let mut name = name.clone();
                        if span.beg > 0 || span.end < self.lens[span.tid as usize] {
                            name.extend_from_slice(
                                format!(":{}-{}", span.beg + 1, span.end).as_bytes(),
                            );
                        }
                        std::mem::take(&mut joined).dump_to(o, &name, &mut |piece| {
                            out.write_all(piece).map_err(WalkError::Io)
                        })?;
                        continue;
                    }
                };
                in_flight -= 1;
                let done = rx.recv().map_err(|_| {
                    WalkError::Other(Error::Message("a consensus block's job failed".into()))
                })??;
                match done {
                    Done::Text(text) => out.write_all(&text).map_err(WalkError::Io)?,
                    Done::Sequence(b) => {
                        let rest = self.lens[block.tid as usize] - block.beg;
                        joined.reserve(o, usize::try_from(rest).unwrap_or(0));
                        joined.append(o, block, &b, &mut reference);
                    }
                }
            }
        })
    }
}

/// samtools' `pileup_job` ignores its block's failures: a reference `-T` lacks ends the block's
/// walk at the column that asked for it, and the block keeps what it made so far.
fn past_missing_reference(walked: Result<(), WalkError>) -> Result<(), WalkError> {
    match walked {
        Err(WalkError::Consensus(ConsensusError::Reference)) => Ok(()),
        walked => walked,
    }
}
