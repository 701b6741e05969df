//! Flag arguments (`-f -F -G --rf --add-flags --remove-flags`) as htslib's `bam_str2flag`:
//! a number in any C base (`0x` hex, leading `0` octal) or a comma list of flag names.

use super::c_number;
use crate::record::layout::flags::NAMES;

/// A flag value as htslib's `bam_str2flag` reads it: a leading C integer (trailing text ignored),
/// else a comma list of names. The error names the whole argument, as samtools prints it;
/// negative numbers are refused like unknown names.
pub fn parse_flags(s: &str) -> Result<u16, String> {
    let unknown = || format!("Unknown flag '{s}'");
    let number = c_number::strtol(s, 0);
    if number.used > 0 {
        return if number.value < 0 { Err(unknown()) } else { Ok(number.value as u16) };
    }
    let mut flags = 0;
    for name in s.split(',') {
        let f = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).ok_or_else(unknown)?;
        flags |= f.1;
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        assert_eq!(parse_flags("0x404"), Ok(0x404));
        assert_eq!(parse_flags("010"), Ok(8));
        assert_eq!(parse_flags("128"), Ok(128));
        assert_eq!(parse_flags("dup,Read1"), Ok(0x440));
        assert!(parse_flags("FOO").is_err());
    }

    /// samtools 1.24 `view -F ARG`: a number prefix wins, and errors quote the whole argument.
    #[test]
    fn like_bam_str2flag() {
        assert_eq!(parse_flags("4abc"), Ok(4));
        assert_eq!(parse_flags("0x10,FOO"), Ok(0x10));
        assert_eq!(parse_flags(" +4"), Ok(4));
        assert_eq!(parse_flags("08"), Ok(0));
        assert_eq!(parse_flags("-4"), Err("Unknown flag '-4'".to_string()));
        assert_eq!(parse_flags("PAIRED,FOO"), Err("Unknown flag 'PAIRED,FOO'".to_string()));
        assert_eq!(parse_flags("UNMAP,"), Err("Unknown flag 'UNMAP,'".to_string()));
    }
}
