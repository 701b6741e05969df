//! `markdup-pipeline`: `collate → fixmate -m → sort → markdup` as passes over one in-memory record
//! list, with output identical to samtools' recipe
//! `samtools collate -O -u IN | samtools fixmate -m -u - - | samtools sort -u - | samtools markdup - OUT`.
//!
//! - *load*: the input is inflated and parsed once into a [`RecordStore`].
//! - *collate*: always run (whatever the input order): [`collated_order`] permutes the handles
//!   into samtools collate's exact order (64 name-hash bins, samtools' introsort per bin), which
//!   is what fixmate sees, and, through the stable sort's tie-break, what decides the order of
//!   equal-coordinate records in the output. Skipping it for name-grouped input would change ties,
//!   so it is not skipped. The header gets `SO:unsorted GO:query` as collate writes.
//! - *fixmate*: [`fix_templates`] on chunks of whole templates in parallel; the edited records
//!   (MC/MQ/ms tags change their length) go into new arena batches of a new store in the same
//!   order; the old store is dropped. No SAM/BAM encoding or compression in between.
//! - *sort*: [`sorted_order`] by coordinate (ties in input order), header `SO:coordinate`.
//! - *markdup*: [`mark`], the same key/decide/write phases as `markdup`, writing the output once.
//!
//! `--max-memory`: when the records read pass the budget, the steps run through temporary files
//! instead (collate's bins, sort's runs, a streaming markdup), with the same output; see
//! [`spill`]. Without it the budget is the memory the process may really use
//! ([`crate::pipeline::memory_limit`]: 3/4 of the cgroup limit, else 1/2 of the available memory), so a cluster
//! job is never killed for memory where samtools' pipe would finish.
//!
//! `@PG`: one line per logical step (collate, fixmate, sort, markdup), chained by `PP` as the four
//! samtools commands chain them. Each `CL` is the equivalent stand-alone command of that step
//! (e.g. `mdsam fixmate -m -u - -`), and each line's `DS` gives the whole `markdup-pipeline`
//! command line. The stats' `COMMAND` is the `markdup-pipeline` command line.
//!
//! `--verify`: an order-independent checksum ([`record_hash`] summed with wrapping addition, plus
//! a count) over every input record's name, READ1/READ2 bits, sequence and qualities, compared
//! after writing with the same checksum over the records written, plus those removed by fixmate's
//! `-r` and markdup's `-r` (counted and reported). A mismatch is an
//! error (exit 1) and a file output is deleted. With `--move-umi-to-tag`, which edits names on
//! purpose, the name is left out of the checksum ([`record_hash_unnamed`]).

mod spill;

use rayon::prelude::*;

use crate::error::Error;
use crate::io::input_spec::InputSpec;
use crate::io::open::{self, Opened};
use crate::io::recycle::{MAX_KEPT_BYTES, kept_for_budget};
use crate::io::temp_names::TempNamer;
use crate::ops::fixmate::FixmateOptions as Fix;
use crate::ops::sort::SortOrder;
use crate::pipeline::collate::{BinFiles, collated_order};
use crate::pipeline::fixmate::fix_templates;
use crate::pipeline::markdup::{MarkdupOptions, ReadGroups, create_output, mark, read_group_ids};
use crate::pipeline::sort::{batch_cost, data_budget, sorted_order};
use crate::profile::{self, Counter, Phase, RunInfo};
use crate::record::{Batch, Header, RecordIdx, RecordRef, RecordStore};

pub struct PipelineOptions {
    /// Output path, format, level, threads and all markdup settings (with `input`/`output`).
    pub markdup: MarkdupOptions,
    /// fixmate's settings (`-m` always on).
    pub fix: Fix,
    /// `--write-index`: (index path, BAI?).
    pub index: Option<(String, bool)>,
    /// The four steps' `@PG` fields (collate, fixmate, sort, markdup); `None` with `--no-PG`.
    pub pg: Option<[Vec<(String, String)>; 4]>,
    pub verify: bool,
    /// The total budget in bytes ([`crate::pipeline::memory_budget::MemoryBudget::of_machine`]:
    /// `--max-memory`, else the machine's); `None`: no limit.
    pub memory: Option<u64>,
    /// `-T PREFIX` for temporary files.
    pub tmp_prefix: Option<String>,
}

/// Name-hash bins of `samtools collate` (its `-n` default).
pub(crate) const COLLATE_BINS: usize = 64;

/// A record count with the wrapping sum of their [`record_hash`]es.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checksum {
    pub count: u64,
    pub sum: u64,
}

impl Checksum {
    pub fn add(&mut self, hash: u64) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(hash);
    }

    pub fn merge(self, other: Checksum) -> Checksum {
        Checksum { count: self.count + other.count, sum: self.sum.wrapping_add(other.sum) }
    }

    pub fn from_pair((count, sum): (u64, u64)) -> Checksum {
        Checksum { count, sum }
    }
}

#[inline]
fn mix(h: u64) -> u64 {
    // splitmix64's finaliser.
    let mut z = h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn absorb(mut h: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    h = (h ^ bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K).rotate_left(29);
    mix(h)
}

/// The 64-bit hash of what must survive the pipeline: name, READ1/READ2 bits, sequence
/// (packed, with its length) and qualities.
pub fn record_hash(r: &RecordRef<'_>) -> u64 {
    let h = (r.flag() & 0xc0) as u64 ^ ((r.l_seq() as u64) << 16);
    hash_body(absorb(h, r.read_name()), r)
}

/// [`record_hash`] without the name, for `--move-umi-to-tag` (which edits names).
pub fn record_hash_unnamed(r: &RecordRef<'_>) -> u64 {
    hash_body((r.flag() & 0xc0) as u64 ^ ((r.l_seq() as u64) << 16), r)
}

/// The hash `--verify` uses under `opts`.
pub fn verify_hash(md: &crate::ops::markdup::MarkdupOptions) -> RecordHashFn {
    if md.move_umi { record_hash_unnamed } else { record_hash }
}

/// A per-record hash for `--verify`.
pub type RecordHashFn = fn(&RecordRef<'_>) -> u64;

fn hash_body(mut h: u64, r: &RecordRef<'_>) -> u64 {
    let seq = r.seq_packed();
    h = absorb(h, seq);
    if r.l_seq() % 2 == 1 {
        // The unused low nibble of an odd-length sequence carries no information.
        h ^= (seq.last().copied().unwrap_or(0) & 0x0f) as u64;
    }
    absorb(h, r.qual())
}

/// The checksum of every record in `store`.
pub fn store_checksum(store: &RecordStore, hash: RecordHashFn) -> Checksum {
    store
        .batches
        .par_iter()
        .map(|b| {
            let mut c = Checksum::default();
            for r in b.iter() {
                c.add(hash(&r));
            }
            c
        })
        .reduce(Checksum::default, Checksum::merge)
}

pub(crate) fn add_pg(header: &mut Header, fields: &[(String, String)]) {
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    header.add_pg("samtools", &fields);
}

/// fixmate on a collated store, giving a new store in the same (collated) order and the checksum
/// of what `-r` removed (when `verify`), on the command's pool of `threads`.
///
/// Fixed records grow (MC, MQ, ms), so they go into new batches; holding the whole old store
/// beside the whole new one doubled the pipeline's peak memory. So templates are fixed in the
/// order their last record was read, and each input batch is freed as soon as every template
/// with a record in it is fixed: for input straight from an aligner (mates near each other) old
/// and new stores overlap by about a batch. The order of the output is still the collated one;
/// only where the records lie in memory differs.
pub(crate) fn fixmate_pass(
    mut store: RecordStore,
    header: &Header,
    fix: &Fix,
    verify: Option<RecordHashFn>,
    (threads, keep): (usize, usize),
) -> (RecordStore, Checksum) {
    let order = std::mem::take(&mut store.order);
    let templates = template_ranges(&store, &order);
    // Templates by the input batch of their last-read record.
    let mut by_batch: Vec<Vec<u32>> = vec![Vec::new(); store.batches.len()];
    for (t, range) in templates.iter().enumerate() {
        let last = order[range.clone()].iter().map(|h| h.batch).max().unwrap_or(0);
        by_batch[last as usize].push(t as u32);
    }
    let mut unfixed: Vec<usize> = store.batches.iter().map(Batch::len).collect();
    let mut placed: Vec<Option<RecordIdx>> = vec![None; order.len()];
    let mut fixed = RecordStore::default();
    let mut removed = Checksum::default();
    // About 6 MB of records a task: with 2048 templates (1.6 MB parts) the allocator kept 30 MB
    // more resident after the pass, and the pass was slower.
    const TEMPLATES_PER_TASK: usize = 8192;
    // An input batch holds about 5000 templates at -@ 2, fewer than a task: fixed batch by
    // batch, the pass ran on one thread (2.1 of its 2.7 s of CPU at 6 M reads). A wave of
    // batches, two a pool thread, is fixed at once, and its input batches freed after it.
    let wave = 2 * threads.max(1);
    for ready_wave in by_batch.chunks(wave) {
        let tasks: Vec<&[u32]> =
            ready_wave.iter().flat_map(|ready| ready.chunks(TEMPLATES_PER_TASK)).collect();
        let parts: Vec<(Batch, Vec<u32>, Checksum)> = tasks
            .par_iter()
            .map(|ts| {
                // The records of these templates back to back, and the output position of each.
                let ranges = ts.iter().map(|&t| templates[t as usize].clone());
                let positions: Vec<u32> = ranges.clone().flatten().map(|p| p as u32).collect();
                let handles: Vec<RecordIdx> =
                    positions.iter().map(|&p| order[p as usize]).collect();
                // The records lie anywhere in the arena: ask for each a few ahead.
                let recs: Vec<RecordRef<'_>> = handles
                    .iter()
                    .enumerate()
                    .map(|(k, &h)| {
                        store.prefetch_ahead(&handles, k);
                        store.get(h)
                    })
                    .collect();
                let bytes: usize = recs.iter().map(|r| r.bytes().len() + 4 + 32).sum();
                // Input pieces whose templates are all fixed are handed back below, and their
                // pages (already faulted in) hold the output: fresh pages cost a fault and a
                // clear each (`clear_page_erms` was 13 % of the pipeline's samples).
                let mut batch = Batch {
                    data: crate::io::recycle::take(bytes),
                    starts: Vec::with_capacity(recs.len()),
                };
                crate::alloc::advise_huge_pages(&mut batch.data);
                let mut kept = Vec::with_capacity(recs.len());
                let mut removed = Checksum::default();
                let mut next = positions.iter();
                fix_templates(&recs, header, fix, |b, keep| {
                    let at = next.next().copied().unwrap_or(u32::MAX);
                    if keep {
                        kept.push(at);
                        batch.push(b);
                    } else if let Some(hash) = verify {
                        removed.add(hash(&RecordRef::new(b)));
                    }
                });
                crate::alloc::release_unused_tail(&mut batch.data);
                (batch, kept, removed)
            })
            .collect();
        for (batch, kept, c) in parts {
            let b = fixed.batches.len() as u32;
            for (record, at) in kept.into_iter().enumerate() {
                placed[at as usize] = Some(RecordIdx { batch: b, record: record as u32 });
            }
            fixed.batches.push(batch);
            removed = removed.merge(c);
        }
        for &t in ready_wave.iter().flatten() {
            for h in &order[templates[t as usize].clone()] {
                let left = &mut unfixed[h.batch as usize];
                *left -= 1;
                if *left == 0 {
                    crate::io::recycle::give_within(
                        std::mem::take(&mut store.batches[h.batch as usize]).data,
                        keep,
                    );
                }
            }
        }
    }
    fixed.order = placed.into_iter().flatten().collect();
    (fixed, removed)
}

/// The position ranges in `order` of each template (a run of records with one name). A template
/// starts where a name differs from the one before it; each task looks for starts in its own
/// slice of `order`, looking one record back across its first edge. Done on one thread, this walk
/// through the arena in collated order took 80 ns a read at 6 M reads (42–90 at 0.5 M).
fn template_ranges(store: &RecordStore, order: &[RecordIdx]) -> Vec<std::ops::Range<usize>> {
    const POSITIONS_PER_TASK: usize = 1 << 16;
    let starts: Vec<usize> = order
        .par_chunks(POSITIONS_PER_TASK)
        .enumerate()
        .flat_map_iter(|(c, chunk)| {
            let first = c * POSITIONS_PER_TASK;
            let mut before = first.checked_sub(1).map(|p| store.get(order[p]).read_name());
            let mut starts = Vec::with_capacity(chunk.len() / 2 + 1);
            for (k, &h) in chunk.iter().enumerate() {
                store.prefetch_ahead(order, first + k);
                let name = store.get(h).read_name();
                if before != Some(name) {
                    starts.push(first + k);
                }
                before = Some(name);
            }
            starts
        })
        .collect();
    let ends = starts.iter().skip(1).copied().chain(std::iter::once(order.len()));
    starts.iter().zip(ends).map(|(&start, end)| start..end).collect()
}

/// Runs the pipeline on the current pool.
pub fn run(opts: PipelineOptions) -> Result<(), Error> {
    if std::env::var_os("MDSAM_SPILL_REPORT").is_some() {
        eprintln!("[markdup-pipeline] memory budget: {:?} bytes", opts.memory);
    }
    let md = &opts.markdup;
    let threads = md.threads;
    // Freed memory goes back to the OS at once: every record stays in memory, and memory freed
    // by one step (read-ahead pieces, collate's bins, fixmate's input batches) was not reused by
    // the next when kept, so keeping it only grew the resident set (peak 355 MB against 286 MB
    // on 0.4 M reads, at the same speed).
    crate::alloc::purge_freed_memory();
    let piece = match opts.memory {
        Some(budget) => crate::pipeline::sort::piece_bytes(budget, threads),
        None => open::PIECE_BYTES_PER_THREAD * threads.max(1),
    };
    // The FASTA given (--reference) decodes a CRAM input as it encodes a CRAM output.
    let reading = InputSpec::new(threads, md.spec.cram.reference.as_deref());
    let Opened { mut reader, header: input_header, .. } =
        open::open_with_piece(&md.input, reading, piece).map_err(|e| {
            let why = match &e {
                Error::File { what, .. } => what.clone(),
                other => other.to_string(),
            };
            Error::Bare(format!(
                "samtools markdup-pipeline: error, failed to open \"{}\" for input: {why}",
                md.input
            ))
        })?;
    profile::describe(
        RunInfo::staged(
            md.threads,
            md.spec.level,
            (&md.input, &md.output),
            (reader.format_name(), md.spec.format.name()),
        )
        .budgeted(opts.memory),
    );
    // Load: one inflate, one parse; past the budget, into collate's bins.
    let mut store = RecordStore::default();
    let mut namer = TempNamer::for_sort(opts.tmp_prefix.as_deref(), &md.output);
    let mut bins: Option<BinFiles> = None;
    let (mut used, mut parts) = (0usize, 0usize);
    let mut input_sum = Checksum::default();
    let hash = verify_hash(&md.md);
    let large_refs = input_header.has_very_large_references();
    while let Some((batches, warnings)) = reader
        .read_batches(&md.input)
        .map_err(|e| Error::Bare(format!("samtools markdup-pipeline: error reading input: {e}")))?
    {
        for w in warnings {
            eprintln!("{w}");
        }
        for b in batches {
            used += batch_cost(&b);
            store.push_batch(b);
        }
        // Spill files are BAM, which cannot hold positions beyond 32 bits: with references that
        // long everything stays in memory.
        if !large_refs && spill::over_budget(used, opts.memory, threads) {
            if opts.verify {
                input_sum = input_sum.merge(store_checksum(&store, hash));
            }
            let budget = opts.memory.unwrap_or(0);
            let files = match bins.as_mut() {
                Some(f) => f,
                None => bins.insert(spill::bins(budget, threads, &mut namer)?),
            };
            // The spilled store's pieces are kept for the next reads, as `sort` keeps them.
            files.spill(&mut store, data_budget(budget, threads))?;
            parts += 1;
            used = 0;
        } else if let (Some(budget), Some(_)) = (opts.memory, &bins) {
            // Kept pieces and the store together stay within the data budget.
            crate::io::recycle::trim_to(data_budget(budget, threads).saturating_sub(used));
        }
    }
    drop(reader);
    if opts.verify {
        input_sum = input_sum.merge(store_checksum(&store, hash));
    }
    let mut header = input_header;
    // Collate.
    header.update_hd(&[("SO", "unsorted"), ("GO", "query")], &[]);
    if let Some(pg) = &opts.pg {
        add_pg(&mut header, &pg[0]);
    }
    if let (Some(mut files), Some(budget)) = (bins, opts.memory) {
        // The bins are read back into these pieces.
        files.spill(&mut store, data_budget(budget, threads))?;
        drop(store);
        let (verify, output) = (opts.verify, opts.markdup.output.clone());
        let done = spill::run(files, header, opts, &mut namer, budget, parts + 1)?;
        if verify {
            return check(input_sum, done.written, done.fix_removed, done.md_removed, &output);
        }
        return Ok(());
    }
    {
        let _phase = profile::phase(Phase::Collate);
        profile::add(Phase::Collate, Counter::Records, store.len() as u64);
        profile::add(Phase::Collate, Counter::RandomAccesses, store.len() as u64);
        store.order = collated_order(&store, COLLATE_BINS, None);
    }
    // fixmate -m.
    if let Some(pg) = &opts.pg {
        add_pg(&mut header, &pg[1]);
    }
    let (mut store, fix_removed) = {
        let _phase = profile::phase(Phase::Pair);
        profile::add(Phase::Pair, Counter::Records, store.len() as u64);
        // Records are visited in collated order: one jump through a handle each.
        profile::add(Phase::Pair, Counter::RandomAccesses, store.len() as u64);
        // The input pieces fixed hold the fixed copies: kept as the budget allows.
        let keep = opts.memory.map_or(MAX_KEPT_BYTES, kept_for_budget);
        fixmate_pass(store, &header, &opts.fix, opts.verify.then_some(hash), (threads, keep))
    };
    // Coordinate sort.
    let sort_phase = profile::phase(Phase::Sort);
    profile::add(Phase::Sort, Counter::Records, store.len() as u64);
    profile::add(Phase::Sort, Counter::RandomAccesses, store.len() as u64);
    let placed = store.batches.par_iter().any(|b| b.iter().any(|r| r.ref_id() >= 0));
    store.order = sorted_order(&store, &header, SortOrder::Coordinate, None)?;
    drop(sort_phase);
    SortOrder::Coordinate.update_header(&mut header, placed);
    if let Some(pg) = &opts.pg {
        add_pg(&mut header, &pg[2]);
    }
    // markdup.
    if let Some(pg) = &opts.pg {
        add_pg(&mut header, &pg[3]);
    }
    let mut md_opts = opts.markdup;
    let groups = markdup_read_groups(&mut md_opts, &header);
    let sink = || create_output(&md_opts, opts.index.as_ref(), &header);
    let hash: &crate::pipeline::markdup::RecordHash = &move |r| hash(r);
    let marked =
        mark(&store, &header, groups.as_ref(), &md_opts, sink, opts.verify.then_some(hash))?;
    if opts.verify {
        let written = Checksum::from_pair(marked.written);
        let md_removed = Checksum::from_pair(marked.removed);
        return check(input_sum, written, fix_removed, md_removed, &md_opts.output);
    }
    Ok(())
}

/// `--verify`: every input record is written or removed by an `-r`; else the output is deleted.
/// The read groups markdup matches on (`--use-read-groups`), turned off when the header has none.
fn markdup_read_groups(md_opts: &mut MarkdupOptions, header: &Header) -> Option<ReadGroups> {
    let groups = if md_opts.md.read_groups { read_group_ids(header) } else { None };
    if groups.is_none() {
        md_opts.md.read_groups = false;
    }
    groups
}

fn check(
    input_sum: Checksum,
    written: Checksum,
    fix_removed: Checksum,
    md_removed: Checksum,
    output: &str,
) -> Result<(), Error> {
    let accounted = written.merge(fix_removed).merge(md_removed);
    if accounted != input_sum {
        if output != "-" {
            let _ = std::fs::remove_file(output);
        }
        return Err(Error::Bare(format!(
            "samtools markdup-pipeline: verify FAILED: {} input records (checksum {:016x}), \
             {} written + {} removed by fixmate -r + {} removed by markdup -r (checksum {:016x})",
            input_sum.count,
            input_sum.sum,
            written.count,
            fix_removed.count,
            md_removed.count,
            accounted.sum
        )));
    }
    eprintln!(
        "[markdup-pipeline] verify OK: {} input records = {} written + {} removed by fixmate -r + {} removed by markdup -r",
        input_sum.count, written.count, fix_removed.count, md_removed.count
    );
    Ok(())
}

/// Runs the pipeline on a pool of `threads` threads.
pub fn run_on_pool(opts: PipelineOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(opts.markdup.threads).install(|| run(opts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal BAM record: name, flag, sequence (4-bit codes) and qualities.
    fn rec(name: &[u8], flag: u16, seq: &[u8], qual: &[u8]) -> Vec<u8> {
        let r = crate::record::build::RecordBuilder::new(name).tid(-1).pos(-1).mate(-1, -1);
        r.flag(flag).seq_codes(seq).qual(qual).build()
    }

    fn store(recs: &[Vec<u8>]) -> RecordStore {
        let mut batch = Batch::default();
        for r in recs {
            batch.push(r);
        }
        let mut s = RecordStore::default();
        s.push_batch(batch);
        s
    }

    fn sample() -> Vec<Vec<u8>> {
        vec![
            rec(b"r1", 0x41, &[1, 2, 4, 8, 1], &[30, 31, 32, 33, 34]),
            rec(b"r1", 0x81, &[8, 4, 2, 1, 1], &[20, 21, 22, 23, 24]),
            rec(b"r2", 0x41, &[1, 1, 1, 1], &[10, 10, 10, 10]),
        ]
    }

    fn store_checksum_of(s: &RecordStore) -> Checksum {
        store_checksum(s, record_hash)
    }

    #[test]
    fn checksum_ignores_order_and_other_fields() {
        let a = store(&sample());
        let mut reordered = sample();
        reordered.reverse();
        // Fields outside the checksum (MAPQ, position, other flag bits) may change.
        reordered[0][9] = 60;
        reordered[0][4..8].copy_from_slice(&1234i32.to_le_bytes());
        reordered[0][14] |= 0x04;
        assert_eq!(store_checksum(&a, record_hash), store_checksum_of(&store(&reordered)));
        assert_eq!(store_checksum(&a, record_hash).count, 3);
    }

    #[test]
    fn checksum_catches_corruption_and_loss() {
        let good = store_checksum_of(&store(&sample()));
        let name_at = 32;
        let seq_at = 32 + 3;
        let qual_at = seq_at + 3;
        for (at, what) in [(name_at, "name"), (seq_at, "sequence"), (qual_at + 2, "quality")] {
            let mut bad = sample();
            bad[0][at] ^= 0x01;
            assert_ne!(good, store_checksum_of(&store(&bad)), "{what} corruption not caught");
        }
        // READ1 ↔ READ2 swapped.
        let mut bad = sample();
        bad[0][14] = 0x81;
        assert_ne!(good, store_checksum_of(&store(&bad)));
        // A lost record or one record written twice in place of another.
        let mut lost = sample();
        lost.pop();
        assert_ne!(good, store_checksum_of(&store(&lost)));
        let mut dup = sample();
        dup[2] = dup[0].clone();
        assert_ne!(good, store_checksum_of(&store(&dup)));
    }

    #[test]
    fn fixmate_pass_keeps_the_collated_order_across_input_batches() {
        // Mates in different input batches, and an order that is not the arena's.
        let batches: [&[(&[u8], u16)]; 3] = [
            &[(b"a", 0x4d), (b"b", 0x4d)],
            &[(b"c", 0x4d), (b"d", 0x4d), (b"a", 0x8d)],
            &[(b"b", 0x8d), (b"c", 0x8d), (b"d", 0x8d)],
        ];
        let mut s = RecordStore::default();
        for records in batches {
            let mut batch = Batch::default();
            for &(name, flag) in records {
                batch.push(&rec(name, flag, &[1, 2], &[30, 30]));
            }
            s.push_batch(batch);
        }
        let at = |batch, record| RecordIdx { batch, record };
        s.order =
            vec![at(1, 1), at(2, 2), at(0, 0), at(1, 2), at(1, 0), at(2, 1), at(0, 1), at(2, 0)];
        let fix = Fix { mate_score: true, ..Fix::default() };
        let (fixed, removed) = fixmate_pass(s, &Header::default(), &fix, None, (2, 1 << 20));
        let seen: Vec<(Vec<u8>, u16)> = fixed
            .order
            .iter()
            .map(|&h| (fixed.get(h).read_name().to_vec(), fixed.get(h).flag() & 0xc0))
            .collect();
        let want: Vec<(Vec<u8>, u16)> = [b"d", b"d", b"a", b"a", b"c", b"c", b"b", b"b"]
            .iter()
            .zip([0x40, 0x80].iter().cycle())
            .map(|(n, &f)| (n.to_vec(), f))
            .collect();
        assert_eq!(seen, want);
        assert_eq!(removed.count, 0);
    }
}
