//! The deflate stage: groups of closed blocks are compressed on the pool while the caller goes
//! on producing the next ones, and an ordering thread writes them to the sink in order.
//!
//! Before this stage the writer deflated each group and waited for it: the worker that formats
//! records sat idle at every group's end, and with `-@ 1` two workers gave `view` SAM→BAM only
//! 1.4–1.6× (the hw-model self-validation's one miss). Now a group is a `rayon::spawn`ed job that
//! any idle worker takes; the caller waits only when [`MAX_IN_FLIGHT`] groups are unwritten, and
//! then it deflates queued groups itself instead of sleeping.
//!
//! Output bytes do not depend on timing: every group carries a sequence number and the ordering
//! thread writes group `n` only after group `n - 1`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use rayon::prelude::*;

use super::block::Deflater;
use super::codec::Engine;

/// Groups of raw blocks deflated or waiting to be written; bounds memory to this many groups of
/// raw and compressed blocks (a group is 8 blocks per thread, 0.5 MiB a thread). Four groups in
/// flight instead of two raised a spilling `sort`'s peak RSS by 7 MiB for no measurable speed.
const MAX_IN_FLIGHT: usize = 2;

/// Uncompressed bytes of some closed blocks, back to back.
pub struct RawGroup {
    pub data: Vec<u8>,
    /// End offset in `data` of each block.
    pub cuts: Vec<usize>,
}

/// What the ordering thread gives back at the end.
pub struct Finished {
    pub sink: Box<dyn Write + Send>,
    /// Compressed offset of every block written, in order.
    pub block_offsets: Vec<u64>,
    /// Compressed bytes written.
    pub written: u64,
}

/// A group's compressed blocks, or the reason it has none (a panic in the deflate job).
type Deflated = Result<Vec<Vec<u8>>, String>;

/// What the ordering thread is sent: a group's sequence number, its weight (see
/// [`DeflateStage::submit_job`]) and its blocks.
type Message = (u64, usize, Deflated);

pub struct DeflateStage {
    level: i32,
    engine: Engine,
    next_seq: u64,
    to_writer: Option<Sender<Message>>,
    writer: Option<JoinHandle<std::io::Result<Finished>>>,
    /// Weight of the groups handed over and not yet written: one a group of raw or deflated
    /// blocks, the block count for a job's.
    in_flight: Arc<AtomicUsize>,
    /// Set by the ordering thread when the sink failed; later groups are dropped unwritten.
    failed: Arc<AtomicBool>,
}

impl DeflateStage {
    /// `engine` deflates every block (see [`super::codec::deflate_engine`] for the output's).
    pub fn new(sink: Box<dyn Write + Send>, level: i32, engine: Engine) -> std::io::Result<Self> {
        let (to_writer, from_stage) = channel::<Message>();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicBool::new(false));
        let (count, flag) = (in_flight.clone(), failed.clone());
        let writer = std::thread::Builder::new().name("mdsam-bgzf".into()).spawn(move || {
            let mut sink = sink;
            let (mut block_offsets, mut written) = (Vec::new(), 0u64);
            let mut waiting: BTreeMap<u64, (usize, Deflated)> = BTreeMap::new();
            let mut next = 0u64;
            let mut result = Ok(());
            for (seq, weight, group) in from_stage {
                waiting.insert(seq, (weight, group));
                while let Some((weight, group)) = waiting.remove(&next) {
                    next += 1;
                    if result.is_ok() {
                        result = write_group(&mut sink, group, &mut block_offsets, &mut written);
                        if result.is_err() {
                            flag.store(true, Ordering::Release);
                        }
                    }
                    count.fetch_sub(weight, Ordering::AcqRel);
                }
            }
            result.map(|()| Finished { sink, block_offsets, written })
        })?;
        Ok(DeflateStage {
            level,
            engine,
            next_seq: 0,
            to_writer: Some(to_writer),
            writer: Some(writer),
            in_flight,
            failed,
        })
    }

    /// The level and engine every block is deflated with.
    pub fn compression(&self) -> (i32, Engine) {
        (self.level, self.engine)
    }

    /// Hands over closed blocks to be deflated; returns once they are queued. Off the pool (no
    /// worker to spawn on) they are deflated here first.
    pub fn submit_raw(&mut self, group: RawGroup) -> std::io::Result<()> {
        if group.cuts.is_empty() {
            return Ok(());
        }
        let (seq, to_writer) = self.reserve(1, MAX_IN_FLIGHT)?;
        let (level, engine) = (self.level, self.engine);
        let job = move || {
            let deflated = std::panic::catch_unwind(|| deflate_group(&group, level, engine))
                .map_err(|_| "a deflate job panicked".to_string());
            crate::io::recycle::give(group.data);
            // The ordering thread outlives every job (finish waits for all of them).
            let _ = to_writer.send((seq, 1, deflated));
        };
        if rayon::current_thread_index().is_some() {
            rayon::spawn(job);
        } else {
            job();
        }
        Ok(())
    }

    /// Hands over blocks already deflated, to be written after everything submitted before.
    pub fn submit_deflated(&mut self, blocks: Vec<Vec<u8>>) -> std::io::Result<()> {
        if blocks.is_empty() {
            return Ok(());
        }
        let (seq, to_writer) = self.reserve(1, MAX_IN_FLIGHT)?;
        to_writer.send((seq, 1, Ok(blocks))).map_err(|_| writer_gone())
    }

    /// Runs `job`, which makes `blocks` compressed blocks, through `spawner`, to be written after
    /// everything submitted before; returns once it is queued, after waiting while the jobs'
    /// blocks not yet written would pass `limit` with it. No caller waits for a set of jobs to
    /// end together: a pass over the pool that waited for its slowest worker idled the others,
    /// and on a machine shared with other work the slowest is often one waiting for a core.
    pub fn submit_job<'s>(
        &mut self,
        blocks: usize,
        limit: usize,
        spawner: &impl Spawner<'s>,
        job: impl FnOnce() -> Vec<Vec<u8>> + Send + 's,
    ) -> std::io::Result<()> {
        let (seq, to_writer) = self.reserve(blocks, limit)?;
        spawner.spawn(Box::new(move || {
            let deflated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
                .map_err(|_| "a deflate job panicked".to_string());
            let _ = to_writer.send((seq, blocks, deflated));
        }));
        Ok(())
    }

    /// Waits until a group of `weight` fits under `limit` (or nothing is in flight), deflating
    /// queued groups meanwhile, and takes the next sequence number.
    fn reserve(&mut self, weight: usize, limit: usize) -> std::io::Result<(u64, Sender<Message>)> {
        self.wait_until(|n| n == 0 || n + weight <= limit);
        if self.failed.load(Ordering::Acquire) {
            return Err(self.collect_error());
        }
        let to_writer = self.to_writer.clone().ok_or_else(writer_gone)?;
        self.in_flight.fetch_add(weight, Ordering::AcqRel);
        let seq = self.next_seq;
        self.next_seq += 1;
        Ok((seq, to_writer))
    }

    /// Blocks until `ok(groups in flight)`, running the pool's queued jobs (often this stage's
    /// own deflates) rather than idling.
    fn wait_until(&self, ok: impl Fn(usize) -> bool) {
        while !ok(self.in_flight.load(Ordering::Acquire)) {
            if rayon::yield_now() != Some(rayon::Yield::Executed) {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// The sink's error, once the ordering thread has stopped on it.
    fn collect_error(&mut self) -> std::io::Error {
        match self.finish() {
            Err(e) => e,
            Ok(_) => std::io::Error::other("the BGZF writer failed"),
        }
    }

    /// Waits for every group to be written; gives back the sink and what was written.
    pub fn finish(&mut self) -> std::io::Result<Finished> {
        self.wait_until(|n| n == 0);
        drop(self.to_writer.take());
        let writer = self.writer.take().ok_or_else(writer_gone)?;
        writer.join().map_err(|_| std::io::Error::other("the BGZF writer thread panicked"))?
    }
}

impl Drop for DeflateStage {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = self.finish();
        }
    }
}

/// Where [`DeflateStage::submit_job`] runs a job: jobs that may outlive the caller go to the
/// pool ([`OnPool`]); jobs that borrow the caller's data go to a [`rayon::Scope`] the caller
/// keeps open until they are done.
pub trait Spawner<'s> {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 's>);
}

/// Spawns on the current pool; off any pool the job runs on the calling thread.
pub struct OnPool;

impl Spawner<'static> for OnPool {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        if rayon::current_thread_index().is_some() {
            rayon::spawn(job);
        } else {
            job();
        }
    }
}

impl<'s> Spawner<'s> for rayon::Scope<'s> {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 's>) {
        rayon::Scope::spawn(self, move |_| job());
    }
}

fn writer_gone() -> std::io::Error {
    std::io::Error::other("the BGZF writer has stopped")
}

fn deflate_group(group: &RawGroup, level: i32, engine: Engine) -> Vec<Vec<u8>> {
    let starts = std::iter::once(0).chain(group.cuts.iter().copied());
    let ranges: Vec<(usize, usize)> = starts.zip(group.cuts.iter().copied()).collect();
    ranges
        .into_par_iter()
        .map_init(
            || Deflater::with_engine(level, engine),
            |d, (start, end)| {
                // Recycled, as the group's data: fresh 64 KiB buffers for every block were a
                // page fault and a page clear per 4 KiB of output once freed memory is purged.
                let mut out = crate::io::recycle::take(super::block::BLOCK_MAX + 1024);
                d.deflate_into(&group.data[start..end], &mut out);
                out
            },
        )
        .collect()
}

fn write_group(
    sink: &mut Box<dyn Write + Send>,
    group: Deflated,
    block_offsets: &mut Vec<u64>,
    written: &mut u64,
) -> std::io::Result<()> {
    for block in group.map_err(std::io::Error::other)? {
        block_offsets.push(*written);
        sink.write_all(&block)?;
        *written += block.len() as u64;
        crate::io::recycle::give(block);
    }
    Ok(())
}
