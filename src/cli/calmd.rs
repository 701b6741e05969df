//! `calmd`'s command line → [`CalmdOptions`] (samtools 1.24 `bam_fillmd` in `bam_md.c`); the
//! work is [`crate::pipeline::calmd`].

use super::Invocation;
use super::c_number::atoi;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::baq::BaqFlags;
use crate::ops::calmd::CalmdFlags;
use crate::pipeline::calmd::CalmdOptions;

pub const USAGE: &str = include_str!("usage/calmd.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "calmd",
    short: "EqQreuNhbSC:n:Ad@:",
    long: &[LongOpt { name: "no-PG", has_arg: false, key: "no-PG" }],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 0, 0, 0, '@'), first in samtools' table.
    globals: Some(Globals {
        input_fmt: Take::Refused,
        threads: Take::Short("@"),
        write_index: Take::Refused,
        ..Globals::LONG
    }),
    globals_first: true,
    unlisted: &["-q", "-N", "-h", "-d", "-C", "-n"],
};

pub fn parse(inv: &Invocation, args: &[String]) -> Result<CalmdOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut flags = CalmdFlags::default();
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    let (mut bam, mut uncompressed, mut realign, mut cap_q) = (false, false, false, 0);
    let mut baq = BaqFlags::default();
    let mut reference = None;
    let mut filter = None;
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "r" => realign = true,
            "e" => flags.use_equal = true,
            "d" => flags.drop_tags = true,
            "q" => flags.bin_quality = true,
            "h" | "S" => {}
            "A" => baq.apply = true,
            "E" => baq.extend = true,
            "N" => (flags.update_md, flags.update_nm) = (false, false),
            "b" => bam = true,
            "u" => (bam, uncompressed) = (true, true),
            "n" => flags.max_nm = atoi(v),
            "C" => cap_q = atoi(v),
            "Q" => flags.quiet = true,
            "output-fmt" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            "input-fmt-option" => {
                filter = super::global::parse_input_fmt_option(v, &mut common.reference)?.or(filter)
            }
            "reference" => {
                // samtools' global option: the FASTA CRAM input decodes against, as well as
                // the one calmd compares with when no positional FASTA is given.
                common.reference = Some(v.to_string());
                reference = Some(v.to_string());
            }
            key => {
                if !common.take(key, o.value.as_deref())? {
                    return Err(Error::ShowUsage(None));
                }
            }
        }
    }
    let (input, reference) = match (positionals.as_slice(), reference) {
        ([input, fasta, ..], _) => (input.clone(), fasta.clone()),
        ([input], Some(fasta)) => (input.clone(), fasta),
        _ => return Err(Error::ShowUsage(None)),
    };
    let format = out.explicit.unwrap_or(if bam { OutputFormat::Bam } else { OutputFormat::Sam });
    let level = match (uncompressed, out.level) {
        (true, _) => 0,
        (false, level) => level.unwrap_or(-1),
    };
    // samtools stringifies argv after getopt has permuted it.
    let argv = super::permuted::permuted(&OPTIONS, args);
    out.use_reference(common.reference.as_deref());
    Ok(CalmdOptions {
        input,
        reference,
        spec: out.spec(format, level),
        threads: common.threads.total(),
        cram_reference: common.reference.clone(),
        flags,
        baq: realign.then_some(baq),
        cap_q,
        pg: common.pg(inv, &argv),
        filter,
    })
}

/// Runs `calmd` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::calmd::run)
}
