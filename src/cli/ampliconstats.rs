//! `ampliconstats`' command line → [`AmpliconstatsOptions`] (samtools 1.24
//! `main_ampliconstats` in `amplicon_stats.c`); the work is [`crate::pipeline::ampliconstats`].

use super::c_number::atoi;
use super::common::CommonOptions;
use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::permuted::permuted;
use super::{MDSAM_VERSION, SAMTOOLS_VERSION};
use crate::error::Error;
use crate::ops::ampliconstats::MAX_DEPTHS;
use crate::pipeline::ampliconstats::stats::CountOptions;
use crate::pipeline::ampliconstats::{AmpliconstatsOptions, ReportOptions};

pub const USAGE: &str = include_str!("usage/ampliconstats.txt");

const fn long(name: &'static str, has_arg: bool, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

/// `SAM_OPT_GLOBAL_OPTIONS('I', 0, '-', '-', 0, '@')`.
const GLOBALS: Globals = Globals {
    input_fmt: Take::Short("I"),
    output_fmt: Take::Refused,
    output_fmt_option: Take::Refused,
    threads: Take::Short("@"),
    ..Globals::LONG
};

pub const OPTIONS: OptionTable = OptionTable {
    command: "ampliconstats",
    short: "?hf:F:@:p:m:d:sa:l:t:o:c:b:D:S",
    long: &[
        long("help", false, "h"),
        // The usage says --required-flag and --filter-flag; getopt knows these names.
        long("flag-require", true, "f"),
        long("flag-filter", true, "F"),
        long("min-depth", true, "d"),
        long("output", true, "o"),
        long("pos-margin", true, "m"),
        long("use-sample-name", false, "s"),
        long("max-amplicons", true, "a"),
        long("max-amplicon-length", true, "l"),
        long("tlen-adjust", true, "t"),
        long("tcoord-min-count", true, "c"),
        long("tcoord-bin", true, "b"),
        long("depth-bin", true, "D"),
        long("single-ref", false, "S"),
    ],
    globals: Some(GLOBALS),
    globals_first: true,
    unlisted: &[
        "-?",
        "-h",
        "-p",
        "--help",
        "--flag-require",
        "--flag-filter",
        "--write-index",
        "--verbosity",
    ],
};

/// `-d INT[,INT]...` as samtools reads it with `strtol`: numbers while each is followed by a
/// comma, into the depths already set.
fn parse_depths(v: &str, depths: &mut [i32; MAX_DEPTHS]) {
    for (d, piece) in v.split(',').enumerate().take(MAX_DEPTHS) {
        depths[d] = super::c_number::strtol(piece, 10).value as i32;
        let body = piece.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let unsigned = body.strip_prefix(['+', '-']).unwrap_or(body);
        let digits = unsigned.bytes().take_while(u8::is_ascii_digit).count();
        let number_len = if digits > 0 { piece.len() - unsigned.len() + digits } else { 0 };
        if number_len != piece.len() {
            break;
        }
    }
}

fn flag_value(v: &str) -> Result<u32, Error> {
    parse_flags(v).map(u32::from).map_err(|m| Error::Bare(format!("samtools ampliconstats: {m}\n")))
}

/// `Err(Error::Help)`: `-h`, or no BED: the usage on stdout, exit 0.
pub fn parse(args: &[String], stdin_is_terminal: bool) -> Result<AmpliconstatsOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut common = CommonOptions::default();
    let mut counting = CountOptions { flag_require: 0, flag_filter: 0x10B04, tlen_adjust: 0 };
    let mut report = ReportOptions {
        min_depth: [1, 0, 0, 0, 0],
        depth_bin: 0.01,
        tcoord_bin: 1,
        tcoord_min_count: 10,
        multi_ref: true,
        header_refs: 0,
    };
    let (mut max_amp, mut max_amp_len, mut margin) = (1000, 1000, 30);
    let (mut output, mut use_sample_name) = (None, false);
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "f" => counting.flag_require = flag_value(v)?,
            "F" => {
                if counting.flag_filter & 0x10000 != 0 {
                    // The first -F replaces the default.
                    counting.flag_filter = 0;
                }
                counting.flag_filter |= flag_value(v)?;
            }
            "m" => margin = i64::from(atoi(v)),
            "D" => report.depth_bin = super::c_number::atof(v),
            "d" => parse_depths(v, &mut report.min_depth),
            "a" => max_amp = i64::from(atoi(v)) + 1,
            "l" => max_amp_len = i64::from(atoi(v)) + 1,
            "c" => report.tcoord_min_count = atoi(v),
            "b" => report.tcoord_bin = atoi(v).max(1),
            "t" => counting.tlen_adjust = i64::from(atoi(v)),
            "s" => use_sample_name = true,
            "o" => output = Some(v.to_string()),
            "S" => report.multi_ref = false,
            "h" => return Err(Error::Help),
            // samtools complains, shows its usage and carries on.
            "p" => eprint!("Unexpected global option.\n{USAGE}"),
            // --input-fmt: the format is read from the data.
            "I" => {}
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    let mut positionals = positionals.into_iter();
    let Some(bed) = positionals.next() else { return Err(Error::Help) };
    let mut inputs: Vec<String> = positionals.collect();
    if inputs.is_empty() {
        if stdin_is_terminal {
            return Err(Error::ShowUsage(None));
        }
        inputs.push("-".into());
    }
    let mut command_line = "ampliconstats".to_string();
    for a in permuted(&OPTIONS, args) {
        command_line.push(' ');
        command_line.push_str(&a.replace('\t', " "));
    }
    Ok(AmpliconstatsOptions {
        bed,
        inputs,
        output,
        counting,
        report,
        max_amp,
        max_amp_len,
        margin,
        use_sample_name,
        threads: common.threads,
        reference: common.reference.clone(),
        command_line,
        version: format!("{SAMTOOLS_VERSION} (mdsam {MDSAM_VERSION})"),
    })
}

/// Runs `ampliconstats` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    parse(args, std::io::stdin().is_terminal())
        .and_then(|o| crate::pipeline::ampliconstats::run(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_are_read_while_commas_follow() {
        let mut d = [1, 0, 0, 0, 0];
        parse_depths("1,20,100", &mut d);
        assert_eq!(d, [1, 20, 100, 0, 0]);
        let mut d = [1, 0, 0, 0, 0];
        parse_depths("5x,7", &mut d);
        assert_eq!(d, [5, 0, 0, 0, 0]);
    }
}
