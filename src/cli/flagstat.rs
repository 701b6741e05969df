//! `flagstat`'s command line → [`FlagstatOptions`] (samtools 1.24 `bam_flagstat` in
//! `bam_stat.c`); the work is [`crate::pipeline::flagstat`].

use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::flagstat::report::ReportFormat;
use crate::pipeline::flagstat::FlagstatOptions;

pub const USAGE: &str = include_str!("usage/flagstat.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "flagstat",
    short: "@:O:",
    long: &[],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', '-', '-', '@')
    globals: Some(Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Short("O"),
        output_fmt_option: Take::Refused,
        reference: Take::Refused,
        threads: Take::Short("@"),
        ..Globals::LONG
    }),
    // parse_sam_global_opt takes it, flagstat's usage does not list it.
    globals_first: true,
    unlisted: &["--write-index"],
};

/// `Err(Error::Help)`: the usage on stdout (no input at all).
pub fn parse(args: &[String]) -> Result<FlagstatOptions, Error> {
    let (opts, mut positionals) = OPTIONS.parse_or_usage(args)?;
    let (mut format, mut threads, mut filter) = (ReportFormat::Default, 1, None);
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "O" => format = ReportFormat::from_option(v),
            "@" => threads = global::parse_threads(v)?.total(),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                // The CRAM is read for flags alone: a reference would never be read.
                if let Some(expr) = global::parse_input_fmt_option(v, &mut None)? {
                    filter = Some(expr);
                }
            }
            // --write-index: nothing to write.
            _ => {}
        }
    }
    match positionals.len() {
        0 => Err(Error::Help),
        1 => Ok(FlagstatOptions { input: positionals.remove(0), format, threads, filter }),
        _ => Err(Error::ShowUsage(None)),
    }
}

/// Runs `flagstat` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(|o| crate::pipeline::flagstat::run(&o))
}
