//! `consensus`'s command line → [`ConsensusRun`] (samtools 1.24 `main_consensus` in
//! bam_consensus.c); the work is [`crate::pipeline::consensus`].

use super::Invocation;
use super::c_number::{atof, atoi};
use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::consensus::calibration::{self, Source};
use crate::ops::consensus::{Format, Mode, Options};
use crate::pipeline::consensus::ConsensusRun;

pub const USAGE: &str = include_str!("usage/consensus.txt");

const fn long(name: &'static str, has_arg: bool, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

pub const OPTIONS: OptionTable = OptionTable {
    command: "consensus",
    short: "@:qd:c:H:r:5f:C:aAl:o:m:pt:X:T:Z:",
    long: &[
        long("use-qual", false, "q"),
        long("no-use-qual", false, "no-use-qual"),
        long("adj-qual", false, "adj-qual"),
        long("no-adj-qual", false, "no-adj-qual"),
        long("use-MQ", false, "use-MQ"),
        long("no-use-MQ", false, "no-use-MQ"),
        long("adj-MQ", false, "adj-MQ"),
        long("no-adj-MQ", false, "no-adj-MQ"),
        long("NM-halo", true, "NM-halo"),
        long("SC-cost", true, "SC-cost"),
        long("scale-MQ", true, "scale-MQ"),
        long("low-MQ", true, "low-MQ"),
        long("high-MQ", true, "high-MQ"),
        long("min-depth", true, "d"),
        long("call-fract", true, "c"),
        long("het-fract", true, "H"),
        long("region", true, "r"),
        long("regions-file", true, "regions-file"),
        long("format", true, "f"),
        long("cutoff", true, "C"),
        long("ambig", false, "A"),
        long("line-len", true, "l"),
        long("default-qual", true, "default-qual"),
        long("het-only", false, "het-only"),
        long("show-del", true, "show-del"),
        long("show-ins", true, "show-ins"),
        long("mark-ins", false, "mark-ins"),
        long("output", true, "o"),
        long("incl-flags", true, "rf"),
        long("rf", true, "rf"),
        long("excl-flags", true, "ff"),
        long("ff", true, "ff"),
        long("min-MQ", true, "min-MQ"),
        long("min-BQ", true, "min-BQ"),
        long("P-het", true, "P-het"),
        long("P-indel", true, "P-indel"),
        long("het-scale", true, "het-scale"),
        long("mode", true, "m"),
        long("homopoly-fix", false, "p"),
        long("homopoly-score", true, "homopoly-score"),
        long("homopoly-redux", true, "homopoly-redux"),
        long("qual-calibration", true, "t"),
        long("config", true, "X"),
        long("ref-qual", true, "ref-qual"),
        long("block-size", true, "Z"),
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', '-', 'T', '@')
    globals: Some(Globals {
        input_fmt: Take::Refused,
        output_fmt: Take::Short("O"),
        output_fmt_option: Take::Refused,
        reference: Take::Short("T"),
        threads: Take::Short("@"),
        ..Globals::LONG
    }),
    globals_first: true,
    unlisted: &[
        "-5",
        "--SC-cost",
        "--default-qual",
        "--het-only",
        "--homopoly-redux",
        "--no-use-qual",
        "--use-qual",
        "--adj-qual",
        "--no-adj-qual",
        "--use-MQ",
        "--no-use-MQ",
        "--adj-MQ",
        "--no-adj-MQ",
        "--incl-flags",
        "--excl-flags",
        "--write-index",
        "--output-fmt",
    ],
};

fn preset(id: usize) -> Source {
    Source::Table(Box::new(calibration::preset(id)))
}

fn bare(msg: String) -> Error {
    Error::Bare(msg)
}

/// `-X`: a preset of calibration table and model parameters.
fn apply_config(o: &mut Options, cal: &mut Source, name: &str) -> Result<(), Error> {
    let long_read = |o: &mut Options| {
        o.mode = Mode::Recall;
        o.homopoly_fix = 0.3;
        o.homopoly_redux = 0.01;
        o.low_mqual = 5;
        o.scale_mqual = 1.5;
        o.het_scale = 0.37;
    };
    match name.to_ascii_lowercase().as_str() {
        "hifi" => {
            *cal = preset(calibration::HIFI);
            long_read(o);
        }
        "hiseq" => {
            o.mode = Mode::Recall;
            *cal = preset(calibration::HISEQ);
            o.homopoly_redux = 0.01;
        }
        "r10.4_sup" => {
            *cal = preset(calibration::ONT_R10_4_SUP);
            long_read(o);
        }
        "r10.4_dup" => {
            *cal = preset(calibration::ONT_R10_4_DUP);
            long_read(o);
        }
        "ultima" => {
            o.mode = Mode::Recall;
            *cal = preset(calibration::ULTIMA);
            o.homopoly_fix = 0.3;
            o.homopoly_redux = 0.01;
            o.het_scale = 0.37;
            o.scale_mqual = 2.0;
            o.low_mqual = 10;
        }
        _ => return Err(bare(format!("Unrecognised configuration name: \"{name}\""))),
    }
    Ok(())
}

pub fn run(inv: &Invocation, args: &[String]) -> Result<(), Error> {
    let _ = inv;
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut o = Options::default();
    let mut cal = preset(calibration::FLAT);
    let mut run = ConsensusRun {
        options: Options::default(),
        calibration: preset(calibration::FLAT),
        input: String::new(),
        output: None,
        region: None,
        bed: None,
        reference: None,
        cram_reference: None,
        threads: 1,
        block_size: 500_000,
    };
    let incompatible =
        || bare("samtools consensus: option -r and --regions-file are incompatible".into());
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        let yes = v.starts_with(['y', 'Y']);
        match opt.key.as_str() {
            "a" => o.all_bases = o.all_bases.saturating_add(1),
            "q" => o.use_qual = true,
            "no-use-qual" => o.use_qual = false,
            "use-MQ" => o.use_mqual = true,
            "no-use-MQ" => o.use_mqual = false,
            "scale-MQ" => o.scale_mqual = atof(v),
            "low-MQ" => o.low_mqual = atoi(v),
            "high-MQ" => o.high_mqual = atoi(v),
            "d" => o.min_depth = atoi(v),
            "c" => o.call_fract = atof(v),
            "H" => o.het_fract = atof(v),
            "r" => {
                if run.bed.is_some() {
                    return Err(incompatible());
                }
                run.region = Some(v.to_string());
            }
            "regions-file" => {
                if run.region.is_some() {
                    return Err(incompatible());
                }
                run.bed = Some(v.to_string());
            }
            "C" => o.cons_cutoff = atoi(v),
            "A" => o.ambig = true,
            "p" => o.homopoly_fix = 0.5,
            "homopoly-score" => o.homopoly_fix = atof(v),
            "homopoly-redux" => o.homopoly_redux = atof(v),
            "default-qual" => o.default_qual = atoi(v),
            "het-only" => o.het_only = true,
            "show-del" => o.show_del = yes,
            "show-ins" => o.show_ins = yes,
            "mark-ins" => o.mark_ins = true,
            "min-MQ" => o.min_mqual = atoi(v),
            "min-BQ" => o.min_qual = atoi(v),
            "P-het" => o.p_het = atof(v),
            "P-indel" => o.p_indel = atof(v),
            "het-scale" => o.het_scale = atof(v),
            "adj-qual" => o.adj_qual = true,
            "no-adj-qual" => o.adj_qual = false,
            "adj-MQ" => o.nm_adjust = true,
            "no-adj-MQ" => o.nm_adjust = false,
            "NM-halo" => o.nm_halo = atoi(v),
            "SC-cost" => o.sc_cost = atoi(v),
            // Only the threaded path uses the block size (samtools: at least 2).
            "Z" => run.block_size = i64::from(atoi(v)).max(2),
            "5" | "O" | "write-index" => {}
            "m" => {
                o.mode = match v.to_ascii_lowercase().as_str() {
                    "simple" => Mode::Simple,
                    "bayesian_m" => Mode::Mixed,
                    "bayesian_p" => Mode::Precise,
                    "bayesian_r" | "bayesian" => Mode::Recall,
                    "bayesian_116" => Mode::Bayes116,
                    _ => return Err(bare(format!("Unknown mode {v}"))),
                }
            }
            "l" => {
                let n = atoi(v);
                o.line_len = if n <= 0 { i32::MAX as usize } else { n as usize };
            }
            "f" => {
                o.format = match v.to_ascii_lowercase().as_str() {
                    "fasta" => Format::Fasta,
                    "fastq" => Format::Fastq,
                    "pileup" => Format::Pileup,
                    _ => return Err(bare(format!("Unknown format {v}"))),
                };
                // samtools: pileup blocks hold more, so its default block is smaller.
                if o.format == Format::Pileup && run.block_size == 500_000 {
                    run.block_size = 100_000;
                }
            }
            "o" => run.output = Some(v.to_string()),
            "X" => apply_config(&mut o, &mut cal, v)?,
            "rf" => {
                o.incl_flags = parse_flags(v)
                    .map_err(|_| bare(format!("samtools consensus: could not parse --rf {v}")))?
            }
            "ff" => {
                o.excl_flags = parse_flags(v)
                    .map_err(|_| bare(format!("samtools consensus: could not parse --ff {v}")))?
            }
            "t" => {
                cal = match calibration::named(v) {
                    Some(table) => Source::Table(Box::new(table)),
                    None => Source::File(v.to_string()),
                }
            }
            "T" => run.reference = Some(v.to_string()),
            "ref-qual" => o.ref_qual = atoi(v),
            "@" => run.threads = global::parse_threads(v)?.total(),
            "verbosity" => global::check_verbosity(v)?,
            "input-fmt-option" => {
                global::parse_input_fmt_option(v, &mut run.cram_reference)?;
            }
            _ => {}
        }
    }
    match positionals.len() {
        1 => run.input = positionals[0].clone(),
        0 => return Err(Error::Help),
        _ => return Err(Error::ShowUsage(None)),
    }
    run.options = o;
    run.calibration = cal;
    crate::pipeline::consensus::run(&run)
}
