//! `samtools flagstat` (samtools 1.24 `bam_flagstat`): one input read through, its records
//! counted on the pool (each batch split into ranges counted apart, the counts added), then the
//! report. samtools counts on one thread; the sum does not depend on the split.

use std::io::Write;

use rayon::prelude::*;

use crate::error::Error;
use crate::io::open::Opened;
use crate::ops::flagstat::FlagStats;
use crate::ops::flagstat::report::{ReportFormat, report};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
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
    opened.reader.flags_only();
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
            crate::pipeline::prefetch::recycle(batches);
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
    let wording = Wording {
        cannot_open: "samtools flagstat: Cannot open input file",
        no_header: "Failed to read header for",
    };
    open_sequence_input(path, threads, &wording)
}
