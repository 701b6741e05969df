//! `cram-size`'s command line → [`CramSizeOptions`] (samtools 1.24 `main_cram_size` in
//! `cram_size.c`); the work is [`crate::pipeline::cram_size`].

use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::cram_size::CramSizeOptions;

pub const USAGE: &str = include_str!("usage/cram_size.txt");

/// `SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', '-', '-')`: of the global options only
/// `--input-fmt-option`, `--write-index` and `--verbosity`, all ignored.
const GLOBALS: Globals = Globals {
    input_fmt: Take::Refused,
    output_fmt: Take::Refused,
    output_fmt_option: Take::Refused,
    reference: Take::Refused,
    threads: Take::Refused,
    ..Globals::LONG
};

pub const OPTIONS: OptionTable = OptionTable {
    command: "cram-size",
    short: "vo:e",
    long: &[
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "verbose", has_arg: false, key: "v" },
        LongOpt { name: "encodings", has_arg: false, key: "e" },
    ],
    globals: Some(GLOBALS),
    // samtools' usage is one line naming no option on a line of its own.
    unlisted: &[
        "-v",
        "-e",
        "-o",
        "--output",
        "--verbose",
        "--encodings",
        "--input-fmt-option",
        "--write-index",
        "--verbosity",
    ],
    globals_first: false,
};

/// Parses `cram-size` arguments: a mistake, or no input with stdin a terminal, is the usage on
/// stdout and exit 0, as samtools.
pub fn parse(args: &[String], stdin_is_terminal: bool) -> Result<CramSizeOptions, Error> {
    let (opts, inputs) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("cram-size: {e}");
            return Err(Error::Help);
        }
    };
    let mut o = CramSizeOptions::default();
    for opt in opts {
        match opt.key.as_str() {
            "v" => o.verbose = true,
            "e" => o.encodings = true,
            "o" => o.output = opt.value,
            "input-fmt-option" | "write-index" | "verbosity" => {}
            _ => return Err(Error::Help),
        }
    }
    if inputs.is_empty() && stdin_is_terminal {
        return Err(Error::Help);
    }
    // samtools reads the first input only.
    o.input = inputs.into_iter().next().unwrap_or_else(|| "-".to_string());
    Ok(o)
}

/// Runs `samtools cram-size`.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    let o = parse(args, std::io::stdin().is_terminal())?;
    crate::pipeline::cram_size::run(&o)
}
