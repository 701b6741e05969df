//! `samtools flagstat` (samtools 1.24 `bam_flagstat`): one input read through, its records
//! counted on the pool (each batch split into ranges counted apart, the counts added), then the
//! report. samtools counts on one thread; the sum does not depend on the split.

use std::io::Write;

use rayon::prelude::*;

use crate::error::Error;
use crate::io::detect;
use crate::io::input::Input;
use crate::io::open::{self, Opened, PIECE_BYTES_PER_THREAD};
use crate::ops::flagstat::FlagStats;
use crate::ops::flagstat::report::{ReportFormat, report};
use crate::pipeline::input_filter::{InputFilter, passes};
use crate::record::{Batch, Header};

pub struct FlagstatOptions {
    pub input: String,
    pub format: ReportFormat,
    /// Worker threads (samtools' `-@` plus one).
    pub threads: usize,
    /// `--input-fmt-option filter=EXPR`: only the records it keeps are read.
    pub filter: Option<String>,
}

/// Records one task counts: enough to outweigh the task, few enough to spread a batch.
const RECORDS_PER_TASK: usize = 16 << 10;

pub fn run(options: &FlagstatOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(options.threads);
    pool.install(|| flagstat(options, &pool))
}

fn flagstat(options: &FlagstatOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let path = options.input.as_str();
    let mut opened = open_input(path, options.threads)?;
    let filter = InputFilter::new(options.filter.as_deref());
    let header = &opened.header;
    let mut stats = FlagStats::default();
    let mut filter_failure = None;
    let read =
        crate::pipeline::prefetch::for_each_batches(&mut opened.reader, path, pool, |batches| {
            let counted = batches
                .par_iter()
                .map(|b| count_batch(b, filter.as_ref(), header))
                .try_reduce(FlagStats::default, |a, b| Ok(a.merge(&b)));
            match counted {
                Ok(counted) => stats = stats.merge(&counted),
                Err(lines) => filter_failure = Some(lines),
            }
            // A failed filter ends the read, as htslib's read fails.
            filter_failure.as_ref().map_or(Ok(()), |_| Err(Error::Failed))
        });
    if let Some(lines) = &filter_failure {
        eprintln!("{lines}");
    }
    read.map_err(|_| Error::Bare(format!("samtools flagstat: error reading from \"{path}\"")))?;
    let text = report(&stats, options.format);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(|e| Error::io("stdout", e))
}

/// The counts of one batch's records that pass `filter`, in ranges counted on the pool.
fn count_batch(
    batch: &Batch,
    filter: Option<&InputFilter>,
    header: &Header,
) -> Result<FlagStats, String> {
    (0..batch.len())
        .into_par_iter()
        .with_min_len(RECORDS_PER_TASK)
        .try_fold(FlagStats::default, |mut s, i| {
            let record = batch.get(i);
            if passes(filter, &record, header)? {
                s.add(&record);
            }
            Ok(s)
        })
        .try_reduce(FlagStats::default, |a, b| Ok(a.merge(&b)))
}

/// `sam_open_format` and `sam_hdr_read`, failing with samtools' and htslib's lines.
fn open_input(path: &str, threads: usize) -> Result<Opened, Error> {
    let header_failure = || Error::Bare(format!("Failed to read header for \"{path}\""));
    let mut input = Input::open(path).map_err(|e| open_failure(path, &e))?;
    let head = input.peek(detect::PEEK_COMPRESSED).map_err(|_| header_failure())?;
    let detected = detect::detect(head, path);
    if let detect::Format::Cram { .. } = detected.format {
        return Err(Error::file(path, "CRAM is not supported by mdsam"));
    }
    if !detected.is_sequence_data() {
        return Err(header_failure());
    }
    let piece = PIECE_BYTES_PER_THREAD * threads.max(1);
    open::open_input(path, input, threads, piece).map_err(|_| header_failure())
}

fn open_failure(path: &str, e: &std::io::Error) -> Error {
    let reason = crate::error::c_message(e);
    let mut lines = String::new();
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        lines.push_str(&format!("[E::hts_hopen] Failed to open file {path}\n"));
    }
    lines.push_str(&format!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n"));
    lines.push_str(&format!("samtools flagstat: Cannot open input file \"{path}\": {reason}"));
    Error::Bare(lines)
}
