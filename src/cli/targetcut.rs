//! `targetcut`'s command line → [`TargetcutOptions`] (samtools 1.24 `main_cut_target` in
//! `cut_target.c`); the work is [`crate::pipeline::targetcut`].

use super::c_number::atoi;
use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::targetcut::ScoreParams;
use crate::pipeline::targetcut::TargetcutOptions;

pub const USAGE: &str = include_str!("usage/targetcut.txt");

/// `SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 'f', '-')`.
const GLOBALS: Globals = Globals {
    input_fmt: Take::Refused,
    output_fmt: Take::Refused,
    output_fmt_option: Take::Refused,
    reference: Take::Short("f"),
    threads: Take::Refused,
    ..Globals::LONG
};

pub const OPTIONS: OptionTable = OptionTable {
    command: "targetcut",
    // `-o` is in samtools' getopt string but handled by nothing: "Unexpected global option."
    short: "f:Q:i:o:0:1:2:",
    long: &[],
    globals: Some(GLOBALS),
    globals_first: true,
    // The usage names the options on its first line only.
    unlisted: &["-Q", "-i", "-o", "-0", "-1", "-2", "--write-index"],
};

/// Parses `targetcut` arguments: any mistake, or no input, is the usage on stderr and exit 1.
pub fn parse(args: &[String]) -> Result<TargetcutOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut params = ScoreParams::default();
    let (mut min_baseq, mut reference, mut cram_reference) = (13, None, None);
    for opt in opts {
        let v = opt.value.as_deref().unwrap_or_default();
        match opt.key.as_str() {
            "Q" => min_baseq = atoi(v),
            // The transition into a target is a penalty.
            "i" => params.p[0][1] = atoi(v).wrapping_neg(),
            "0" => params.e[1][0] = atoi(v),
            "1" => params.e[1][1] = atoi(v),
            "2" => params.e[1][2] = atoi(v),
            "f" => reference = Some(v.to_string()),
            "o" => return Err(Error::ShowUsage(Some("Unexpected global option.".into()))),
            "verbosity" => super::global::check_verbosity(v)?,
            // Checked as htslib checks it; a `filter=` expression is not applied (as in mpileup).
            "input-fmt-option" => {
                super::global::parse_input_fmt_option(v, &mut cram_reference)?;
            }
            // --write-index: targetcut writes no alignment file.
            _ => {}
        }
    }
    // Without an input the pipeline shows the usage, once it has tried `-f` as samtools does.
    let input = positionals.into_iter().next();
    // A CRAM input is decoded against `reference=` when given, else the `-f` FASTA.
    let cram_reference = cram_reference.or_else(|| reference.clone());
    Ok(TargetcutOptions { input, reference, cram_reference, min_baseq, params })
}

/// Runs `samtools targetcut`.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    crate::pipeline::targetcut::run(&parse(args)?)
}
