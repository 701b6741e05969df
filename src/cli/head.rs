//! `head`'s command line → [`HeadOptions`] (samtools 1.24 `main_head` in `sam_view.c`); the work
//! is [`crate::pipeline::head`].

use super::getopt::LongOpt;
use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::head::HeadOptions;

pub const USAGE: &str = include_str!("usage/head.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "head",
    short: "h:n:T:@:",
    long: &[
        LongOpt { name: "headers", has_arg: true, key: "h" },
        LongOpt { name: "records", has_arg: true, key: "n" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 'T', '@')
    globals: Some(Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        reference: Take::Short("T"),
        threads: Take::Short("@"),
        ..Globals::LONG
    }),
    // parse_sam_global_opt takes it, head's usage does not list it.
    globals_first: true,
    unlisted: &["--write-index"],
};

/// `stdin_is_terminal` decides samtools' `nargs == 0 && isatty(STDIN_FILENO)` case.
/// `Err(Error::Help)`: the usage on stdout (no input on a terminal).
pub fn parse(args: &[String], stdin_is_terminal: bool) -> Result<HeadOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut options = HeadOptions {
        input: "-".into(),
        header_lines: None,
        records: 0,
        threads: 1,
        reference: None,
        filter: None,
    };
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            // strtoull(optarg, NULL, 0)
            "h" => options.header_lines = Some(super::c_number::strtoul(v, 0).value),
            "n" => options.records = super::c_number::strtoul(v, 0).value,
            "@" => options.threads = global::parse_threads(v)?.total(),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                if let Some(expr) = global::parse_input_fmt_option(v, &mut options.reference)? {
                    options.filter = Some(expr);
                }
            }
            "T" => options.reference = Some(v.to_string()),
            // --write-index: nothing to write.
            _ => {}
        }
    }
    match positionals.as_slice() {
        [] if stdin_is_terminal => Err(Error::Help),
        [] => Ok(options),
        [input] => {
            options.input = input.clone();
            Ok(options)
        }
        _ => Err(Error::ShowUsage(None)),
    }
}

/// Runs `head` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    parse(args, std::io::stdin().is_terminal()).and_then(|o| crate::pipeline::head::run(&o))
}
