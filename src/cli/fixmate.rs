//! `fixmate`'s command line → [`FixmateOptions`] (samtools 1.24 `bam_mate.c`).

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::Globals;
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::fixmate::{FixmateOptions as Fix, sanitize};
use crate::pipeline::fixmate::FixmateOptions;

pub const USAGE: &str = include_str!("usage/fixmate.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "fixmate",
    short: "rpcmMO:@:uz:",
    long: &[
        LongOpt { name: "sanitize", has_arg: true, key: "z" },
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
    ],
    globals: Some(Globals::O_AND_THREADS),
    globals_first: false,
    unlisted: &["--write-index"],
};

pub fn parse(inv: &Invocation, args: &[String]) -> Result<FixmateOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut fix = Fix::default();
    let mut out = OutputChoice::default();
    let mut uncompressed = false;
    let mut common = CommonOptions::default();
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "r" => fix.remove = true,
            "p" => fix.proper_pair_check = false,
            "c" => fix.template_cigar = true,
            "m" => fix.mate_score = true,
            "M" => fix.base_mods = true,
            "u" => uncompressed = true,
            "z" => {
                fix.sanitize = sanitize::parse_options(v)
                    .map_err(|e| Error::Bare(format!("samtools sanitize: {e}")))?
            }
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    if positionals.len() < 2 {
        return Err(Error::ShowUsage(None));
    }
    let output = positionals[1].clone();
    let format = out.format(&output);
    // htslib quirk kept by fixmate: the extension overwrites the mode after "-u" set level 0.
    let level = match out.level {
        Some(l) => l,
        None if uncompressed && OutputFormat::from_path(&output).is_none() => 0,
        None => -1,
    };
    out.use_reference(common.reference.as_deref());
    Ok(FixmateOptions {
        input: positionals[0].clone(),
        output,
        spec: out.spec(format, level),
        threads: common.threads.total(),
        reference: common.reference.clone(),
        // fixmate writes no index: samtools takes --write-index and ignores it.
        pg: common.pg(inv, &super::permuted::permuted(&OPTIONS, args)),
        fix,
    })
}

/// Runs `fixmate` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::fixmate::run_on_pool)
}
