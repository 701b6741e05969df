//! Options every command shares (htslib's `sam_global_args`).

use super::c_number;
use super::getopt::{LongOpt, REFUSED};
use crate::error::Error;
use crate::io::output_spec::FormatOptions;
use crate::pipeline::threads::Threads;

/// How a command takes one of samtools' global long options: one argument of
/// `SAM_OPT_GLOBAL_OPTIONS(o1, …, o6)` in samtools' `sam_opts.h`.
#[derive(Clone, Copy)]
pub enum Take {
    /// `'-'`: getopt knows the option and the command refuses it (its usage, exit 1).
    Refused,
    /// `0`: a long option only, reported under its own name.
    Long,
    /// A letter: the long option is another name for that short option.
    Short(&'static str),
}

/// The global long options one command takes; `..Globals::LONG` for those it takes long.
#[derive(Clone, Copy)]
pub struct Globals {
    pub input_fmt: Take,
    pub input_fmt_option: Take,
    pub output_fmt: Take,
    pub output_fmt_option: Take,
    pub reference: Take,
    pub threads: Take,
    /// Always long in samtools; refused by commands that do not pass it to
    /// `parse_sam_global_opt` (index).
    pub write_index: Take,
    pub verbosity: Take,
}

impl Globals {
    /// Every option taken as a long option.
    pub const LONG: Globals = Globals {
        input_fmt: Take::Long,
        input_fmt_option: Take::Long,
        output_fmt: Take::Long,
        output_fmt_option: Take::Long,
        reference: Take::Long,
        threads: Take::Long,
        write_index: Take::Long,
        verbosity: Take::Long,
    };

    /// `SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', 0, 0, '@')`, as sort, fixmate and markdup take them:
    /// `--output-fmt` is `-O`, `--threads` is `-@`, `--input-fmt` is refused.
    pub const O_AND_THREADS: Globals = Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Short("O"),
        threads: Take::Short("@"),
        ..Globals::LONG
    };

    /// `SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '-')`, as coverage and bedcov take them: only
    /// `--input-fmt-option`, `--reference`, `--write-index` and `--verbosity`.
    pub const INPUT_OPTIONS_ONLY: Globals = Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        threads: Take::Refused,
        ..Globals::LONG
    };

    /// `SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '@')`, as depth and stats take them:
    /// [`Globals::INPUT_OPTIONS_ONLY`] with `-@` for `--threads`.
    pub const INPUT_OPTIONS_AND_THREADS: Globals =
        Globals { threads: Take::Short("@"), ..Globals::INPUT_OPTIONS_ONLY };

    /// The getopt entries, in samtools' order.
    pub fn long_options(&self) -> Vec<LongOpt> {
        let entry = |name: &'static str, has_arg: bool, take: Take| {
            let key = match take {
                Take::Refused => REFUSED,
                Take::Long => name,
                Take::Short(letter) => letter,
            };
            LongOpt { name, has_arg, key }
        };
        vec![
            entry("input-fmt", true, self.input_fmt),
            entry("input-fmt-option", true, self.input_fmt_option),
            entry("output-fmt", true, self.output_fmt),
            entry("output-fmt-option", true, self.output_fmt_option),
            entry("reference", true, self.reference),
            entry("threads", true, self.threads),
            entry("write-index", false, self.write_index),
            entry("verbosity", true, self.verbosity),
        ]
    }
}

/// `-@`/`--threads` as samtools' `parse_sam_global_opt` reads it (`parse_int_value`: a whole
/// decimal `int`; a negative count is no extra thread); a bad value shows the usage.
pub fn parse_threads(v: &str) -> Result<Threads, Error> {
    match c_number::parse_int_value(v) {
        Some(n) => Ok(Threads::from_extra(n.max(0) as usize)),
        None => Err(Error::ShowUsage(Some("Invalid threads value.".into()))),
    }
}

/// `--verbosity` as `parse_sam_global_opt` reads it (`parse_int_value`); mdsam has no log levels
/// to set.
pub fn check_verbosity(v: &str) -> Result<(), Error> {
    match c_number::parse_int_value(v) {
        Some(_) => Ok(()),
        None => Err(Error::ShowUsage(Some("Invalid verbosity value.".into()))),
    }
}

/// htslib's `hts_opt_add` names (each also in upper case).
const FORMAT_OPTIONS: &[&str] = &[
    "decode_md",
    "verbosity",
    "seqs_per_slice",
    "bases_per_slice",
    "slices_per_container",
    "embed_ref",
    "no_ref",
    "pos_delta",
    "ignore_md5",
    "use_bzip2",
    "use_rans",
    "use_lzma",
    "use_tok",
    "use_fqz",
    "use_arith",
    "fast",
    "normal",
    "small",
    "archive",
    "reference",
    "version",
    "multi_seq_per_slice",
    "nthreads",
    "cache_size",
    "required_fields",
    "lossy_names",
    "name_prefix",
    "store_md",
    "store_nm",
    "block_size",
    "level",
    "filter",
    "fastq_aux",
    "fastq_barcode",
    "fastq_rnum",
    "fastq_casava",
    "fastq_name2",
    "fastq_umi",
    "fastq_umi_regex",
];

/// `--input-fmt-option NAME[=VAL]` for a command that reads SAM/BAM records: htslib's refusal
/// of an unknown name or cache size suffix; `reference=FILE` goes into `reference` and
/// `filter=EXPR` comes back (the other options only concern CRAM, FASTQ or tuning mdsam does
/// not need).
pub fn parse_input_fmt_option(
    v: &str,
    reference: &mut Option<String>,
) -> Result<Option<String>, Error> {
    let (name, value) = v.split_once('=').unwrap_or((v, "1"));
    // htslib spells store_md and store_nm in lower case only.
    let known = FORMAT_OPTIONS
        .iter()
        .any(|n| *n == name || (!n.starts_with("store_") && n.to_ascii_uppercase() == name));
    if !known {
        return Err(Error::ShowUsage(Some(format!("[E::hts_opt_add] Unknown option '{name}'"))));
    }
    if name.eq_ignore_ascii_case("cache_size") {
        let digits =
            value.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '+' || c == '-');
        let digits =
            digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")).unwrap_or(digits);
        let suffix = digits.trim_start_matches(|c: char| c.is_ascii_hexdigit());
        if let Some(c) = suffix.chars().next().filter(|c| !"gGmMkK".contains(*c)) {
            let line = format!("[E::hts_opt_add] Unrecognised cache size suffix '{c}'");
            return Err(Error::ShowUsage(Some(line)));
        }
    }
    if name.eq_ignore_ascii_case("reference") {
        *reference = Some(value.to_string());
    }
    Ok(name.eq_ignore_ascii_case("filter").then(|| value.to_string()))
}

/// `-O`/`--output-fmt FMT[,level=N,...]`: the format and any level it sets; its other options
/// go into `options`.
pub fn parse_output_fmt(
    v: &str,
    options: &mut FormatOptions,
) -> Result<(crate::io::format::OutputFormat, Option<i32>), Error> {
    use crate::io::format::OutputFormat;
    let (fmt, rest) = v.split_once(',').unwrap_or((v, ""));
    let format = match fmt.to_ascii_lowercase().as_str() {
        "sam" => OutputFormat::Sam,
        "bam" => OutputFormat::Bam,
        "sam.gz" => OutputFormat::SamGz,
        "cram" => OutputFormat::Cram,
        _ => return Err(Error::Usage(format!("unknown output format \"{fmt}\""))),
    };
    let mut level = None;
    for opt in rest.split(',') {
        if let Some(l) = parse_fmt_option_level(opt) {
            level = Some(l);
        }
        options.apply(opt);
    }
    Ok((format, level))
}

/// The level an `--output-fmt-option` sets (`level=N`), if any.
pub fn parse_fmt_option_level(opt: &str) -> Option<i32> {
    // hts_opt_add: strtol(val, NULL, 0), kept as an int.
    opt.strip_prefix("level=").map(|l| c_number::strtol(l, 0).value as i32)
}

/// Removes mdsam's `--profile FILE` (or `--profile=FILE`) from a command's arguments, before
/// the samtools-compatible parser sees them; returns the remaining arguments and the path.
/// Arguments after `--` are left alone.
pub fn take_profile(args: &[String]) -> Result<(Vec<String>, Option<String>), Error> {
    let mut rest = Vec::with_capacity(args.len());
    let mut path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a.clone());
            rest.extend(it.by_ref().cloned());
            break;
        }
        if a == "--profile" {
            let v = it.next().ok_or_else(|| Error::Usage("--profile needs a file name".into()))?;
            path = Some(v.clone());
        } else if let Some(v) = a.strip_prefix("--profile=") {
            path = Some(v.to_string());
        } else {
            rest.push(a.clone());
        }
    }
    Ok((rest, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn profile_option_is_taken_out_in_both_spellings() {
        let (rest, path) =
            take_profile(&strings(&["-@", "2", "--profile", "p.json", "in.bam"])).unwrap();
        assert_eq!((rest, path.as_deref()), (strings(&["-@", "2", "in.bam"]), Some("p.json")));
        let (rest, path) = take_profile(&strings(&["--profile=q.json", "x"])).unwrap();
        assert_eq!((rest, path.as_deref()), (strings(&["x"]), Some("q.json")));
        let (rest, path) = take_profile(&strings(&["--", "--profile", "f"])).unwrap();
        assert_eq!((rest, path), (strings(&["--", "--profile", "f"]), None));
        assert!(take_profile(&strings(&["--profile"])).is_err());
    }
}
