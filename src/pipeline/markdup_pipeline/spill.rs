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
//! 4. *markdup*: the merged stream feeds the streaming decider ([`Streamer`]), which holds only
//!    the records the single pass can still look at; released records are finalised and written
//!    in order. With `-S`, that first pass goes to a temporary BAM and a second pass over it
//!    marks the supplementary and mate-unmapped relatives of duplicates from the decider's
//!    table, as samtools markdup does with its own temporary file.
//!
//! Memory: one bin (about 1/64 of the input, twice while fixmate copies it) plus the gathering
//! run, which is cut short to leave room for them; then the merge's readers and the decider's
//! window. A bin must fit in memory, as in `collate`: inputs up to about 8× the budget keep the
//! bins within a quarter of it.

use rayon::prelude::*;

use super::{
    Checksum, PipelineOptions, RecordHashFn, add_pg, create_output, fixmate_pass,
    markdup_read_groups, verify_hash,
};
use crate::error::Error;
use crate::io::open;
use crate::ops::markdup::decide::stream::{Finished, Released, Streamer};
use crate::ops::markdup::decide::{Failure, Outcome};
use crate::ops::markdup::{self as md, Barcode, ReadInfo};
use crate::ops::sort::SortOrder;
use crate::pipeline::collate::{BinFiles, read_bin};
use crate::pipeline::fixmate::encode;
use crate::pipeline::markdup::{report, say};
use crate::pipeline::sink::{Encoded, OutputFormat, RecordSink};
use crate::pipeline::sort::{self, batch_cost, data_budget, merge_runs};
use crate::pipeline::tempfiles::{TempFile, TempNamer};
use crate::record::layout::flags;
use crate::record::{Header, RecordRef, RecordStore};

/// Records handed to the decider at a time (their infos are computed in parallel).
const STREAM_CHUNK: usize = 8192;

/// What the spilled run did, for `MDSAM_SPILL_REPORT` and `--verify`.
pub struct Spilled {
    pub fix_removed: Checksum,
    pub written: Checksum,
    pub md_removed: Checksum,
}

/// Counts and hash sums of what the markdup step wrote and dropped.
#[derive(Default)]
struct Tally {
    written: Checksum,
    removed: Checksum,
}

impl Tally {
    fn merge(&mut self, other: &Tally) {
        self.written = self.written.merge(other.written);
        self.removed = self.removed.merge(other.removed);
    }
}

fn failed(f: Failure) -> Error {
    if f.message.is_empty() { Error::Failed } else { say(&f.message) }
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
            runs.push(sort::spill(&mut gathered, &header, SortOrder::Coordinate, namer, threads)?);
            used = 0;
        }
    }
    if !gathered.is_empty() {
        runs.push(sort::spill(&mut gathered, &header, SortOrder::Coordinate, namer, threads)?);
    }
    drop(gathered);
    if std::env::var_os("MDSAM_SPILL_REPORT").is_some() {
        eprintln!(
            "[markdup-pipeline] spilled: {parts} parts into {n_bins} collate bins, {} sorted runs",
            runs.len()
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
    let m = &md_opts.md;
    // With -S the first pass goes to a temporary file (as samtools markdup's does).
    let first_file = m.supp.then(|| namer.next_file());
    let mut first_sink = match &first_file {
        Some(t) => RecordSink::create(&t.path_str(), OutputFormat::Bam, 1, threads, &header, true)?,
        None => create_final()?,
    };
    let first_opts = md::MarkdupOptions { supp: false, ..m.clone() };
    let umi = match (&m.barcode, m.move_umi) {
        (Barcode::Regex(rx), true) => Some(rx),
        _ => None,
    };
    let n_groups = groups.as_ref().map_or(0, |g| g.1.len());
    let mut streamer = Streamer::new(m, n_groups);
    let mut log = |line: String| eprint!("{line}");
    let mut tally = Tally::default();
    let write = |released: Vec<Released>, sink: &mut RecordSink, tally: &mut Tally| {
        let format = sink.format();
        let parts: Vec<(Encoded, Tally)> = released
            .par_chunks(1024)
            .map(|chunk| first_pass(chunk, &first_opts, umi, &header, format, verify))
            .collect();
        for (enc, t) in &parts {
            sink.write(enc)?;
            tally.merge(t);
        }
        Ok::<(), Error>(())
    };
    let mut pending: Vec<Vec<u8>> = Vec::with_capacity(STREAM_CHUNK);
    let feed = |pending: Vec<Vec<u8>>, streamer: &mut Streamer<'_>, log: &mut dyn FnMut(String)| {
        let batch: Vec<(ReadInfo, Vec<u8>)> = pending
            .into_par_iter()
            .with_min_len(256)
            .map(|b| {
                let r = RecordRef::new(&b);
                let rg = match &groups {
                    Some((ids, _)) => md::read_group_index(&r, ids),
                    None => 0,
                };
                (ReadInfo::compute(&r, m, rg), b)
            })
            .collect();
        streamer.push(batch, log).map_err(failed)
    };
    merge_runs(&runs, &run_header, SortOrder::Coordinate, budget, |framed| {
        pending.push(framed[4..].to_vec());
        if pending.len() >= STREAM_CHUNK {
            let released = feed(std::mem::take(&mut pending), &mut streamer, &mut log)?;
            write(released, &mut first_sink, &mut tally)?;
        }
        Ok(())
    })?;
    drop(runs);
    let released = feed(pending, &mut streamer, &mut log)?;
    write(released, &mut first_sink, &mut tally)?;
    let (last, mut fin) = streamer.finish(&mut log).map_err(failed)?;
    write(last, &mut first_sink, &mut tally)?;
    first_sink.finish()?;
    if let Some(t) = first_file {
        let mut sink = create_final()?;
        let mut second = Tally::default();
        supplementary_pass(&t, &mut sink, &mut fin, m, umi, &header, verify, &mut second)?;
        drop(t);
        sink.finish()?;
        // The first pass's removals stand; what it wrote is counted as the second pass writes it.
        tally.written = second.written;
        tally.removed = tally.removed.merge(second.removed);
    }
    report(&md_opts, &header, fin.opt_warnings, fin.bc_warnings, &fin.stats, groups.as_ref())?;
    Ok(Spilled { fix_removed, written: tally.written, md_removed: tally.removed })
}

/// The first pass's edits of released records, encoded; with `verify`, their hash sums.
fn first_pass(
    chunk: &[Released],
    opts: &md::MarkdupOptions,
    umi: Option<&regex::bytes::Regex>,
    header: &Header,
    format: OutputFormat,
    verify: Option<RecordHashFn>,
) -> (Encoded, Tally) {
    let mut out = Encoded::default();
    let mut t = Tally::default();
    for r in chunk {
        if !r.outcome.written {
            if let Some(hash) = verify {
                t.removed.add(hash(&RecordRef::new(&r.record)));
            }
            continue;
        }
        let do_name = r.do_name.as_deref().unwrap_or(b"");
        let b = md::finalize(&r.record, &r.outcome, opts, &|_| do_name, umi);
        encode(&mut out, &b, header, format);
        if let Some(hash) = verify {
            t.written.add(hash(&RecordRef::new(&b)));
        }
    }
    (out, t)
}

/// `-S`: reads the first pass back and marks supplementary, secondary and unmapped records whose
/// name is a duplicate's in the decider's table (`fin.supp`), counting them in `fin.stats`.
#[allow(clippy::too_many_arguments)]
fn supplementary_pass(
    first: &TempFile,
    sink: &mut RecordSink,
    fin: &mut Finished,
    m: &md::MarkdupOptions,
    umi: Option<&regex::bytes::Regex>,
    header: &Header,
    verify: Option<RecordHashFn>,
    tally: &mut Tally,
) -> Result<(), Error> {
    let path = first.path_str();
    let mut reader =
        open::open_streamed(&path, rayon::current_num_threads().max(1), 4 << 20)?.reader;
    let np_mask = flags::SUPPLEMENTARY | flags::UNMAP | flags::SECONDARY;
    let format = sink.format();
    while let Some((batches, _)) = reader.read_batches(&path)? {
        for batch in batches {
            let mut out = Encoded::default();
            for r in batch.iter() {
                let mut o = Outcome::default();
                let mut orig: &[u8] = b"";
                if r.flag() & np_mask != 0
                    && let Some(d) = fin.supp.get(r.read_name())
                {
                    o.np = true;
                    let s = &mut fin.stats[d.rg as usize];
                    s.np_duplicate += 1;
                    if let (true, Some(n)) = (m.tag, &d.orig_name) {
                        o.np_do = 0;
                        orig = n;
                    }
                    if m.opt_dist > 0 {
                        if d.optical {
                            o.np_dt = b'S';
                            s.np_opt_duplicate += 1;
                        } else {
                            o.np_dt = b'L';
                        }
                    }
                }
                // The first pass's flag carries DUP exactly when the record is a duplicate.
                if m.remove && o.np {
                    if let Some(hash) = verify {
                        tally.removed.add(hash(&r));
                    }
                    continue;
                }
                let mut b = r.bytes().to_vec();
                md::finalize_supp(&mut b, &o, m, &|_| orig, umi);
                encode(&mut out, &b, header, format);
                if let Some(hash) = verify {
                    tally.written.add(hash(&RecordRef::new(&b)));
                }
            }
            sink.write(&out)?;
        }
    }
    Ok(())
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
