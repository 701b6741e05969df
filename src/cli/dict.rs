//! `dict`'s command line → [`DictOptions`] (samtools 1.24 `dict_main` in `dict.c`); the work is
//! [`crate::pipeline::dict`].

use super::getopt::LongOpt;
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::dict::DictOptions;

pub const USAGE: &str = include_str!("usage/dict.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "dict",
    short: "?AhHa:l:s:u:o:",
    long: &[
        LongOpt { name: "help", has_arg: false, key: "h" },
        LongOpt { name: "no-header", has_arg: false, key: "H" },
        LongOpt { name: "alias", has_arg: false, key: "A" },
        LongOpt { name: "alt", has_arg: true, key: "l" },
        LongOpt { name: "alternative-name", has_arg: false, key: "A" },
        LongOpt { name: "assembly", has_arg: true, key: "a" },
        LongOpt { name: "species", has_arg: true, key: "s" },
        LongOpt { name: "uri", has_arg: true, key: "u" },
        LongOpt { name: "output", has_arg: true, key: "o" },
    ],
    globals: None,
    globals_first: false,
    unlisted: &["-?", "-h", "--help"],
};

/// Parses `dict` arguments; `stdin_is_terminal` decides whether no input means stdin or the
/// usage. `-h`, `-?` and mistakes show the usage on stderr and exit 1, as samtools.
pub fn parse(args: &[String], stdin_is_terminal: bool) -> Result<DictOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut o = DictOptions { header: true, ..DictOptions::default() };
    for opt in opts {
        let v = opt.value.unwrap_or_default();
        match opt.key.as_str() {
            "A" => o.alias = true,
            "a" => o.assembly = Some(v),
            "l" => o.alt = Some(v),
            "s" => o.species = Some(v),
            "u" => o.uri = Some(v),
            "o" => o.output = Some(v),
            "H" => o.header = false,
            _ => return Err(Error::ShowUsage(None)),
        }
    }
    o.input = match positionals.into_iter().next() {
        Some(path) => path,
        None if !stdin_is_terminal => "-".to_string(),
        None => return Err(Error::ShowUsage(None)),
    };
    Ok(o)
}

/// Runs `dict` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    parse(args, std::io::stdin().is_terminal()).and_then(|o| crate::pipeline::dict::run(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_input_reads_stdin_unless_it_is_a_terminal() {
        let args: Vec<String> = ["-AH", "-s", "Homo"].iter().map(|s| s.to_string()).collect();
        let o = parse(&args, false).unwrap();
        assert_eq!((o.input.as_str(), o.alias, o.header), ("-", true, false));
        assert_eq!(o.species.as_deref(), Some("Homo"));
        assert!(matches!(parse(&args, true), Err(Error::ShowUsage(None))));
        assert!(matches!(parse(&["-h".to_string()], false), Err(Error::ShowUsage(None))));
    }
}
