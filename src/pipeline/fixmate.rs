//! `fixmate`: read → group by QNAME → fix templates in parallel → write, in bounded memory.
//!
//! Phases per input piece: *parse* (the reader's parallel parse), *group* (cut the piece at
//! template boundaries; the last, possibly incomplete template is carried into the next piece),
//! *fix* (chunks of whole templates on the pool: sanitise, pair, tag, encode), *write* (chunks in
//! input order). Output bytes never depend on the thread count. A template too long to carry
//! goes through a temporary file ([`crate::pipeline::fixmate_long`]).

use crate::io::input_spec::InputSpec;
use rayon::prelude::*;

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::open::{self, Opened};
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::fixmate::{FixmateOptions as Fix, fix_template, is_kept, sanitize};
use crate::pipeline::fixmate_long::{HELD_TEMPLATE_BYTES, LongTemplate};
use crate::profile::{self, Counter, Phase, RunInfo};
use crate::record::{Batch, Header, RecordRef};

pub struct FixmateOptions {
    pub input: String,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// `@PG` fields (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
    pub fix: Fix,
}

/// Records per parallel task (rounded up to a template boundary).
const CHUNK: usize = 4096;

/// Fixes the whole templates in `recs` and encodes what is kept.
fn fix_chunk(recs: &[RecordRef<'_>], header: &Header, opts: &FixmateOptions) -> Encoded {
    let mut out = Encoded::default();
    let bytes: usize = recs.iter().map(|r| r.bytes().len() + 64).sum();
    // Sized up front (tags are added; SAM text is about twice the binary), in a recycled buffer.
    out.data = crate::io::recycle::take(match opts.spec.format {
        OutputFormat::Bam | OutputFormat::Cram => bytes,
        OutputFormat::Sam | OutputFormat::SamGz => 2 * bytes,
    });
    out.ends.reserve(recs.len());
    fix_templates(recs, header, &opts.fix, |b, keep| {
        if keep {
            out.push_record(b, header, opts.spec.format);
        }
    });
    out
}

/// Fixes the whole templates (runs of one QNAME) in `recs`: sanitises, pairs and tags each, then
/// hands every resulting record to `emit` with whether `-r` keeps it, in input order.
pub fn fix_templates(
    recs: &[RecordRef<'_>],
    header: &Header,
    fix: &Fix,
    mut emit: impl FnMut(&[u8], bool),
) {
    let ref_len = |tid: i32| crate::pipeline::fixmate_long::reference_length(header, tid);
    // Record buffers reused from template to template (no allocation per record).
    let mut group: Vec<Vec<u8>> = Vec::new();
    let mut start = 0;
    while start < recs.len() {
        let name = recs[start].read_name();
        let mut end = start + 1;
        while end < recs.len() && recs[end].read_name() == name {
            end += 1;
        }
        let n = end - start;
        // Sized for the record and the tags fixmate adds: a fixed 1 KiB each took 1 GB for a
        // million records of one name.
        for r in &recs[start + group.len().min(n)..end] {
            group.push(Vec::with_capacity(r.bytes().len() + 128));
        }
        for (b, r) in group.iter_mut().zip(&recs[start..end]) {
            b.clear();
            b.extend_from_slice(r.bytes());
            sanitize::sanitize(b, fix.sanitize, ref_len);
        }
        let group = &mut group[..n];
        fix_template(group, fix);
        for b in group.iter() {
            emit(b, is_kept(b, fix));
        }
        start = end;
    }
}

/// Cut points of `recs` into chunks of about `CHUNK` records at template boundaries.
pub fn chunk_bounds(recs: &[RecordRef<'_>]) -> Vec<usize> {
    let mut bounds = vec![0];
    let mut at = 0;
    while at < recs.len() {
        let mut end = (at + CHUNK).min(recs.len());
        while end < recs.len() && recs[end].read_name() == recs[end - 1].read_name() {
            end += 1;
        }
        bounds.push(end);
        at = end;
    }
    bounds
}

/// Runs `fixmate` on the current thread pool.
pub fn run(opts: FixmateOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    crate::alloc::keep_freed_memory();
    let Opened { mut reader, header: input_header, .. } =
        open::open(&opts.input, InputSpec::new(opts.threads, opts.reference.as_deref()))?;
    profile::describe(RunInfo::streamed(
        opts.threads,
        opts.spec.level,
        (&opts.input, &opts.output),
        (reader.format_name(), opts.spec.format.name()),
    ));
    let sq_error = input_header.sq_error();
    if let Some(why) = sq_error.clone() {
        // htslib parses a BAM's header text when fixmate looks up `SO` (and goes on without
        // one), then again when it adds `@PG`, which fails.
        eprintln!("{why}");
        if opts.pg.is_some() {
            return Err(Error::Bare(why));
        }
    }
    if sq_error.is_none() && input_header.sort_order() == Some(b"coordinate") {
        return Err(Error::Bare(
            "[bam_mating_core] ERROR: Coordinate sorted, require grouped/sorted by queryname."
                .into(),
        ));
    }
    let mut header = input_header.clone();
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    let mut sink = RecordSink::create(&opts.output, &opts.spec, opts.threads, &header, true)?;
    // Records after the last complete template, carried into the next step.
    let mut carry = Batch::default();
    // A template too long to carry, fixed through a temporary file ([`LongTemplate`]).
    let mut long: Option<LongTemplate> = None;
    let mut step = |batches: Vec<Batch>, done: bool| -> Result<(), Error> {
        let all: Vec<RecordRef<'_>> =
            carry.iter().chain(batches.iter().flat_map(|b| b.iter())).collect();
        // The long template's next records come first; it is written once another name comes.
        let mut from = 0;
        if let Some(t) = &mut long {
            while from < all.len() && t.takes(&all[from]) {
                t.push(&all[from], &header, &opts)?;
                from += 1;
            }
            if from < all.len() || done {
                let t = long.take().expect("checked above");
                let _phase = profile::phase(Phase::Write);
                t.finish(&header, &opts, &mut sink)?;
            }
        }
        let recs = &all[from..];
        // Group phase: everything up to the start of the last template is complete.
        let mut cut = recs.len();
        if !done {
            while cut > 0 && recs[cut - 1].read_name() == recs[recs.len() - 1].read_name() {
                cut -= 1;
            }
        }
        let outs: Vec<Encoded> = {
            let _phase = profile::phase(Phase::Pair);
            profile::add(Phase::Pair, Counter::Records, cut as u64);
            // One mate lookup per record: its template's other records are its neighbours.
            profile::add(Phase::Pair, Counter::RandomAccesses, cut as u64);
            let bounds = chunk_bounds(&recs[..cut]);
            bounds.par_windows(2).map(|w| fix_chunk(&recs[w[0]..w[1]], &header, &opts)).collect()
        };
        let _phase = profile::phase(Phase::Write);
        for o in outs {
            sink.write_owned(o)?;
        }
        // The last, incomplete template is carried, unless it grew too long to hold.
        let tail = &recs[cut..];
        let mut next_carry = Batch::default();
        if tail.iter().map(|r| r.bytes().len()).sum::<usize>() > HELD_TEMPLATE_BYTES {
            let mut t = LongTemplate::new(tail[0].read_name(), &opts)?;
            for r in tail {
                t.push(r, &header, &opts)?;
            }
            long = Some(t);
        } else {
            for r in tail {
                next_carry.push(r.bytes());
            }
        }
        drop(all);
        for b in batches {
            crate::io::recycle::give(b.data);
        }
        carry = next_carry;
        Ok(())
    };
    // The next batches are read while these are fixed and written.
    crate::pipeline::prefetch::for_each_batches(&mut reader, &opts.input, pool, |batches| {
        step(batches, false)
    })?;
    step(Vec::new(), true)?;
    let _phase = profile::phase(Phase::Write);
    sink.finish()
}

/// Runs `fixmate` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: FixmateOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| run(opts, &pool))
}
