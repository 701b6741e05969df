//! `idxstats`' command line → [`IdxstatsOptions`] (samtools 1.24 `bam_idxstats` in
//! `bam_index.c`); the work is [`crate::pipeline::idxstats`].

use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::idxstats::IdxstatsOptions;

pub const USAGE: &str = include_str!("usage/idxstats.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "idxstats",
    short: "@:X",
    long: &[],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', '-', '@')
    globals: Some(Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        reference: Take::Refused,
        threads: Take::Short("@"),
        ..Globals::LONG
    }),
    // parse_sam_global_opt takes it, idxstats' usage does not list it.
    globals_first: true,
    unlisted: &["--write-index"],
};

/// `Err(Error::Help)`: the usage on stdout (no input at all).
pub fn parse(args: &[String]) -> Result<IdxstatsOptions, Error> {
    let (opts, mut positionals) = OPTIONS.parse_or_usage(args)?;
    let mut explicit_index = false;
    let mut threads = 1;
    let mut filter = None;
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "X" => explicit_index = true,
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
    let wanted = if explicit_index { 2 } else { 1 };
    if positionals.len() != wanted {
        return if positionals.is_empty() { Err(Error::Help) } else { Err(Error::ShowUsage(None)) };
    }
    let index = explicit_index.then(|| positionals.pop()).flatten();
    let input = positionals.remove(0);
    Ok(IdxstatsOptions { input, index, threads, filter })
}

/// Runs `idxstats` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(|o| crate::pipeline::idxstats::run(&o))
}
