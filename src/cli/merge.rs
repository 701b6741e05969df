//! `merge`'s command line → [`MergeOptions`] (samtools 1.24 `bam_merge` in `bam_sort.c`). The
//! checks samtools makes after reading `-b` lists (output exists, `-X` pairs, no inputs) are the
//! pipeline's, which reads the lists first as samtools does while it parses them.

use super::Invocation;
use super::c_number::{parse_int_value, parse_long_value};
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::Globals;
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::index_request;
use crate::ops::sort::{NameOrder, SortOrder};
use crate::pipeline::merge::MergeOptions;

pub const USAGE: &str = include_str!("usage/merge.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "merge",
    short: "h:nNru1R:o:f@:l:cps:b:O:t:XL:",
    long: &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "template-coordinate", has_arg: false, key: "template-coordinate" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', 0, 0, '@').
    globals: Some(Globals::O_AND_THREADS),
    globals_first: false,
    unlisted: &[],
};

pub fn parse(inv: &Invocation, args: &[String]) -> Result<MergeOptions, Error> {
    if args.is_empty() {
        return Err(Error::Help);
    }
    let (opts, mut positionals) = OPTIONS.parse_or_usage(args)?;
    let mut common = CommonOptions::default();
    let mut out = OutputChoice::default();
    let mut output: Option<String> = None;
    let mut order = SortOrder::Coordinate;
    let mut name_order = NameOrder::Natural;
    let mut tag: Option<[u8; 2]> = None;
    let mut lists = Vec::new();
    let mut with_indexes = false;
    let mut parsed = MergeOptions::default();
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.clone().unwrap_or_default();
        match o.key.as_str() {
            "r" => parsed.attach_rg = true,
            "f" => parsed.force = true,
            "h" => parsed.header_file = Some(v),
            "N" => {
                name_order = NameOrder::Lexicographic;
                order = SortOrder::Name(name_order);
            }
            "n" => order = SortOrder::Name(name_order),
            "o" => output = Some(v),
            "t" => {
                let b = v.as_bytes();
                tag = Some([b.first().copied().unwrap_or(0), b.get(1).copied().unwrap_or(0)]);
            }
            "1" => out.level = Some(1),
            "u" => {
                out.level = Some(0);
                parsed.uncompressed = true;
            }
            "R" => parsed.region = Some(v),
            "l" => match parse_int_value(&v) {
                Some(l) => out.level = Some(l),
                None => return Err(Error::Bare("Invalid compression level".into())),
            },
            "c" => parsed.combine_rg = true,
            "p" => parsed.combine_pg = true,
            "s" => match parse_long_value(&v, 10) {
                Some(s) => parsed.seed = Some(s),
                None => return Err(Error::Bare("Invalid random seed".into())),
            },
            "X" => with_indexes = true,
            "L" => parsed.bed = Some(v),
            "b" => {
                if with_indexes {
                    return Err(Error::Bare(
                        "Error: The -b option cannot be combined with -X".into(),
                    ));
                }
                lists.push(v);
            }
            "template-coordinate" => order = SortOrder::TemplateCoordinate,
            "O" => out.set_format(&v)?,
            "output-fmt-option" => out.set_option(&v),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    // `-N` sets the name comparison for every later name order, as samtools' global does.
    if let SortOrder::Name(_) = order {
        order = SortOrder::Name(name_order);
    }
    if let Some(tag) = tag {
        order = match order {
            SortOrder::Name(n) => SortOrder::Tag { tag, then: Some(n) },
            _ => SortOrder::Tag { tag, then: None },
        };
    }
    let output = match output {
        Some(o) => o,
        None if !positionals.is_empty() => positionals.remove(0),
        None => {
            return Err(Error::ShowUsage(Some(
                "samtools merge: You must at least specify the output file".into(),
            )));
        }
    };
    let (output, index) = if common.write_index {
        let (file, idx, bai) = index_request(&output);
        (file, Some((idx, bai)))
    } else {
        (output, None)
    };
    out.use_reference(common.reference.as_deref());
    parsed.spec = out.spec(out.format(&output), out.level.map_or(-1, |l| l.clamp(-1, 9)));
    parsed.output = output;
    parsed.index = index;
    parsed.threads = common.threads;
    parsed.reference = common.reference.clone();
    parsed.order = order;
    parsed.lists = lists;
    parsed.inputs = positionals;
    parsed.with_indexes = with_indexes;
    parsed.pg = common.pg(inv, &super::permuted::permuted(&OPTIONS, args));
    Ok(parsed)
}

/// Runs `merge` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::merge::run_on_pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(line: &str) -> Result<MergeOptions, Error> {
        let inv = Invocation { argv0: "samtools".into(), command: "merge".into() };
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&inv, &args)
    }

    #[test]
    fn the_first_positional_is_the_output_unless_o_names_it() {
        let o = parse_args("out.bam a.bam b.bam").unwrap();
        assert_eq!((o.output.as_str(), o.inputs.len()), ("out.bam", 2));
        let o = parse_args("a.bam -o out.sam b.bam").unwrap();
        assert_eq!(o.output, "out.sam");
        assert_eq!(o.inputs, ["a.bam", "b.bam"]);
        assert_eq!(o.spec.format, crate::io::format::OutputFormat::Sam);
    }

    #[test]
    fn orders_combine_as_samtools_switch_sets_them() {
        assert_eq!(parse_args("-n o a").unwrap().order, SortOrder::Name(NameOrder::Natural));
        assert_eq!(parse_args("-N o a").unwrap().order, SortOrder::Name(NameOrder::Lexicographic));
        assert_eq!(
            parse_args("-t RG o a").unwrap().order,
            SortOrder::Tag { tag: *b"RG", then: None }
        );
        assert_eq!(
            parse_args("-n -t XY o a").unwrap().order,
            SortOrder::Tag { tag: *b"XY", then: Some(NameOrder::Natural) }
        );
    }

    #[test]
    fn bad_values_and_missing_output() {
        assert!(matches!(parse_args("-s x o a"), Err(Error::Bare(_))));
        assert!(matches!(parse_args("-X -b l o a"), Err(Error::Bare(_))));
        assert!(matches!(parse_args("-n"), Err(Error::ShowUsage(Some(_)))));
        assert_eq!(parse_args("-s -5 o a").unwrap().seed, Some(-5));
        assert_eq!(parse_args("-u o a").unwrap().spec.level, 0);
    }
}
