//! `reset`'s command line → [`ResetOptions`] (samtools 1.24 `main_reset` in `reset.c`); the work
//! is [`crate::pipeline::reset`].

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::reset::TagSets;
use crate::pipeline::reset::ResetOptions;

pub const USAGE: &str = include_str!("usage/reset.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "reset",
    short: "o:@:x:O:T:",
    long: &[
        LongOpt { name: "keep-tag", has_arg: true, key: "keep-tag" },
        LongOpt { name: "remove-tag", has_arg: true, key: "x" },
        LongOpt { name: "no-RG", has_arg: false, key: "no-RG" },
        LongOpt { name: "reject-PG", has_arg: true, key: "reject-PG" },
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "dupflag", has_arg: false, key: "dupflag" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', 0, 'T', '@'), first in samtools' table.
    globals: Some(Globals { reference: Take::Short("T"), ..Globals::O_AND_THREADS }),
    globals_first: true,
    unlisted: &["--write-index", "--verbosity"],
};

/// `parse_aux_list`: two-character tags separated by commas, added to `set`.
pub fn parse_aux_list(set: &mut Option<Vec<[u8; 2]>>, list: &str, who: &str) -> Result<(), Error> {
    let tags = set.get_or_insert_with(Vec::new);
    let mut rest = list.as_bytes();
    while rest.len() >= 2 {
        tags.push([rest[0], rest[1]]);
        rest = &rest[2..];
        match rest.first() {
            Some(b',') => rest = &rest[1..],
            Some(_) => break,
            None => {}
        }
    }
    if !rest.is_empty() {
        *set = None;
        return Err(Error::ShowUsage(Some(format!(
            "{who}: Error parsing option, auxiliary tags should be exactly two characters long."
        ))));
    }
    Ok(())
}

/// `Err(Error::Help)`: no arguments and stdin a terminal: the usage on stdout, exit 0.
pub fn parse(
    inv: &Invocation,
    args: &[String],
    stdin_is_terminal: bool,
) -> Result<ResetOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    let mut tags = TagSets::default();
    let (mut no_rg, mut keep_dup) = (false, false);
    let mut reject_pg: Option<String> = None;
    let mut output: Option<String> = None;
    let mut filter = None;
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            // Each of these given twice: the usage.
            "no-RG" if no_rg => return Err(Error::ShowUsage(None)),
            "no-PG" if common.no_pg => return Err(Error::ShowUsage(None)),
            "reject-PG" if reject_pg.is_some() => return Err(Error::ShowUsage(None)),
            "o" if output.is_some() => return Err(Error::ShowUsage(None)),
            "no-RG" => no_rg = true,
            "no-PG" => common.no_pg = true,
            "dupflag" => keep_dup = true,
            "reject-PG" => reject_pg = Some(v.to_string()),
            "o" => output = Some(v.to_string()),
            "x" => match v.strip_prefix('^') {
                Some(list) => parse_aux_list(&mut tags.keep, list, "main_reset")?,
                None => parse_aux_list(&mut tags.remove, v, "main_reset")?,
            },
            "keep-tag" => parse_aux_list(&mut tags.keep, v, "main_reset")?,
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            "input-fmt-option" => {
                filter =
                    super::global::parse_input_fmt_option(v, &mut common.reference)?.or(filter);
            }
            "T" => common.reference = Some(v.to_string()),
            key => {
                if !common.take(key, o.value.as_deref())? {
                    return Err(Error::ShowUsage(None));
                }
            }
        }
    }
    if args.is_empty() && stdin_is_terminal {
        return Err(Error::Help);
    }
    if positionals.len() > 1 {
        return Err(Error::ShowUsage(None));
    }
    let output = output.unwrap_or_else(|| "-".to_string());
    // sam_open_mode: the extension, else plain SAM; -O wins.
    let format =
        out.explicit.or_else(|| OutputFormat::from_path(&output)).unwrap_or(OutputFormat::Sam);
    // samtools stringifies argv after getopt has permuted it.
    let argv = super::permuted::permuted(&OPTIONS, args);
    let command_line = common
        .pg(inv, &argv)
        .and_then(|fields| fields.into_iter().find(|(k, _)| k == "CL").map(|(_, v)| v));
    out.use_reference(common.reference.as_deref());
    Ok(ResetOptions {
        input: positionals.into_iter().next().unwrap_or_else(|| "-".to_string()),
        output,
        spec: out.spec(format, out.level.unwrap_or(-1)),
        threads: common.threads.total(),
        reference: common.reference.clone(),
        tags: tags.complete(!no_rg),
        keep_read_groups: !no_rg,
        keep_dup,
        reject_pg,
        command_line,
        filter,
    })
}

/// Runs `reset` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    parse(inv, args, std::io::stdin().is_terminal()).and_then(crate::pipeline::reset::run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aux_lists_are_two_character_tags() {
        let mut set = None;
        parse_aux_list(&mut set, "X0,MD", "t").unwrap();
        assert_eq!(set, Some(vec![*b"X0", *b"MD"]));
        assert!(parse_aux_list(&mut set, "X0,MDX", "t").is_err());
        assert_eq!(set, None);
    }
}
