//! `samtools flags` (samtools 1.24 `bam_flags.c`): each argument, a number or a comma list of
//! flag names, printed as hex, decimal and names. (`cli/flags.rs` is the flag-argument parser
//! the other commands share; this is the command.)

use super::c_number;
use crate::error::Error;
use crate::record::layout::flags::{NAMES, names_of};

pub const USAGE: &str = include_str!("usage/flags.txt");

/// `flags` takes no options: its arguments are flag values, read by htslib's `bam_str2flag`.
pub const OPTIONS: super::options::OptionTable = super::options::OptionTable {
    command: "flags",
    short: "",
    long: &[],
    globals: None,
    unlisted: &[],
    globals_first: false,
};

/// htslib's `bam_str2flag`: a leading C integer (any base, the rest ignored, `long` cut to
/// `int`), else names separated by commas, any case; `None` where htslib returns −1 (an unknown
/// or empty name, a negative number).
pub fn str2flag(text: &str) -> Option<i32> {
    let number = c_number::strtol(text, 0);
    if number.used > 0 {
        let mask = number.value as i32;
        return (mask >= 0).then_some(mask);
    }
    // An empty argument has no names and is 0; an empty name in a list is unknown.
    if text.is_empty() {
        return Some(0);
    }
    let mut mask = 0;
    for name in text.split(',') {
        let (_, bit) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))?;
        mask |= i32::from(*bit);
    }
    Some(mask)
}

/// The line printed for one argument: `0x%x\t%d\tNAMES`.
pub fn describe(text: &str) -> Option<String> {
    let mask = str2flag(text)?;
    Some(format!("{mask:#x}\t{mask}\t{}", names_of(mask)))
}

/// No argument prints the usage on stdout; an argument that does not parse stops with
/// samtools' message and the usage on stderr, after the lines already printed.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    if args.is_empty() {
        print!("{USAGE}");
        return Ok(());
    }
    let mut out = String::new();
    for arg in args {
        match describe(arg) {
            Some(line) => {
                out.push_str(&line);
                out.push('\n');
            }
            None => {
                print!("{out}");
                return Err(Error::ShowUsage(Some(format!(
                    "samtools flags: Could not parse \"{arg}\""
                ))));
            }
        }
    }
    print!("{out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_names_and_mistakes_as_htslib() {
        assert_eq!(describe("0x3").as_deref(), Some("0x3\t3\tPAIRED,PROPER_PAIR"));
        assert_eq!(describe("paired,dup").as_deref(), Some("0x401\t1025\tPAIRED,DUP"));
        assert_eq!(describe("").as_deref(), Some("0x0\t0\t"));
        assert_eq!(describe("4294967297").as_deref(), Some("0x1\t1\tPAIRED"));
        assert_eq!(describe("0x10abc").map(|l| l.starts_with("0x10abc\t68284\t")), Some(true));
        for bad in ["PAIRED,", "-1", "2147483648", "foo", "--help"] {
            assert_eq!(describe(bad), None, "{bad}");
        }
    }
}
