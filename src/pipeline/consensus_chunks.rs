//! `samtools consensus -@` on an indexed BAM (samtools 1.24 `pileup_loop_parallel`): each
//! reference (or the `-r` region) is cut into `-Z` blocks, each block's reads are fetched through
//! the index and piled up afresh on a pool worker, which calls every column inside the block;
//! the calls come back in block order and one [`Emitter`] turns them into FASTA/FASTQ, so the
//! `-a` filling, `--show-ins`/`--show-del` and the line wrapping stay those of the serial walk.
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
use crate::ops::consensus::emit::{BaseCaller, Emitter, Span};
use crate::ops::consensus::pileup::{Pileup, PileupRead};
use crate::ops::consensus::{Options, read_scores};
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

    /// The calls of the columns inside `block`.
    fn calls(&self, block: Span) -> Result<Vec<Call>, WalkError> {
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
        let mut caller = (self.new_caller)();
        let mut calls = Vec::new();
        let mut column = |reads: &mut [PileupRead], pos: i64, nth: i32| {
            // Columns outside the block are its neighbours' (1-based `pos`, as `outside`).
            if (o.show_ins || nth == 0) && pos > block.beg && pos <= block.end {
                let (base, qual) = caller.call(reads, pos);
                calls.push(Call { pos, nth, base, qual });
            }
            Ok::<(), WalkError>(())
        };
        let mut keep = |p: &mut PileupRead| Ok(read_scores::init_read(o, p));
        let mut pileup = Pileup::new();
        while let Some(r) = input.current().map_err(WalkError::Other)? {
            if o.keeps(r.flag(), r.mapq()) {
                pileup.add(r, &mut keep, &mut column)?;
            }
            input.advance();
        }
        pileup.finish(&mut column)?;
        Ok(calls)
    }

    /// Calls `blocks` on the pool, a few ahead, and hands each block's calls to `emitter` in
    /// order, writing its text to `out` as it grows.
    pub fn run(
        &self,
        blocks: &[Span],
        emitter: &mut Emitter<'_>,
        out: &mut dyn Write,
    ) -> Result<(), WalkError> {
        // One block more than workers keeps each busy while the oldest one is emitted; more
        // would only hold more calls in memory.
        let ahead = rayon::current_num_threads() + 1;
        rayon::in_place_scope(|scope| {
            let mut pending = VecDeque::new();
            let mut next = blocks.iter();
            loop {
                while pending.len() < ahead {
                    let Some(&block) = next.next() else { break };
                    let (tx, rx) = sync_channel(1);
                    scope.spawn(move |_| {
                        let _ = tx.send(self.calls(block));
                    });
                    pending.push_back((block, rx));
                }
                let Some((block, rx)) = pending.pop_front() else { return Ok(()) };
                let calls = crate::io::pool_wait::next_helping_pool(&rx).ok_or_else(|| {
                    WalkError::Other(Error::Message("a consensus block's job failed".into()))
                })??;
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
