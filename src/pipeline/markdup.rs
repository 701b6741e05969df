//! `markdup`: parse → key → decide → write.
//!
//! The command streams, as samtools markdup does ([`StreamMarker`]): each group of records read
//! (inflated and parsed on the pool while the previous group is processed) is keyed on the pool,
//! decided by samtools' single pass holding only the records it can still look at, and the
//! records it releases are finalised, encoded and written in parallel chunks. Peak memory does
//! not grow with the input: held in memory, 6 M reads had taken 2.8 GB and spent as much time
//! in the kernel faulting pages in as in user code.
//!
//! `markdup-pipeline`, whose records are all in memory anyway, uses [`mark`] instead:
//! - *key*: [`ReadInfo`] per record on the pool (keys, scores, name coordinates);
//! - *decide*: [`decide::Decider`]: samtools' single pass (its hash/window semantics, including
//!   window deletions and duplicate chains, make it order-dependent), replayed in independent
//!   windows on the pool, a block of keys at a time;
//! - *write*: records finalised and encoded in parallel chunks, written in input order.
//!
//! Output bytes never depend on the thread count.

mod stream;
mod write_bam;

pub use stream::{StreamMarker, Tally};

use crate::error::Error;
use crate::io::input_spec::InputSpec;
use crate::io::open::{self, Opened};
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::io::temp_names::TempNamer;
use crate::ops::markdup::decide::{self, Outcome};
use crate::ops::markdup::metrics;
use crate::ops::markdup::stats::{self, Piece};
use crate::ops::markdup::{self as md, Barcode, MarkdupOptions as Md, ReadInfo};
use crate::profile::{self, Counter, Phase, RunInfo};
use crate::record::header::line_field;
use crate::record::{Header, RecordRef, RecordStore};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;

pub struct MarkdupOptions {
    pub input: String,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// `@PG` fields (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
    /// The command line (`COMMAND:` in the stats).
    pub command: String,
    /// `-s`
    pub stats: bool,
    /// `-f`
    pub stats_file: Option<String>,
    pub json: bool,
    /// `--metrics FILE` (mdsam addition): Picard `DuplicationMetrics` for MultiQC and co.
    pub metrics: Option<String>,
    /// `--write-index`: (index path, BAI?), the output path stripped of any `##idx##` part.
    pub index: Option<(String, bool)>,
    /// `-T PREFIX`: where `-S`'s temporary file goes.
    pub tmp_prefix: Option<String>,
    pub md: Md,
}

const CHUNK: usize = 4096;
/// Compressed bytes a thread inflates per read-ahead piece when streaming: three groups are in
/// memory at once (being read, queued, being marked), each held twice (as read, and keyed).
const STREAM_PIECE_BYTES_PER_THREAD: usize = 1 << 20;
/// Records keyed and handed to the decider at a time (8 windows' worth at the least size, so
/// each block completes several windows to decide in parallel).
const KEY_BLOCK: usize = 8 * decide::WINDOW_MIN;

pub(crate) fn say(msg: &str) -> Error {
    Error::Bare(format!("samtools markdup: {msg}"))
}

/// `@RG` IDs in header order → 1-based index; `None` (after samtools' messages) when unusable.
/// Read-group IDs → index, and the IDs in header order.
pub type ReadGroups = (HashMap<Vec<u8>, u32>, Vec<Vec<u8>>);

pub fn read_group_ids(header: &crate::record::Header) -> Option<ReadGroups> {
    let names: Vec<Vec<u8>> = header
        .lines()
        .filter(|l| l.starts_with(b"@RG\t"))
        .filter_map(|l| line_field(l, b"ID").map(<[u8]>::to_vec))
        .collect();
    let mut ids = HashMap::new();
    if names.is_empty() {
        eprint!("samtools markdup: error, no read groups found.\n\n");
        eprint!("samtools markdup: error, read groups will not be used.\n\n");
        return None;
    }
    for (i, n) in names.iter().enumerate() {
        if ids.insert(n.clone(), i as u32 + 1).is_some() {
            eprint!(
                "samtools markdup: error, duplicate read group ids {}.Read groups will not be used\n\n",
                String::from_utf8_lossy(n)
            );
            eprint!("samtools markdup: error, read groups will not be used.\n\n");
            return None;
        }
    }
    Some((ids, names))
}

/// Runs `markdup` on `pool`, from one of its threads.
pub fn run(mut opts: MarkdupOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    crate::alloc::keep_freed_memory();
    // Parse phase.
    let piece = STREAM_PIECE_BYTES_PER_THREAD * opts.threads.max(1);
    // The FASTA given (-T, --reference) decodes a CRAM input as it encodes a CRAM output.
    let reading = InputSpec::new(opts.threads, opts.spec.cram.reference.as_deref());
    let Opened { mut reader, header: input_header, .. } =
        open::open_with_piece(&opts.input, reading, piece).map_err(|e| {
            let why = match &e {
                Error::File { what, .. } => what.clone(),
                other => other.to_string(),
            };
            say(&format!("error, failed to open \"{}\" for input: {why}", opts.input))
        })?;
    // htslib parses a BAM's header text when markdup looks up `SO` (and goes on without one),
    // then again when it adds `@PG`, which it then leaves out.
    let sq_error = input_header.sq_error();
    if let Some(why) = &sq_error {
        eprintln!("{why}");
    }
    if sq_error.is_none() && input_header.sort_order() == Some(b"queryname") {
        return Err(say("error, queryname sorted, must be sorted by coordinate.\n"));
    }
    let mut header = input_header.clone();
    if let Some(why) = sq_error.as_ref().filter(|_| opts.pg.is_some()) {
        eprintln!("{why}\nsamtools markdup: warning, unable to add @PG line to header.\n");
    }
    if let Some(pg) = opts.pg.as_ref().filter(|_| sq_error.is_none()) {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    let groups = if opts.md.read_groups { read_group_ids(&header) } else { None };
    if groups.is_none() {
        opts.md.read_groups = false;
    }
    profile::describe(RunInfo::streamed(
        opts.threads,
        opts.spec.level,
        (&opts.input, &opts.output),
        (reader.format_name(), opts.spec.format.name()),
    ));
    let create_final = || create_output(&opts, opts.index.as_ref(), &header);
    if opts.md.supp && header.has_very_large_references() {
        // `-S`'s temporary file is BAM, which cannot hold positions past 2^31: such inputs are
        // marked in memory.
        return run_in_memory(&opts, reader, &header, groups.as_ref(), pool, create_final);
    }
    let mut namer = TempNamer::for_markdup(opts.tmp_prefix.as_deref(), &opts.output);
    let mut marker = StreamMarker::start(
        &opts.md,
        groups.as_ref(),
        &header,
        opts.threads,
        None,
        &mut namer,
        &create_final,
    )?;
    // An error of the marking or writing is returned as it is; one of the reading gets
    // samtools' wording.
    let mut failure = None;
    let read = crate::pipeline::prefetch::for_each_batches(&mut reader, &opts.input, pool, |bs| {
        bs.iter().try_for_each(|b| marker.push_batch(b)).map_err(|e| {
            failure = Some(e);
            Error::Failed
        })
    });
    if let Some(e) = failure {
        return Err(e);
    }
    read.map_err(|e| say(&format!("error reading input: {e}")))?;
    let (fin, _) = marker.finish(&create_final)?;
    report(&opts, &header, fin.opt_warnings, fin.bc_warnings, &fin.stats, groups.as_ref())
}

/// Opens markdup's output, with its index when `--write-index` asked for one.
pub(crate) fn create_output(
    opts: &MarkdupOptions,
    index: Option<&(String, bool)>,
    header: &Header,
) -> Result<RecordSink, Error> {
    let mut sink = RecordSink::create(&opts.output, &opts.spec, opts.threads, header, true)?;
    if let Some((path, bai)) = index {
        sink.write_index(path, *bai, header)?;
    }
    Ok(sink)
}

/// `markdup` with every record in memory (decided in parallel windows), then written.
fn run_in_memory(
    opts: &MarkdupOptions,
    mut reader: crate::io::open::RecordReader,
    header: &Header,
    groups: Option<&ReadGroups>,
    pool: &rayon::ThreadPool,
    create_sink: impl FnOnce() -> Result<RecordSink, Error>,
) -> Result<(), Error> {
    let mut store = RecordStore::default();
    let mut marker = Marker::new(opts, groups);
    // The records are keyed and decided as they arrive, while the next ones are read.
    crate::pipeline::prefetch::for_each_batches(&mut reader, &opts.input, pool, |batches| {
        for b in batches {
            store.push_batch(b);
        }
        marker.advance(&store);
        Ok(())
    })
    .map_err(|e| say(&format!("error reading input: {e}")))?;
    finish_marking(&store, marker, header, create_sink, None).map(|_| ())
}

/// What [`mark`] wrote and dropped, each as (records, sum of `hash` over them), when asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marked {
    pub written: (u64, u64),
    pub removed: (u64, u64),
}

impl Marked {
    /// Adds the counts and hash sums of `other` (a chunk's) to these.
    pub fn merge(&mut self, other: &Marked) {
        self.written.0 += other.written.0;
        self.written.1 = self.written.1.wrapping_add(other.written.1);
        self.removed.0 += other.removed.0;
        self.removed.1 = self.removed.1.wrapping_add(other.removed.1);
    }
}

/// Counts `r` into `acc` (records, hash sum) when `--verify` asked for a hash.
fn count_hashed(acc: &mut (u64, u64), hash: Option<&RecordHash>, r: &RecordRef<'_>) {
    if let Some(h) = hash {
        acc.0 += 1;
        acc.1 = acc.1.wrapping_add(h(r));
    }
}

/// The per-record hash [`mark`] can sum over the records it writes and drops (`--verify`).
pub type RecordHash = dyn Fn(&RecordRef<'_>) -> u64 + Sync;

/// Markdup's key and decide phases over the records of a store in its order (coordinate order),
/// fed as the records arrive ([`Marker::advance`]): the keys of each new block are computed on
/// the pool and handed to the decider, which decides the windows they complete.
pub struct Marker<'o> {
    opts: &'o MarkdupOptions,
    groups: Option<&'o ReadGroups>,
    decider: decide::Decider<'o>,
    /// Records keyed so far (the first of `store.order`).
    keyed: usize,
}

impl<'o> Marker<'o> {
    /// `groups` from [`read_group_ids`] when read groups are used.
    pub fn new(opts: &'o MarkdupOptions, groups: Option<&'o ReadGroups>) -> Self {
        let n_groups = groups.map_or(0, |g| g.1.len());
        // Key and decide a block at a time: the decider keeps only the infos its open windows
        // need (the whole input's were 160 bytes a record, the largest thing in memory after the
        // records).
        let decider = decide::Decider::new(&opts.md, n_groups, decide::WINDOW_MIN);
        Marker { opts, groups, decider, keyed: 0 }
    }

    /// Keys and decides the records of `store` not seen yet.
    pub fn advance(&mut self, store: &RecordStore) {
        let name = |i: usize| store.get(store.order[i]).read_name();
        self.decider.expect_records(store.len());
        while self.keyed < store.len() {
            let range = self.keyed..(self.keyed + KEY_BLOCK).min(store.len());
            self.keyed = range.end;
            // The infos go straight into the decider's buffer, after the ones it still holds.
            let infos = self.decider.buffer();
            let new = infos.len();
            {
                let _key = profile::phase(Phase::Key);
                // Each record is reached through its handle: in coordinate order after a sort,
                // a jump anywhere in the arena.
                profile::add(Phase::Key, Counter::Records, range.len() as u64);
                profile::add(Phase::Key, Counter::RandomAccesses, range.len() as u64);
                infos_into(store, range, self.groups, &self.opts.md, infos);
            }
            let _decide = profile::phase(Phase::Decide);
            if profile::on() {
                // One hash-table lookup per key: a single key per examined read, a pair key as
                // well for a read with a mapped mate.
                let new = &infos[new..];
                let lookups: u64 =
                    new.iter().filter(|i| i.examined).map(|i| if i.paired { 2 } else { 1 }).sum();
                profile::add(Phase::Decide, Counter::Records, new.len() as u64);
                profile::add(Phase::Decide, Counter::RandomAccesses, lookups);
            }
            self.decider.decide_added(&name);
        }
    }
}

/// Appends the [`ReadInfo`]s of the records `range` of `store`'s order to `infos`, on the pool.
fn infos_into(
    store: &RecordStore,
    range: std::ops::Range<usize>,
    groups: Option<&ReadGroups>,
    md: &Md,
    infos: &mut Vec<ReadInfo>,
) {
    let order = &store.order[range];
    infos.par_extend(
        order
            .par_iter()
            .enumerate()
            .map(|(k, &idx)| {
                store.prefetch_ahead(order, k);
                let r = store.get(idx);
                let rg = match groups {
                    Some((ids, _)) => md::read_group_index(&r, ids),
                    None => 0,
                };
                ReadInfo::compute(&r, md, rg)
            })
            .with_min_len(1024),
    )
}

/// Markdup's key, decide and write phases on the records of `store` in its current order
/// (coordinate order), with `header` already carrying the new `@PG`; `groups` from
/// [`read_group_ids`] when read groups are used. Opens the output with `create_sink` once the
/// decisions are made, writes, then prints the warnings and stats. With `hash`, also sums it over
/// written and removed records.
pub fn mark(
    store: &RecordStore,
    header: &Header,
    groups: Option<&ReadGroups>,
    opts: &MarkdupOptions,
    create_sink: impl FnOnce() -> Result<RecordSink, Error>,
    hash: Option<&RecordHash>,
) -> Result<Marked, Error> {
    finish_marking(store, Marker::new(opts, groups), header, create_sink, hash)
}

/// [`mark`] with `marker` fed some of `store`'s records already: the rest, the last decisions,
/// then the write.
pub fn finish_marking(
    store: &RecordStore,
    mut marker: Marker<'_>,
    header: &Header,
    create_sink: impl FnOnce() -> Result<RecordSink, Error>,
    hash: Option<&RecordHash>,
) -> Result<Marked, Error> {
    marker.advance(store);
    let Marker { opts, groups, decider, .. } = marker;
    let md = &opts.md;
    let name = |i: usize| store.get(store.order[i]).read_name();
    let umi = match (&md.barcode, md.move_umi) {
        (Barcode::Regex(rx), true) => Some(rx),
        _ => None,
    };
    let pass2_name = |i: usize, eof: bool| -> Vec<u8> {
        let r = store.get(store.order[i]);
        match (umi, eof) {
            (Some(rx), true) => {
                let mut b = r.bytes().to_vec();
                md::move_umi(&mut b, rx, md.umi_sep);
                RecordRef::new(&b).read_name().to_vec()
            }
            _ => r.read_name().to_vec(),
        }
    };
    let decide_phase = profile::phase(Phase::Decide);
    let mut log = |line: String| eprint!("{line}");
    let flag = |i: usize| store.get(store.order[i]).flag();
    let decision = decider
        .finish(
            &name,
            &pass2_name,
            &flag,
            &|| {
                let mut all = Vec::with_capacity(store.len());
                infos_into(store, 0..store.len(), groups, md, &mut all);
                all
            },
            &mut log,
        )
        .map_err(|f| if f.message.is_empty() { Error::Failed } else { say(&f.message) })?;
    drop(decide_phase);
    let _write_phase = profile::phase(Phase::Write);
    profile::add(Phase::Write, Counter::Records, store.len() as u64);
    let mut sink = create_sink()?;
    let format = sink.format();
    let outcomes: &[Outcome] = &decision.outcomes;
    let name32 = |i: u32| store.get(store.order[i as usize]).read_name();
    if format == crate::io::format::OutputFormat::Bam {
        let f = write_bam::Finaliser { store, outcomes, md, name: &name32, umi, hash };
        let marked = write_bam::write_all(&f, &mut sink, opts.threads)?;
        sink.finish()?;
        report(opts, header, decision.opt_warnings, decision.bc_warnings, &decision.stats, groups)?;
        return Ok(marked);
    }
    let n = store.len();
    let chunks: Vec<usize> = (0..n.div_ceil(CHUNK)).collect();
    let mut marked = Marked::default();
    // Two chunks a worker per wave: the deflate stage compresses one wave while the next is
    // encoded, so bigger waves only held more of the output in memory (64 a worker held all of
    // a 0.4 M-read output, 80 MiB; 4 a worker held 17 MB more than 2 at the same speed).
    for wave in chunks.chunks(2 * opts.threads.max(1)) {
        let outs: Vec<(Encoded, Marked)> = wave
            .par_iter()
            .map(|&c| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(n);
                // Sized up front, in a recycled buffer: the last wave's, already in memory.
                let bytes: usize =
                    range.clone().map(|i| store.get(store.order[i]).bytes().len()).sum();
                let mut out = Encoded::sized_for(bytes, range.len(), format);
                let mut m = Marked::default();
                for i in range {
                    store.prefetch_ahead(&store.order, i);
                    let r = store.get(store.order[i]);
                    let o = &outcomes[i];
                    if !md::is_written(o, r.flag(), md) {
                        count_hashed(&mut m.removed, hash, &r);
                        continue;
                    }
                    if md::is_unchanged(o, r.flag(), md) {
                        out.push_record(r.bytes(), header, format);
                        count_hashed(&mut m.written, hash, &r);
                    } else {
                        let b = md::finalize(r.bytes(), o, md, &name32, umi);
                        out.push_record(&b, header, format);
                        count_hashed(&mut m.written, hash, &RecordRef::new(&b));
                    }
                }
                (out, m)
            })
            .collect();
        for (o, m) in outs {
            sink.write_owned(o)?;
            marked.merge(&m);
        }
    }
    sink.finish()?;
    report(opts, header, decision.opt_warnings, decision.bc_warnings, &decision.stats, groups)?;
    Ok(marked)
}

/// After the output is written: the warning counts, then the stats (`-s`, `-f`, `--json`) and
/// the metrics (`--metrics`).
pub fn report(
    opts: &MarkdupOptions,
    header: &Header,
    opt_warnings: i64,
    bc_warnings: i64,
    stats: &[stats::Stats],
    groups: Option<&ReadGroups>,
) -> Result<(), Error> {
    if opt_warnings > 0 {
        eprint!(
            "samtools markdup: warning, number of failed attempts to get coordinates from read names = {opt_warnings}\n\n"
        );
    }
    if bc_warnings > 0 {
        eprint!(
            "samtools markdup: warning, number of failed attempts to get barcodes = {bc_warnings}\n\n"
        );
    }
    if opts.stats {
        write_stats(opts, stats, groups.map(|g| g.1.as_slice()))?;
    }
    if let Some(path) = &opts.metrics {
        write_metrics(path, opts, header, stats, groups.map(|g| g.1.as_slice()))?;
    }
    Ok(())
}

/// `--metrics FILE`: one row per library (`LB` of the read groups), written atomically.
fn write_metrics(
    path: &str,
    opts: &MarkdupOptions,
    header: &Header,
    all: &[stats::Stats],
    names: Option<&[Vec<u8>]>,
) -> Result<(), Error> {
    let library_of = |id: &[u8]| -> Option<String> {
        header
            .lines()
            .filter(|l| l.starts_with(b"@RG\t"))
            .find(|l| line_field(l, b"ID") == Some(id))
            .and_then(|l| line_field(l, b"LB"))
            .map(|lb| String::from_utf8_lossy(lb).into_owned())
    };
    let rows = match names {
        Some(names) => {
            let groups: Vec<_> =
                names.iter().zip(&all[1..]).map(|(id, s)| (library_of(id), *s)).collect();
            metrics::by_library(&all[0], &groups)
        }
        None => {
            // Without --use-read-groups all reads are one row, named by the library when every
            // read group agrees on one.
            let mut libraries: Vec<Option<String>> = header
                .lines()
                .filter(|l| l.starts_with(b"@RG\t"))
                .map(|l| line_field(l, b"LB").map(|lb| String::from_utf8_lossy(lb).into_owned()))
                .collect();
            libraries.dedup();
            let name = match libraries.as_slice() {
                [Some(one)] => one.clone(),
                _ => metrics::UNKNOWN_LIBRARY.to_string(),
            };
            vec![(name, all[0])]
        }
    };
    let text = metrics::format_duplication_metrics(&opts.command, &rows);
    crate::io::output::write_file(path, text.as_bytes())
        .map_err(|e| Error::file(path, format!("could not write metrics: {e}")))
}

fn write_stats(
    opts: &MarkdupOptions,
    all: &[stats::Stats],
    names: Option<&[Vec<u8>]>,
) -> Result<(), Error> {
    let mut total = all[0];
    if names.is_some() {
        for s in &all[1..] {
            total.add(s);
        }
    }
    let pieces = stats::report(&opts.command, &total, names.map(|n| (all, n)), opts.json);
    let mut file = match &opts.stats_file {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Some(std::io::BufWriter::new(f)),
            Err(_) => {
                eprint!("samtools markdup: warning, cannot write stats to {p}.\n\n");
                None
            }
        },
        None => None,
    };
    for p in pieces {
        match p {
            Piece::Warning(w) => eprintln!("samtools markdup: {w}"),
            Piece::Stats(t) => match file.as_mut() {
                Some(f) => f
                    .write_all(t.as_bytes())
                    .map_err(|e| Error::io(opts.stats_file.clone().unwrap_or_default(), e))?,
                None => eprint!("{t}"),
            },
        }
    }
    if let Some(mut f) = file {
        f.flush().map_err(|e| Error::io(opts.stats_file.clone().unwrap_or_default(), e))?;
    }
    Ok(())
}

/// Runs `markdup` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: MarkdupOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| run(opts, &pool))
}
