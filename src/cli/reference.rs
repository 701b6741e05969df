//! `reference`'s command line → [`ReferenceOptions`] (samtools 1.24 `main_reference` in
//! `reference.c`); the work is [`crate::pipeline::reference`].

use super::getopt::LongOpt;
use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::reference::ReferenceOptions;

/// samtools prints this one line for no input at a terminal and for any option mistake.
pub const USAGE: &str =
    "Usage: samtools reference [-@ N] [-r region] [-e] [-q] [-o out.fa] [in.cram]\n";

pub const OPTIONS: OptionTable = OptionTable {
    command: "reference",
    short: "@:qo:er:",
    long: &[
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "quiet", has_arg: false, key: "q" },
        LongOpt { name: "embedded", has_arg: false, key: "e" },
        LongOpt { name: "region", has_arg: true, key: "r" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', '-', '-', '-', '-', '@').
    globals: Some(Globals {
        input_fmt: Take::Refused,
        input_fmt_option: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        reference: Take::Refused,
        threads: Take::Short("@"),
        ..Globals::LONG
    }),
    globals_first: false,
    // The usage is one line naming the options in brackets, which the catalog does not read.
    unlisted: &[
        "-@",
        "-q",
        "-o",
        "-e",
        "-r",
        "--output",
        "--quiet",
        "--embedded",
        "--region",
        "--threads",
        "--write-index",
        "--verbosity",
    ],
};

pub enum ReferenceRequest {
    /// The one-line usage on stdout, exit 0.
    Usage,
    Run(ReferenceOptions),
}

pub fn parse(args: &[String], stdin_is_terminal: bool) -> ReferenceRequest {
    let (opts, positionals) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            if !matches!(e, super::getopt::GetoptError::Refused { .. }) {
                eprintln!("reference: {e}");
            }
            return ReferenceRequest::Usage;
        }
    };
    let mut o = ReferenceOptions { verbose: true, ..ReferenceOptions::default() };
    for opt in opts {
        let v = opt.value.unwrap_or_default();
        match opt.key.as_str() {
            "o" => o.output = Some(v),
            "q" => o.verbose = false,
            "e" => o.embedded = true,
            "r" => o.region = Some(v),
            // Decoding threads; a bad count is ignored, as mdsam always did (it changes no
            // output).
            "@" => o.threads = super::global::parse_threads(&v).unwrap_or_default(),
            // The other global options taken change no output.
            _ => {}
        }
    }
    if positionals.is_empty() && stdin_is_terminal {
        return ReferenceRequest::Usage;
    }
    o.input = positionals.into_iter().next().unwrap_or_else(|| "-".into());
    ReferenceRequest::Run(o)
}

/// Runs `samtools reference`.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    match parse(args, std::io::stdin().is_terminal()) {
        ReferenceRequest::Usage => {
            print!("{USAGE}");
            Ok(())
        }
        ReferenceRequest::Run(o) => crate::pipeline::reference::run(&o),
    }
}
