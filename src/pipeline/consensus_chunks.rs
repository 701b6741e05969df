//! `samtools consensus -@` on an indexed BAM (samtools 1.24 `pileup_loop_parallel`): each
//! reference (or the `-r` region) is cut into `-Z` blocks, each block's reads are fetched through
//! the index and piled up afresh on a pool worker, which calls every column inside the block.
//! FASTA/FASTQ: the calls come back in block order and one [`Emitter`] turns them into
//! sequences, so the `-a` filling, `--show-ins`/`--show-del` and the line wrapping stay those of
//! the serial walk. `-f pileup`: each block writes its own lines (`-a`'s included) as samtools'
//! threads do, which differs from its serial walk (that one repeats a block's uncovered tail).
//!
//! A column's call depends only on the reads covering it, and a block fetches exactly the reads
//! that overlap it, so the calls inside a block are the serial walk's. The one piece of state a
//! pileup carries from read to read (a new read's stale quality, taken from the free list) is
//! reset at each block as samtools' threaded path resets it, at the same block boundaries.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::mpsc::sync_channel;

use crate::error::Error;
use crate::io::index::{Index, Region};
use crate::io::input_spec::InputSpec;
use crate::ops::consensus::emit::{BaseCaller, Emitter, ReferenceSequences, Span};
use crate::ops::consensus::pileup::Column;
use crate::ops::consensus::pileup::{Pileup, PileupRead};
use crate::ops::consensus::{Format, Options, read_scores};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::consensus::WalkError;
use crate::pipeline::sorted_input::SortedInput;

/// One called column: its 1-based position, which inserted base (0: the reference base), and
/// the base and quality called.
struct Call {
    pos: i64,
    nth: i32,
    base: u8,
    qual: i32,
}

/// What every block's job needs.
pub struct Blocks<'a> {
    pub options: &'a Options,
    pub path: &'a str,
    pub cram_reference: Option<&'a str>,
    pub index: &'a Index,
    pub wording: &'a Wording,
    /// Makes a block's own caller (the callers keep scratch state).
    pub new_caller: &'a (dyn Fn() -> Box<dyn BaseCaller> + Sync),
    /// `-f pileup`: the references' names and lengths, and a block's own `-T` reader.
    pub names: &'a [Vec<u8>],
    pub lens: &'a [i64],
    pub new_reference: &'a (dyn Fn() -> Option<Box<dyn ReferenceSequences>> + Sync),
}

/// What the main thread does next, in output order.
#[derive(Clone, Copy)]
pub enum Job {
    Block(Span),
    /// `-aa -f pileup`: the lines of a reference without reads.
    Empty(i32),
}

/// A block's result: its calls, or (`-f pileup`) its text.
enum Done {
    Calls(Vec<Call>),
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
        !self.index.query(tid, 0, len.max(1)).is_empty()
    }

    /// Every column of the reads that overlap `block`, from a fresh pileup.
    fn walk(&self, block: Span, column: &mut Column<'_, WalkError>) -> Result<(), WalkError> {
        let o = self.options;
        let spec = InputSpec::new(1, self.cram_reference);
        let opened =
            open_sequence_input(self.path, spec, self.wording).map_err(WalkError::Other)?;
        let region = Region { tid: block.tid, beg: block.beg, end: block.end };
        let no_index = || {
            WalkError::Other(Error::Bare(format!(
                "samtools consensus: Cannot load index for input file \"{}\"",
                self.path
            )))
        };
        let mut input =
            SortedInput::region(self.path, opened, self.index, region).ok_or_else(no_index)?;
        let mut keep = |p: &mut PileupRead| Ok(read_scores::init_read(o, p));
        let mut pileup = Pileup::new();
        while let Some(r) = input.current().map_err(WalkError::Other)? {
            if o.keeps(r.flag(), r.mapq()) {
                pileup.add(r, &mut keep, column)?;
            }
            input.advance();
        }
        pileup.finish(column)
    }

    /// The block's calls (FASTA/FASTQ) or its pileup lines.
    fn run_block(&self, block: Span) -> Result<Done, WalkError> {
        let o = self.options;
        let mut caller = (self.new_caller)();
        if o.format == Format::Pileup {
            let mut reference = (self.new_reference)();
            let reference = reference.as_deref_mut().map(|r| r as &mut dyn ReferenceSequences);
            let mut emitter = Emitter::new(o, self.names, self.lens, reference);
            emitter.iter = Some(block);
            self.walk(block, &mut |reads, pos, nth| {
                Ok(emitter.pileup_column(caller.as_mut(), reads, block.tid, pos, nth)?)
            })?;
            emitter.finish_block_pileup(block)?;
            return Ok(Done::Text(std::mem::take(&mut emitter.out)));
        }
        let mut calls = Vec::new();
        self.walk(block, &mut |reads, pos, nth| {
            // Columns outside the block are its neighbours' (1-based `pos`, as `outside`).
            if (o.show_ins || nth == 0) && pos > block.beg && pos <= block.end {
                let (base, qual) = caller.call(reads, pos);
                calls.push(Call { pos, nth, base, qual });
            }
            Ok(())
        })?;
        Ok(Done::Calls(calls))
    }

    /// The jobs for `span` (`None`: every reference), in samtools' order.
    pub fn jobs(&self, span: Option<Span>, block_size: i64) -> Vec<Job> {
        let o = self.options;
        let mut jobs = Vec::new();
        let whole_file = span.is_none();
        let spans = match span {
            Some(span) => vec![span],
            None => (0..self.lens.len() as i32)
                .map(|tid| Span { tid, beg: 0, end: self.lens[tid as usize] })
                .collect(),
        };
        for span in spans {
            // samtools skips a reference without reads (`-aa`: its empty lines instead; the
            // FASTA emitter fills those itself as the reference ids move on).
            if whole_file && !self.has_reads(span.tid, span.end) {
                if o.all_bases > 1 && o.format == Format::Pileup {
                    jobs.push(Job::Empty(span.tid));
                }
                continue;
            }
            jobs.extend(cut(span, block_size).map(Job::Block));
        }
        jobs
    }

    /// Calls `blocks` on the pool, a few ahead, and hands each block's calls to `emitter` in
    /// order, writing its text to `out` as it grows.
    pub fn run(
        &self,
        jobs: &[Job],
        emitter: &mut Emitter<'_>,
        out: &mut dyn Write,
    ) -> Result<(), WalkError> {
        // One block more than workers keeps each busy while the oldest one is emitted; more
        // would only hold more calls in memory.
        let ahead = rayon::current_num_threads() + 1;
        rayon::in_place_scope(|scope| {
            let mut pending = VecDeque::new();
            let mut next = jobs.iter();
            loop {
                while pending.len() < ahead {
                    let Some(&job) = next.next() else { break };
                    let (tx, rx) = sync_channel(1);
                    if let Job::Block(block) = job {
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
                        emitter.empty_reference_pileup(tid)?;
                        out.write_all(&emitter.out).map_err(WalkError::Io)?;
                        emitter.out.clear();
                        continue;
                    }
                };
                let done = crate::io::pool_wait::next_helping_pool(&rx).ok_or_else(|| {
                    WalkError::Other(Error::Message("a consensus block's job failed".into()))
                })??;
                let calls = match done {
                    Done::Text(text) => {
                        out.write_all(&text).map_err(WalkError::Io)?;
                        continue;
                    }
                    Done::Calls(calls) => calls,
                };
                for c in calls {
                    emitter.fasta_call(block.tid, c.pos, c.nth, c.base, c.qual)?;
                    if emitter.out.len() >= 1 << 16 {
                        out.write_all(&emitter.out).map_err(WalkError::Io)?;
                        emitter.out.clear();
                    }
                }
            }
        })
    }
}
