//! `mpileup`'s command line → [`MpileupOptions`] (samtools 1.24 `bam_mpileup` in
//! `bam_plcmd.c`); the work is [`crate::pipeline::mpileup`].

use super::Invocation;
use super::c_number::atoi;
use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{self, Globals};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::mpileup::format::{Extra, FormatOptions};
use crate::pipeline::mpileup::MpileupOptions;
use crate::record::layout::flags;

pub const USAGE: &str = include_str!("usage/mpileup.txt");

const fn long(name: &'static str, has_arg: bool, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

pub const OPTIONS: OptionTable = OptionTable {
    command: "mpileup",
    short: "Af:r:l:q:Q:RC:Bd:b:o:EG:6OsxXaM",
    long: &[
        long("rf", true, "rf"),
        long("ff", true, "ff"),
        long("incl-flags", true, "rf"),
        long("excl-flags", true, "ff"),
        long("output", true, "o"),
        long("output-QNAME", false, "qname"),
        long("output-qname", false, "qname"),
        long("illumina1.3+", false, "6"),
        long("count-orphans", false, "A"),
        long("bam-list", true, "b"),
        long("no-BAQ", false, "B"),
        long("no-baq", false, "B"),
        long("adjust-MQ", true, "C"),
        long("adjust-mq", true, "C"),
        long("max-depth", true, "d"),
        long("redo-BAQ", false, "E"),
        long("redo-baq", false, "E"),
        long("fasta-ref", true, "f"),
        long("exclude-RG", true, "G"),
        long("exclude-rg", true, "G"),
        long("positions", true, "l"),
        long("region", true, "r"),
        long("ignore-RG", false, "R"),
        long("ignore-rg", false, "R"),
        long("min-MQ", true, "q"),
        long("min-mq", true, "q"),
        long("min-BQ", true, "Q"),
        long("min-bq", true, "Q"),
        long("ignore-overlaps-removal", false, "x"),
        long("disable-overlap-removal", false, "x"),
        long("output-mods", false, "M"),
        long("output-BP", false, "O"),
        long("output-bp", false, "O"),
        long("output-BP-5", false, "bp5"),
        long("output-bp-5", false, "bp5"),
        long("output-MQ", false, "s"),
        long("output-mq", false, "s"),
        long("customized-index", false, "X"),
        long("reverse-del", false, "reverse-del"),
        long("output-extra", true, "output-extra"),
        long("output-sep", true, "output-sep"),
        long("output-empty", true, "output-empty"),
        long("no-output-ins", false, "no-output-ins"),
        long("no-output-ins-mods", false, "no-output-ins-mods"),
        long("no-output-del", false, "no-output-del"),
        long("no-output-ends", false, "no-output-ends"),
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '-')
    globals: Some(Globals::INPUT_OPTIONS_ONLY),
    globals_first: true,
    unlisted: &[
        "--output-qname",
        "--illumina1.3+",
        "--no-baq",
        "--adjust-mq",
        "--redo-baq",
        "--exclude-rg",
        "--ignore-rg",
        "--min-mq",
        "--min-bq",
        "--output-bp",
        "--output-bp-5",
        "--output-mq",
        "--write-index",
    ],
};

/// `build_auxlist`: SAM field names become columns, two-letter names tags.
fn add_extras(list: &str, extras: &mut Vec<Extra>, tags: &mut Vec<[u8; 2]>) {
    for name in list.split(',').filter(|s| !s.is_empty()) {
        let extra = match name {
            "QNAME" => Some(Extra::Qname),
            "FLAG" => Some(Extra::Flag),
            "RNAME" => Some(Extra::Rname),
            "POS" => Some(Extra::Pos),
            "MAPQ" => Some(Extra::Mapq),
            "RNEXT" => Some(Extra::Rnext),
            "PNEXT" => Some(Extra::Pnext),
            "RLEN" => Some(Extra::Rlen),
            _ => None,
        };
        match extra {
            Some(e) => extras.push(e),
            None if name.len() == 2 => tags.push([name.as_bytes()[0], name.as_bytes()[1]]),
            None => eprintln!(
                "[build_auxlist] tag '{name}' has more than two characters or not supported"
            ),
        }
    }
}

pub fn run(_inv: &Invocation, args: &[String]) -> Result<(), Error> {
    let o = parse(args)?;
    crate::pipeline::mpileup::run(&o)
}

pub fn parse(args: &[String]) -> Result<MpileupOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut format = FormatOptions {
        min_base_quality: 13,
        reverse_del: false,
        no_ins: 0,
        no_del: 0,
        no_ends: false,
        no_ins_mods: false,
        extras: Vec::new(),
        tags: Vec::new(),
        sep: b',',
        empty: b'*',
    };
    let mut o = MpileupOptions {
        inputs: Vec::new(),
        index_files: None,
        output: None,
        reference: None,
        region: None,
        positions: None,
        exclude_rg: None,
        exclude_rg_file: None,
        input_list: None,
        all: 0,
        min_mapq: 0,
        cap_q: 0,
        max_depth: 8000,
        baq: true,
        redo_baq: false,
        illumina13: false,
        ignore_rg: false,
        count_orphans: false,
        overlaps: true,
        mods: false,
        require_flags: 0,
        filter_flags: flags::UNMAP | flags::SECONDARY | flags::QCFAIL | flags::DUP,
        format: format.clone(),
        threads: 1,
        input_reference: None,
    };
    let (mut file_list, mut with_indexes, mut global_ref) = (None, false, None);
    let first_char = |v: &str| v.bytes().next().unwrap_or(0);
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "x" => o.overlaps = false,
            "rf" => {
                o.require_flags =
                    parse_flags(v).map_err(|_| Error::Bare(format!("Could not parse --rf {v}")))?
            }
            "ff" => {
                o.filter_flags =
                    parse_flags(v).map_err(|_| Error::Bare(format!("Could not parse --ff {v}")))?
            }
            "o" => o.output = Some(v.to_string()),
            "qname" => format.extras.push(Extra::Qname),
            "reverse-del" => format.reverse_del = true,
            "output-extra" => add_extras(v, &mut format.extras, &mut format.tags),
            "output-sep" => format.sep = first_char(v),
            "output-empty" => format.empty = first_char(v),
            "no-output-ins" => format.no_ins = format.no_ins.saturating_add(1),
            "no-output-ins-mods" => format.no_ins_mods = true,
            "no-output-del" => format.no_del = format.no_del.saturating_add(1),
            "no-output-ends" => format.no_ends = true,
            "f" => o.reference = Some(v.to_string()),
            "d" => o.max_depth = atoi(v),
            "r" => o.region = Some(v.to_string()),
            "l" => o.positions = Some(v.to_string()),
            "B" => o.baq = false,
            "X" => with_indexes = true,
            "E" => o.redo_baq = true,
            "6" => o.illumina13 = true,
            "R" => o.ignore_rg = true,
            "s" => format.extras.push(Extra::MapqChar),
            "O" => format.extras.push(Extra::Qpos),
            "bp5" => format.extras.push(Extra::Qpos5),
            "M" => o.mods = true,
            "C" => o.cap_q = atoi(v),
            "q" => o.min_mapq = atoi(v),
            "Q" => format.min_base_quality = atoi(v),
            "b" => file_list = Some(v.to_string()),
            "A" => o.count_orphans = true,
            "G" => o.exclude_rg_file = Some(v.to_string()),
            "a" => o.all = o.all.saturating_add(1),
            "reference" => global_ref = Some(v.to_string()),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                global::parse_input_fmt_option(v, &mut o.input_reference)?;
            }
            _ => {}
        }
    }
    if o.reference.is_none() {
        o.reference = global_ref;
    }
    format.extras.sort();
    format.extras.dedup();
    o.format = format;
    if !o.baq && o.redo_baq {
        return Err(Error::Bare("Error: The -B option cannot be combined with -E".into()));
    }
    if args.is_empty() {
        return Err(Error::ShowUsage(None));
    }
    if let Some(list) = file_list {
        if with_indexes {
            return Err(Error::Bare("Error: The -b option cannot be combined with -X".into()));
        }
        o.input_list = Some(list);
    } else if with_indexes {
        if positionals.len() % 2 != 0 {
            return Err(Error::Bare(
                "Odd number of filenames detected! Each BAM file should have an index file".into(),
            ));
        }
        let n = positionals.len() / 2;
        o.inputs = positionals[..n].to_vec();
        o.index_files = Some(positionals[n..].to_vec());
    } else {
        o.inputs = positionals;
    }
    if o.inputs.is_empty() && o.input_list.is_none() {
        return Err(Error::Bare("[mpileup] no input file/data given".into()));
    }
    Ok(o)
}
