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

/// What the command line asks for.
pub enum ReheaderRequest {
    /// `-h`: the usage on stdout, exit 0.
    Help,
    Run(ReheaderOptions),
}

pub fn parse(inv: &Invocation, args: &[String]) -> Result<ReheaderRequest, Error> {
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
            "h" => return Ok(ReheaderRequest::Help),
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
    Ok(ReheaderRequest::Run(ReheaderOptions {
        input,
        new_header,
        in_place,
        pg: (!no_pg).then(|| inv.pg_fields(&argv)),
    }))
}
