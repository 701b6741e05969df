//! `index`'s command line → [`IndexOptions`] (samtools 1.24 `bam_index.c` options); the work is
//! [`crate::pipeline::index`].

use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::index::IndexOptions;
use crate::pipeline::threads::Threads;

pub const USAGE: &str = include_str!("usage/index.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "index",
    short: "bcm:Mo:@:",
    long: &[
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "bai", has_arg: false, key: "b" },
        LongOpt { name: "csi", has_arg: false, key: "c" },
        LongOpt { name: "min-shift", has_arg: true, key: "m" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', '-', '-', '-', '-', '@'); index refuses the other two too
    globals: Some(Globals {
        input_fmt: Take::Refused,
        input_fmt_option: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        reference: Take::Refused,
        threads: Take::Short("@"),
        write_index: Take::Refused,
        verbosity: Take::Refused,
    }),
    globals_first: false,
    unlisted: &[],
};

pub fn parse(args: &[String]) -> Result<IndexOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let (mut csi, mut min_shift, mut multiple, mut output, mut threads) =
        (false, 14i64, false, None, Threads::default());
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "b" => csi = false,
            "c" => csi = true,
            "m" => {
                csi = true;
                // parse_int_value
                min_shift = super::c_number::parse_int_value(v)
                    .map(i64::from)
                    .ok_or_else(|| Error::Usage("invalid min_shift".into()))?;
            }
            "M" => multiple = true,
            "o" => output = Some(v.to_string()),
            // parse_int_value, with index's own message
            "@" => {
                threads = super::c_number::parse_int_value(v)
                    .map(|n| Threads::from_extra(n.max(0) as usize))
                    .ok_or_else(|| Error::Usage("invalid thread count".into()))?
            }
            _ => {}
        }
    }
    let mut inputs = positionals;
    if inputs.is_empty() {
        return Err(Error::Help);
    }
    if inputs.len() == 2 && output.is_none() && crate::pipeline::index::names_an_index(&inputs[1]) {
        output = inputs.pop();
    }
    if inputs.len() > 1 && !multiple {
        return Err(Error::Message(
            "use -M to enable indexing more than one alignment file".into(),
        ));
    }
    if output.is_some() && inputs.len() > 1 {
        return Err(Error::Message("can't use -o with multiple input alignment files".into()));
    }
    Ok(IndexOptions {
        inputs,
        output,
        csi_min_shift: csi.then_some(min_shift.clamp(0, 31) as u32),
        threads: threads.total(),
    })
}

/// Runs `index` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(crate::pipeline::index::run)
}
