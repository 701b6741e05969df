//! Flag arguments (`-f -F -G --rf --add-flags --remove-flags`) as htslib's `bam_str2flag`:
//! a number in any C base (`0x` hex, leading `0` octal) or a comma list of flag names.

const NAMES: [(&str, u16); 12] = [
    ("PAIRED", 0x1),
    ("PROPER_PAIR", 0x2),
    ("UNMAP", 0x4),
    ("MUNMAP", 0x8),
    ("REVERSE", 0x10),
    ("MREVERSE", 0x20),
    ("READ1", 0x40),
    ("READ2", 0x80),
    ("SECONDARY", 0x100),
    ("QCFAIL", 0x200),
    ("DUP", 0x400),
    ("SUPPLEMENTARY", 0x800),
];

/// Parses a C integer the way `strtol(s, &end, 0)` does, requiring the whole string.
pub fn parse_c_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// A flag value; the error names the unknown flag (samtools 1.20+ fails on those).
pub fn parse_flags(s: &str) -> Result<u16, String> {
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_c_int(s).map(|v| v as u16).ok_or_else(|| format!("Unknown flag '{s}'"));
    }
    let mut flags = 0;
    for name in s.split(',') {
        let f = NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("Unknown flag '{name}'"))?;
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
}
