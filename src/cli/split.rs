//! `split`'s command line → [`SplitOptions`] (samtools 1.24 `parse_args` in `bam_split.c`); the
//! work is [`crate::pipeline::split`].

use super::Invocation;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use super::permuted::permuted;
use crate::error::Error;
use crate::pipeline::split::SplitOptions;

pub const USAGE: &str = include_str!("usage/split.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "split",
    short: "vf:h:u:d:M:p:@:",
    long: &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "max-split", has_arg: true, key: "M" },
        LongOpt { name: "zero-pad", has_arg: true, key: "p" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 0, 0, 0, '@'), listed before the command's own.
    globals: Some(Globals { input_fmt: Take::Refused, threads: Take::Short("@"), ..Globals::LONG }),
    globals_first: true,
    // The usage writes `-M,--max-split` without the space the catalog's reader needs.
    unlisted: &["--zero-pad", "-M", "--max-split"],
};

/// samtools' usage on stdout and exit status 1 (no arguments, a bad option).
fn usage_on_stdout() -> Error {
    print!("{USAGE}");
    Error::Status(1)
}

fn invalid(what: &str, v: &str) -> Error {
    Error::Bare(format!("samtools split: Invalid {what} argument: \"{v}\""))
}

/// `strtol` of the whole of `v` (empty or trailing text is an error).
fn whole_number(v: &str) -> Option<i64> {
    let t = v.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() || !t.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i64>().ok().or(Some(if t.starts_with('-') { i64::MIN } else { i64::MAX }))
}

pub fn parse(inv: &Invocation, args: &[String]) -> Result<SplitOptions, Error> {
    if args.is_empty() {
        return Err(usage_on_stdout());
    }
    let (opts, positionals) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            if !matches!(e, super::getopt::GetoptError::Refused { .. }) {
                eprintln!("split: {e}");
            }
            return Err(usage_on_stdout());
        }
    };
    let mut o = SplitOptions { max_split: 100, ..SplitOptions::default() };
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    let mut format_string = None;
    for opt in &opts {
        let v = opt.value.as_deref().unwrap_or("");
        if opt.key == "@" {
            common.threads = super::global::parse_threads(v).map_err(|_| usage_on_stdout())?;
            continue;
        }
        if common.take(&opt.key, opt.value.as_deref())? {
            continue;
        }
        match opt.key.as_str() {
            "f" => format_string = Some(v.to_string()),
            "h" => o.unaccounted_header = Some(v.to_string()),
            "v" => o.verbose = true,
            "u" => o.unaccounted = Some(v.to_string()),
            "d" => o.tag = Some(v.to_string()),
            "M" => {
                o.max_split = match whole_number(v) {
                    Some(0) | None => return Err(invalid("-M", v)),
                    Some(n) if n < 0 => i64::MAX,
                    Some(n) => n,
                }
            }
            "p" => {
                o.zero_pad = match whole_number(v) {
                    Some(n) if (0..=20).contains(&n) && !v.trim_start().starts_with('-') => {
                        n as usize
                    }
                    _ => return Err(invalid("-p", v)),
                }
            }
            "output-fmt" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            _ => return Err(usage_on_stdout()),
        }
    }
    if positionals.len() != 1 {
        eprintln!("samtools split: Invalid number of arguments: {}", positionals.len());
        return Err(Error::ShowUsage(None));
    }
    let default_format = if o.tag.is_some() { "%*_%!.%." } else { "%*_%#.%." };
    o.format_string = format_string.unwrap_or_else(|| default_format.to_string());
    o.input = positionals[0].clone();
    o.explicit_format = out.explicit;
    out.use_reference(common.reference.as_deref());
    o.spec = out.spec(o.spec.format, out.level.unwrap_or(-1));
    o.threads = common.threads.total();
    o.reference = common.reference.clone();
    o.write_index = common.write_index;
    o.pg = common.pg(inv, &permuted(&OPTIONS, args));
    Ok(o)
}

/// Runs `split` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::split::run_on_pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_whole_strtol_values() {
        assert_eq!(whole_number("12"), Some(12));
        assert_eq!(whole_number("-1"), Some(-1));
        assert_eq!(whole_number("3x"), None);
        assert_eq!(whole_number(""), None);
    }
}
