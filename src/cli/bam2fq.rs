//! `fastq`'s and `fasta`'s command line → [`Bam2fqOptions`] (samtools 1.24 `parse_opts` in
//! `bam_fastq.c`); the work is [`crate::pipeline::bam2fq`].

use super::getopt::LongOpt;
use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::io::fastq::style::{AuxChoice, FastqStyle, parse_umi_tags};
use crate::ops::bam2fq::index_reads::IndexFormat;
use crate::ops::bam2fq::pairing::PairingOptions;
use crate::ops::bam2fq::{Changes, Selection, TagFilter};
use crate::pipeline::bam2fq::Bam2fqOptions;
use crate::pipeline::bam2fq_outputs::OutputNames;
use crate::pipeline::threads::Threads;

pub const FASTQ_USAGE: &str = include_str!("usage/fastq.txt");
pub const FASTA_USAGE: &str = include_str!("usage/fasta.txt");
/// `bam2fq`, samtools' old name of `fastq`: its usage names the command it was called by.
pub const BAM2FQ_USAGE: &str = include_str!("usage/bam2fq.txt");

const LONG: &[LongOpt] = &[
    LongOpt { name: "require-flags", has_arg: true, key: "f" },
    LongOpt { name: "excl-flags", has_arg: true, key: "F" },
    LongOpt { name: "exclude-flags", has_arg: true, key: "F" },
    LongOpt { name: "rf", has_arg: true, key: "rf" },
    LongOpt { name: "incl-flags", has_arg: true, key: "rf" },
    LongOpt { name: "include-flags", has_arg: true, key: "rf" },
    LongOpt { name: "i1", has_arg: true, key: "i1" },
    LongOpt { name: "I1", has_arg: true, key: "i1" },
    LongOpt { name: "i2", has_arg: true, key: "i2" },
    LongOpt { name: "I2", has_arg: true, key: "i2" },
    LongOpt { name: "if", has_arg: true, key: "index-format" },
    LongOpt { name: "IF", has_arg: true, key: "index-format" },
    LongOpt { name: "index-format", has_arg: true, key: "index-format" },
    LongOpt { name: "barcode-tag", has_arg: true, key: "barcode-tag" },
    LongOpt { name: "quality-tag", has_arg: true, key: "quality-tag" },
    LongOpt { name: "tag", has_arg: true, key: "d" },
    LongOpt { name: "tag-file", has_arg: true, key: "D" },
    LongOpt { name: "no-sc", has_arg: false, key: "no-sc" },
    LongOpt { name: "no-sc-bkp", has_arg: false, key: "no-sc-bkp" },
    LongOpt { name: "sc-aux", has_arg: true, key: "sc-aux" },
    LongOpt { name: "UMI", has_arg: false, key: "U" },
    LongOpt { name: "UMI-tag", has_arg: true, key: "UMI-tag" },
];

/// `SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '@')`.
const GLOBALS: Globals = Globals {
    input_fmt: Take::Refused,
    output_fmt: Take::Refused,
    output_fmt_option: Take::Refused,
    threads: Take::Short("@"),
    ..Globals::LONG
};

const UNLISTED: &[&str] =
    &["--excl-flags", "--incl-flags", "--I1", "--I2", "--if", "--IF", "--write-index"];

pub const FASTQ_OPTIONS: OptionTable = OptionTable {
    command: "fastq",
    short: "0:1:2:o:f:F:G:niNOs:c:tT:v:@:d:D:U",
    long: LONG,
    globals: Some(GLOBALS),
    globals_first: true,
    unlisted: UNLISTED,
};

/// `bam2fq` is `fastq` under its old name (getopt's messages name it).
pub const BAM2FQ_OPTIONS: OptionTable = OptionTable { command: "bam2fq", ..FASTQ_OPTIONS };

/// fasta takes fastq's options, though its usage leaves out those about qualities.
pub const FASTA_OPTIONS: OptionTable = OptionTable {
    command: "fasta",
    unlisted: &[
        "--excl-flags",
        "--incl-flags",
        "--I1",
        "--I2",
        "--if",
        "--IF",
        "--write-index",
        "-O",
        "-v",
        "--quality-tag",
    ],
    ..FASTQ_OPTIONS
};

fn flag_value(option: &str, v: &str) -> Result<u32, Error> {
    // parse_long_value(optarg, &n, 0)
    super::c_number::parse_long_value(v, 0)
        .map(|n| n as u32)
        .ok_or_else(|| Error::Bare(format!("samtools fastq: invalid {option} value \"{v}\"")))
}

fn tag_of(v: &str) -> [u8; 2] {
    let b = v.as_bytes();
    [b.first().copied().unwrap_or(0), b.get(1).copied().unwrap_or(0)]
}

/// Parses `fastq`, `fasta` or `bam2fq` (`cmd`) arguments.
/// `Err(Error::Help)`: no input and stdin is a terminal: the usage on stdout, exit 0.
pub fn parse(args: &[String], cmd: &str, stdin_is_terminal: bool) -> Result<Bam2fqOptions, Error> {
    let fasta = cmd == "fasta";
    let table = match cmd {
        "fasta" => &FASTA_OPTIONS,
        "bam2fq" => &BAM2FQ_OPTIONS,
        _ => &FASTQ_OPTIONS,
    };
    let (opts, positionals) = table.parse_or_usage(args)?;
    let command = if fasta { "fasta" } else { "fastq" };
    let mut names = OutputNames::default();
    let mut selection = Selection::default();
    let mut changes = Changes::default();
    let mut tag_files = Vec::new();
    let (mut rnum, mut rnum_always, mut casava, mut copy_tags, mut umi) =
        (true, false, false, false, false);
    let (mut barcode_tag, mut quality_tag) = (None, None);
    let (mut index_format, mut extra_tags): (Option<String>, Option<String>) = (None, None);
    let mut umi_tags = "OX,RX".to_string();
    let (mut level, mut default_quality) = (1, 1i64);
    let mut threads = Threads::default();
    let mut reference = None;
    let (mut no_sc, mut sc_backup, mut sc_tag) = (false, true, None);
    for o in opts {
        let v = o.value.unwrap_or_default();
        match o.key.as_str() {
            "barcode-tag" => barcode_tag = Some(v),
            "quality-tag" => quality_tag = Some(v),
            "i1" => names.index[0] = Some(v),
            "i2" => names.index[1] = Some(v),
            "index-format" => index_format = Some(v),
            "0" => names.reads[0] = Some(v),
            "1" => names.reads[1] = Some(v),
            "2" => names.reads[2] = Some(v),
            "o" => {
                names.reads[1] = Some(v.clone());
                names.reads[2] = Some(v);
            }
            "f" => selection.require |= flag_value("-f", &v)?,
            "F" => selection.exclude = flag_value("-F", &v)?,
            // samtools names -f in the messages of -G and --rf too.
            "G" => selection.not_all_of |= flag_value("-f", &v)?,
            "rf" => selection.any_of |= flag_value("-f", &v)?,
            "n" => rnum = false,
            "N" => rnum_always = true,
            "O" => changes.use_oq = true,
            "s" => names.singleton = Some(v),
            "t" => copy_tags = true,
            "i" => casava = true,
            "U" => umi = true,
            "UMI-tag" => umi_tags = v,
            "c" => level = super::c_number::atoi(&v).clamp(0, 9),
            "T" => extra_tags = Some(v),
            "v" => {
                default_quality =
                    super::c_number::parse_int_value(&v).map(i64::from).ok_or_else(|| {
                        Error::Bare(format!("samtools fastq: Invalid -v value: \"{v}\""))
                    })?
            }
            "d" => add_tag_value(&mut selection, &v)?,
            "D" => {
                let bytes = v.as_bytes();
                if bytes.len() < 4 || (bytes[2] != b':' && bytes[2] != b';') {
                    return Err(Error::Bare(format!(
                        "samtools view: Invalid \"tag:file\" option: \"{v}\""
                    )));
                }
                same_tag(&mut selection, tag_of(&v))?;
                tag_files.push(v[3..].to_string());
            }
            "no-sc" => no_sc = true,
            "no-sc-bkp" => sc_backup = false,
            "sc-aux" => {
                if v.len() != 2 {
                    return Err(Error::Bare(format!("samtools {command}: Invalid backup tag")));
                }
                sc_tag = Some(tag_of(&v));
            }
            "@" => threads = global::parse_threads(&v)?,
            "reference" => reference = Some(v.to_string()),
            "input-fmt-option" => {
                global::parse_input_fmt_option(&v, &mut reference)?;
            }
            "verbosity" => global::check_verbosity(&v)?,
            "write-index" => {}
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    if names.reads[1].is_some() || names.reads[2].is_some() {
        rnum = false;
    }
    rnum |= rnum_always;
    let indexes = index_format.as_deref().map_or(0, |f| f.matches('i').count());
    let refuse = |line: &str| Err(Error::ShowUsage(Some(line.to_string())));
    if indexes > 2 {
        return refuse("Invalid index format: more than 2 indexes");
    }
    if names.index[1].is_some() && names.index[0].is_none() {
        return refuse("Index one specified, but index two not given");
    }
    if casava && indexes == 0 {
        return refuse(
            "You must specify an index format (--index-format) with the Illumina Casava (-i) option",
        );
    }
    if indexes == 0 && names.index[0].is_some() {
        return refuse("index_format not specified, but index file given");
    }
    if !(0..=93).contains(&default_quality) {
        return refuse(&format!(
            "Invalid -v default quality {default_quality}, allowed range 0 to 93"
        ));
    }
    if positionals.is_empty() && stdin_is_terminal {
        return Err(Error::Help);
    }
    if positionals.len() > 1 {
        return refuse("Too many arguments.");
    }
    let barcode = tag_of(barcode_tag.as_deref().unwrap_or("BC"));
    let quality = tag_of(quality_tag.as_deref().unwrap_or("QT"));
    let aux = match extra_tags.as_deref() {
        Some(t) if t.is_empty() || t.starts_with('*') => AuxChoice::All,
        _ => {
            let mut list: Vec<&str> = Vec::new();
            if copy_tags {
                list.push("RG,BC,QT");
            }
            list.extend(extra_tags.as_deref());
            if list.is_empty() { AuxChoice::None } else { AuxChoice::from_list(&list.join(",")) }
        }
    };
    let style = FastqStyle {
        fasta,
        rnum,
        casava,
        barcode_tag: barcode,
        umi_tags: if umi { parse_umi_tags(&umi_tags) } else { Vec::new() },
        aux,
    };
    if no_sc {
        changes.remove_soft_clips = Some(sc_backup.then(|| sc_tag.unwrap_or(*b"s0")));
    }
    let index = (names.index[0].is_some() || index_format.is_some()).then(|| IndexFormat {
        format: index_format.unwrap_or_else(|| "i*i*".to_string()).into_bytes(),
        barcode_tag: barcode,
        quality_tag: quality,
        default_quality: default_quality as u8,
    });
    let pairing = PairingOptions {
        has_singleton_output: names.singleton.is_some(),
        casava,
        barcode_tags: [barcode, quality],
        index,
    };
    Ok(Bam2fqOptions {
        input: positionals.into_iter().next().unwrap_or_else(|| "-".to_string()),
        fasta,
        outputs: names,
        style,
        selection,
        tag_files,
        changes,
        pairing,
        level,
        threads: threads.total(),
        reference,
    })
}

/// `-d TAG[:VALUE]`.
fn add_tag_value(selection: &mut Selection, v: &str) -> Result<(), Error> {
    let b = v.as_bytes();
    if b.len() < 2 || (b.len() > 2 && b[2] != b':') {
        return Err(Error::Bare(format!("samtools fastq: Invalid \"tag:value\" option: \"{v}\"")));
    }
    same_tag(selection, tag_of(v))?;
    if b.len() >= 3 {
        let filter = selection.tag.as_mut().expect("set by same_tag");
        filter.values.get_or_insert_with(Default::default).insert(b[3..].to_vec());
    }
    Ok(())
}

/// The `-d`/`-D` tag: the first one given; another is refused.
fn same_tag(selection: &mut Selection, tag: [u8; 2]) -> Result<(), Error> {
    match &selection.tag {
        Some(f) if f.tag != tag => {
            Err(Error::Bare("samtools fastq: Different tag type specified to before".to_string()))
        }
        Some(_) => Ok(()),
        None => {
            selection.tag = Some(TagFilter { tag, values: None });
            Ok(())
        }
    }
}

/// Runs `fastq`, `fasta` or `bam2fq` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    let options = parse(args, &inv.command, std::io::stdin().is_terminal())?;
    crate::pipeline::bam2fq::run(&options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn named_read_files_turn_off_the_read_numbers_unless_n_capital() {
        let Ok(o) = parse(&args(&["-1", "a", "x.bam"]), "fastq", false) else { panic!() };
        assert!(!o.style.rnum);
        let Ok(o) = parse(&args(&["-N", "-o", "a", "x.bam"]), "fastq", false) else { panic!() };
        assert!(o.style.rnum && o.outputs.reads[1] == o.outputs.reads[2]);
        assert!(matches!(parse(&args(&["-i", "x.bam"]), "fastq", false), Err(Error::ShowUsage(_))));
        assert!(matches!(parse(&args(&[]), "fasta", true), Err(Error::Help)));
    }
}
