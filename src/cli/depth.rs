//! `depth`'s command line → [`DepthOptions`] (samtools 1.24 `main_depth` in `bam2depth.c`);
//! the work is [`crate::pipeline::depth`].

use super::c_number::atoi;
use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{self, Globals};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::depth::DepthOptions;
use crate::record::layout::flags;

pub const USAGE: &str = include_str!("usage/depth.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "depth",
    short: "@:q:Q:JHd:m:l:g:G:o:ar:Xf:b:s",
    long: &[
        LongOpt { name: "min-MQ", has_arg: true, key: "Q" },
        LongOpt { name: "min-mq", has_arg: true, key: "Q" },
        LongOpt { name: "min-BQ", has_arg: true, key: "q" },
        LongOpt { name: "min-bq", has_arg: true, key: "q" },
        LongOpt { name: "excl-flags", has_arg: true, key: "G" },
        LongOpt { name: "incl-flags", has_arg: true, key: "incl-flags" },
        LongOpt { name: "require-flags", has_arg: true, key: "require-flags" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '@')
    globals: Some(Globals::INPUT_OPTIONS_AND_THREADS),
    globals_first: false,
    unlisted: &["--min-mq", "--min-bq", "-d", "-m", "--write-index"],
};

/// A flag option's value, or samtools' `Unknown flag` failure.
fn flag_value(command: &str, v: &str) -> Result<u16, Error> {
    parse_flags(v).map_err(|m| Error::Bare(format!("samtools {command}: {m}")))
}

pub fn parse(args: &[String]) -> Result<DepthOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut o = DepthOptions {
        excl_flags: flags::UNMAP | flags::SECONDARY | flags::DUP | flags::QCFAIL,
        threads: 1,
        ..DepthOptions::default()
    };
    let mut with_indexes = false;
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "a" => o.all_positions = o.all_positions.saturating_add(1),
            "b" => o.bed = Some(v.to_string()),
            "f" => o.file_list = Some(v.to_string()),
            "d" | "m" => {}
            "g" => o.excl_flags &= !flag_value("depth", v)?,
            "G" => o.excl_flags |= flag_value("depth", v)?,
            "incl-flags" => o.incl_flags |= flag_value("depth", v)?,
            "require-flags" => o.req_flags |= flag_value("depth", v)?,
            "l" => o.min_len = i64::from(atoi(v)),
            "H" => o.header = true,
            "q" => o.min_base_quality = atoi(v),
            "Q" => o.min_mapq = atoi(v),
            "J" => o.count_deletions = true,
            "o" => {
                o.output.get_or_insert_with(|| v.to_string());
            }
            "r" => o.region = Some(v.to_string()),
            "s" => o.remove_overlaps = true,
            "X" => with_indexes = true,
            "@" => o.threads = global::parse_threads(v)?.total(),
            "reference" => o.reference = Some(v.to_string()),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                global::parse_input_fmt_option(v, &mut o.reference)?;
            }
            _ => {}
        }
    }
    if positionals.is_empty() && o.file_list.is_none() {
        return Err(if args.is_empty() { Error::Help } else { Error::ShowUsage(None) });
    }
    if o.file_list.is_some() {
        if with_indexes {
            return Err(Error::Bare(
                "samtools depth: The -f option cannot be combined with -X".into(),
            ));
        }
        return Ok(o);
    }
    let n = if with_indexes { positionals.len() / 2 } else { positionals.len() };
    o.inputs = positionals[..n].to_vec();
    if with_indexes {
        o.index_files = Some(positionals[n..2 * n].to_vec());
    }
    o.column_names = positionals[positionals.len() - n..].to_vec();
    Ok(o)
}

/// Runs `depth` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(|o| crate::pipeline::depth::run(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_and_index_pairs() {
        let o = parse(&args(&["-aa", "-X", "-o", "x", "-o", "y", "a.bam", "a.bai"])).unwrap();
        assert_eq!((o.all_positions, o.output.as_deref()), (2, Some("x")));
        assert_eq!(o.inputs, ["a.bam"]);
        assert_eq!(o.index_files.unwrap(), ["a.bai"]);
        assert_eq!(o.column_names, ["a.bai"]);
        assert!(matches!(parse(&[]), Err(Error::Help)));
        assert!(matches!(parse(&args(&["-a"])), Err(Error::ShowUsage(None))));
        let o = parse(&args(&["-g", "DUP", "--incl-flags", "0x40", "in.bam"])).unwrap();
        assert_eq!((o.excl_flags, o.incl_flags), (0x304, 0x40));
    }
}
