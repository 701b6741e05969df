//! `markdup-pipeline` past `--max-memory`: the same four steps through temporary files, with the
//! same output as in memory.
//!
//! 1. *load + collate*: while reading, each time the records in memory pass the budget they are
//!    appended to collate's 64 name-hash bin files ([`BinFiles`], as `collate` spills). Each bin is
//!    then read back and ordered with samtools' introsort ([`bin_store`]): bin after bin, this is
//!    collate's output order, which decides fixmate's pairs and the sort's ties.
//! 2. *fixmate*: on each bin (a template's records share a name, so a bin) as it is read back.
//! 3. *sort*: the fixed records gather in memory; past the budget they are sorted and written as
//!    a run ([`sort::spill`], uncompressed BAM). The runs hold consecutive stretches of the
//!    collated stream, so merging them with ties to the earlier run ([`merge_runs`]) is the
//!    stable sort. The last run is not written: it is sorted in memory and merged as the last
//!    source.
//! 4. *markdup*: the merged stream feeds the streaming markdup ([`StreamMarker`], as `markdup`
//!    itself runs), which holds only the records samtools' single pass can still look at.
//!
//! Memory: one bin (about 1/64 of the input, twice while fixmate copies it), the next bin being
//! read, and the gathering run, which is cut short to leave room for them; then the last run,
//! the merge's readers and the decider's window. A bin must fit in memory, as in `collate`:
//! inputs up to about 8× the budget keep the bins within a quarter of it.
//!
//! Every temporary file is written and read past the page cache (`O_DIRECT`,
//! [`crate::io::direct_write`], [`crate::io::direct_read`]): through it, at 12 M reads under
//! 1G, the kernel's copies into fresh cache pages took 28 of the run's 62 s of system time.

use super::{
    Checksum, PipelineOptions, add_pg, create_output, fixmate_pass, markdup_read_groups,
    verify_hash,
};
use std::sync::mpsc::SyncSender;

use crate::error::Error;
use crate::io::direct_read::{read_whole_into, whole_file_buffer};
use crate::io::pool_wait::next_helping_pool;
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::ops::sort::SortOrder;
use crate::pipeline::collate::{BinFiles, bin_store};
use crate::pipeline::markdup::StreamMarker;
use crate::pipeline::markdup::report;
use crate::pipeline::sort::{self, Runs, batch_cost, data_budget, merge_runs};
use crate::record::{Header, RecordStore};

/// The smallest budget under which the merge keeps freed pages a while: under 160 MiB that
/// retained memory raised the peak from 157 to 202 MiB.
const MERGE_PURGE_LATER_FROM: u64 = 512 << 20;

/// A bin for the reader thread, and the buffer to read it into.
type BinRead = (TempFile, Vec<u8>);

/// What the spilled run did, for `MDSAM_SPILL_REPORT` and `--verify`.
pub struct Spilled {
    pub fix_removed: Checksum,
    pub written: Checksum,
    pub md_removed: Checksum,
}

/// Steps 2–4 on the collate bins; `header` has collate's `@HD` and `@PG`, `parts` is the number
/// of spills while loading.
pub fn run(
    bins: BinFiles,
    mut header: Header,
    opts: PipelineOptions,
    namer: &mut TempNamer,
    budget: u64,
    parts: usize,
) -> Result<Spilled, Error> {
    let threads = opts.markdup.threads;
    // A bin and its fixed copy are in memory besides the gathering run.
    let limit = data_budget(budget, threads);
    let mut largest_bin = 0usize;
    if let Some(pg) = &opts.pg {
        add_pg(&mut header, &pg[1]);
    }
    // The sorted runs are stored uncompressed, as the collate bins are: at level 1 their deflate
    // was 8.7 of 28.8 s on 6 M reads under 1G (uncompressed: 2.0 of 23.2 s), for 2.6x the
    // temporary disk space (about the input's uncompressed size).
    let run = (threads, false);
    let mut runs: Vec<TempFile> = Vec::new();
    let mut gathered = RecordStore::default();
    let (mut used, mut placed) = (0usize, false);
    // What the recycler may keep of the pieces fixmate and the runs hand back: the fixed copies
    // and next bins are made from them, within the data budget with what is gathered.
    let mut keep = limit;
    let mut fix_removed = Checksum::default();
    let verify = opts.verify.then_some(verify_hash(&opts.markdup.md));
    let bin_files = bins.finish()?;
    let n_bins = bin_files.len();
    let mut fix_bin = |store: RecordStore| -> Result<(), Error> {
        largest_bin = largest_bin.max(store.batches.iter().map(batch_cost).sum());
        let (fixed, removed) = fixmate_pass(store, &header, &opts.fix, verify, (threads, keep));
        fix_removed = fix_removed.merge(removed);
        for b in &fixed.batches {
            placed = placed || b.iter().any(|r| r.ref_id() >= 0);
            used += batch_cost(b);
        }
        gathered.append(fixed);
        // Room for the next bin, the one read ahead and the fixed copy (bins are about the
        // same size). The bins and fixed copies to come are made from kept pieces (a spilled
        // run's batches, the bins fixed): kept and gathered stay within the data budget.
        if used + 3 * largest_bin > limit {
            let order = SortOrder::Coordinate;
            runs.push(sort::spill(&mut gathered, &header, order, namer, run, limit)?);
            used = 0;
            keep = limit;
        } else {
            keep = limit.saturating_sub(used);
            crate::io::recycle::trim_to(keep);
        }
        Ok(())
    };
    // The next bin is read on a thread of its own while this one is fixed: the bins are read
    // past the page cache, and each read waits on the disk. Its buffer comes from this thread
    // ([`whole_file_buffer`]).
    std::thread::scope(|scope| {
        let (to_reader, requests) = std::sync::mpsc::sync_channel::<BinRead>(1);
        let (to_main, read) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            for (bin, buf) in requests {
                let whole = read_whole_into(bin.path(), buf);
                if to_main.send((bin, whole)).is_err() {
                    return;
                }
            }
        });
        let mut to_read = bin_files.into_iter();
        let mut to_reader = Some(to_reader);
        let mut ask_next = |to_reader: &mut Option<SyncSender<BinRead>>| -> Result<(), Error> {
            let Some(bin) = to_read.next() else {
                // The reader stops once every bin is asked for.
                *to_reader = None;
                return Ok(());
            };
            let buf = whole_file_buffer(bin.path()).map_err(|e| Error::io(bin.path_str(), e))?;
            if let Some(tx) = to_reader.as_ref() {
                // A failed send means the reader is gone; its error comes with the bin before.
                let _ = tx.send((bin, buf));
            }
            Ok(())
        };
        ask_next(&mut to_reader)?;
        while let Some((bin, whole)) = next_helping_pool(&read) {
            ask_next(&mut to_reader)?;
            let whole = whole.map_err(|e| Error::io(bin.path_str(), e))?;
            drop(bin);
            fix_bin(bin_store(whole))?;
        }
        Ok::<(), Error>(())
    })?;
    crate::io::recycle::trim_to(crate::io::recycle::kept_for_budget(budget));
    // The last run stays in memory, sorted, as the merge's last source (as in `sort`).
    gathered.order = sort::sorted_order(&gathered, &header, SortOrder::Coordinate, None)?;
    if std::env::var_os("MDSAM_SPILL_REPORT").is_some() {
        let in_memory = usize::from(!gathered.is_empty());
        eprintln!(
            "[markdup-pipeline] spilled: {parts} parts into {n_bins} collate bins, {} sorted runs ({in_memory} in memory)",
            runs.len() + in_memory
        );
    }
    let run_header = header.clone();
    SortOrder::Coordinate.update_header(&mut header, placed);
    if let Some(pg) = &opts.pg {
        add_pg(&mut header, &pg[2]);
        add_pg(&mut header, &pg[3]);
    }
    let mut md_opts = opts.markdup;
    let groups = markdup_read_groups(&mut md_opts, &header);
    let create_final = || create_output(&md_opts, opts.index.as_ref(), &header);
    let mut marker = StreamMarker::start(
        &md_opts.md,
        groups.as_ref(),
        &header,
        threads,
        verify,
        namer,
        &create_final,
    )?;
    let last = (!gathered.is_empty()).then_some(&gathered);
    if budget >= MERGE_PURGE_LATER_FROM {
        // The merge and markdup allocate every record anew (the decider's window), and pages
        // purged at once were faulted in again: at 12 M reads under 1G, 70.0 s with 12.2 s of
        // system time; purged after mimalloc's default 10 ms, 64.8 s with 8.1 s.
        crate::alloc::purge_freed_memory_after(10);
    }
    let runs = Runs { files: runs, uncompressed: !run.1, namer, threads };
    merge_runs(runs, last, &run_header, SortOrder::Coordinate, budget, |framed| {
        marker.push(&framed[4..])
    })?;
    drop(gathered);
    let (fin, tally) = marker.finish(&create_final)?;
    report(&md_opts, &header, fin.opt_warnings, fin.bc_warnings, &fin.stats, groups.as_ref())?;
    Ok(Spilled { fix_removed, written: tally.written, md_removed: tally.removed })
}

/// Whether `--max-memory` makes the load spill: the records read so far cost more than the
/// budget's data share.
pub fn over_budget(used: usize, budget: Option<u64>, threads: usize) -> bool {
    budget.is_some_and(|b| used > data_budget(b, threads))
}

/// Collate's bins for the load's spills (created at the first) under a `budget` of bytes,
/// written on `threads`.
pub fn bins(budget: u64, threads: usize, namer: &mut TempNamer) -> Result<BinFiles, Error> {
    BinFiles::create(super::COLLATE_BINS, budget, threads, namer)
}
