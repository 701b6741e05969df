//! `sort`: read every record into one [`RecordStore`], compute one key per record in parallel,
//! sort the handles by (key, input position) on the pool, write in the new order.
//!
//! Ties keep input order, as samtools' sorts do. Record bytes never move; only `-M` edits records
//! in place (reverse-complementing unplaced reads).
//!
//! Memory: the records read so far, plus the sorting structures ([`PER_RECORD`] bytes a record),
//! must fit the total budget (`--max-memory`, else threads × `-m`). When they do not, what is in
//! memory is sorted and written as a run to a temporary BAM (`PREFIX.NNNN.bam`, level 1), the
//! batches are freed and reading goes on. At the end the records read since the last spill are
//! sorted in memory and merged k-way with every run ([`merge`]) on the same keys, earlier runs
//! first on ties, so the output is the in-memory sort's, byte for byte. `-M` (which edits records as it keys them) never spills.

mod merge;

pub use merge::{Runs, merge_runs};

use crate::io::input_spec::InputSpec;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use rayon::prelude::*;

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::open::{self, Opened};
use crate::io::output_spec::OutputSpec;
use crate::io::sam::format::format_record;
use crate::io::sink::{Encoded, RecordSink};
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::ops::sort::keys::{self, TagValue, TemplateKey};
use crate::ops::sort::minhash::{self, MinKey};
use crate::ops::sort::{NameKey, NameOrder, SortOrder};
use crate::profile::{self, Counter, Phase, RunInfo};
use crate::record::{Batch, Header, RecordIdx, RecordStore};

pub struct SortOptions {
    pub input: String,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    pub order: SortOrder,
    /// `@PG` fields to add (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
    /// `--write-index`: (index path, BAI?) with the output path already stripped of `##idx##`.
    pub index: Option<(String, bool)>,
    /// Total memory budget in bytes.
    pub memory: u64,
    /// `-T PREFIX` for temporary files.
    pub tmp_prefix: Option<String>,
    /// `-I ref.fa` and `-w` window: minimiser order placed on a reference.
    pub minimiser_ref: Option<(String, usize)>,
}

/// Bytes of sorting structures per record besides its own bytes: handle, key, sorted handle,
/// the framed slice while writing, allocator slack.
pub const PER_RECORD: usize = 64;

/// What the in-memory records may use of a budget: the rest is left to the reader's pieces, the
/// BGZF writer's blocks in flight and the process itself.
/// Measured (mimalloc, 2 threads): the process before any record (binary, thread stacks,
/// allocator arenas) takes about [`PROCESS_BASE`]; of the rest, the allocator's slack on large
/// batches (~14 %), the reader's pieces, sort keys and the BGZF writer's blocks while a run is
/// written take about a third. Small budgets, which the process base would swallow, set aside an
/// eighth for it instead.
pub fn data_budget(budget: u64, _threads: usize) -> usize {
    let base = PROCESS_BASE.min(budget / 8);
    ((budget - base) / 100 * 66) as usize
}

/// Resident memory of the process before it holds records (measured: 20–26 MB at `-@ 0..2`).
pub const PROCESS_BASE: u64 = 20 << 20;

/// Inflated bytes per input piece under a budget.
pub fn piece_bytes(budget: u64, threads: usize) -> usize {
    let full = crate::io::open::PIECE_BYTES_PER_THREAD * threads.max(1);
    full.min((budget / 16) as usize).max(64 << 10)
}

/// The memory a batch holds in the store, with its sorting structures.
pub fn batch_cost(b: &Batch) -> usize {
    b.data.capacity() + b.starts.capacity() * 4 + b.len() * PER_RECORD
}

/// Records per parallel work unit when building keys and encoding output.
const CHUNK: usize = 8192;

/// Name keys of records in `handles` order, with their bytes in one arena.
fn name_keys(
    store: &RecordStore,
    handles: &[RecordIdx],
    order: NameOrder,
) -> (Vec<NameKey>, Vec<u8>) {
    let parts: Vec<(Vec<NameKey>, Vec<u8>)> = handles
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut arena = Vec::with_capacity(chunk.len() * 24);
            let keys =
                chunk.iter().map(|&h| NameKey::build(&store.get(h), order, &mut arena)).collect();
            (keys, arena)
        })
        .collect();
    let mut all_keys = Vec::with_capacity(handles.len());
    let mut arena = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
    for (keys, part) in parts {
        let base = arena.len() as u32;
        all_keys.extend(keys.into_iter().map(|k| NameKey { start: k.start + base, ..k }));
        arena.extend_from_slice(&part);
    }
    (all_keys, arena)
}

/// The sorted order of the store's handles. Ties keep input order.
pub fn sorted_order(
    store: &RecordStore,
    header: &Header,
    order: SortOrder,
    min_keys: Option<&[Vec<Option<MinKey>>]>,
) -> Result<Vec<RecordIdx>, Error> {
    let handles = &store.order;
    let n_refs = header.refs().len();
    let pick = |positions: Vec<u32>| positions.into_iter().map(|p| handles[p as usize]).collect();
    match order {
        SortOrder::Coordinate => {
            // One u128 per record (narrow key, input index) while every POS fits 32 bits, as in
            // any BAM; a POS beyond that (SAM only) switches to the wider key.
            let wide = AtomicBool::new(false);
            let mut k: Vec<u128> = handles
                .par_iter()
                .enumerate()
                .map(|(i, &h)| match keys::narrow_coordinate_key(&store.get(h), n_refs) {
                    Some(key) => (key as u128) << 32 | i as u128,
                    None => {
                        wide.store(true, AtomicOrdering::Relaxed);
                        0
                    }
                })
                .collect();
            if wide.load(AtomicOrdering::Relaxed) {
                let mut k: Vec<(u128, u32)> = handles
                    .par_iter()
                    .enumerate()
                    .map(|(i, &h)| (keys::coordinate_key(&store.get(h), n_refs), i as u32))
                    .collect();
                k.par_sort_unstable();
                return Ok(k.into_iter().map(|(_, i)| handles[i as usize]).collect());
            }
            k.par_sort_unstable();
            Ok(k.into_iter().map(|k| handles[(k as u32) as usize]).collect())
        }
        SortOrder::Name(name_order) => {
            let (k, arena) = name_keys(store, handles, name_order);
            let mut pos: Vec<u32> = (0..handles.len() as u32).collect();
            pos.par_sort_unstable_by(|&a, &b| {
                k[a as usize].cmp(&arena, &k[b as usize], &arena).then(a.cmp(&b))
            });
            Ok(pick(pos))
        }
        SortOrder::Tag { tag, then } => {
            let tags: Vec<TagValue<'_>> =
                handles.par_iter().map(|&h| keys::tag_value(&store.get(h), tag)).collect();
            let mut pos: Vec<u32> = (0..handles.len() as u32).collect();
            match then {
                None => {
                    let coords: Vec<u128> = handles
                        .par_iter()
                        .map(|&h| keys::coordinate_key(&store.get(h), n_refs))
                        .collect();
                    pos.par_sort_unstable_by(|&a, &b| {
                        let (a, b) = (a as usize, b as usize);
                        keys::cmp_tag(&tags[a], &tags[b])
                            .then(coords[a].cmp(&coords[b]))
                            .then(a.cmp(&b))
                    });
                }
                Some(name_order) => {
                    let (k, arena) = name_keys(store, handles, name_order);
                    pos.par_sort_unstable_by(|&a, &b| {
                        let (a, b) = (a as usize, b as usize);
                        keys::cmp_tag(&tags[a], &tags[b])
                            .then_with(|| k[a].cmp(&arena, &k[b], &arena))
                            .then(a.cmp(&b))
                    });
                }
            }
            Ok(pick(pos))
        }
        SortOrder::TemplateCoordinate => {
            let libraries = keys::library_lookup(header.lines());
            let k: Vec<TemplateKey<'_>> = handles
                .par_iter()
                .map(|&h| keys::template_key(&store.get(h), &libraries))
                .collect::<Result<_, String>>()
                .map_err(Error::Bare)?;
            let mut pos: Vec<u32> = (0..handles.len() as u32).collect();
            pos.par_sort_unstable_by(|&a, &b| {
                keys::cmp_template(&k[a as usize], &k[b as usize]).then(a.cmp(&b))
            });
            Ok(pick(pos))
        }
        SortOrder::MinHash(_) => {
            let min_keys =
                min_keys.ok_or_else(|| Error::Message("minimiser keys missing".into()))?;
            let mut k: Vec<(u128, MinKey, bool, u32)> = handles
                .par_iter()
                .enumerate()
                .map(|(i, &h)| {
                    let r = store.get(h);
                    match min_keys[h.batch as usize][h.record as usize] {
                        Some(m) => (
                            u128::MAX,
                            m,
                            r.flag() & crate::record::layout::flags::REVERSE != 0,
                            i as u32,
                        ),
                        None => (
                            keys::coordinate_key(&r, n_refs),
                            MinKey { hash: 0, pos_desc: 0 },
                            false,
                            i as u32,
                        ),
                    }
                })
                .collect();
            k.par_sort_unstable();
            Ok(k.into_iter().map(|k| handles[k.3 as usize]).collect())
        }
    }
}

/// `-M`: computes the minimiser key of every unplaced record, editing those records in place.
fn apply_minhash(
    store: &mut RecordStore,
    m: minhash::Minimiser,
    index: Option<&minhash::KmerIndex>,
) -> Vec<Vec<Option<MinKey>>> {
    store
        .batches
        .par_iter_mut()
        .map(|batch| {
            (0..batch.len()).map(|i| minhash::apply(batch.record_mut(i), m, index)).collect()
        })
        .collect()
}

/// Sorts the store and writes it as the next run, compressed as a temporary file
/// ([`RecordSink::create_temporary`], level 1 as samtools' runs) or stored (level 0: more disk,
/// no deflate, and past the page cache); empties the store, handing its pieces back to the
/// recycler to be kept within `keep` bytes for the next run to read into.
pub fn spill(
    store: &mut RecordStore,
    header: &Header,
    order: SortOrder,
    namer: &mut TempNamer,
    (threads, compressed): (usize, bool),
    keep: usize,
) -> Result<TempFile, Error> {
    let _phase = profile::phase(Phase::Spill);
    profile::add(Phase::Spill, Counter::Records, store.len() as u64);
    // samtools words a run it cannot create as its output.
    let (file, created) = namer.create_next().map_err(|e| Error::CannotCreate {
        path: namer.last_path(),
        reason: crate::error::c_message(&e),
    })?;
    store.order = sorted_order(store, header, order, None)?;
    let path = file.path_str();
    let mut sink = if compressed {
        RecordSink::create_temporary(&path, created, threads, header)?
    } else {
        RecordSink::create_uncompressed_temporary(&path, created, threads, header)?
    };
    write_in_order(store, header, &mut sink)?;
    sink.finish()?;
    // The next run is read into these pieces ([`crate::io::recycle::give_within`]).
    for batch in std::mem::take(store).batches {
        crate::io::recycle::give_within(batch.data, keep);
    }
    Ok(file)
}

/// Reads everything, sorts, writes.
pub fn run(opts: SortOptions) -> Result<(), Error> {
    let index = match (&opts.minimiser_ref, opts.order) {
        (Some((path, window)), SortOrder::MinHash(m)) => {
            eprint!("Building index ... ");
            let seqs = crate::io::fasta::scan::read_sequence_codes(path).map_err(|e| {
                eprintln!();
                Error::Message(format!("{path}: {e}"))
            })?;
            let ix = minhash::KmerIndex::from_sequences(&seqs, m.kmer, *window, m.squash);
            eprintln!("done");
            Some(ix)
        }
        _ => None,
    };
    let piece = piece_bytes(opts.memory, opts.threads);
    let Opened { mut reader, header: input_header, .. } = open::open_with_piece(
        &opts.input,
        InputSpec::new(opts.threads, opts.reference.as_deref()),
        piece,
    )?;
    profile::describe(
        RunInfo::staged(
            opts.threads,
            opts.spec.level,
            (&opts.input, &opts.output),
            (reader.format_name(), opts.spec.format.name()),
        )
        .budgeted(Some(opts.memory)),
    );
    // samtools sort refuses BAM output up front when a reference is longer than 2^31 - 1.
    let large_refs = input_header.has_very_large_references();
    if large_refs && opts.spec.format == OutputFormat::Bam {
        return Err(Error::Message(
            "output format is not compatible with very large references".into(),
        ));
    }
    let limit = data_budget(opts.memory, opts.threads);
    // Runs are BAM files, which cannot hold positions beyond 32 bits (samtools writes SAM runs
    // then): with such references everything stays in memory.
    let can_spill = !matches!(opts.order, SortOrder::MinHash(_)) && !large_refs;
    let mut namer = TempNamer::for_sort(opts.tmp_prefix.as_deref(), &opts.output);
    let spill_run = |store: &mut RecordStore, namer: &mut TempNamer| {
        // The spilled store's pieces are kept for the next run to read into.
        spill(store, &input_header, opts.order, namer, (opts.threads, true), limit)
    };
    let mut runs: Vec<TempFile> = Vec::new();
    let mut store = RecordStore::default();
    let mut used = 0usize;
    let mut placed = false;
    loop {
        match reader.read_batches(&opts.input) {
            Ok(Some((batches, warnings))) => {
                for w in warnings {
                    eprintln!("{w}");
                }
                for b in batches {
                    placed = placed || b.iter().any(|r| r.ref_id() >= 0);
                    used += batch_cost(&b);
                    store.push_batch(b);
                }
                if can_spill && used > limit && !store.is_empty() {
                    runs.push(spill_run(&mut store, &mut namer)?);
                    used = 0;
                } else if !runs.is_empty() {
                    // Kept pieces and the store together stay within the data budget.
                    crate::io::recycle::trim_to(limit.saturating_sub(used));
                }
            }
            Ok(None) => break,
            // One line naming the file and the problem (samtools adds "truncated file. Aborting").
            Err(e) => return Err(e),
        }
    }
    crate::io::recycle::trim_to(crate::io::recycle::kept_for_budget(opts.memory));
    let sort_phase = profile::phase(Phase::Sort);
    profile::add(Phase::Sort, Counter::Records, store.len() as u64);
    // The keys are read from each record once, through its handle.
    profile::add(Phase::Sort, Counter::RandomAccesses, store.len() as u64);
    let min_keys = match opts.order {
        SortOrder::MinHash(m) => Some(apply_minhash(&mut store, m, index.as_ref())),
        _ => None,
    };
    store.order = sorted_order(&store, &input_header, opts.order, min_keys.as_deref())?;
    drop(sort_phase);
    if let Some(why) = input_header.sq_error() {
        // htslib parses a BAM's header text only now, when `@HD` changes (and twice).
        return Err(Error::Bare(format!(
            "{why}\n{why}\nsamtools sort: failed to change sort order header to '{}'\n",
            opts.order.hd_description(placed)
        )));
    }
    let mut header = input_header.clone();
    opts.order.update_header(&mut header, placed);
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    let mut sink = RecordSink::create(&opts.output, &opts.spec, opts.threads, &header, true)?;
    if let Some((path, bai)) = &opts.index {
        sink.write_index(path, *bai, &header)?;
    }
    if runs.is_empty() {
        let _phase = profile::phase(Phase::Write);
        profile::add(Phase::Write, Counter::Records, store.len() as u64);
        write_in_order(&store, &header, &mut sink)?;
        sink.finish()?;
    } else {
        // The records read after the last spill stay in memory, sorted, as the merge's last run.
        let last = (!store.is_empty()).then_some(&store);
        let _phase = profile::phase(Phase::Merge);
        let headers = (&input_header, &header);
        let runs = merge::Runs {
            files: runs,
            uncompressed: false,
            namer: &mut namer,
            threads: opts.threads,
        };
        merge::merge(runs, last, headers, opts.order, opts.memory, &mut sink)?;
        sink.finish()?;
    }
    Ok(())
}

/// Encodes the store's records in its current order, in parallel, and writes them in order.
pub fn write_in_order(
    store: &RecordStore,
    header: &Header,
    sink: &mut RecordSink,
) -> Result<(), Error> {
    let format = sink.format();
    if format.takes_bam_records() {
        let framed: Vec<&[u8]> = store
            .order
            .par_iter()
            .map(|h| store.batches[h.batch as usize].framed(h.record as usize))
            .collect();
        return sink.write_framed(&framed);
    }
    let group = CHUNK * sink.threads() * 4;
    for handles in store.order.chunks(group) {
        let encoded: Vec<Encoded> = handles
            .par_chunks(CHUNK)
            .map(|chunk| {
                // Sized up front in a recycled buffer: grown by doubling, each chunk's buffer
                // was copied and faulted into fresh pages several times.
                let bytes = chunk
                    .iter()
                    .map(|h| store.batches[h.batch as usize].framed(h.record as usize).len())
                    .sum();
                let mut out = Encoded::sized_for(bytes, chunk.len(), format);
                for &h in chunk {
                    if format.takes_bam_records() {
                        out.data.extend_from_slice(
                            store.batches[h.batch as usize].framed(h.record as usize),
                        );
                        out.end_unit();
                    } else {
                        format_record(&mut out.data, &store.get(h), header);
                        out.end_unit();
                    }
                }
                out
            })
            .collect();
        for e in encoded {
            sink.write(&e)?;
            crate::io::recycle::give(e.data);
        }
    }
    Ok(())
}

/// Runs `sort` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: SortOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(opts.threads).install(|| run(opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Batch;

    fn rec(name: &str, tid: i32, pos: i32, flag: u16) -> Vec<u8> {
        let r = crate::record::build::RecordBuilder::new(name.as_bytes()).tid(tid).pos(pos);
        r.flag(flag).mate(-1, -1).build()
    }

    fn store(recs: &[Vec<u8>]) -> RecordStore {
        let mut s = RecordStore::default();
        // Two batches, to check handles across batches.
        let mid = recs.len() / 2;
        for part in [&recs[..mid], &recs[mid..]] {
            let mut b = Batch::default();
            for r in part {
                b.push(r);
            }
            s.push_batch(b);
        }
        s
    }

    fn names(s: &RecordStore, order: &[RecordIdx]) -> Vec<String> {
        order.iter().map(|&h| String::from_utf8_lossy(s.get(h).read_name()).into_owned()).collect()
    }

    #[test]
    fn coordinate_is_stable_with_unplaced_last() {
        let header =
            Header::from_sam_text(b"@SQ\tSN:a\tLN:100\n@SQ\tSN:b\tLN:100\n".to_vec()).unwrap();
        let recs = vec![
            rec("u1", -1, -1, 4),
            rec("b5", 1, 5, 0),
            rec("a5r", 0, 5, 16),
            rec("a5x", 0, 5, 0),
            rec("a5y", 0, 5, 0),
            rec("u2", -1, -1, 4),
            rec("a1", 0, 1, 0),
        ];
        let s = store(&recs);
        let order = sorted_order(&s, &header, SortOrder::Coordinate, None).unwrap();
        assert_eq!(names(&s, &order), ["a1", "a5x", "a5y", "a5r", "b5", "u1", "u2"]);
    }

    #[test]
    fn name_orders_and_flag_ties() {
        let header = Header::default();
        let recs = vec![
            rec("r10", 0, 0, 0x80),
            rec("r9", 0, 0, 0),
            rec("r10", 0, 0, 0x840),
            rec("r10", 0, 0, 0x40),
            rec("r010", 0, 0, 0x140),
            rec("r2", 0, 0, 0),
        ];
        let s = store(&recs);
        let order = sorted_order(&s, &header, SortOrder::Name(NameOrder::Natural), None).unwrap();
        let flags: Vec<(String, u16)> = order
            .iter()
            .map(|&h| (String::from_utf8_lossy(s.get(h).read_name()).into_owned(), s.get(h).flag()))
            .collect();
        assert_eq!(
            flags,
            [("r2", 0), ("r9", 0), ("r10", 0x40), ("r10", 0x840), ("r010", 0x140), ("r10", 0x80)]
                .map(|(n, f)| (n.to_string(), f))
        );
        let order =
            sorted_order(&s, &header, SortOrder::Name(NameOrder::Lexicographic), None).unwrap();
        assert_eq!(names(&s, &order), ["r010", "r10", "r10", "r10", "r2", "r9"]);
    }
}
