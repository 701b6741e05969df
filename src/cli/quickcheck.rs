//! `quickcheck`'s command line → [`QuickcheckOptions`] (samtools 1.24 `bam_quickcheck.c`); the
//! work is [`crate::pipeline::quickcheck`].

use super::getopt::GetoptError;
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::quickcheck::QuickcheckOptions;

pub const USAGE: &str = include_str!("usage/quickcheck.txt");

/// samtools parses these with plain `getopt`: no long options, not even the global ones.
pub const OPTIONS: OptionTable = OptionTable {
    command: "quickcheck",
    short: "vqu",
    long: &[],
    globals: None,
    unlisted: &[],
    globals_first: false,
};

/// `Err(Error::Help)`: no input: the usage on stdout, exit 1.
pub fn parse(args: &[String]) -> Result<QuickcheckOptions, Error> {
    // Plain getopt reads `--name` as the short option `-`: an error where getopt reaches it.
    let long_at = args.iter().take_while(|a| *a != "--").position(|a| a.starts_with("--"));
    let (opts, inputs) = OPTIONS.parse_or_usage(&args[..long_at.unwrap_or(args.len())])?;
    if long_at.is_some() {
        return Err(OPTIONS.usage_error(GetoptError::Unknown("-".into())));
    }
    let mut options = QuickcheckOptions { inputs, verbose: 0, quiet: false, unmapped: false };
    for o in &opts {
        match o.key.as_str() {
            "v" => options.verbose += 1,
            "q" => options.quiet = true,
            "u" => options.unmapped = true,
            _ => {}
        }
    }
    if options.inputs.is_empty() {
        // samtools prints its usage on stdout and exits 1.
        return Err(Error::Help);
    }
    Ok(options)
}

/// Runs `quickcheck` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(args).and_then(|o| crate::pipeline::quickcheck::run(&o))
}
