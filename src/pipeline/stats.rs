//! `samtools stats` (samtools 1.24 `stats.c`): one input read through, whole or by regions
//! through its index, into the report of all reads (stdout) and the `-S` reports (files named
//! `PREFIX_VALUE.bamstat`). The work per report is [`crate::ops::stats`];
//! [`super::stats_reports`] runs it over each group of batches.

use crate::io::input_spec::InputSpec;
use std::io::Write;

use crate::error::Error;
use crate::io::fasta::Fasta;
use crate::io::index::{Region, parse_region};
use crate::io::open::{Opened, RecordReader};
use crate::io::stats_targets::read_targets;
use crate::ops::stats::ref_stats;
use crate::ops::stats::report::{Heading, Report, write_report};
use crate::ops::stats::targets::Targets;
use crate::ops::stats::tracker::Tracker;
use crate::ops::stats::{ReferenceSource, Settings};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::input_filter::InputFilter;
use crate::pipeline::region;
use crate::pipeline::stats_reports::{Reports, SplitSetup, read_groups, ref_lens};
use crate::record::Header;

/// `stats -r`'s reference is the indexed FASTA (ops names no file type, so the link is made here).
impl ReferenceSource for Fasta {
    fn fetch(&self, name: &[u8], beg: i64, end: i64) -> Option<Vec<u8>> {
        Fasta::fetch(self, name, beg, end)
    }
}

pub struct StatsOptions {
    pub input: String,
    /// `-X`: the index named after the input.
    pub index: Option<String>,
    /// Regions after the input (and the index).
    pub regions: Vec<String>,
    pub settings: Settings,
    /// `-r`
    pub reference: Option<String>,
    /// `-t`
    pub targets: Option<String>,
    /// `-I`
    pub read_group: Option<String>,
    /// `-S`
    pub split_tag: Option<String>,
    /// `-P`
    pub split_prefix: Option<String>,
    /// `--ref-stats`
    pub ref_stats: bool,
    /// `--ref-stats-chunk`, in bases.
    pub ref_chunk: i64,
    pub threads: usize,
    /// `--reference`, `reference=`: the FASTA a CRAM input is decoded against (samtools keeps
    /// `-r` for the statistics).
    pub cram_reference: Option<String>,
    /// `--input-fmt-option filter=EXPR`
    pub filter: Option<String>,
    /// What the report's first line names (`1.24+htslib-1.24`).
    pub version: String,
    /// The command line the report repeats (`stats …`).
    pub command_line: String,
}

pub fn run(options: StatsOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(options.threads);
    pool.install(|| stats(&options, &pool))
}

fn open_input(path: &str, spec: InputSpec) -> Result<Opened, Error> {
    let wording = Wording {
        cannot_open: "samtools stats: failed to open",
        no_header: "samtools stats: failed to read header for",
    };
    open_sequence_input(path, spec, &wording)
}

fn stats(options: &StatsOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let reference = match &options.reference {
        Some(path) => Some(Fasta::read_whole(path).map_err(Error::Bare)?),
        None => None,
    };
    let path = options.input.as_str();
    let mut opened =
        open_input(path, InputSpec::new(options.threads, options.cram_reference.as_deref()))?;
    if options.index.as_deref() == Some("") {
        return Err(Error::Bare("No index file provided".into()));
    }
    let header = opened.header.clone();
    let file_targets = match &options.targets {
        Some(t) => Some(read_targets(t, |name| header.tid(name)).map_err(Error::Bare)?),
        None => None,
    };
    let targets = file_targets
        .as_ref()
        .map(|f| Targets::from_file_intervals(f.intervals.clone(), &ref_lens(&header)));
    let groups = options.read_group.as_deref().map(|id| read_groups(&header, id));
    let source = reference.as_ref().map(|r| r as &dyn ReferenceSource);
    let mut reports = Reports::new(
        &options.settings,
        &header,
        source,
        Tracker::new(&options.settings, targets, groups),
    );
    reports.filter = InputFilter::new(options.filter.as_deref());
    reports.split = options.split_tag.as_ref().map(|tag| {
        let t = tag.as_bytes();
        SplitSetup {
            tag: [t.first().copied().unwrap_or(0), t.get(1).copied().unwrap_or(0)],
            file_targets,
        }
    });
    if options.regions.is_empty() {
        if options.settings.cov_threshold > 0 && options.targets.is_none() {
            return Err(Error::Bare(
                "Coverage percentage calculation requires a list of target regions".into(),
            ));
        }
        read_all(&mut opened, path, pool, &mut reports)?;
    } else {
        read_regions(&mut opened.reader, options, &header, &mut reports)?;
    }
    write_reports(options, &header, source, reports)
}

/// The whole input in order.
fn read_all(
    opened: &mut Opened,
    path: &str,
    pool: &rayon::ThreadPool,
    reports: &mut Reports<'_>,
) -> Result<(), Error> {
    let mut failure = None;
    let read = crate::pipeline::prefetch::for_each_batches(&mut opened.reader, path, pool, |b| {
        reports.add_batches(b).map_err(|e| {
            failure = Some(e);
            Error::Failed
        })
    });
    if let Some(message) = failure {
        return Err(failed(reports, message, "Failure while decoding file"));
    }
    read?;
    reports.finish().map_err(Error::Bare)
}

/// The error for a failure met while following the records: samtools' `sam_read1` failing
/// (the input filter) says `read_failure` and returns -2 from its main; other messages exit 1.
fn failed(reports: &Reports<'_>, message: String, read_failure: &str) -> Error {
    if reports.decode_failed {
        eprintln!("{message}\n{read_failure}");
        Error::Status(254)
    } else {
        Error::Bare(message)
    }
}

/// The regions' records through the index, each once, in file order (htslib's multi-region
/// iterator); without `-t`, the regions are the report's targets.
fn read_regions(
    reader: &mut RecordReader,
    options: &StatsOptions,
    header: &Header,
    reports: &mut Reports<'_>,
) -> Result<(), Error> {
    let no_index = || {
        let mut lines = String::new();
        match &options.index {
            Some(index) => {
                if let Err(e) = std::fs::metadata(index) {
                    let why = crate::error::c_message(&e);
                    lines.push_str(&format!(
                        "[E::hts_idx_load3] Could not load local index file '{index}' : {why}\n"
                    ));
                }
                lines.push_str(&format!("Invalid index file '{index}'\n"));
            }
            None => lines.push_str(&format!(
                "[E::idx_find_and_load] Could not retrieve index file for '{}'\n",
                options.input
            )),
        }
        lines.push_str("Random alignment retrieval only works for indexed files");
        Error::Bare(lines)
    };
    let RecordReader::Bam(bam) = reader else {
        return Err(no_index());
    };
    let index =
        region::load_index(&options.input, options.index.as_deref()).map_err(|_| no_index())?;
    let mut regions: Vec<Region> = Vec::new();
    for text in &options.regions {
        match parse_region(text, header.refs()).filter(|r| r.tid >= 0) {
            Some(r) => regions.push(r),
            None => eprintln!(
                "[W::hts_reglist_create] Region '{text}' specifies an unknown reference name. Continue anyway"
            ),
        }
    }
    if regions.is_empty() {
        return Err(Error::Bare("Multi-region iterator could not be created".into()));
    }
    if options.targets.is_none() {
        let merged = region::merge_by_tid(&regions);
        let top = merged.iter().filter_map(|m| m.first()).map(|r| r.tid).max().unwrap_or(0);
        let mut intervals = vec![Vec::new(); top as usize + 1];
        for list in merged {
            for r in list {
                intervals[r.tid as usize].push((r.beg + 1, r.end));
            }
        }
        reports.states[0].tracker.targets = Some(Targets::new(intervals, &ref_lens(header)));
    }
    let mut failure = None;
    let read =
        region::for_each_region_batch(bam, &index, &options.input, &regions, true, &mut |batch| {
            reports.add_batches(vec![batch.clone()]).map_err(|e| {
                failure = Some(e);
                Error::Failed
            })
        });
    if let Some(message) = failure {
        return Err(failed(reports, message, "Failure while running the iterator"));
    }
    read?;
    reports.finish().map_err(Error::Bare)
}

/// The report of all reads to stdout, then each `-S` report to its file.
fn write_reports(
    options: &StatsOptions,
    header: &Header,
    source: Option<&dyn ReferenceSource>,
    mut reports: Reports<'_>,
) -> Result<(), Error> {
    let settings = &options.settings;
    let mut text = Vec::new();
    for state in &mut reports.states {
        state.tracker.coverage.flush(None).map_err(Error::Bare)?;
        let rs = (options.ref_stats && state.split_value.is_none()).then(|| {
            let mut warnings = Vec::new();
            let rs = ref_stats::collect(
                header,
                state.tracker.targets.as_ref(),
                source,
                options.ref_chunk,
                &mut warnings,
            );
            warnings.iter().for_each(|w| eprintln!("{w}"));
            rs
        });
        let split = options.split_tag.as_deref().zip(state.split_value.as_deref());
        let heading =
            Heading { version: &options.version, command_line: &options.command_line, split };
        let report = Report {
            settings,
            tracker: &mut state.tracker,
            counters: &mut state.counters,
            ref_stats: rs.as_ref(),
        };
        text.push((state.split_value.clone(), write_report(&heading, report)));
    }
    let mut out = std::io::stdout().lock();
    for (value, report) in text {
        match value {
            None => out
                .write_all(report.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| Error::io("stdout", e))?,
            Some(value) => {
                let prefix = options.split_prefix.as_deref().unwrap_or(&options.input);
                let name = format!("{prefix}_{value}.bamstat");
                std::fs::write(&name, report)
                    .map_err(|_| Error::Bare(format!("Could not open '{name}' for writing.")))?;
            }
        }
    }
    Ok(())
}
