//! markdup over records that arrive in coordinate order, holding only what samtools' single pass
//! can still look at: `markdup` itself (read as it streams, as samtools reads) and the spilling
//! `markdup-pipeline` (fed by the merge of its sorted runs).
//!
//! Each block of records is keyed on the pool, pushed through the streaming decider
//! ([`Streamer`]), and the records it releases are finalised and encoded in parallel chunks and
//! written in order. With `-S` the first pass goes to a temporary BAM and a second pass over it
//! marks the supplementary and mate-unmapped relatives of duplicates from the decider's table,
//! as samtools markdup does with its own temporary file.
//!
//! Memory: the block being keyed, the decider's window and the write stage's queue; it does not
//! grow with the input (in memory, 6 M reads had held 2.8 GB).

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::open;
use crate::io::sink::{Encoded, RecordSink};
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::ops::markdup::decide::stream::{Finished, Released, Streamer};
use crate::ops::markdup::decide::{Failure, Outcome};
use crate::ops::markdup::{self as md, Barcode, ReadInfo};
use crate::pipeline::markdup::{ReadGroups, say};
use crate::pipeline::markdup_pipeline::{Checksum, RecordHashFn};
use crate::profile::{self, Counter, Phase};
use crate::record::layout::flags;
use crate::record::{Batch, Header, RecordRef};
use rayon::prelude::*;

/// Records handed to the decider at a time by [`StreamMarker::push`] (their infos are computed
/// in parallel).
const STREAM_CHUNK: usize = 8192;
/// Released records a write task finalises and encodes.
const WRITE_CHUNK: usize = 1024;

/// Counts and hash sums of what the markdup step wrote and dropped (with `--verify`).
#[derive(Default)]
pub struct Tally {
    pub written: Checksum,
    pub removed: Checksum,
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

/// Appends stderr lines of the decider in order.
fn log(line: String) {
    eprint!("{line}");
}

/// The streaming markdup: [`StreamMarker::start`], records in coordinate order through
/// [`push`](StreamMarker::push) or [`push_batch`](StreamMarker::push_batch), then
/// [`finish`](StreamMarker::finish).
pub struct StreamMarker<'a> {
    m: &'a md::MarkdupOptions,
    groups: Option<&'a ReadGroups>,
    streamer: Streamer<'a>,
    /// With `-S`, the first pass's temporary BAM.
    first_file: Option<TempFile>,
    pending: Vec<Vec<u8>>,
    writer: FirstPass<'a>,
    /// The command's threads (`-@` plus the main one), for the `-S` pass's reader.
    threads: usize,
}

/// The first pass's output: released records finalised (without `-S`'s marks) and written.
struct FirstPass<'a> {
    /// markdup's options without `-S`.
    opts: md::MarkdupOptions,
    header: &'a Header,
    verify: Option<RecordHashFn>,
    sink: RecordSink,
    tally: Tally,
}

impl FirstPass<'_> {
    fn write(&mut self, released: Vec<Released>) -> Result<(), Error> {
        let _write = profile::phase(Phase::Write);
        profile::add(Phase::Write, Counter::Records, released.len() as u64);
        let format = self.sink.format();
        let (opts, header, verify) = (&self.opts, self.header, self.verify);
        let umi = umi_regex(opts);
        let parts: Vec<(Encoded, Tally)> = released
            .par_chunks(WRITE_CHUNK)
            .map(|chunk| first_pass(chunk, opts, umi, header, format, verify))
            .collect();
        for (enc, t) in parts {
            self.tally.merge(&t);
            self.sink.write_owned(enc)?;
        }
        Ok(())
    }
}

impl<'a> StreamMarker<'a> {
    /// Opens the first pass's output: the final one from `create_final`, or with `-S` a
    /// temporary BAM named by `namer`. `header` carries markdup's `@PG`.
    pub fn start(
        m: &'a md::MarkdupOptions,
        groups: Option<&'a ReadGroups>,
        header: &'a Header,
        threads: usize,
        verify: Option<RecordHashFn>,
        namer: &mut TempNamer,
        create_final: &dyn Fn() -> Result<RecordSink, Error>,
    ) -> Result<Self, Error> {
        let (first_file, sink) = if m.supp {
            let (t, created) = namer.create_next().map_err(|e| {
                let reason = crate::error::c_message(&e);
                Error::file(namer.last_path(), format!("could not open for writing: {reason}"))
            })?;
            let sink = RecordSink::create_temporary(&t.path_str(), created, threads, header)?;
            (Some(t), sink)
        } else {
            (None, create_final()?)
        };
        let n_groups = groups.map_or(0, |g| g.1.len());
        let opts = md::MarkdupOptions { supp: false, ..m.clone() };
        Ok(StreamMarker {
            m,
            groups,
            streamer: Streamer::new(m, n_groups),
            first_file,
            pending: Vec::with_capacity(STREAM_CHUNK),
            writer: FirstPass { opts, header, verify, sink, tally: Tally::default() },
            threads,
        })
    }

    /// The next record (bytes without `block_size`).
    pub fn push(&mut self, record: &[u8]) -> Result<(), Error> {
        self.pending.push(record.to_vec());
        if self.pending.len() >= STREAM_CHUNK {
            self.flush_pending()?;
        }
        Ok(())
    }

    /// The records of `batch`, next in order.
    pub fn push_batch(&mut self, batch: &Batch) -> Result<(), Error> {
        self.flush_pending()?;
        let keyed = {
            let _key = profile::phase(Phase::Key);
            let (m, groups) = (self.m, self.groups);
            (0..batch.len())
                .into_par_iter()
                .with_min_len(256)
                .map(|i| {
                    let r = batch.get(i);
                    (info(&r, m, groups), r.bytes().to_vec())
                })
                .collect()
        };
        self.decide_and_write(keyed)
    }

    fn flush_pending(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::replace(&mut self.pending, Vec::with_capacity(STREAM_CHUNK));
        let keyed = {
            let _key = profile::phase(Phase::Key);
            let (m, groups) = (self.m, self.groups);
            pending
                .into_par_iter()
                .with_min_len(256)
                .map(|b| (info(&RecordRef::new(&b), m, groups), b))
                .collect()
        };
        self.decide_and_write(keyed)
    }

    fn decide_and_write(&mut self, keyed: Vec<(ReadInfo, Vec<u8>)>) -> Result<(), Error> {
        if profile::on() {
            profile::add(Phase::Key, Counter::Records, keyed.len() as u64);
            // One hash-table lookup per key: a single key per examined read, a pair key as well
            // for a read with a mapped mate.
            let lookups: u64 =
                keyed.iter().filter(|k| k.0.examined).map(|k| if k.0.paired { 2 } else { 1 }).sum();
            profile::add(Phase::Decide, Counter::Records, keyed.len() as u64);
            profile::add(Phase::Decide, Counter::RandomAccesses, lookups);
        }
        let released = {
            let _decide = profile::phase(Phase::Decide);
            self.streamer.push(keyed, &mut log).map_err(failed)?
        };
        self.writer.write(released)
    }

    /// The last records, then with `-S` the second pass into the output from `create_final`.
    /// Returns the decider's stats and warnings and what was written and removed.
    pub fn finish(
        mut self,
        create_final: &dyn Fn() -> Result<RecordSink, Error>,
    ) -> Result<(Finished, Tally), Error> {
        self.flush_pending()?;
        let StreamMarker { m, streamer, first_file, mut writer, threads, .. } = self;
        let (last, mut fin) = {
            let _decide = profile::phase(Phase::Decide);
            streamer.finish(&mut log).map_err(failed)?
        };
        writer.write(last)?;
        let FirstPass { header, verify, sink, mut tally, .. } = writer;
        sink.finish()?;
        if let Some(t) = first_file {
            let _write = profile::phase(Phase::Write);
            let mut sink = create_final()?;
            let mut second = Tally::default();
            let pass = SecondPass { m, header, verify, threads };
            supplementary_pass(&t, &mut sink, &mut fin, &pass, &mut second)?;
            drop(t);
            sink.finish()?;
            // The first pass's removals stand; what it wrote is counted as the second pass
            // writes it.
            tally.written = second.written;
            tally.removed = tally.removed.merge(second.removed);
        }
        Ok((fin, tally))
    }
}

/// The key phase for one record.
fn info(r: &RecordRef<'_>, m: &md::MarkdupOptions, groups: Option<&ReadGroups>) -> ReadInfo {
    let rg = match groups {
        Some((ids, _)) => md::read_group_index(r, ids),
        None => 0,
    };
    ReadInfo::compute(r, m, rg)
}

/// The barcode regex whose match `--move-umi-to-tag` moves into a tag.
fn umi_regex(m: &md::MarkdupOptions) -> Option<&regex::bytes::Regex> {
    match (&m.barcode, m.move_umi) {
        (Barcode::Regex(rx), true) => Some(rx),
        _ => None,
    }
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
    let bytes: usize = chunk.iter().map(|r| r.record.len()).sum();
    let mut out = Encoded::sized_for(bytes, chunk.len(), format);
    let mut t = Tally::default();
    for r in chunk {
        if !r.outcome.written {
            if let Some(hash) = verify {
                t.removed.add(hash(&RecordRef::new(&r.record)));
            }
            continue;
        }
        let input_flag = RecordRef::new(&r.record).flag();
        if md::is_unchanged(&r.outcome, input_flag, opts) {
            out.push_record(&r.record, header, format);
            if let Some(hash) = verify {
                t.written.add(hash(&RecordRef::new(&r.record)));
            }
            continue;
        }
        let do_name = r.do_name.as_deref().unwrap_or(b"");
        let b = md::finalize(&r.record, &r.outcome, opts, &|_| do_name, umi);
        out.push_record(&b, header, format);
        if let Some(hash) = verify {
            t.written.add(hash(&RecordRef::new(&b)));
        }
    }
    (out, t)
}

/// What the `-S` pass takes from the command.
#[derive(Clone, Copy)]
struct SecondPass<'a> {
    m: &'a md::MarkdupOptions,
    header: &'a Header,
    verify: Option<RecordHashFn>,
    /// The command's threads, for reading the first pass back.
    threads: usize,
}

/// `-S`: reads the first pass back and marks supplementary, secondary and unmapped records whose
/// name is a duplicate's in the decider's table (`fin.supp`), counting them in `fin.stats`.
fn supplementary_pass(
    first: &TempFile,
    sink: &mut RecordSink,
    fin: &mut Finished,
    pass: &SecondPass<'_>,
    tally: &mut Tally,
) -> Result<(), Error> {
    let SecondPass { m, header, verify, threads } = *pass;
    let path = first.path_str();
    let mut reader = open::open_streamed(&path, threads.max(1), 4 << 20)?.reader;
    let np_mask = flags::SUPPLEMENTARY | flags::UNMAP | flags::SECONDARY;
    let format = sink.format();
    let umi = umi_regex(m);
    while let Some((batches, _)) = reader.read_batches(&path)? {
        for batch in batches {
            let mut out = Encoded::sized_for(batch.data.len(), batch.len(), format);
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
                out.push_record(&b, header, format);
                if let Some(hash) = verify {
                    tally.written.add(hash(&RecordRef::new(&b)));
                }
            }
            sink.write_owned(out)?;
        }
    }
    Ok(())
}
