//! `addreplacerg`'s command line → [`AddReplaceRgOptions`] (samtools 1.24 `parse_args` in
//! `bam_addrprg.c`); the work is [`crate::pipeline::addreplacerg`].

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::read_group::ReadGroupMode;
use crate::pipeline::addreplacerg::AddReplaceRgOptions;

pub const USAGE: &str = include_str!("usage/addreplacerg.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "addreplacerg",
    short: "r:R:m:o:O:h@:uw",
    long: &[LongOpt { name: "no-PG", has_arg: false, key: "no-PG" }],
    // SAM_OPT_GLOBAL_OPTIONS(0, 0, 'O', 0, 0, '@'), first in samtools' table.
    globals: Some(Globals { input_fmt: Take::Long, ..Globals::O_AND_THREADS }),
    globals_first: true,
    unlisted: &["-h"],
};

/// `basic_unescape`: `\\` and `\t` only.
fn unescape(text: &str) -> Result<Vec<u8>, Error> {
    let fail = |m: &str| Error::Bare(format!("[basic_unescape] {m}"));
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(c) = bytes.next() {
        if c != b'\\' {
            out.push(c);
            continue;
        }
        match bytes.next() {
            None => return Err(fail("Unterminated escape sequence.")),
            Some(b'\\') => out.push(b'\\'),
            Some(b't') => out.push(b'\t'),
            Some(b'n') => return Err(fail("\\n in escape sequence is not supported.")),
            Some(_) => return Err(fail("Unsupported escape sequence.")),
        }
    }
    Ok(out)
}

/// `get_rg_id`: the value after the first `\tID:`, up to the next tab.
fn rg_id(line: &[u8]) -> Option<Vec<u8>> {
    let at = line.windows(4).position(|w| w == b"\tID:")? + 4;
    let rest = &line[at..];
    Some(rest[..rest.iter().position(|&c| c == b'\t').unwrap_or(rest.len())].to_vec())
}

/// `Err(Error::Help)`: `-h` or no arguments: the usage on stdout, and exit 1 (samtools' cleanup of its missing state reports a failure).
pub fn parse(inv: &Invocation, args: &[String]) -> Result<AddReplaceRgOptions, Error> {
    if args.is_empty() {
        return Err(Error::Help);
    }
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    let mut rg_line = String::new();
    let mut rg_id_arg: Option<Vec<u8>> = None;
    let mut mode = ReadGroupMode::OverwriteAll;
    let (mut output, mut uncompressed, mut overwrite) = (None, false, false);
    let mut filter = None;
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "r" => {
                if rg_line.is_empty() {
                    // samtools' test: "@RG" is added unless one of the three characters matches.
                    let b = v.as_bytes();
                    if b.len() < 3 || (b[0] != b'@' && b[1] != b'R' && b[2] != b'G') {
                        rg_line.push_str("@RG\t");
                    }
                } else {
                    rg_line.push('\t');
                }
                rg_line.push_str(v);
            }
            "R" => rg_id_arg = Some(v.as_bytes().to_vec()),
            "m" => {
                mode = match v {
                    "overwrite_all" => ReadGroupMode::OverwriteAll,
                    "orphan_only" => ReadGroupMode::OrphanOnly,
                    _ => return Err(Error::ShowUsage(None)),
                }
            }
            "o" => output = Some(v.to_string()),
            "h" => return Err(Error::Help),
            "u" => uncompressed = true,
            "w" => overwrite = true,
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            "input-fmt-option" => {
                filter = super::global::parse_input_fmt_option(v, &mut common.reference)?.or(filter)
            }
            "input-fmt" => {}
            key => {
                if !common.take(key, o.value.as_deref())? {
                    return Err(Error::ShowUsage(None));
                }
            }
        }
    }
    let Some(input) = positionals.into_iter().next() else {
        return Err(Error::ShowUsage(Some("You must specify an input file.".into())));
    };
    let rg_line = (!rg_line.is_empty()).then_some(rg_line);
    if rg_id_arg.is_some() && rg_line.is_some() {
        return Err(Error::Bare("The options -r and -R are mutually exclusive.".into()));
    }
    let (rg_line, rg_id) = match rg_line {
        Some(text) => {
            let line = unescape(&text)?;
            let id = rg_id(&line).ok_or_else(|| {
                Error::Bare("[parse_args] The supplied RG line lacks an ID tag.".into())
            })?;
            (Some(line), Some(id))
        }
        None => (None, rg_id_arg),
    };
    // Mode "w", "0" with -u, then the output name's extension; -O wins.
    let format = out
        .explicit
        .or_else(|| output.as_deref().and_then(OutputFormat::from_path))
        .unwrap_or(OutputFormat::Sam);
    let level = out.level.unwrap_or(if uncompressed { 0 } else { -1 });
    out.use_reference(common.reference.as_deref());
    Ok(AddReplaceRgOptions {
        input,
        reference: common.reference.clone(),
        output,
        spec: out.spec(format, level),
        threads: common.threads.total(),
        rg_line,
        rg_id,
        mode,
        overwrite_header_rg: overwrite,
        // samtools stringifies argv before getopt permutes it.
        pg: common.pg(inv, args),
        write_index: common.write_index,
        filter,
    })
}

/// Runs `addreplacerg` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::addreplacerg::run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_unescape_tabs_and_name_their_id() {
        let line = unescape(r"@RG\tID:1#8\tCN:SC").unwrap();
        assert_eq!(line, b"@RG\tID:1#8\tCN:SC");
        assert_eq!(rg_id(&line).unwrap(), b"1#8");
        assert!(unescape(r"ID:x\n").is_err());
        assert!(rg_id(b"@RG\tXX:1").is_none());
    }
}
