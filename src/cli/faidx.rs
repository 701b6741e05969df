//! `faidx` and `fqidx` command lines → [`FaidxOptions`] (samtools 1.24 `faidx_core` in
//! `faidx.c`); the work is [`crate::pipeline::faidx`].

use super::getopt::LongOpt;
use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::faidx::{FaidxOptions, Format};

pub const USAGE: &str = include_str!("usage/faidx.txt");
pub const FQIDX_USAGE: &str = include_str!("usage/fqidx.txt");

const LONG: &[LongOpt] = &[
    LongOpt { name: "output", has_arg: true, key: "o" },
    LongOpt { name: "help", has_arg: false, key: "h" },
    LongOpt { name: "length", has_arg: true, key: "n" },
    LongOpt { name: "continue", has_arg: false, key: "c" },
    LongOpt { name: "region-file", has_arg: true, key: "r" },
    LongOpt { name: "fastq", has_arg: false, key: "f" },
    LongOpt { name: "reverse-complement", has_arg: false, key: "i" },
    LongOpt { name: "mark-strand", has_arg: true, key: "mark-strand" },
    LongOpt { name: "fai-idx", has_arg: true, key: "fai-idx" },
    LongOpt { name: "gzi-idx", has_arg: true, key: "gzi-idx" },
];

// SAM_OPT_GLOBAL_OPTIONS('-', '-', '-', 0, '-', '@')
const GLOBALS: Globals = Globals {
    input_fmt: Take::Refused,
    input_fmt_option: Take::Refused,
    output_fmt: Take::Refused,
    output_fmt_option: Take::Long,
    reference: Take::Refused,
    threads: Take::Short("@"),
    ..Globals::LONG
};

pub const OPTIONS: OptionTable = OptionTable {
    command: "faidx",
    short: "ho:n:cr:fi@:",
    long: LONG,
    globals: Some(GLOBALS),
    globals_first: true,
    unlisted: &["--verbosity"],
};

/// fqidx parses the same table; its usage does not list `-f`, which changes nothing there.
pub const FQIDX_OPTIONS: OptionTable = OptionTable {
    command: "fqidx",
    short: "ho:n:cr:fi@:",
    long: LONG,
    globals: Some(GLOBALS),
    globals_first: true,
    unlisted: &["--verbosity", "-f", "--fastq"],
};

/// `--mark-strand TYPE`: the (positive, negative) name suffixes.
fn parse_mark_strand(v: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    match v {
        "no" => Some((Vec::new(), Vec::new())),
        "sign" => Some((b"(+)".to_vec(), b"(-)".to_vec())),
        "rc" => Some((Vec::new(), b"/rc".to_vec())),
        _ => {
            let rest = v.strip_prefix("custom,")?;
            let (pos, neg) = rest.split_once(',').unwrap_or((rest, ""));
            Some((pos.as_bytes().to_vec(), neg.as_bytes().to_vec()))
        }
    }
}

/// Parses `faidx` (`fastq` false) or `fqidx` arguments.
/// `Err(Error::Help)`: the usage on stdout, exit 0 (`-h`, or no input).
pub fn parse(args: &[String], fastq: bool) -> Result<FaidxOptions, Error> {
    let table = if fastq { &FQIDX_OPTIONS } else { &OPTIONS };
    let (opts, positionals) = table.parse_or_usage(args)?;
    let mut o = FaidxOptions {
        input: String::new(),
        regions: Vec::new(),
        region_file: None,
        output: None,
        line_len: -60,
        continue_on_missing: false,
        reverse_complement: false,
        pos_strand_name: Vec::new(),
        neg_strand_name: b"/rc".to_vec(),
        fai_path: None,
        gzi_path: None,
        format: if fastq { Format::Fastq } else { Format::Fasta },
        write_index: false,
        level: None,
        format_options: Default::default(),
        threads: 1,
    };
    let invalid = |line: Option<String>, v: &str| {
        let first = line.map(|l| format!("{l}\n")).unwrap_or_default();
        Error::Bare(format!("{first}[faidx] Invalid option \"{v}\""))
    };
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "o" => o.output = Some(v.to_string()),
            "n" => {
                o.line_len = super::c_number::strtol(v, 10).value;
                if o.line_len < 0 {
                    eprintln!("[faidx] bad line length '{v}', using default:60");
                    o.line_len = 60;
                }
            }
            "c" => o.continue_on_missing = true,
            "r" => o.region_file = Some(v.to_string()),
            "f" => o.format = Format::Fastq,
            "i" => o.reverse_complement = true,
            "h" => return Err(Error::Help),
            "mark-strand" => match parse_mark_strand(v) {
                Some((pos, neg)) => (o.pos_strand_name, o.neg_strand_name) = (pos, neg),
                None => {
                    return Err(Error::ShowUsage(Some(format!(
                        "[faidx] Unknown --mark-strand option \"{v}\""
                    ))));
                }
            },
            "fai-idx" => o.fai_path = Some(v.to_string()),
            "gzi-idx" => o.gzi_path = Some(v.to_string()),
            "@" => {
                let extra = global::parse_threads(v).map_err(|e| match e {
                    Error::ShowUsage(line) => invalid(line, v),
                    e => e,
                })?;
                o.threads = extra.total();
            }
            "verbosity" => global::check_verbosity(v).map_err(|e| match e {
                Error::ShowUsage(line) => invalid(line, v),
                e => e,
            })?,
            "write-index" => o.write_index = true,
            "output-fmt-option" => {
                // A FASTA has no CRAM reference to take.
                global::parse_input_fmt_option(v, &mut None).map_err(|e| match e {
                    Error::ShowUsage(line) => invalid(line, v),
                    e => e,
                })?;
                if let Some(level) = global::parse_fmt_option_level(v) {
                    o.level = Some(level);
                }
                o.format_options.apply(v);
            }
            _ => {}
        }
    }
    let mut positionals = positionals.into_iter();
    let Some(input) = positionals.next() else { return Err(Error::Help) };
    o.input = input;
    o.regions = positionals.collect();
    Ok(o)
}

/// Runs `faidx` or `fqidx` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args, inv.command == "fqidx").and_then(|o| crate::pipeline::faidx::run(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_fill_the_struct() {
        let args = strings(&["-n", "5", "-i", "--mark-strand", "custom, f, r", "in.fa", "a:1-2"]);
        let o = parse(&args, false).unwrap();
        assert_eq!((o.line_len, o.reverse_complement), (5, true));
        assert_eq!((o.pos_strand_name, o.neg_strand_name), (b" f".to_vec(), b" r".to_vec()));
        assert_eq!((o.input.as_str(), o.regions), ("in.fa", vec!["a:1-2".to_string()]));
        assert!(matches!(parse(&strings(&[]), true), Err(Error::Help)));
        assert!(parse(&strings(&["--mark-strand", "up", "x"]), false).is_err());
    }
}
