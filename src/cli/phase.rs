//! `phase`'s command line → [`PhaseOptions`] (samtools 1.24 `main_phase` in `phase.c`); the
//! work is [`crate::pipeline::phase`].

use super::c_number::atoi;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::pipeline::phase::PhaseOptions;

pub const USAGE: &str = include_str!("usage/phase.txt");

/// `SAM_OPT_GLOBAL_OPTIONS('-', 0, 0, 0, 0, '-')`.
const GLOBALS: Globals =
    Globals { input_fmt: Take::Refused, threads: Take::Refused, ..Globals::LONG };

pub const OPTIONS: OptionTable = OptionTable {
    command: "phase",
    short: "Q:eFq:k:b:l:D:A",
    long: &[
        LongOpt { name: "min-BQ", has_arg: true, key: "Q" },
        LongOpt { name: "min-bq", has_arg: true, key: "Q" },
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
    ],
    globals: Some(GLOBALS),
    globals_first: true,
    // -l (a site list) and -e (only those sites) are commented out of samtools' usage.
    unlisted: &["-l", "-e", "--min-bq", "--write-index"],
};

/// Parses `phase` arguments: the first mistake, or no input, is the usage on stderr and exit 1.
pub fn parse(inv: &super::Invocation, args: &[String]) -> Result<PhaseOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut common = CommonOptions::default();
    let mut choice = OutputChoice::default();
    let mut o = PhaseOptions {
        input: String::new(),
        k: 13,
        prefix: None,
        min_var_lod: 37,
        min_baseq: 13,
        max_depth: 256,
        fix_chimera: true,
        drop_ambiguous: false,
        sites: None,
        only_listed: false,
        pg: None,
        format: OutputFormat::Bam,
        spec: choice.spec(OutputFormat::Bam, -1),
    };
    for opt in opts {
        let v = opt.value.as_deref();
        if common.take(&opt.key, v)? {
            continue;
        }
        let v = v.unwrap_or_default();
        match opt.key.as_str() {
            "D" => o.max_depth = atoi(v),
            "q" => o.min_var_lod = atoi(v),
            "Q" => o.min_baseq = atoi(v),
            "k" => o.k = atoi(v),
            "F" => o.fix_chimera = false,
            "e" => o.only_listed = true,
            "A" => o.drop_ambiguous = true,
            "b" => o.prefix = Some(v.to_string()),
            "l" => o.sites = Some(v.to_string()),
            // samtools shows only its usage for a format it does not know.
            "output-fmt" => choice.set_format(v).map_err(|_| Error::ShowUsage(None))?,
            "output-fmt-option" => choice.set_option(v),
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    let Some(input) = positionals.into_iter().next() else { return Err(Error::ShowUsage(None)) };
    o.input = input;
    o.format = choice.explicit.unwrap_or(OutputFormat::Bam);
    o.spec = choice.spec(o.format, choice.level.unwrap_or(-1));
    o.pg = common.pg(inv, args);
    Ok(o)
}

/// Runs `samtools phase`.
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    crate::pipeline::phase::run(&parse(inv, args)?)
}
