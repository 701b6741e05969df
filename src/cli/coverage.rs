//! `coverage`'s command line → [`CoverageRunOptions`] (samtools 1.24 `main_coverage` in
//! `coverage.c`); the work is [`crate::pipeline::coverage`].
//!
//! samtools sets `opterr = 0`: a mistake prints its own line and the usage on stdout, exit 0.

use super::c_number::atoi;
use super::flags::parse_flags;
use super::getopt::{GetoptError, LongOpt};
use super::global::{self, Globals};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::depth::pileup_cap::HTSLIB_DEFAULT;
use crate::pipeline::coverage::CoverageRunOptions;
use crate::record::layout::flags;

pub const USAGE: &str = include_str!("usage/coverage.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "coverage",
    short: "Ao:l:q:Q:hHw:r:b:md:D",
    long: &[
        LongOpt { name: "rf", has_arg: true, key: "rf" },
        LongOpt { name: "ff", has_arg: true, key: "ff" },
        LongOpt { name: "incl-flags", has_arg: true, key: "rf" },
        LongOpt { name: "excl-flags", has_arg: true, key: "ff" },
        LongOpt { name: "bam-list", has_arg: true, key: "b" },
        LongOpt { name: "min-read-len", has_arg: true, key: "l" },
        LongOpt { name: "min-MQ", has_arg: true, key: "q" },
        LongOpt { name: "min-mq", has_arg: true, key: "q" },
        LongOpt { name: "min-BQ", has_arg: true, key: "Q" },
        LongOpt { name: "min-bq", has_arg: true, key: "Q" },
        LongOpt { name: "histogram", has_arg: false, key: "m" },
        LongOpt { name: "ascii", has_arg: false, key: "A" },
        LongOpt { name: "plot-depth", has_arg: false, key: "D" },
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "no-header", has_arg: false, key: "H" },
        LongOpt { name: "n-bins", has_arg: true, key: "w" },
        LongOpt { name: "region", has_arg: true, key: "r" },
        LongOpt { name: "help", has_arg: false, key: "h" },
        LongOpt { name: "depth", has_arg: true, key: "d" },
        LongOpt { name: "min-depth", has_arg: true, key: "min-depth" },
    ],
    globals: Some(Globals::INPUT_OPTIONS_ONLY),
    globals_first: true,
    unlisted: &["--min-mq", "--min-bq", "--write-index", "--incl-flags", "--excl-flags"],
};

/// The histogram width when none is asked for: the terminal's (`COLUMNS`) less 40, at least 40.
/// Difference: samtools also asks stderr's terminal for its width; mdsam does not.
fn terminal_bins() -> i64 {
    let columns = std::env::var("COLUMNS").map_or(0, |v| i64::from(atoi(&v)));
    if columns > 60 { columns - 40 } else { 40 }
}

pub fn parse(args: &[String]) -> Result<CoverageRunOptions, Error> {
    let (opts, positionals) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            match e {
                GetoptError::Unknown(o) if o.len() == 1 => {
                    eprintln!("samtools coverage: invalid option -- '{o}'")
                }
                GetoptError::Unknown(o) if o.starts_with("--") => {
                    eprintln!("samtools coverage: unrecognised option '{o}'")
                }
                _ => {}
            }
            return Err(Error::Help);
        }
    };
    let mut o = CoverageRunOptions {
        fail_flags: flags::UNMAP | flags::SECONDARY | flags::QCFAIL | flags::DUP,
        min_depth: 1,
        // `coverage.c`'s `max_depth`.
        pileup_cap: Some(1_000_000),
        header: true,
        bins: 50,
        threads: 1,
        ..CoverageRunOptions::default()
    };
    let mut full_width = true;
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "rf" => {
                o.required_flags =
                    parse_flags(v).map_err(|_| Error::Bare(format!("Could not parse --rf {v}")))?
            }
            "ff" => {
                o.fail_flags =
                    parse_flags(v).map_err(|_| Error::Bare(format!("Could not parse --ff {v}")))?
            }
            "min-depth" => {
                o.min_depth =
                    u64::try_from(i64::from(atoi(v))).ok().filter(|&d| d > 0).unwrap_or(o.min_depth)
            }
            "o" => {
                o.output = Some(v.to_string());
                full_width = false;
            }
            "l" => o.min_len = i64::from(atoi(v)),
            "q" => o.min_mapq = atoi(v),
            "Q" => o.min_base_quality = i64::from(atoi(v)).max(0) as u32,
            // `-d 0` lifts the cap (INT_MAX); a negative one leaves htslib's own.
            "d" => {
                o.pileup_cap = Some(match i64::from(atoi(v)) {
                    d if d > 0 => d,
                    0 => i64::from(i32::MAX),
                    _ => HTSLIB_DEFAULT,
                })
            }
            "w" => {
                o.bins = i64::from(atoi(v));
                full_width = false;
                o.histogram = true;
            }
            "r" => o.region = Some(v.to_string()),
            "b" => o.bam_list = Some(v.to_string()),
            "m" => o.histogram = true,
            "A" => {
                o.ascii = true;
                o.histogram = true;
            }
            "D" => {
                o.histogram = true;
                o.plot_depth = true;
            }
            "H" => o.header = false,
            "h" => return Err(Error::Help),
            "reference" => o.reference = Some(v.to_string()),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                global::parse_input_fmt_option(v, &mut o.reference)?;
            }
            _ => {}
        }
    }
    if positionals.is_empty() && o.bam_list.is_none() {
        return Err(Error::Help);
    }
    if o.output.as_deref() == Some("-") {
        o.output = None;
    }
    if o.bins <= 0 || full_width {
        o.bins = terminal_bins();
    }
    o.inputs = positionals;
    Ok(o)
}

/// Runs `coverage` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(|o| crate::pipeline::coverage::run(&o))
}
