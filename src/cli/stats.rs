//! `stats`' command line → [`StatsOptions`] (samtools 1.24 `stats.c` options); the work is
//! [`crate::pipeline::stats`].

use super::c_number::{self, atof, atoi};
use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{self, Globals};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::stats::{CoverageBins, Settings};
use crate::pipeline::stats::StatsOptions;

pub const USAGE: &str = include_str!("usage/stats.txt");

const fn long(name: &'static str, has_arg: bool, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

pub const OPTIONS: OptionTable = OptionTable {
    command: "stats",
    short: "?hdsXxpr:c:l:i:t:m:q:f:F:g:I:S:P:@:",
    long: &[
        long("help", false, "h"),
        long("remove-dups", false, "d"),
        long("sam", false, "s"),
        long("customized-index", false, "X"),
        long("ref-seq", true, "r"),
        long("coverage", true, "c"),
        long("read-length", true, "l"),
        long("insert-size", true, "i"),
        long("most-inserts", true, "m"),
        long("trim-quality", true, "q"),
        long("target-regions", true, "t"),
        long("required-flag", true, "f"),
        long("filtering-flag", true, "F"),
        long("id", true, "I"),
        long("GC-depth", true, "GC-depth"),
        long("sparse", false, "x"),
        long("split", true, "S"),
        long("split-prefix", true, "P"),
        long("remove-overlaps", false, "p"),
        long("cov-threshold", true, "g"),
        long("ref-stats", false, "ref-stats"),
        long("ref-stats-chunk", true, "ref-stats-chunk"),
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '@')
    globals: Some(Globals::INPUT_OPTIONS_AND_THREADS),
    globals_first: true,
    unlisted: &["-?", "--write-index"],
};

/// `sscanf(v, "%d,%d,%d")`: the three numbers, or `None`.
fn coverage_triple(v: &str) -> Option<(i32, i32, i32)> {
    let mut parts = v.splitn(3, ',');
    let mut next = || -> Option<i32> {
        let p = parts.next()?.trim_start();
        let digits = p.trim_start_matches(['+', '-']);
        if !digits.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        Some(c_number::strtol(p, 10).value as i32)
    };
    Some((next()?, next()?, next()?))
}

fn defaults() -> (Settings, (i32, i32, i32)) {
    let settings = Settings {
        flag_require: 0,
        flag_filter: 0,
        gcd_bin_size: 20000,
        max_insert: 8000,
        trim_quality: 0,
        main_bulk: 0.99,
        coverage: CoverageBins { min: 1, max: 1000, step: 1, count: 1002 },
        read_length: -1,
        remove_overlaps: false,
        cov_threshold: 0,
        sparse: false,
        has_reference: false,
    };
    (settings, (1, 1000, 1))
}

fn flag(v: &str) -> Result<u16, Error> {
    parse_flags(v).map_err(Error::Message)
}

/// What the options say besides [`StatsOptions`].
struct Extras {
    /// `-c`'s three numbers.
    coverage: (i32, i32, i32),
    /// `-X`: the index follows the input.
    custom_index: bool,
    /// `-h`: samtools prints the usage when it meets it.
    usage: bool,
}

/// Applies one option.
fn apply(o: &mut StatsOptions, extra: &mut Extras, key: &str, v: &str) -> Result<(), Error> {
    match key {
        "f" => o.settings.flag_require = flag(v)?,
        "F" => o.settings.flag_filter |= flag(v)?,
        "d" => o.settings.flag_filter |= crate::record::layout::flags::DUP,
        "X" => extra.custom_index = true,
        "r" => o.reference = Some(v.to_string()),
        "GC-depth" => o.settings.gcd_bin_size = atof(v) as i32,
        "c" => {
            extra.coverage =
                coverage_triple(v).ok_or_else(|| Error::Bare(format!("Unable to parse -c {v}")))?
        }
        "l" => o.settings.read_length = atoi(v),
        "i" => o.settings.max_insert = atoi(v),
        "m" => o.settings.main_bulk = atof(v) as f32,
        "q" => o.settings.trim_quality = atoi(v),
        "t" => o.targets = Some(v.to_string()),
        "I" => o.read_group = Some(v.to_string()),
        "x" => o.settings.sparse = true,
        "S" => o.split_tag = Some(v.to_string()),
        "P" => o.split_prefix = Some(v.to_string()),
        "p" => o.settings.remove_overlaps = true,
        "g" => {
            o.settings.cov_threshold = atoi(v);
            if o.settings.cov_threshold < 0 || o.settings.cov_threshold == i32::MAX {
                return Err(Error::Bare(format!(
                    "Unsupported value for coverage threshold {}",
                    o.settings.cov_threshold
                )));
            }
        }
        "ref-stats" => o.ref_stats = true,
        "ref-stats-chunk" => {
            let mb = atoi(v).max(1);
            o.ref_chunk = i64::from(mb.wrapping_mul(1 << 20)).max(1);
        }
        "h" | "?" => extra.usage = true,
        "@" => o.threads = global::parse_threads(v)?.total(),
        "verbosity" => global::check_verbosity(v)?,
        "input-fmt-option" => {
            if let Some(expr) = global::parse_input_fmt_option(v, &mut o.cram_reference)? {
                o.filter = Some(expr);
            }
        }
        "reference" => o.cram_reference = Some(v.to_string()),
        // -s, --write-index: nothing to do.
        _ => {}
    }
    Ok(())
}

/// `Err(Error::Help)`: `-h`, or no input on a terminal: the usage on stdout, exit 1.
pub fn parse(args: &[String], stdin_is_terminal: bool) -> Result<StatsOptions, Error> {
    // A getopt failure is `ShowUsage`: the caller prints the usage on stdout, as samtools.
    let (opts, mut positionals) = OPTIONS.parse_or_usage(args)?;
    let (settings, coverage) = defaults();
    let mut o = StatsOptions {
        input: String::new(),
        index: None,
        regions: Vec::new(),
        settings,
        reference: None,
        targets: None,
        read_group: None,
        split_tag: None,
        split_prefix: None,
        ref_stats: false,
        ref_chunk: 1 << 20,
        threads: 1,
        cram_reference: None,
        filter: None,
        version: format!(
            "{} (mdsam {})+htslib-{}",
            super::SAMTOOLS_VERSION,
            super::MDSAM_VERSION,
            super::SAMTOOLS_VERSION
        ),
        // samtools stringifies argv after getopt has permuted it.
        command_line: std::iter::once("stats".to_string())
            .chain(super::permuted::permuted(&OPTIONS, args))
            .collect::<Vec<_>>()
            .join(" "),
    };
    let mut extra = Extras { coverage, custom_index: false, usage: false };
    for opt in &opts {
        apply(&mut o, &mut extra, &opt.key, opt.value.as_deref().unwrap_or(""))?;
        if extra.usage {
            return Err(Error::Help);
        }
    }
    if positionals.is_empty() {
        if stdin_is_terminal {
            return Err(Error::Help);
        }
        positionals.push("-".into());
    }
    let mut rest = positionals.into_iter();
    o.input = rest.next().unwrap_or_default();
    if extra.custom_index {
        o.index = Some(rest.next().unwrap_or_default());
    }
    o.regions = rest.collect();
    o.settings.has_reference = o.reference.is_some();
    let (min, max, step) = extra.coverage;
    o.settings.coverage = match CoverageBins::new(min, max, step) {
        Some(bins) => bins,
        None if step == 0 && max - min >= 0 => {
            return Err(Error::Bare("Floating point exception".into()));
        }
        None => {
            // samtools' message has no line end.
            eprint!("Out of memory");
            return Err(Error::Failed);
        }
    };
    Ok(o)
}

/// Runs `stats` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    parse(args, std::io::stdin().is_terminal()).and_then(crate::pipeline::stats::run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(line: &str) -> StatsOptions {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        match parse(&args, false) {
            Ok(o) => o,
            _ => panic!("{line} did not parse"),
        }
    }

    #[test]
    fn options_fill_the_settings() {
        let o = parse_line("-d -F 0x4 -c 1,10,3 --GC-depth 1e3 -i 0 -X in.bam in.bai chr1 chr2");
        assert_eq!(o.settings.flag_filter, 0x404);
        assert_eq!((o.settings.coverage.max, o.settings.coverage.count), (12, 6));
        assert_eq!(o.settings.gcd_bin_size, 1000);
        assert_eq!(o.settings.max_insert, 0);
        assert_eq!((o.input.as_str(), o.index.as_deref()), ("in.bam", Some("in.bai")));
        assert_eq!(o.regions, ["chr1", "chr2"]);
        assert_eq!(
            o.command_line,
            "stats -d -F 0x4 -c 1,10,3 --GC-depth 1e3 -i 0 -X in.bam in.bai chr1 chr2"
        );
        assert_eq!(parse_line("--ref-stats-chunk -1 x").ref_chunk, 1 << 20);
        assert_eq!(parse_line("").input, "-");
        assert!(coverage_triple("5,10").is_none());
    }
}
