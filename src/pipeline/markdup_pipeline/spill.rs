//! `markdup-pipeline` past `--max-memory`: the same four steps through temporary files, with the
//! same output as in memory.
//!
//! 1. *load + collate*: while reading, each time the records in memory pass the budget they are
//!    appended to collate's 64 name-hash bin files ([`BinFiles`], as `collate` spills). Each bin is
//!    then read back and ordered with samtools' introsort ([`read_bin`]): bin after bin, this is
//!    collate's output order, which decides fixmate's pairs and the sort's ties.
//! 2. *fixmate*: on each bin (a template's records share a name, so a bin) as it is read back.
//! 3. *sort*: the fixed records gather in memory; past the budget they are sorted and written as
//!    a run ([`sort::spill`], level-1 BAM). The runs hold consecutive stretches of the collated
//!    stream, so merging them with ties to the earlier run ([`merge_runs`]) is the stable sort.
//!    The last run is not written: it is sorted in memory and merged as the last source.
//! 4. *markdup*: the merged stream feeds the streaming markdup ([`StreamMarker`], as `markdup`
//!    itself runs), which holds only the records samtools' single pass can still look at.
//!
//! Memory: one bin (about 1/64 of the input, twice while fixmate copies it) plus the gathering
//! run, which is cut short to leave room for them; then the last run, the merge's readers and
//! the decider's window. A bin must fit in memory, as in `collate`: inputs up to about 8× the budget keep the
//! bins within a quarter of it.

use super::{
    Checksum, PipelineOptions, add_pg, create_output, fixmate_pass, markdup_read_groups,
    verify_hash,
};
use crate::error::Error;
use crate::io::tempfiles::{TempFile, TempNamer};
use crate::ops::sort::SortOrder;
use crate::pipeline::collate::{BinFiles, read_bin};
use crate::pipeline::markdup::StreamMarker;
use crate::pipeline::markdup::report;
use crate::pipeline::sort::{self, batch_cost, data_budget, merge_runs};
use crate::record::{Header, RecordStore};

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
    let mut fix_removed = Checksum::default();
    let verify = opts.verify.then_some(verify_hash(&opts.markdup.md));
    let bin_files = bins.finish()?;
    let n_bins = bin_files.len();
    for bin in bin_files {
        let store = read_bin(bin)?;
        largest_bin = largest_bin.max(store.batches.iter().map(batch_cost).sum());
        let (fixed, removed) = fixmate_pass(store, &header, &opts.fix, verify);
        fix_removed = fix_removed.merge(removed);
        for b in &fixed.batches {
            placed = placed || b.iter().any(|r| r.ref_id() >= 0);
            used += batch_cost(b);
        }
        gathered.append(fixed);
        // Room for the next bin and its fixed copy (bins are about the same size).
        if used + 2 * largest_bin > limit {
            runs.push(sort::spill(&mut gathered, &header, SortOrder::Coordinate, namer, run)?);
            used = 0;
        }
    }
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
    merge_runs(&runs, last, &run_header, SortOrder::Coordinate, budget, |framed| {
        marker.push(&framed[4..])
    })?;
    drop(runs);
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

/// Collate's bins for the load's spills (created at the first).
pub fn bins(namer: &mut TempNamer) -> Result<BinFiles, Error> {
    BinFiles::create(super::COLLATE_BINS, namer)
}
