//! `fixmate`'s command line → [`FixmateOptions`] (samtools 1.24 `bam_mate.c`).

use super::getopt::{self, LongOpt};
use super::outfmt::OutputChoice;
use super::{Invocation, global};
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::fixmate::{FixmateOptions as Fix, sanitize};
use crate::pipeline::fixmate::FixmateOptions;

pub const USAGE: &str = include_str!("usage/fixmate.txt");

const SHORT: &str = "rpcmMO:@:uz:";

const LONG: &[LongOpt] = &[
    LongOpt { name: "sanitize", has_arg: true, key: "z" },
    LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
    LongOpt { name: "input-fmt-option", has_arg: true, key: "input-fmt-option" },
    LongOpt { name: "output-fmt", has_arg: true, key: "O" },
    LongOpt { name: "output-fmt-option", has_arg: true, key: "output-fmt-option" },
    LongOpt { name: "reference", has_arg: true, key: "reference" },
    LongOpt { name: "threads", has_arg: true, key: "@" },
    LongOpt { name: "verbosity", has_arg: true, key: "verbosity" },
];

pub fn parse(inv: &Invocation, args: &[String]) -> Result<FixmateOptions, Error> {
    let (opts, positionals) =
        getopt::parse(args, SHORT, LONG).map_err(|e| Error::Usage(e.to_string()))?;
    let mut fix = Fix::default();
    let mut out = OutputChoice::default();
    let mut uncompressed = false;
    let mut threads = 0;
    let mut no_pg = false;
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "r" => fix.remove = true,
            "p" => fix.proper_pair_check = false,
            "c" => fix.template_cigar = true,
            "m" => fix.mate_score = true,
            "M" => fix.base_mods = true,
            "u" => uncompressed = true,
            "z" => {
                fix.sanitize = sanitize::parse_options(v).map_err(|e| {
                    eprintln!("samtools sanitize: {e}");
                    Error::Failed
                })?
            }
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            "@" => threads = global::parse_threads(v)?,
            "no-PG" => no_pg = true,
            "input-fmt-option" | "reference" | "verbosity" => {}
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    if positionals.len() < 2 {
        eprint!("{USAGE}");
        return Err(Error::Failed);
    }
    let output = positionals[1].clone();
    let format = out.format(&output);
    // htslib quirk kept by fixmate: the extension overwrites the mode after "-u" set level 0.
    let level = match out.level {
        Some(l) => l,
        None if uncompressed && OutputFormat::from_path(&output).is_none() => 0,
        None => -1,
    };
    Ok(FixmateOptions {
        input: positionals[0].clone(),
        output,
        format,
        level,
        threads: threads + 1,
        pg: (!no_pg).then(|| inv.pg_fields(args)),
        fix,
    })
}
