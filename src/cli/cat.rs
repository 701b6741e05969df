//! `cat`'s command line → [`CatOptions`] (samtools 1.24 `bam_cat.c` options); the work is
//! [`crate::pipeline::cat`]. `-h` and `-b` name files, which the pipeline reads in option order
//! as samtools does while it parses them.

use super::Invocation;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::cat::{CatOptions, CramOnly, Source};

pub const USAGE: &str = include_str!("usage/cat.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "cat",
    short: "h:o:b:r:p:qf",
    long: &[LongOpt { name: "no-PG", has_arg: false, key: "no-PG" }],
    // SAM_OPT_GLOBAL_OPTIONS('-', '-', '-', 0, '-', '-'): only --output-fmt-option, which only
    // CRAM output reads; --write-index and --verbosity are always known.
    globals: Some(Globals {
        input_fmt: Take::Refused,
        input_fmt_option: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Long,
        reference: Take::Refused,
        threads: Take::Refused,
        write_index: Take::Long,
        verbosity: Take::Long,
    }),
    // samtools' usage lists --verbosity and --output-fmt-option only.
    globals_first: false,
    unlisted: &["--write-index"],
};

pub fn parse(inv: &Invocation, args: &[String]) -> Result<CatOptions, Error> {
    let (opts, inputs) = OPTIONS.parse_or_usage(args)?;
    let mut parsed = CatOptions {
        sources: Vec::new(),
        inputs,
        output: "-".into(),
        pg: None,
        cram_only: CramOnly::default(),
        format_options: Default::default(),
    };
    let mut no_pg = false;
    for o in opts {
        let value = o.value.unwrap_or_default();
        match o.key.as_str() {
            "h" => parsed.sources.push(Source::Header(value)),
            "b" => parsed.sources.push(Source::List(value)),
            "o" => parsed.output = value,
            "no-PG" => no_pg = true,
            "r" => parsed.cram_only.region = Some(value),
            "p" => parsed.cram_only.part = Some(value),
            "q" => parsed.cram_only.query_containers = true,
            "f" => parsed.cram_only.fast = true,
            // Only CRAM reads samtools' options; mdsam's deflate= applies to re-deflated blocks.
            "output-fmt-option" => parsed.format_options.apply(&value),
            _ => {}
        }
    }
    parsed.pg = (!no_pg).then(|| inv.pg_fields(&super::permuted::permuted(&OPTIONS, args)));
    Ok(parsed)
}

/// Runs `cat` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::cat::run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(line: &str) -> Result<CatOptions, Error> {
        let inv = Invocation { argv0: "samtools".into(), command: "cat".into() };
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&inv, &args)
    }

    #[test]
    fn sources_keep_their_order_and_inputs_follow() {
        let o = parse_args("-b l1 -h h.sam a.bam -o out.bam -b l2 --no-PG b.bam").unwrap();
        let kinds: Vec<String> = o
            .sources
            .iter()
            .map(|s| match s {
                Source::Header(p) => format!("h:{p}"),
                Source::List(p) => format!("b:{p}"),
            })
            .collect();
        assert_eq!(kinds, ["b:l1", "h:h.sam", "b:l2"]);
        assert_eq!(o.inputs, ["a.bam", "b.bam"]);
        assert_eq!(o.output, "out.bam");
        assert!(o.pg.is_none());
    }

    #[test]
    fn the_pg_line_has_the_whole_command_line() {
        let o = parse_args("-q a.bam").unwrap();
        let cl = o.pg.unwrap().into_iter().find(|(k, _)| k == "CL").unwrap().1;
        assert_eq!(cl, "samtools cat -q a.bam");
        assert!(o.cram_only.query_containers);
    }

    #[test]
    fn refused_and_unknown_options_show_the_usage() {
        assert!(matches!(parse_args("--threads 2 a.bam"), Err(Error::ShowUsage(None))));
        assert!(matches!(parse_args("-x a.bam"), Err(Error::ShowUsage(Some(_)))));
        assert!(parse_args("--output-fmt-option level=1 --write-index a.bam").is_ok());
    }
}
