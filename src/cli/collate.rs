//! `collate`'s command line → [`CollateOptions`] (samtools 1.24 `bamshuf.c`).
//!
//! Output naming: `-O` writes to stdout; `-o FILE` takes its format from the extension (text SAM
//! for an unknown one, as htslib's mode without a format letter); otherwise `<prefix>.bam`, or
//! `<prefix>.<ext>` for `--output-fmt`. The default level is 1; `-u` is level 0.

use super::c_number::atoi;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::{Invocation, global};
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::output_spec::FormatOptions;
use crate::pipeline::collate::CollateOptions;
use crate::pipeline::memory_budget::{MemoryBudget, PER_THREAD_DEFAULT};
use std::io::IsTerminal;

pub const USAGE: &str = include_str!("usage/collate.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "collate",
    short: "n:l:uOo:@:fr:T:",
    long: &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "max-memory", has_arg: true, key: "max-memory" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 0, 0, 0, '@')
    globals: Some(Globals { input_fmt: Take::Refused, threads: Take::Short("@"), ..Globals::LONG }),
    globals_first: false,
    unlisted: &["--write-index"],
};

pub fn parse(inv: &Invocation, args: &[String]) -> Result<CollateOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut bins = 64i64;
    let mut level = 1i64;
    let mut uncompressed = false;
    let mut to_stdout = false;
    let mut output: Option<String> = None;
    let mut fast = false;
    let mut store = 10000i64;
    let mut common = CommonOptions::default();
    let mut out_fmt: Option<OutputFormat> = None;
    let mut fmt_options = FormatOptions::default();
    let mut memory: Option<u64> = None;
    let mut tmp_prefix: Option<String> = None;
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "n" => bins = i64::from(atoi(v)),
            "l" => level = i64::from(atoi(v)),
            "u" => uncompressed = true,
            "O" => to_stdout = true,
            "o" => output = Some(v.to_string()),
            "f" => fast = true,
            "r" => store = i64::from(atoi(v)),
            "output-fmt" => out_fmt = Some(global::parse_output_fmt(v, &mut fmt_options)?.0),
            "T" => tmp_prefix = Some(v.to_string()),
            "max-memory" => {
                memory = Some(super::sort::parse_memory(v));
                if memory == Some(0) {
                    return Err(Error::Usage(format!("invalid --max-memory size \"{v}\"")));
                }
            }
            // collate's level is -l/-u only, and it writes no index; mdsam's deflate= applies.
            "output-fmt-option" => fmt_options.apply(v),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    if uncompressed {
        level = 0;
    }
    let level = if (0..=9).contains(&level) { level as i32 } else { 1 };
    let mut positionals = positionals.into_iter();
    let Some(input) = positionals.next() else {
        // Bare `samtools collate` at a terminal: the usage alone, on stdout (still exit 1).
        if args.is_empty() && std::io::stdin().is_terminal() {
            print!("{USAGE}");
            return Err(Error::Failed);
        }
        return Err(Error::ShowUsage(Some("collate: no input filename specified.".into())));
    };
    let prefix = positionals.next();
    // samtools takes the positional prefix over `-T`.
    let tmp_prefix = prefix.clone().or(tmp_prefix);
    if prefix.is_none() && !to_stdout && output.is_none() {
        return Err(Error::ShowUsage(None));
    }
    if to_stdout && output.is_some() {
        let line = "collate: -o and -O options cannot be used together.";
        return Err(Error::ShowUsage(Some(line.into())));
    }
    let (output, format) = if to_stdout {
        ("-".to_string(), out_fmt.unwrap_or(OutputFormat::Bam))
    } else if let Some(o) = output {
        let f = out_fmt.or_else(|| OutputFormat::from_path(&o)).unwrap_or(OutputFormat::Sam);
        (o, f)
    } else {
        let prefix = prefix.unwrap_or_default();
        match out_fmt {
            None | Some(OutputFormat::Bam) => (format!("{prefix}.bam"), OutputFormat::Bam),
            Some(OutputFormat::Sam) => (format!("{prefix}.sam"), OutputFormat::Sam),
            Some(OutputFormat::SamGz) => (format!("{prefix}.sam.gz"), OutputFormat::SamGz),
            Some(OutputFormat::Cram) => (format!("{prefix}.cram"), OutputFormat::Cram),
        }
    };
    // A CRAM output is encoded against the reference CRAM input is decoded against.
    fmt_options.cram.reference = common.reference.clone().or(fmt_options.cram.reference);
    Ok(CollateOptions {
        input,
        output,
        spec: fmt_options.spec(format, level),
        threads: common.threads.total(),
        reference: common.reference.clone(),
        bins: bins.max(1) as usize,
        fast: fast.then_some(store.max(2) as usize),
        pg: common.pg(inv, &super::permuted::permuted(&OPTIONS, args)),
        memory: MemoryBudget::per_sorting_thread(memory, PER_THREAD_DEFAULT, common.threads)
            .limit(),
        tmp_prefix,
    })
}

/// Runs `collate` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::collate::run_on_pool)
}
