//! BGZF writing with htslib's block layout and parallel deflate.
//!
//! Layout rules reproduced from htslib `bgzf.c` (`bgzf_write`, `bgzf_flush_try`) and
//! `sam.c` (`bam_write1`, `bam_hdr_write`):
//! - a block holds at most 0xff00 bytes; data is cut at that size;
//! - before a record is written, the open block is closed if the record would not fit, so a record
//!   straddles blocks only when it is larger than a block;
//! - the BAM header is followed by a flush, so it never shares a block with a record;
//! - the file ends with the 28-byte EOF block.
//!
//! The cut points depend only on the data, so output bytes never depend on the thread count.
//! Closed blocks are staged and, once enough are waiting, handed to the deflate stage
//! ([`super::stage`]), which compresses them on the pool while records keep coming and writes
//! them in order.

use std::io::Write;
use std::sync::Arc;

use super::block::{BLOCK_DATA_MAX, EOF_BLOCK};
use super::gather::{self, Units};
use super::stage::{DeflateStage, RawGroup, Spawner};

/// Runs of units at least this large have their blocks assembled in parallel
/// ([`Writer::write_units`]); smaller ones are copied unit by unit.
const BATCHED_BYTES: usize = 1 << 20;
/// [`Writer::write_units_from`] deflates this many staging batches' worth of blocks per pass
/// over the pool: enough blocks that no worker waits long at each pass's end, few enough that
/// the compressed blocks in flight stay a few MiB.
const GROUP_BLOCKS_PER_BATCH: usize = 8;
/// Blocks a job of [`Writer::write_units_shared`] gathers and deflates: 10-20 ms of work, long
/// enough that spawning costs nothing, short enough that the last jobs of a file end together.
const JOB_BLOCKS: usize = 4;

pub struct Writer {
    stage: DeflateStage,
    /// Uncompressed bytes of closed blocks followed by the open block.
    staging: Vec<u8>,
    /// End offsets (in `staging`) of closed blocks.
    cuts: Vec<usize>,
    /// Start of the open block in `staging`.
    open_start: usize,
    /// Hand blocks to the stage once this many are closed.
    batch_blocks: usize,
    /// Blocks closed so far, in the whole file: the open block's number.
    blocks_closed: u64,
    /// With unit tracking (`--write-index`), per unit: block number << 16 | offset in that block.
    /// Block numbers become compressed offsets at the end, when every block is written.
    tracked_starts: Option<Vec<u64>>,
}

impl Writer {
    /// `level` is samtools' level: −1 default, 0 uncompressed (stored blocks), 1..9.
    pub fn new(sink: Box<dyn Write + Send>, level: i32, threads: usize) -> std::io::Result<Self> {
        Self::with_engine(sink, (level, super::codec::deflate_engine()), threads)
    }

    /// [`Writer::new`] deflating with `engine` whatever the process's output engine is: for
    /// temporary files, which only mdsam reads back.
    pub fn with_engine(
        sink: Box<dyn Write + Send>,
        (level, engine): (i32, super::codec::Engine),
        threads: usize,
    ) -> std::io::Result<Self> {
        // Enough blocks a group to keep every worker busy, few enough that the groups in flight
        // stay small (sort and the pipeline account for them in their memory budget).
        let batch_blocks = 8 * threads.max(1);
        Ok(Writer {
            stage: DeflateStage::new(sink, level, engine)?,
            staging: Vec::with_capacity(BLOCK_DATA_MAX * (batch_blocks + 1)),
            cuts: Vec::new(),
            open_start: 0,
            batch_blocks,
            blocks_closed: 0,
            tracked_starts: None,
        })
    }

    /// Records where every later [`Writer::write_unit`] starts, for an index built while writing.
    pub fn track_units(&mut self) {
        self.tracked_starts = Some(Vec::new());
    }

    fn open_len(&self) -> usize {
        self.staging.len() - self.open_start
    }

    /// Closes the open block if it has data (`bgzf_flush`).
    pub fn flush_block(&mut self) -> std::io::Result<()> {
        if self.open_len() > 0 {
            self.cuts.push(self.staging.len());
            self.open_start = self.staging.len();
            self.blocks_closed += 1;
            if self.cuts.len() >= self.batch_blocks {
                self.hand_over_closed()?;
            }
        }
        Ok(())
    }

    /// Writes bytes, cutting blocks at 0xff00 (`bgzf_write`).
    pub fn write_bytes(&mut self, mut data: &[u8]) -> std::io::Result<()> {
        while !data.is_empty() {
            let room = BLOCK_DATA_MAX - self.open_len();
            let n = room.min(data.len());
            self.staging.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.open_len() == BLOCK_DATA_MAX {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Writes one unit that should not straddle blocks (a BAM record or a SAM line),
    /// closing the open block first when it would not fit (`bgzf_flush_try`).
    pub fn write_unit(&mut self, unit: &[u8]) -> std::io::Result<()> {
        if self.open_len() + unit.len() > BLOCK_DATA_MAX {
            self.flush_block()?;
        }
        let (block, at) = (self.blocks_closed, self.open_len() as u64);
        if let Some(starts) = self.tracked_starts.as_mut() {
            starts.push(block << 16 | at);
        }
        self.write_bytes(unit)
    }

    /// Writes many units at once, laid out exactly as successive [`Writer::write_unit`] calls
    /// would (see [`Writer::write_units_from`]).
    pub fn write_units(&mut self, units: &[&[u8]]) -> std::io::Result<()> {
        self.write_units_from(units)
    }

    /// Writes the units of `units` of nonzero size, laid out exactly as successive
    /// [`Writer::write_unit`] calls would, but planned from their sizes first, then gathered and
    /// deflated block by block on the pool ([`gather`]). Records gathered from all over a
    /// sorted store cost a cache miss each, which a single copying thread would pay alone.
    pub fn write_units_from(&mut self, units: &(impl Units + ?Sized)) -> std::io::Result<()> {
        let Some((prefix, plan)) = self.plan_units(units)? else {
            return Ok(());
        };
        let compression = self.stage.compression();
        // A group of blocks at a time, so that the compressed blocks in flight stay bounded.
        for (g, specs) in plan.closed.chunks(self.pass_blocks()).enumerate() {
            let lead: &[u8] = if g == 0 { &prefix } else { &[] };
            let blocks = gather::deflate_planned(units, specs, lead, compression);
            self.blocks_closed += blocks.len() as u64;
            self.stage.submit_deflated(blocks)?;
        }
        self.keep_tail(units, &plan, &prefix);
        Ok(())
    }

    /// As [`Writer::write_units_from`] for units the writer may hold on to: their blocks are
    /// gathered and deflated by jobs of a few blocks each, run by `spawner` (see
    /// [`super::stage::Spawner`]), and this returns once they are queued, so the caller goes on
    /// with the next units while they run (the units are dropped when the last job is done).
    pub fn write_units_shared<'s, U: Units + Send + Sync + 's>(
        &mut self,
        units: Arc<U>,
        spawner: &impl Spawner<'s>,
    ) -> std::io::Result<()> {
        let Some((prefix, plan)) = self.plan_units(&*units)? else {
            return Ok(());
        };
        let compression = self.stage.compression();
        let limit = self.pass_blocks();
        let mut lead = Some(prefix);
        for specs in plan.closed.chunks(JOB_BLOCKS) {
            let (units, specs) = (units.clone(), specs.to_vec());
            let first_lead = lead.take().unwrap_or_default();
            self.blocks_closed += specs.len() as u64;
            self.stage.submit_job(specs.len(), limit, spawner, move || {
                gather::deflate_serial(&*units, &specs, &first_lead, compression)
            })?;
        }
        self.keep_tail(&*units, &plan, lead.as_deref().unwrap_or(&[]));
        Ok(())
    }

    /// Blocks deflated in one pass over the pool by [`Writer::write_units_from`], and the most
    /// blocks [`Writer::write_units_shared`]'s jobs keep unwritten: enough that no worker waits
    /// long, few enough that the compressed blocks in flight stay a few MiB.
    fn pass_blocks(&self) -> usize {
        GROUP_BLOCKS_PER_BATCH * self.batch_blocks
    }

    /// Plans the blocks of `units` after the open block, which it takes out of staging (its
    /// bytes go in front of the first block: returned with the plan). `None` when the units
    /// were too few to share out and have been written one by one.
    fn plan_units(
        &mut self,
        units: &(impl Units + ?Sized),
    ) -> std::io::Result<Option<(Vec<u8>, gather::Plan)>> {
        let total: usize = (0..units.count()).map(|i| units.size(i)).sum();
        if total < BATCHED_BYTES {
            // Too little to share out: the batched path starts by moving the open block aside.
            (0..units.count())
                .filter(|&i| units.size(i) > 0)
                .try_for_each(|i| self.write_unit(units.unit(i)))?;
            return Ok(None);
        }
        self.hand_over_closed()?;
        // Bytes already in the open block belong in front of the first block.
        let prefix = self.staging.split_off(self.open_start);
        self.staging.clear();
        self.open_start = 0;
        let first_block = self.blocks_closed;
        let plan = match self.tracked_starts.as_mut() {
            Some(starts) => gather::plan(units, prefix.len(), |block, at| {
                starts.push((first_block + block as u64) << 16 | at as u64)
            }),
            None => gather::plan(units, prefix.len(), |_, _| {}),
        };
        Ok(Some((prefix, plan)))
    }

    /// Keeps what the plan left after its closed blocks as the open block; `prefix` (the old
    /// open block) leads it when the plan closed no block.
    fn keep_tail(&mut self, units: &(impl Units + ?Sized), plan: &gather::Plan, prefix: &[u8]) {
        let lead: &[u8] = if plan.closed.is_empty() { prefix } else { &[] };
        gather::gather(units, &plan.tail, lead, &mut self.staging);
    }

    /// Hands every closed block to the deflate stage; the open block stays.
    fn hand_over_closed(&mut self) -> std::io::Result<()> {
        if self.cuts.is_empty() {
            return Ok(());
        }
        // A recycled buffer: the stage gives each group's back once written, and a fresh one
        // faulted in its pages again (most of SAM→BAM's 92 k page faults).
        let mut next = crate::io::recycle::take(self.staging.capacity());
        next.extend_from_slice(&self.staging[self.open_start..]);
        let mut data = std::mem::replace(&mut self.staging, next);
        data.truncate(self.open_start);
        self.open_start = 0;
        let cuts = std::mem::take(&mut self.cuts);
        self.stage.submit_raw(RawGroup { data, cuts })
    }

    /// Closes the open block, writes everything and the EOF block, and flushes the sink.
    pub fn finish(self) -> std::io::Result<Box<dyn Write + Send>> {
        Ok(self.finish_tracked()?.0)
    }

    /// As [`Writer::finish`], also returning the virtual offset where each tracked unit started
    /// and the virtual offset of the end of the data (the EOF block's offset `<< 16`).
    pub fn finish_tracked(mut self) -> std::io::Result<(Box<dyn Write + Send>, Vec<u64>, u64)> {
        self.flush_block()?;
        self.hand_over_closed()?;
        let mut done = self.stage.finish()?;
        let end = done.written << 16;
        done.sink.write_all(&EOF_BLOCK)?;
        done.sink.flush()?;
        let starts = self
            .tracked_starts
            .take()
            .unwrap_or_default()
            .iter()
            .map(|&s| {
                // A unit at the very end of the data starts "in" the block after the last.
                let block = (s >> 16) as usize;
                let coffset = done.block_offsets.get(block).copied().unwrap_or(done.written);
                coffset << 16 | (s & 0xffff)
            })
            .collect();
        Ok((done.sink, starts, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::bgzf::block;

    use crate::io::test_sink::SharedSink as Shared;

    fn block_sizes(file: &[u8]) -> Vec<usize> {
        let mut at = 0;
        let mut sizes = Vec::new();
        while at < file.len() {
            let n = block::block_size(&file[at..]).unwrap();
            sizes.push(block::inflated_size(&file[at..at + n]));
            at += n;
        }
        sizes
    }

    #[test]
    fn units_do_not_straddle_and_large_data_is_cut() {
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()), 1, 2).unwrap();
        w.write_bytes(b"header").unwrap();
        w.flush_block().unwrap();
        w.write_unit(&[1; 40000]).unwrap();
        w.write_unit(&[2; 40000]).unwrap();
        w.write_unit(&[3; 70000]).unwrap();
        w.finish().unwrap();
        let file = out.0.lock().unwrap().clone();
        assert_eq!(block_sizes(&file), vec![6, 40000, 40000, 0xff00, 70000 - 0xff00, 0]);
        assert!(file.ends_with(&block::EOF_BLOCK));
    }

    #[test]
    fn batched_units_give_the_same_bytes_and_offsets() {
        let units: Vec<Vec<u8>> = (0..400u32)
            .map(|i| vec![(i % 251) as u8; [30, 700, 5000, 65280, 70000, 1][i as usize % 6]])
            .collect();
        use crate::io::bgzf::stage::OnPool;
        /// Units for the shared path, owned (`Vec`) or borrowed (a slice).
        struct Listed<T>(T);
        impl<T: AsRef<[Vec<u8>]> + Sync> Units for Listed<T> {
            fn count(&self) -> usize {
                self.0.as_ref().len()
            }
            fn size(&self, i: usize) -> usize {
                self.0.as_ref()[i].len()
            }
            fn unit(&self, i: usize) -> &[u8] {
                &self.0.as_ref()[i]
            }
        }
        #[derive(Clone, Copy)]
        enum Way {
            OneByOne,
            Batched,
            Shared,
        }
        let run = |way: Way| {
            let out = Shared::default();
            let mut w = Writer::new(Box::new(out.clone()), 1, 2).unwrap();
            w.write_bytes(b"head").unwrap();
            w.track_units();
            let refs: Vec<&[u8]> = units.iter().map(Vec::as_slice).collect();
            match way {
                Way::OneByOne => units.iter().for_each(|u| w.write_unit(u).unwrap()),
                Way::Batched => {
                    w.write_units(&refs[..150]).unwrap();
                    w.write_unit(&units[150]).unwrap();
                    w.write_units(&refs[151..]).unwrap();
                }
                Way::Shared => {
                    let first = Arc::new(Listed(units[..150].to_vec()));
                    w.write_units_shared(first, &OnPool).unwrap();
                    w.write_unit(&units[150]).unwrap();
                    // Borrowing units, in a scope that ends when the jobs do.
                    let rest: &[Vec<u8>] = &units[151..];
                    rayon::scope(|s| w.write_units_shared(Arc::new(Listed(rest)), s).unwrap());
                }
            }
            let (_, starts, end) = w.finish_tracked().unwrap();
            let file = out.0.lock().unwrap().clone();
            (file, starts, end)
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let a = run(Way::OneByOne);
        for b in [run(Way::Batched), pool.install(|| run(Way::Shared)), run(Way::Shared)] {
            assert!(a.0 == b.0, "bytes differ");
            assert_eq!(a.1, b.1);
            assert_eq!(a.2, b.2);
        }
    }

    #[test]
    fn tracked_units_resolve_to_virtual_offsets() {
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()), 1, 1).unwrap();
        w.write_bytes(b"header").unwrap();
        w.flush_block().unwrap();
        w.track_units();
        w.write_unit(&[1; 30000]).unwrap();
        w.write_unit(&[2; 30000]).unwrap();
        w.write_unit(&[3; 30000]).unwrap();
        let (_, starts, end) = w.finish_tracked().unwrap();
        let file = out.0.lock().unwrap().clone();
        let mut offsets = vec![0u64];
        while (*offsets.last().unwrap() as usize) < file.len() {
            let at = *offsets.last().unwrap() as usize;
            offsets.push((at + block::block_size(&file[at..]).unwrap()) as u64);
        }
        assert_eq!(starts, vec![offsets[1] << 16, offsets[1] << 16 | 30000, offsets[2] << 16]);
        assert_eq!(end, offsets[3] << 16);
    }
}
