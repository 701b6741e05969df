//! `samples`' command line → [`SamplesOptions`] (samtools 1.24 `main_samples` in
//! `bam_samples.c`); the work is [`crate::pipeline::samples`].

use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::samples::SamplesOptions;

pub const USAGE: &str = include_str!("usage/samples.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "samples",
    short: "?hiXo:f:F:T:",
    long: &[],
    globals: None,
    globals_first: false,
    unlisted: &["-?"],
};

/// What the command line asks for.
pub enum SamplesRequest {
    /// `-?`, or a getopt mistake (its message already printed): the usage on stdout, exit 0.
    Usage,
    Run(SamplesOptions),
}

/// Parses `samples` arguments; no input on a terminal is the usage on stderr and exit 1.
pub fn parse(args: &[String], stdin_is_terminal: bool) -> Result<SamplesRequest, Error> {
    let (opts, inputs) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            // getopt returns '?' for a mistake, which samtools treats as `-?`.
            eprintln!("samples: {e}");
            return Ok(SamplesRequest::Usage);
        }
    };
    let mut o = SamplesOptions { tag: *b"SM", inputs, ..SamplesOptions::default() };
    for opt in opts {
        let v = opt.value.unwrap_or_default();
        match opt.key.as_str() {
            "h" => o.header_line = true,
            "i" => o.test_index = true,
            "X" => o.custom_index = true,
            "o" => o.output = Some(v),
            "f" => o.references.push((v, false)),
            "F" => o.references.push((v, true)),
            "T" => match v.as_bytes() {
                &[a, b] => o.tag = [a, b],
                _ => {
                    return Err(Error::Bare(format!(
                        "samtools samples: Length of tag \"{v}\" is not 2."
                    )));
                }
            },
            _ => return Ok(SamplesRequest::Usage),
        }
    }
    if o.inputs.is_empty() && stdin_is_terminal {
        return Err(Error::ShowUsage(None));
    }
    Ok(SamplesRequest::Run(o))
}

/// Runs `samtools samples`.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    match parse(args, std::io::stdin().is_terminal())? {
        SamplesRequest::Usage => {
            print!("{USAGE}");
            Ok(())
        }
        SamplesRequest::Run(o) => crate::pipeline::samples::run(&o),
    }
}
