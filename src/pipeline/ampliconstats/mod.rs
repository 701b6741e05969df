//! `samtools ampliconstats`: read and depth statistics per amplicon of a primer BED, per input
//! file and combined. Command line: [`crate::cli::ampliconstats`]; amplicons and report
//! arithmetic: [`crate::ops::ampliconstats`]; counting: [`stats`]; the text: [`report`].
//!
//! Files are read one after another, each with the reader's threads; counting is sequential as
//! in samtools (the template-coordinate tables' bucket order depends on the order of records).
//! Compatibility (samtools 1.24): the report goes out as it is made, so a failing later input
//! leaves the earlier files' reports written, and the exit status is then 255; standard input
//! as the first input fails after the summary (samtools closes it after reading its header).

pub mod report;
pub mod stats;

use crate::io::input_spec::InputSpec;
use std::io::Write;

use crate::error::Error;
use crate::io::detect;
use crate::io::input::Input;
use crate::io::open::Opened;
use crate::ops::ampliconclip::PrimerSites;
use crate::ops::ampliconstats::{
    Amplicon, AmpliconLimits, MAX_DEPTHS, PositionLookup, build_amplicons, count_amplicons,
};
use crate::pipeline::amplicon_bed;
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::threads::Threads;
use crate::record::{Header, RecordRef};
use report::{Scope, write_report};
use stats::{AmpStats, CountOptions};

pub struct AmpliconstatsOptions {
    pub bed: String,
    /// Input files (`-` alone without any).
    pub inputs: Vec<String>,
    /// `-o` (stdout without).
    pub output: Option<String>,
    pub counting: CountOptions,
    pub report: ReportOptions,
    /// `-a` + 1, `-l` + 1.
    pub max_amp: i64,
    pub max_amp_len: i64,
    /// `-m`.
    pub margin: i64,
    /// `-s`.
    pub use_sample_name: bool,
    /// `-@`.
    pub threads: Threads,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// The command line for `SS\tCommand line:`.
    pub command_line: String,
    /// For `SS\tSamtools version:`.
    pub version: String,
}

impl AmpliconstatsOptions {
    /// Each input is read with the `-@` (extra) threads and the CRAM reference.
    fn input_spec(&self) -> InputSpec {
        InputSpec::new(self.threads.extra(), self.reference.as_deref())
    }
}

/// What the report's layout depends on.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    pub min_depth: [i32; MAX_DEPTHS],
    /// `-D`.
    pub depth_bin: f64,
    pub tcoord_bin: i32,
    pub tcoord_min_count: i32,
    /// Without `-S`.
    pub multi_ref: bool,
    /// The number of references in the header (one: template coordinates of no amplicon are
    /// listed too, as amplicon 0).
    pub header_refs: usize,
}

/// One BED reference that the header has: its amplicons and counts.
pub struct RefAmplicons {
    pub tid: usize,
    pub name: String,
    pub len: i64,
    pub amps: Vec<Amplicon>,
    pub first_amp: usize,
    pub lookup: PositionLookup,
    pub local: AmpStats,
    pub global: AmpStats,
}

/// The failure of the run after the report started: exit 255, as samtools' `return -1`.
fn failed_late(out: &mut dyn Write, text: &mut String, message: String) -> Error {
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    text.clear();
    if !message.is_empty() {
        eprintln!("{message}");
    }
    Error::Status(255)
}

const CANNOT_OPEN: &str = "samtools ampliconstats: Cannot open input file";
const NO_HEADER: &str = "no header";

/// htslib's lines for data it recognises as no format (`EFTYPE`).
fn unrecognised(path: &str) -> String {
    let reason = "Exec format error";
    format!(
        "[E::hts_hopen] Failed to open file {path}\n[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n{CANNOT_OPEN} \"{path}\": {reason}"
    )
}

/// `sam_open_format` + `sam_hdr_read` with samtools' wording: binary data htslib does not
/// recognise fails to open; text is SAM to htslib, and a header that does not read fails
/// without a word.
fn open(path: &str, spec: InputSpec) -> Result<Opened, String> {
    let wording = Wording { cannot_open: CANNOT_OPEN, no_header: NO_HEADER };
    match open_sequence_input(path, spec, &wording) {
        Ok(o) => Ok(o),
        Err(e) if e.to_string() == format!("{NO_HEADER} \"{path}\"") => {
            let binary = path != "-"
                && Input::open(path).is_ok_and(|mut i| {
                    i.peek(detect::PEEK_COMPRESSED).is_ok_and(|head| {
                        !detect::detect(head, path).is_sequence_data()
                            && head.iter().any(|&b| b < 0x20 && !b"\t\n\r".contains(&b))
                    })
                });
            Err(if binary { unrecognised(path) } else { String::new() })
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The sample name: `-s`'s first `@RG` `SM`, else the file name without its directory and a
/// `.bam`, `.sam` or `.cram` extension.
fn sample_name(path: &str, header: &Header, use_sample_name: bool) -> String {
    if use_sample_name
        && let Some(sm) = header
            .read_group_lines()
            .next()
            .and_then(|l| crate::record::header::line_field(l, b"SM"))
    {
        return String::from_utf8_lossy(sm).into_owned();
    }
    let base = path.rsplit_once('/').map_or(path, |(_, b)| b);
    let stem = match base.rfind('.') {
        Some(dot) if matches!(&base[dot..], ".bam" | ".sam" | ".cram") => &base[..dot],
        _ => base,
    };
    stem.chars().take(8191).collect()
}

pub fn run(opts: &AmpliconstatsOptions) -> Result<(), Error> {
    let mut out: Box<dyn Write> = match &opts.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .map_err(|e| Error::Bare(format!("{p}: {}", crate::error::c_message(&e))))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let could_not_read = format!("samtools ampliconstats: Could not read file \"{}\"", opts.bed);
    let bed = amplicon_bed::read_primers(&opts.bed, true).map_err(|f| {
        let reason = f.reason.map(|r| format!(": {r}")).unwrap_or_default();
        Error::Bare(format!("{}\n{could_not_read}{reason}", f.lines))
    })?;
    if bed.is_empty() {
        return Err(Error::Bare(could_not_read));
    }
    if bed.len() > 1 && !opts.report.multi_ref {
        return Err(Error::Bare(
            "samtools ampliconstats: Single-ref mode is not permitted for BED files\ncontaining more than one reference."
                .into(),
        ));
    }
    let mut text = String::new();
    let first = open(&opts.inputs[0], opts.input_spec())
        .map_err(|m| failed_late(&mut out, &mut text, m))?;
    let header = first.header.clone();
    let mut report = opts.report.clone();
    report.header_refs = header.refs().len();
    text.push_str("# Summary statistics, used for scaling the plots.\n");
    text.push_str(&format!("SS\tSamtools version: {}\n", opts.version));
    text.push_str(&format!("SS\tCommand line: {}\n", opts.command_line));
    text.push_str(&format!("SS\tNumber of files:\t{}\n", opts.inputs.len()));
    let mut refs: Vec<(usize, String, i64, &PrimerSites)> = Vec::new();
    for (tid, h) in header.refs().iter().enumerate() {
        let Some(b) = bed.iter().find(|b| b.name == h.name) else { continue };
        let name = String::from_utf8_lossy(&b.name).into_owned();
        let namp = count_amplicons(&b.sites.primers);
        // `get_ref_len` looks the name up again: the first reference of that name.
        let len = header.tid(&b.name).map_or(-1, |t| header.refs()[t as usize].len as i64);
        if opts.report.multi_ref {
            text.push_str(&format!("SS\tNumber of amplicons:\t{name}\t{namp}\n"));
            text.push_str(&format!("SS\tReference length:\t{name}\t{len}\n"));
        } else {
            text.push_str(&format!("SS\tNumber of amplicons:\t{namp}\n"));
            text.push_str(&format!("SS\tReference length:\t{len}\n"));
        }
        refs.push((tid, name, len, &b.sites));
    }
    text.push_str("SS\tEnd of summary\n");
    let limits = AmpliconLimits {
        max_amp: opts.max_amp,
        max_amp_len: opts.max_amp_len,
        multi_ref: opts.report.multi_ref,
    };
    let mut amplicons: Vec<RefAmplicons> = Vec::new();
    let mut first_amp = 0;
    for (tid, name, len, sites) in refs {
        let amps = build_amplicons(&sites.primers, &limits, tid == 0, &name, first_amp, &mut text)
            .map_err(|m| failed_late(&mut out, &mut text, m))?;
        let namp = amps.len();
        let amp_len = opts.max_amp_len.max(0) as usize;
        amplicons.push(RefAmplicons {
            tid,
            lookup: PositionLookup::new(&amps, len, opts.margin),
            local: AmpStats::new(len, namp, amp_len),
            global: AmpStats::new(len, namp, amp_len),
            name,
            len,
            amps,
            first_amp,
        });
        first_amp += namp;
    }
    let mut by_tid: Vec<Option<usize>> = vec![None; header.refs().len()];
    for (k, r) in amplicons.iter().enumerate() {
        by_tid[r.tid] = Some(k);
    }
    let pool = opts.threads.pool();
    let mut first = Some(first);
    for path in &opts.inputs {
        let opened = match first.take() {
            // samtools closes standard input after the first header and cannot open it again.
            Some(_) if path == "-" => {
                return Err(failed_late(&mut out, &mut text, unrecognised(path)));
            }
            Some(o) => o,
            None => {
                open(path, opts.input_spec()).map_err(|m| failed_late(&mut out, &mut text, m))?
            }
        };
        let Opened { mut reader, header: file_header, .. } = opened;
        let consistent = file_header.refs().len() == header.refs().len()
            && amplicons.iter().all(|r| {
                let h = &file_header.refs()[r.tid];
                h.name == r.name.as_bytes() && h.len as i64 == r.len
            });
        if !consistent {
            return Err(failed_late(
                &mut out,
                &mut text,
                "samtools ampliconstats: SAM headers are not consistent across input files".into(),
            ));
        }
        let sample = sample_name(path, &file_header, opts.use_sample_name);
        for r in &mut amplicons {
            r.local.reset();
        }
        pool.install(|| {
            crate::pipeline::prefetch::for_each_batches(&mut reader, path, &pool, |batches| {
                for rec in batches.iter().flat_map(|b| b.iter()) {
                    count_record(&rec, &mut amplicons, &by_tid, &opts.counting);
                }
                crate::pipeline::prefetch::recycle(batches);
                Ok(())
            })
        })
        .map_err(|e| failed_late(&mut out, &mut text, format!("{e}")))?;
        write_report(&mut text, &report, Scope::File, &sample, opts.inputs.len(), &mut amplicons);
        let all_nseq: i32 = amplicons.iter().map(|r| r.local.matching()).sum();
        for r in &mut amplicons {
            let local = std::mem::replace(&mut r.local, AmpStats::new(0, 0, 0));
            local.append_to(&mut r.global, all_nseq);
            r.local = local;
        }
        out.write_all(text.as_bytes()).map_err(|e| Error::io("-", e))?;
        text.clear();
    }
    write_report(
        &mut text,
        &report,
        Scope::Combined,
        "COMBINED",
        opts.inputs.len(),
        &mut amplicons,
    );
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| Error::io("-", e))
}

fn count_record(
    rec: &RecordRef<'_>,
    amplicons: &mut [RefAmplicons],
    by_tid: &[Option<usize>],
    counting: &CountOptions,
) {
    let Ok(tid) = usize::try_from(rec.ref_id()) else { return };
    let Some(&Some(k)) = by_tid.get(tid) else { return };
    let r = &mut amplicons[k];
    r.local.accumulate(rec, &r.amps, &r.lookup, r.len, counting);
}
