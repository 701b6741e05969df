//! `mdsam hw-model …` (an mdsam addition): projects `--profile` runs onto other hardware. The
//! work is in the `hw-model` workspace crate; this only maps its errors onto mdsam's.

use crate::error::Error;

pub const USAGE: &str = hw_model::cli::USAGE;

pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    // An mdsam-only command answers `--help` anywhere on its line with its usage and exit 0.
    if args.is_empty() || args.iter().take_while(|a| *a != "--").any(|a| a == "--help" || a == "-h")
    {
        return Err(Error::Help);
    }
    hw_model::cli::run(args).map_err(|e| match e {
        hw_model::Error::Usage(m) => Error::Usage(m),
        hw_model::Error::File { path, what } => Error::File { path, what },
        hw_model::Error::Message(m) => Error::Message(m),
    })
}
