//! `reheader`'s command line → [`ReheaderOptions`] (samtools 1.24 `main_reheader` in
//! `bam_reheader.c`); the work is [`crate::pipeline::reheader`].

use super::Invocation;
use super::getopt::LongOpt;
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::reheader::{NewHeader, ReheaderOptions};

pub const USAGE: &str = include_str!("usage/reheader.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "reheader",
    short: "hiPc:",
    long: &[
        LongOpt { name: "help", has_arg: false, key: "h" },
        LongOpt { name: "in-place", has_arg: false, key: "i" },
        LongOpt { name: "no-PG", has_arg: false, key: "P" },
        LongOpt { name: "command", has_arg: true, key: "c" },
    ],
    globals: None,
    globals_first: false,
    unlisted: &["-h", "--help"],
};

/// `Err(Error::Help)`: `-h`: the usage on stdout, exit 0.
pub fn parse(inv: &Invocation, args: &[String]) -> Result<ReheaderOptions, Error> {
    let (opts, positionals) = OPTIONS.parse(args).map_err(|e| {
        // samtools adds its own line after getopt's.
        Error::ShowUsage(Some(format!("reheader: {e}\nInvalid option '?'")))
    })?;
    let (mut in_place, mut no_pg, mut command) = (false, false, None);
    for o in opts {
        match o.key.as_str() {
            "P" => no_pg = true,
            "i" => in_place = true,
            "c" => command = o.value,
            "h" => return Err(Error::Help),
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    let (new_header, input) = match (command, positionals.as_slice()) {
        (Some(cmd), [input]) => (NewHeader::Command(cmd), input.clone()),
        (None, [file, input]) => (NewHeader::File(file.clone()), input.clone()),
        _ => return Err(Error::ShowUsage(None)),
    };
    // samtools stringifies argv after getopt has permuted it.
    let argv = super::permuted::permuted(&OPTIONS, args);
    Ok(ReheaderOptions { input, new_header, in_place, pg: (!no_pg).then(|| inv.pg_fields(&argv)) })
}

/// Runs `reheader` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::reheader::run)
}
