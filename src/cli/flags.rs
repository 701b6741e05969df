//! Flag arguments (`-f -F -G --rf --add-flags --remove-flags`) as htslib's `bam_str2flag`:
//! a number in any C base (`0x` hex, leading `0` octal) or a comma list of flag names.

use crate::record::layout::flags::NAMES;

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

/// The C integer at the start of `s` as `strtol(s, &end, 0)` reads it: leading white space, a
/// sign, then `0x` hex, `0` octal or decimal digits, ignoring whatever follows them. `None` when
/// no digit is read (`end == s`).
fn strtol_prefix(s: &str) -> Option<i64> {
    let body = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match body.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, body.strip_prefix('+').unwrap_or(body)),
    };
    let hex = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X"));
    let (radix, digits) = match hex {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, rest),
        _ if body.starts_with('0') => (8, body),
        _ => (10, body),
    };
    let len = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    if len == 0 {
        return None;
    }
    let v = digits[..len].chars().fold(0i64, |v, c| {
        v.saturating_mul(i64::from(radix)).saturating_add(i64::from(c.to_digit(radix).unwrap_or(0)))
    });
    Some(if neg { -v } else { v })
}

/// `strtoull(s, NULL, 0)`: the prefix rules of [`strtol_prefix`] in 64 unsigned bits, saturating
/// at `u64::MAX`; a minus sign negates modulo 2^64 (`-1` is `u64::MAX`); no digits read is 0.
pub fn strtoull(s: &str) -> u64 {
    let body = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match body.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, body.strip_prefix('+').unwrap_or(body)),
    };
    let hex = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X"));
    let (radix, digits) = match hex {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, rest),
        _ if body.starts_with('0') => (8, body),
        _ => (10, body),
    };
    let len = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    let mut v: u64 = 0;
    for c in digits[..len].chars() {
        let digit = u64::from(c.to_digit(radix).unwrap_or(0));
        match v.checked_mul(u64::from(radix)).and_then(|v| v.checked_add(digit)) {
            Some(next) => v = next,
            None => return u64::MAX,
        }
    }
    if neg { v.wrapping_neg() } else { v }
}

/// `strtoll(s, NULL, 0)`: the leading C integer, 0 when there is none (`checksum -N`).
pub fn parse_c_int_prefix(s: &str) -> i64 {
    strtol_prefix(s).unwrap_or(0)
}

/// A flag value as htslib's `bam_str2flag` reads it: a leading C integer (trailing text ignored),
/// else a comma list of names. The error names the whole argument, as samtools prints it;
/// negative numbers are refused like unknown names.
pub fn parse_flags(s: &str) -> Result<u16, String> {
    let unknown = || format!("Unknown flag '{s}'");
    if let Some(v) = strtol_prefix(s) {
        return if v < 0 { Err(unknown()) } else { Ok(v as u16) };
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
    fn strtoull_reads_a_prefix_and_wraps_negatives() {
        assert_eq!(strtoull("12abc"), 12);
        assert_eq!(strtoull("0x1f"), 31);
        assert_eq!(strtoull("010"), 8);
        assert_eq!(strtoull("abc"), 0);
        assert_eq!(strtoull("-1"), u64::MAX);
        assert_eq!(strtoull("99999999999999999999999"), u64::MAX);
    }

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
