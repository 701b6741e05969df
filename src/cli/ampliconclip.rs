//! `ampliconclip`'s command line → [`AmpliconclipOptions`] (samtools 1.24 `amplicon_clip_main`
//! in `bam_ampliconclip.c`); the work is [`crate::pipeline::ampliconclip`].

use super::Invocation;
use super::c_number::atoi;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::Globals;
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use super::permuted::permuted;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::ampliconclip::ClipOptions;
use crate::pipeline::ampliconclip::AmpliconclipOptions;

pub const USAGE: &str = include_str!("usage/ampliconclip.txt");

const fn long(name: &'static str, has_arg: bool) -> LongOpt {
    LongOpt { name, has_arg, key: name }
}

pub const OPTIONS: OptionTable = OptionTable {
    command: "ampliconclip",
    short: "b:@:o:O:f:u",
    long: &[
        long("no-PG", false),
        long("soft-clip", false),
        long("hard-clip", false),
        long("strand", false),
        long("clipped", false),
        long("fail", false),
        long("both-ends", false),
        long("filter-len", true),
        long("fail-len", true),
        long("no-excluded", false),
        long("rejects-file", true),
        long("primer-counts", true),
        long("original", false),
        long("keep-tag", false),
        long("tolerance", true),
        long("unmap-len", true),
    ],
    globals: Some(Globals::O_AND_THREADS),
    globals_first: true,
    unlisted: &["--write-index"],
};

/// The (format, level) an output opens with: htslib's `sam_open_mode` writes the name's
/// extension over the mode it is given (losing `-u`'s level), and leaves it for other names.
fn mode_after(name: &str, mode: (OutputFormat, i32)) -> (OutputFormat, i32) {
    let ext = match name.rfind('.') {
        Some(dot) if !name[dot..].contains('/') => name[dot + 1..].to_ascii_lowercase(),
        _ => return mode,
    };
    match ext.as_str() {
        "bam" => (OutputFormat::Bam, -1),
        "cram" => (OutputFormat::Cram, -1),
        "sam" => (OutputFormat::Sam, -1),
        _ => mode,
    }
}

pub fn parse(inv: &Invocation, args: &[String]) -> Result<AmpliconclipOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut clip = ClipOptions::default();
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    let (mut bed, mut output, mut stats, mut rejects, mut primer_counts) =
        (None, "-".to_string(), None, None, None);
    let mut uncompressed = false;
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "b" => bed = Some(v.to_string()),
            "o" => output = v.to_string(),
            "f" => stats = Some(v.to_string()),
            "u" => uncompressed = true,
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            "soft-clip" => clip.hard = false,
            "hard-clip" => clip.hard = true,
            "strand" => clip.use_strand = true,
            "clipped" => clip.only_clipped = true,
            "fail" => clip.mark_fail = true,
            "both-ends" => clip.both = true,
            "filter-len" => clip.filter_len = i64::from(atoi(v)),
            "fail-len" => clip.fail_len = i64::from(atoi(v)),
            "no-excluded" => clip.no_excluded = true,
            "rejects-file" => rejects = Some(v.to_string()),
            "primer-counts" => primer_counts = Some(v.to_string()),
            "original" => clip.original = true,
            "keep-tag" => clip.delete_tags = false,
            "tolerance" => clip.tolerance = i64::from(atoi(v)),
            "unmap-len" => clip.unmap_len = i64::from(atoi(v)),
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    let (Some(bed), Some(input)) = (bed, positionals.into_iter().next()) else {
        return Err(Error::ShowUsage(None));
    };
    if clip.tolerance < 0 {
        eprintln!(
            "[ampliconclip] warning: invalid tolerance of {}, resetting tolerance to default of 5.",
            clip.tolerance
        );
        clip.tolerance = 5;
    }
    out.use_reference(common.reference.as_deref());
    let chosen =
        |mode: (OutputFormat, i32)| (out.explicit.unwrap_or(mode.0), out.level.unwrap_or(mode.1));
    let out_mode = mode_after(&output, (OutputFormat::Bam, if uncompressed { 0 } else { -1 }));
    let (format, level) = chosen(out_mode);
    let rejects = rejects.map(|r| {
        let (f, l) = chosen(mode_after(&r, out_mode));
        (r, out.spec(f, l))
    });
    let command_line =
        inv.pg_fields(&permuted(&OPTIONS, args)).pop().map(|(_, cl)| cl).unwrap_or_default();
    Ok(AmpliconclipOptions {
        reference: common.reference.clone(),
        input,
        bed,
        output,
        spec: out.spec(format, level),
        rejects,
        stats,
        primer_counts,
        threads: common.threads.total(),
        pg: common.pg(inv, &permuted(&OPTIONS, args)),
        command_line,
        clip,
    })
}

/// Runs `ampliconclip` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::ampliconclip::run_on_pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_overwrite_the_mode() {
        assert_eq!(mode_after("-", (OutputFormat::Bam, 0)), (OutputFormat::Bam, 0));
        assert_eq!(mode_after("x.bam", (OutputFormat::Bam, 0)), (OutputFormat::Bam, -1));
        assert_eq!(mode_after("x.sam", (OutputFormat::Bam, 0)), (OutputFormat::Sam, -1));
        assert_eq!(mode_after("x.txt", (OutputFormat::Sam, -1)), (OutputFormat::Sam, -1));
    }
}
