//! `markdup`'s command line → [`MarkdupOptions`] (samtools 1.24 `bam_markdup.c`).

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::Globals;
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::ops::markdup::optical::{CoordRegex, coords_order};
use crate::ops::markdup::{Barcode, MarkdupOptions as Md};
// samtools compiles both regex options with regcomp(REG_EXTENDED): POSIX ERE, so `\d` is `d`.
use super::c_number::atoi;
use crate::io::format::index_request;
use crate::ops::posix_regex::compile_ere;
use crate::pipeline::markdup::MarkdupOptions;

pub const USAGE: &str = include_str!("usage/markdup.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "markdup",
    short: "rsl:StT:O:@:f:d:cm:u",
    long: &[
        LongOpt { name: "include-fails", has_arg: false, key: "include-fails" },
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "mode", has_arg: true, key: "m" },
        LongOpt { name: "no-multi-dup", has_arg: false, key: "no-multi-dup" },
        LongOpt { name: "read-coords", has_arg: true, key: "read-coords" },
        LongOpt { name: "coords-order", has_arg: true, key: "coords-order" },
        LongOpt { name: "barcode-tag", has_arg: true, key: "barcode-tag" },
        LongOpt { name: "barcode-name", has_arg: false, key: "barcode-name" },
        LongOpt { name: "barcode-rgx", has_arg: true, key: "barcode-rgx" },
        LongOpt { name: "use-read-groups", has_arg: false, key: "use-read-groups" },
        LongOpt { name: "json", has_arg: false, key: "json" },
        LongOpt { name: "duplicate-count", has_arg: false, key: "duplicate-count" },
        LongOpt { name: "move-umi-to-tag", has_arg: false, key: "move-umi-to-tag" },
        LongOpt { name: "umi-separator", has_arg: true, key: "umi-separator" },
        LongOpt { name: "metrics", has_arg: true, key: "metrics" },
    ],
    globals: Some(Globals::O_AND_THREADS),
    globals_first: false,
    unlisted: &[],
};

/// The Illumina UMI regex of `--barcode-name` (1.17+).
const BARCODE_NAME: &str = "[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:([!-?A-~]+)";

fn usage_fail() -> Error {
    Error::ShowUsage(None)
}

fn say(msg: &str) -> Error {
    Error::Bare(format!("samtools markdup: {msg}"))
}

pub fn parse(inv: &Invocation, args: &[String]) -> Result<MarkdupOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut md = Md::default();
    let mut out = OutputChoice::default();
    let mut uncompressed = false;
    let mut common = CommonOptions::default();
    let mut metrics = None;
    let mut tmp_prefix = None;
    let (mut stats, mut stats_file, mut json) = (false, None, false);
    let (mut regex, mut regex_order) = (None::<String>, "txy".to_string());
    let (mut bc_tag, mut bc_name, mut bc_regex) = (None::<String>, false, None::<String>);
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "r" => md.remove = true,
            "l" => md.max_length = i64::from(atoi(v)),
            "s" => stats = true,
            "T" => tmp_prefix = Some(v.to_string()),
            "S" => md.supp = true,
            "t" => md.tag = true,
            "f" => {
                stats_file = Some(v.to_string());
                stats = true;
            }
            "d" => md.opt_dist = i64::from(atoi(v)),
            "c" => md.clear = true,
            "m" => match v {
                "t" => md.sequence_mode = false,
                "s" => md.sequence_mode = true,
                _ => {
                    let line = format!("samtools markdup: error, unknown mode '{v}'.\n");
                    return Err(Error::ShowUsage(Some(line)));
                }
            },
            "u" => uncompressed = true,
            "include-fails" => md.include_fails = true,
            "no-multi-dup" => md.check_chain = false,
            "read-coords" => regex = Some(v.to_string()),
            "coords-order" => regex_order = v.to_string(),
            "barcode-tag" => bc_tag = Some(v.to_string()),
            "barcode-name" => bc_name = true,
            "barcode-rgx" => {
                bc_name = true;
                bc_regex = Some(v.to_string());
            }
            "use-read-groups" => md.read_groups = true,
            "json" => {
                json = true;
                stats = true;
            }
            "duplicate-count" => md.dup_count = true,
            "move-umi-to-tag" => md.move_umi = true,
            "umi-separator" => md.umi_sep = v.bytes().next().unwrap_or(0),
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            "metrics" => metrics = Some(v.to_string()),
            _ => return Err(usage_fail()),
        }
    }
    if positionals.len() < 2 {
        return Err(usage_fail());
    }
    if bc_tag.is_some() && bc_name {
        return Err(say(
            "error, cannot specify --barcode-tag and --barcode-name (or --barcode-rgx) at same time.\n",
        ));
    }
    if md.move_umi && !bc_name {
        return Err(say("error, --move-umi-to-tag requires --barcode-name or --barcode-rgx.\n"));
    }
    if md.opt_dist < 0 {
        md.opt_dist = 0;
    }
    if md.max_length < 0 {
        md.max_length = 300;
    }
    if let Some(rx) = regex {
        let (t, x, y) = coords_order(&regex_order).ok_or_else(|| {
            say(&format!("error,  could not recognise regex coordinate order \"{regex_order}\".\n"))
        })?;
        let regex = compile_ere(&rx).map_err(|e| say(&format!("error, regex fail \"{e}\"\n")))?;
        md.coords = Some(CoordRegex { regex, t, x, y });
    }
    if let Some(tag) = bc_tag {
        let b = tag.as_bytes();
        md.barcode =
            Barcode::Tag([b.first().copied().unwrap_or(0), b.get(1).copied().unwrap_or(0)]);
    } else if bc_name {
        let rx = bc_regex.as_deref().unwrap_or(BARCODE_NAME);
        md.barcode = Barcode::Regex(
            compile_ere(rx).map_err(|e| say(&format!("error, barcode regex fail \"{e}\"\n")))?,
        );
    }
    let (output, index) = if common.write_index {
        let (out, idx, bai) = index_request(&positionals[1]);
        if out == "-" {
            return Err(Error::Message("failed to create \"-\": Invalid argument".into()));
        }
        (out, Some((idx, bai)))
    } else {
        (positionals[1].clone(), None)
    };
    let format = out.format(&output);
    let level = match out.level {
        Some(l) => l,
        None if uncompressed => 0,
        None => -1,
    };
    let pg_fields = inv.pg_fields(&super::permuted::permuted(&OPTIONS, args));
    let command =
        pg_fields.iter().find(|(k, _)| k == "CL").map(|(_, v)| v.clone()).unwrap_or_default();
    out.use_reference(common.reference.as_deref());
    Ok(MarkdupOptions {
        input: positionals[0].clone(),
        output,
        spec: out.spec(format, level),
        threads: common.threads.total(),
        pg: (!common.no_pg).then_some(pg_fields),
        command,
        stats,
        stats_file,
        json,
        metrics,
        index,
        tmp_prefix,
        md,
    })
}

/// Runs `markdup` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::markdup::run_on_pool)
}
