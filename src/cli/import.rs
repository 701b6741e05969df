//! `import`'s command line → [`ImportOptions`] (samtools 1.24 `main_import` in
//! `bam_import.c`); the work is [`crate::pipeline::import`].

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::fastq::style::{AuxChoice, parse_umi_tags};
use crate::io::format::OutputFormat;
use crate::pipeline::import::ImportOptions;

pub const USAGE: &str = include_str!("usage/import.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "import",
    short: "1:2:s:0:bhiT:r:R:o:O:u@:NU",
    long: &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "i1", has_arg: true, key: "i1" },
        LongOpt { name: "i2", has_arg: true, key: "i2" },
        LongOpt { name: "r1", has_arg: true, key: "1" },
        LongOpt { name: "r2", has_arg: true, key: "2" },
        LongOpt { name: "rg", has_arg: true, key: "R" },
        LongOpt { name: "rg-line", has_arg: true, key: "r" },
        LongOpt { name: "order", has_arg: true, key: "order" },
        LongOpt { name: "barcode-tag", has_arg: true, key: "barcode-tag" },
        LongOpt { name: "quality-tag", has_arg: true, key: "quality-tag" },
        LongOpt { name: "UMI-tag", has_arg: true, key: "UMI-tag" },
        LongOpt { name: "name2", has_arg: false, key: "N" },
        LongOpt { name: "umi", has_arg: false, key: "U" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', 0, '-', '@')
    globals: Some(Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Short("O"),
        reference: Take::Refused,
        threads: Take::Short("@"),
        ..Globals::LONG
    }),
    globals_first: true,
    unlisted: &[
        "-b",
        "-h",
        "--r1",
        "--r2",
        "--rg",
        "--rg-line",
        "--umi",
        "--write-index",
        "--verbosity",
    ],
};

fn tag_of(v: &str) -> [u8; 2] {
    let b = v.as_bytes();
    [b.first().copied().unwrap_or(0), b.get(1).copied().unwrap_or(0)]
}

/// `Err(Error::Help)`: `-h`, or no input file: the usage on stdout, exit 0.
pub fn parse(inv: &Invocation, args: &[String]) -> Result<ImportOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut files: [Option<String>; 6] = Default::default();
    let mut common = CommonOptions::default();
    let mut out = OutputChoice::default();
    let mut output = "-".to_string();
    let (mut name2, mut casava, mut aux) = (false, false, AuxChoice::None);
    let (mut index_both, mut umi, mut uncompressed) = (false, false, false);
    let (mut barcode, mut quality, mut umi_tag) =
        ("BC".to_string(), "QT".to_string(), "RX".to_string());
    let (mut rg, mut rg_line, mut order) = (None, None::<String>, None);
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.clone().unwrap_or_default();
        match o.key.as_str() {
            "b" => index_both = true,
            "0" => files[2] = Some(v),
            "1" => files[3] = Some(v),
            "2" => files[4] = Some(v),
            "i1" => files[0] = Some(v),
            "i2" => files[1] = Some(v),
            "s" => files[5] = Some(v),
            "o" => output = v,
            "i" => casava = true,
            "U" => umi = true,
            "barcode-tag" => barcode = v,
            "quality-tag" => quality = v,
            "UMI-tag" => umi_tag = v,
            "T" => {
                aux = match v.as_bytes().first() {
                    None | Some(b'*') => AuxChoice::All,
                    Some(_) => AuxChoice::from_list(&v),
                }
            }
            "u" => uncompressed = true,
            "R" => rg = Some(v),
            "r" => {
                let mut line = rg_line.take().unwrap_or_default();
                if !v.starts_with('@') && line.is_empty() {
                    line.push_str("@RG");
                }
                if !line.is_empty() {
                    line.push('\t');
                }
                line.push_str(&v);
                rg_line = Some(line);
            }
            "N" => name2 = true,
            "order" => {
                let width = if v.len() > 3 && v.as_bytes()[2] == b':' {
                    // atoi
                    let digits = v[3..].bytes().take_while(u8::is_ascii_digit).count();
                    v[3..3 + digits].parse().unwrap_or(0)
                } else {
                    0
                };
                order = Some((tag_of(&v), width));
            }
            "h" => return Err(Error::Help),
            "O" => out.set_format(&v)?,
            "output-fmt-option" => out.set_option(&v),
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    match positionals.len() {
        0 => {}
        1 => files[5] = Some(positionals[0].clone()),
        _ => {
            files[3] = Some(positionals[0].clone());
            files[4] = Some(positionals[1].clone());
        }
    }
    if files.iter().all(Option::is_none) {
        return Err(Error::Help);
    }
    let umi_tag_id = umi.then(|| parse_umi_tags(&umi_tag).first().copied().unwrap_or(*b"RX"));
    let format =
        out.explicit.or_else(|| OutputFormat::from_path(&output)).unwrap_or(OutputFormat::Sam);
    let level = out.level.unwrap_or(if uncompressed { 0 } else { -1 });
    out.use_reference(common.reference.as_deref());
    Ok(ImportOptions {
        files,
        output,
        spec: out.spec(format, level),
        name2,
        casava,
        umi_tag: umi_tag_id,
        aux,
        index_both,
        barcode_tag: tag_of(&barcode),
        quality_tag: tag_of(&quality),
        umi_list: umi.then_some(umi_tag),
        rg,
        rg_line,
        order,
        pg: common.pg(inv, &super::permuted::permuted(&OPTIONS, args)),
        threads: common.threads.total(),
    })
}

/// Runs `import` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(|o| crate::pipeline::import::run(&o))
}
