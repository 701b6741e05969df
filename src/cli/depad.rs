//! `depad`'s command line → [`DepadOptions`] (samtools 1.24 `main_pad2unpad` in `padding.c`);
//! the work is [`crate::pipeline::depad`].

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use super::permuted::permuted;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::pipeline::depad::DepadOptions;

pub const USAGE: &str = include_str!("usage/depad.txt");
/// What `-?` adds to the usage.
pub const NOTES: &str = include_str!("usage/depad_notes.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "depad",
    short: "SCso:u1T:?",
    long: &[LongOpt { name: "no-PG", has_arg: false, key: "no-PG" }],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 0, 0, 'T', '-'), listed first.
    globals: Some(Globals {
        input_fmt: Take::Refused,
        reference: Take::Short("T"),
        threads: Take::Refused,
        ..Globals::LONG
    }),
    globals_first: true,
    unlisted: &["-C", "-?"],
};

/// The usage on stderr (with the notes after `-?`), exit status 1.
fn usage(long_help: bool) -> Error {
    eprint!("{USAGE}");
    if long_help {
        eprint!("{NOTES}");
    }
    Error::Status(1)
}

/// The output format as `main_pad2unpad` builds its mode: BAM unless the `-o` name ends in
/// `.sam` or `.cram`; `-s`, `-C`, `-u`, `-1` and `--output-fmt` override it.
fn output_format(output: Option<&str>, explicit: Option<OutputFormat>) -> OutputFormat {
    explicit.unwrap_or_else(|| match output.and_then(OutputFormat::from_path) {
        Some(OutputFormat::SamGz) | None => OutputFormat::Bam,
        Some(f) => f,
    })
}

pub fn parse(inv: &Invocation, args: &[String]) -> Result<DepadOptions, Error> {
    let (opts, positionals) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            // getopt's `?` is `-?` to samtools: the long help.
            eprintln!("{}: {e}", inv.command);
            return Err(usage(true));
        }
    };
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    let mut level = None;
    let mut long_help = false;
    let mut output = None;
    let mut reference = None;
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "S" => {}
            "C" => out.explicit = Some(OutputFormat::Cram),
            "s" => out.explicit = Some(OutputFormat::Sam),
            "o" => output = Some(v.to_string()),
            "u" | "1" => {
                level = Some(if opt.key == "u" { 0 } else { 1 });
                out.explicit.get_or_insert(OutputFormat::Bam);
            }
            "T" => {
                // samtools' global `--reference` under its short name: CRAM input decodes
                // against it too.
                common.reference = Some(v.to_string());
                reference = Some(v.to_string());
            }
            "?" => long_help = true,
            "output-fmt" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            key => {
                if !common.take(key, opt.value.as_deref())? {
                    return Err(usage(long_help));
                }
            }
        }
    }
    let Some(input) = positionals.into_iter().next() else {
        return Err(usage(long_help));
    };
    out.use_reference(common.reference.as_deref());
    Ok(DepadOptions {
        input,
        spec: out.spec(
            output_format(output.as_deref(), out.explicit),
            level.or(out.level).unwrap_or(-1),
        ),
        output,
        reference,
        cram_reference: common.reference.clone(),
        write_index: common.write_index,
        pg: common.pg(inv, &permuted(&OPTIONS, args)),
    })
}

/// Runs `depad` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(|o| crate::pipeline::depad::run(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_bam_unless_named_or_chosen() {
        assert_eq!(output_format(None, None), OutputFormat::Bam);
        assert_eq!(output_format(Some("x.sam"), None), OutputFormat::Sam);
        assert_eq!(output_format(Some("x.txt"), None), OutputFormat::Bam);
        assert_eq!(output_format(Some("x.bam"), Some(OutputFormat::Sam)), OutputFormat::Sam);
    }
}
