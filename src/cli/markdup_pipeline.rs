//! `markdup-pipeline`'s command line → [`PipelineOptions`].
//!
//! The union of the four commands' options. Where fixmate and markdup share a letter, the letter
//! is markdup's (`-r` removes duplicates, `-c` clears old duplicate marks) and fixmate's option
//! is long: `--fixmate-remove` (fixmate `-r`), `--fixmate-cigar` (fixmate `-c`); fixmate's `-p`
//! keeps its letter. `-l` is the output compression level (as in sort and collate); markdup's
//! `-l` (maximum read length) is `--max-read-length`. markdup's options are checked by
//! markdup's own parser.

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::Globals;
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::index_request;
use crate::ops::fixmate::FixmateOptions as Fix;
use crate::pipeline::markdup_pipeline::PipelineOptions;
use crate::pipeline::memory_budget::MemoryBudget;

pub const USAGE: &str = include_str!("usage/markdup-pipeline.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "markdup-pipeline",
    short: "@:O:ul:rpcsSf:d:m:tT:",
    long: &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "verify", has_arg: false, key: "verify" },
        LongOpt { name: "max-memory", has_arg: true, key: "max-memory" },
        LongOpt { name: "fixmate-remove", has_arg: false, key: "fixmate-remove" },
        LongOpt { name: "fixmate-cigar", has_arg: false, key: "fixmate-cigar" },
        LongOpt { name: "max-read-length", has_arg: true, key: "max-read-length" },
        LongOpt { name: "include-fails", has_arg: false, key: "include-fails" },
        LongOpt { name: "mode", has_arg: true, key: "m" },
        LongOpt { name: "no-multi-dup", has_arg: false, key: "no-multi-dup" },
        LongOpt { name: "read-coords", has_arg: true, key: "read-coords" },
        LongOpt { name: "coords-order", has_arg: true, key: "coords-order" },
        LongOpt { name: "barcode-tag", has_arg: true, key: "barcode-tag" },
        LongOpt { name: "barcode-name", has_arg: false, key: "barcode-name" },
        LongOpt { name: "barcode-rgx", has_arg: true, key: "barcode-rgx" },
        LongOpt { name: "use-read-groups", has_arg: false, key: "use-read-groups" },
        LongOpt { name: "move-umi-to-tag", has_arg: false, key: "move-umi-to-tag" },
        LongOpt { name: "umi-separator", has_arg: true, key: "umi-separator" },
        LongOpt { name: "json", has_arg: false, key: "json" },
        LongOpt { name: "duplicate-count", has_arg: false, key: "duplicate-count" },
        LongOpt { name: "metrics", has_arg: true, key: "metrics" },
    ],
    globals: Some(Globals::O_AND_THREADS),
    globals_first: false,
    unlisted: &[],
};

fn step_pg(inv: &Invocation, step: &str, cl: &[String], whole: &str) -> Vec<(String, String)> {
    let mut fields = inv.pg_fields(&[]);
    for (k, v) in fields.iter_mut() {
        if k == "CL" {
            *v = format!("{} {step} {}", inv.argv0, cl.join(" "));
        }
    }
    fields.push(("DS".into(), format!("{step} step of: {whole}")));
    fields
}

pub fn parse(inv: &Invocation, args: &[String]) -> Result<PipelineOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut out = OutputChoice::default();
    let mut uncompressed = false;
    let mut common = CommonOptions::default();
    let mut verify = false;
    let mut fix = Fix { mate_score: true, ..Fix::default() };
    let mut fix_args: Vec<String> = vec!["-m".into()];
    // markdup's own arguments, for its parser and its @PG line.
    let mut md_args: Vec<String> = Vec::new();
    let (mut memory, mut tmp_prefix) = (None, None);
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.clone().unwrap_or_default();
        match o.key.as_str() {
            "O" => out.set_format(&v)?,
            "output-fmt-option" => out.set_option(&v),
            "u" => uncompressed = true,
            "l" => out.level = Some(super::c_number::parse_int_value(&v).unwrap_or(-1)),
            "verify" => verify = true,
            "p" => {
                fix.proper_pair_check = false;
                fix_args.push("-p".into());
            }
            "fixmate-remove" => {
                fix.remove = true;
                fix_args.push("-r".into());
            }
            "fixmate-cigar" => {
                fix.template_cigar = true;
                fix_args.push("-c".into());
            }
            "T" => tmp_prefix = Some(v),
            "max-memory" => {
                let m = super::sort::parse_memory(&v);
                if m == 0 {
                    return Err(Error::Usage(format!("invalid --max-memory size \"{v}\"")));
                }
                memory = Some(m);
            }
            "max-read-length" => md_args.extend(["-l".to_string(), v]),
            "r" | "s" | "S" | "c" | "t" => md_args.push(format!("-{}", o.key)),
            "f" | "d" | "m" => md_args.extend([format!("-{}", o.key), v]),
            "read-coords" | "coords-order" | "barcode-tag" | "barcode-rgx" | "metrics"
            | "umi-separator" => md_args.extend([format!("--{}", o.key), v]),
            "include-fails" | "no-multi-dup" | "barcode-name" | "use-read-groups" | "json"
            | "duplicate-count" | "move-umi-to-tag" => md_args.push(format!("--{}", o.key)),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    if positionals.len() < 2 {
        return Err(Error::ShowUsage(None));
    }
    let (input, output) = (positionals[0].clone(), positionals[1].clone());
    let whole = inv.pg_fields(args).into_iter().find(|(k, _)| k == "CL").map(|(_, v)| v);
    let whole = whole.unwrap_or_default();
    let mut md_full = md_args.clone();
    md_full.extend(["-".to_string(), "-".to_string()]);
    let md_inv = Invocation { argv0: inv.argv0.clone(), command: "markdup".into() };
    let mut markdup = super::markdup::parse(&md_inv, &md_full)?;
    let (output, index) = if common.write_index {
        let (o, idx, bai) = index_request(&output);
        (o, Some((idx, bai)))
    } else {
        (output, None)
    };
    markdup.input = input.clone();
    let level = match out.level {
        _ if uncompressed => 0,
        Some(l) => l,
        None => -1,
    };
    out.use_reference(common.reference.as_deref());
    markdup.spec = out.spec(out.format(&output), level);
    markdup.output = output.clone();
    markdup.threads = common.threads.total();
    markdup.command = whole.clone();
    markdup.pg = None;
    let index = match index {
        Some(_) if !markdup.spec.format.takes_bam_records() => {
            eprintln!("[markdup-pipeline] Ignoring --write-index: indexes are built for BAM only");
            None
        }
        other => other,
    };
    let pg = (!common.no_pg).then(|| {
        let mut md_cl = md_args.clone();
        md_cl.extend(["-".to_string(), output.clone()]);
        let mut fix_cl = fix_args.clone();
        fix_cl.extend(["-u", "-", "-"].map(String::from));
        [
            step_pg(inv, "collate", &["-O", "-u", &input].map(String::from), &whole),
            step_pg(inv, "fixmate", &fix_cl, &whole),
            step_pg(inv, "sort", &["-u", "-"].map(String::from), &whole),
            step_pg(inv, "markdup", &md_cl, &whole),
        ]
    });
    let memory = MemoryBudget::of_machine(memory).bytes();
    Ok(PipelineOptions { markdup, fix, index, pg, verify, memory, tmp_prefix })
}

/// Runs `markdup-pipeline` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::markdup_pipeline::run_on_pool)
}
