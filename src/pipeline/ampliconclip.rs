//! `samtools ampliconclip`: clips amplicon primers (a BED of primer regions) off the reads that
//! start in them. Command line: [`crate::cli::ampliconclip`]; per record:
//! [`crate::ops::ampliconclip`]; the BED: [`crate::pipeline::amplicon_bed`].
//!
//! Records are clipped in parallel chunks and written in input order, so output bytes never
//! depend on the thread count. Compatibility (samtools 1.24): `SO:coordinate` becomes
//! `SO:unknown` (clipping moves reads); the summary goes to `-f` or stderr, the per-primer counts
//! to `--primer-counts`. Difference: outputs appear only when the command succeeds.

use crate::error::Error;
use crate::io::input_spec::InputSpec;
use crate::io::open::Opened;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::ampliconclip::{ClipCounts, ClipOptions, clip_record};
use crate::pipeline::amplicon_bed::{self, BedReference};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::record::{Header, RecordRef};
use rayon::prelude::*;
use std::io::Write;

pub struct AmpliconclipOptions {
    pub input: String,
    pub bed: String,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    /// `--rejects-file` and its output spec.
    pub rejects: Option<(String, OutputSpec)>,
    /// `-f`.
    pub stats: Option<String>,
    pub primer_counts: Option<String>,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// `@PG` fields (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
    /// The command line, for the summary's `COMMAND:`.
    pub command_line: String,
    pub clip: ClipOptions,
}

/// Records per parallel task.
const CHUNK: usize = 4096;

/// One chunk's outputs and counts.
struct ChunkResult {
    kept: Encoded,
    rejected: Encoded,
    counts: ClipCounts,
    hits: Vec<i64>,
}

/// The BED's primers as the records need them: per header reference, the BED reference (if
/// any) and where its primers' counts start in the flat count list.
struct Primers {
    refs: Vec<BedReference>,
    offsets: Vec<usize>,
    by_tid: Vec<Option<usize>>,
    total: usize,
}

impl Primers {
    fn new(refs: Vec<BedReference>, header: &Header) -> Primers {
        let mut offsets = Vec::with_capacity(refs.len());
        let mut total = 0;
        for r in &refs {
            offsets.push(total);
            total += r.sites.primers.len();
        }
        let by_tid =
            header.refs().iter().map(|h| refs.iter().position(|r| r.name == h.name)).collect();
        Primers { refs, offsets, by_tid, total }
    }
}

fn clip_chunk(
    recs: &[RecordRef<'_>],
    primers: &Primers,
    opts: &AmpliconclipOptions,
    header: &Header,
) -> ChunkResult {
    let bytes: usize = recs.iter().map(|r| r.bytes().len()).sum();
    let mut out = ChunkResult {
        kept: Encoded::sized_for(bytes, recs.len(), opts.spec.format),
        rejected: Encoded::default(),
        counts: ClipCounts::default(),
        hits: vec![0; primers.total],
    };
    for r in recs {
        let at =
            usize::try_from(r.ref_id()).ok().and_then(|t| primers.by_tid.get(t).copied().flatten());
        let (sites, hits) = match at {
            Some(k) => {
                let start = primers.offsets[k];
                let n = primers.refs[k].sites.primers.len();
                (Some(&primers.refs[k].sites), &mut out.hits[start..start + n])
            }
            None => (None, &mut out.hits[..0]),
        };
        let c = clip_record(r.bytes(), sites, &opts.clip, &mut out.counts, hits);
        if !c.filtered {
            out.counts.written += 1;
            out.kept.push_record(&c.record, header, opts.spec.format);
        } else {
            out.counts.filtered += 1;
            if let Some((_, spec)) = &opts.rejects {
                out.rejected.push_record(&c.record, header, spec.format);
            }
        }
    }
    out
}

/// Opens `path` for a report, or stderr (with samtools' warning) when it cannot.
fn report_target(path: Option<&str>, what: &str) -> Box<dyn Write> {
    match path {
        None => Box::new(std::io::stderr()),
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(_) => {
                eprintln!("[ampliconclip] warning: cannot write {what} to {p}.");
                Box::new(std::io::stderr())
            }
        },
    }
}

fn write_reports(
    opts: &AmpliconclipOptions,
    c: &ClipCounts,
    primers: &Primers,
    hits: &[i64],
) -> Result<(), Error> {
    let io = |e| Error::io(opts.stats.as_deref().unwrap_or("-"), e);
    let mut stats = report_target(opts.stats.as_deref(), "stats");
    write!(
        stats,
        "COMMAND: {}\nTOTAL READS: {}\nTOTAL CLIPPED: {}\nFORWARD CLIPPED: {}\nREVERSE CLIPPED: {}\nBOTH CLIPPED: {}\nNOT CLIPPED: {}\nEXCLUDED: {}\nFILTERED: {}\nFAILED: {}\nWRITTEN: {}\n",
        opts.command_line,
        c.total,
        c.forward + c.reverse,
        c.forward,
        c.reverse,
        c.both,
        c.not_clipped,
        c.excluded,
        c.filtered,
        c.failed,
        c.written
    )
    .and_then(|()| stats.flush())
    .map_err(io)?;
    let Some(path) = opts.primer_counts.as_deref() else { return Ok(()) };
    let mut text = b"#CHR\tLEFT\tRIGHT\tNAME\tSCORE\tSTRAND\tNUM_CLIPPED\n".to_vec();
    let null = b"(null)".to_vec();
    for (k, r) in primers.refs.iter().enumerate() {
        for (i, (p, (name, score))) in r.sites.primers.iter().zip(&r.labels).enumerate() {
            let strand = if !opts.clip.use_strand {
                "."
            } else if p.rev {
                "-"
            } else {
                "+"
            };
            text.extend_from_slice(&r.name);
            write!(text, "\t{}\t{}\t", p.left, p.right).map_err(io)?;
            text.extend_from_slice(name.as_ref().unwrap_or(&null));
            text.push(b'\t');
            text.extend_from_slice(score.as_ref().unwrap_or(&null));
            writeln!(text, "\t{strand}\t{}", hits[primers.offsets[k] + i]).map_err(io)?;
        }
    }
    let mut counts = report_target(Some(path), "count summary");
    counts.write_all(&text).and_then(|()| counts.flush()).map_err(|e| Error::io(path, e))
}

pub fn run(opts: &AmpliconclipOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let path = opts.input.as_str();
    let wording = Wording {
        cannot_open: "samtools ampliconclip: cannot open input file",
        no_header: "[ampliconclip] error: could not read header",
    };
    let bed = amplicon_bed::load(&opts.bed, opts.clip.use_strand);
    let opened = open_sequence_input(
        path,
        InputSpec::new(opts.threads, opts.reference.as_deref()),
        &wording,
    )
    .map_err(|e| match e {
        // samtools names no file in these two lines.
        Error::Bare(m) => {
            let (before, last) = m.rsplit_once('\n').unwrap_or(("", &m));
            let last =
                last.replace(&format!(" \"{path}\": "), ": ").replace(&format!(" \"{path}\""), "");
            Error::Bare(if before.is_empty() { last } else { format!("{before}\n{last}") })
        }
        e => e,
    });
    let (Opened { mut reader, header: input_header, .. }, bed) = match (opened, bed) {
        (Err(e), _) | (_, Err(e)) => return Err(e),
        (Ok(o), Ok(b)) => (o, b),
    };
    let mut header = input_header;
    if header.sort_order() == Some(b"coordinate") {
        header.update_hd(&[("SO", "unknown")], &[]);
    }
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    let mut sink = RecordSink::create(&opts.output, &opts.spec, opts.threads, &header, true)?;
    let mut rejects = match &opts.rejects {
        Some((p, spec)) => Some(RecordSink::create(p, spec, opts.threads, &header, true)?),
        None => None,
    };
    let primers = Primers::new(bed, &header);
    let mut counts = ClipCounts::default();
    let mut hits = vec![0i64; primers.total];
    crate::pipeline::prefetch::for_each_batches(&mut reader, path, pool, |batches| {
        let recs: Vec<RecordRef<'_>> = batches.iter().flat_map(|b| b.iter()).collect();
        let results: Vec<ChunkResult> =
            recs.par_chunks(CHUNK).map(|c| clip_chunk(c, &primers, opts, &header)).collect();
        for r in results {
            counts.add(&r.counts);
            for (h, n) in hits.iter_mut().zip(&r.hits) {
                *h += n;
            }
            sink.write_owned(r.kept)?;
            if let Some(rej) = rejects.as_mut() {
                rej.write_owned(r.rejected)?;
            }
        }
        drop(recs);
        for b in batches {
            crate::io::recycle::give(b.data);
        }
        Ok(())
    })?;
    sink.finish()?;
    if let Some(r) = rejects {
        r.finish()?;
    }
    write_reports(opts, &counts, &primers, &hits)
}

/// Runs `ampliconclip` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: AmpliconclipOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| run(&opts, &pool))
}
