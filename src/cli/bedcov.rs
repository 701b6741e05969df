//! `bedcov`'s command line → [`BedcovRunOptions`] (samtools 1.24 `main_bedcov` in
//! `bedcov.c`); the work is [`crate::pipeline::bedcov`].

use super::c_number::atoi;
use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{self, Globals};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::bedcov::BedcovRunOptions;
use crate::record::layout::flags;

pub const USAGE: &str = include_str!("usage/bedcov.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "bedcov",
    short: "Q:Xg:G:jd:Hc",
    long: &[
        LongOpt { name: "min-MQ", has_arg: true, key: "Q" },
        LongOpt { name: "min-mq", has_arg: true, key: "Q" },
        LongOpt { name: "max-depth", has_arg: true, key: "max-depth" },
    ],
    globals: Some(Globals::INPUT_OPTIONS_ONLY),
    globals_first: false,
    unlisted: &["--min-mq", "--write-index"],
};

/// `-g`/`-G`: flags up to SUPPLEMENTARY only.
fn flag_value(v: &str) -> Result<u16, Error> {
    match parse_flags(v) {
        Ok(f) if f <= 0xfff => Ok(f),
        _ => Err(Error::Bare(format!("samtools bedcov: Flag value \"{v}\" is not supported"))),
    }
}

pub fn parse(args: &[String]) -> Result<BedcovRunOptions, Error> {
    let (opts, mut positionals) = OPTIONS.parse_or_usage(args)?;
    let mut o = BedcovRunOptions {
        excl_flags: flags::UNMAP | flags::SECONDARY | flags::QCFAIL | flags::DUP,
        ..BedcovRunOptions::default()
    };
    let mut with_indexes = false;
    // `DEFAULT_DEPTH` is INT_MAX; a `-d` above the cap raises it (`bedcov.c`).
    let (mut min_depth, mut max_depth) = (-1, i64::from(i32::MAX));
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "Q" => o.min_mapq = atoi(v),
            "X" => with_indexes = true,
            "c" => o.read_counts = true,
            "H" => o.header = true,
            "g" => o.excl_flags &= !flag_value(v)?,
            "G" => o.excl_flags |= flag_value(v)?,
            "j" => o.skip_deletions = true,
            "d" => {
                min_depth = i64::from(atoi(v));
                o.min_depth = Some(min_depth).filter(|&d| d >= 0);
            }
            "max-depth" => max_depth = i64::from(atoi(v)),
            "reference" => o.reference = Some(v.to_string()),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                global::parse_input_fmt_option(v, &mut o.reference)?;
            }
            _ => {}
        }
    }
    if positionals.len() < 2 {
        return Err(Error::ShowUsage(None));
    }
    o.bed = positionals.remove(0);
    if with_indexes {
        if positionals.len() % 2 != 0 {
            return Err(Error::Bare(
                "ERROR: odd number of filenames detected! Each BAM file should have an index file"
                    .into(),
            ));
        }
        let n = positionals.len() / 2;
        o.index_files = Some(positionals.split_off(n));
    }
    o.inputs = positionals;
    o.pileup_cap = Some(if min_depth > max_depth { min_depth } else { max_depth });
    Ok(o)
}

/// Runs `bedcov` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(|o| crate::pipeline::bedcov::run(&o))
}
