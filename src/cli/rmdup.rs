//! `rmdup`'s command line → [`RmdupOptions`] (samtools 1.24 `bam_rmdup` in `bam_rmdup.c`);
//! the work is [`crate::pipeline::rmdup`].

use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::pipeline::rmdup::RmdupOptions;

pub const USAGE: &str = include_str!("usage/rmdup.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "rmdup",
    short: "sS",
    long: &[],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 0, 0, 0, '-').
    globals: Some(Globals { input_fmt: Take::Refused, threads: Take::Refused, ..Globals::LONG }),
    globals_first: false,
    // The usage's "Option: -s" line does not start with the option; --write-index is taken.
    unlisted: &["-s", "--write-index"],
};

/// Parses `rmdup` arguments: any mistake, or fewer than two files, is the usage on stderr
/// and exit 1.
pub fn parse(args: &[String]) -> Result<RmdupOptions, Error> {
    let (opts, positionals) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(super::getopt::GetoptError::Refused { .. }) => return Err(Error::ShowUsage(None)),
        Err(e) => return Err(Error::ShowUsage(Some(format!("rmdup: {e}")))),
    };
    let (mut single_end, mut force_single_end, mut format) = (false, false, None);
    for opt in opts {
        let v = opt.value.unwrap_or_default();
        match opt.key.as_str() {
            "s" => single_end = true,
            "S" => (single_end, force_single_end) = (true, true),
            "output-fmt" => {
                let name = v.split(',').next().unwrap_or_default().to_ascii_lowercase();
                format = match name.as_str() {
                    "sam" => Some(OutputFormat::Sam),
                    "bam" => Some(OutputFormat::Bam),
                    "cram" => Some(OutputFormat::Cram),
                    _ => return Err(Error::ShowUsage(None)),
                };
            }
            // The other global options change nothing mdsam writes here.
            _ => {}
        }
    }
    let [input, output, ..] = &positionals[..] else { return Err(Error::ShowUsage(None)) };
    Ok(RmdupOptions {
        input: input.clone(),
        output: output.clone(),
        single_end,
        force_single_end,
        format,
    })
}

/// Runs `samtools rmdup`.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    crate::pipeline::rmdup::run(&parse(args)?)
}
