//! Numbers in option values, read with the C library function samtools calls for each option.
//!
//! The functions disagree on the same text, and scripts depend on it: `-q 010` is 10 to `atoi`
//! but 8 to `strtol(…, 0)`, `-q 20x` is 20 to both (trailing text is ignored) and `0x10` is 0 to
//! `atoi` but 16 to `strtol(…, 0)`. Each option's parser calls the one function samtools' source
//! calls for it (the call is named in a comment beside the option), so there is one definition of
//! each here and none elsewhere in `cli`.
//!
//! glibc's behaviour is followed: leading white space (`isspace`), an optional sign, digits up to
//! the first that does not belong; `atoi` is `(int) strtol(s, NULL, 10)`; on overflow `strtol`
//! saturates and `strtoul` returns `ULONG_MAX`; a minus sign before an unsigned number negates it
//! modulo 2⁶⁴.

use crate::ops::view::expr::number::parse_c_double;

/// What a conversion read: the value and how many bytes of the text it used (0 when no number
/// was read, as C's `end == s`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Read<T> {
    pub value: T,
    pub used: usize,
}

/// C's `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// The sign and the digits' start, after white space: `(negative, index of the first byte past
/// the sign)`.
fn sign(s: &[u8]) -> (bool, usize) {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    match s.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

fn digit_value(b: u8) -> u32 {
    match b {
        b'0'..=b'9' => u32::from(b - b'0'),
        b'a'..=b'z' => u32::from(b - b'a') + 10,
        b'A'..=b'Z' => u32::from(b - b'A') + 10,
        _ => u32::MAX,
    }
}

/// The magnitude C's `strto*` functions read after the sign, with `base` 0 (`0x` hex, a leading
/// `0` octal, else decimal), 10 or 16: `(magnitude or None on overflow of u64, end index)`; the
/// end index equals `at` when no digit was read.
fn magnitude(s: &[u8], at: usize, base: u32) -> (Option<u64>, usize) {
    let has_hex_prefix = |i: usize| {
        s.get(i) == Some(&b'0')
            && matches!(s.get(i + 1), Some(b'x' | b'X'))
            && s.get(i + 2).is_some_and(|&b| digit_value(b) < 16)
    };
    let (radix, mut i) = match base {
        0 | 16 if has_hex_prefix(at) => (16, at + 2),
        0 if s.get(at) == Some(&b'0') => (8, at),
        0 => (10, at),
        b => (b, at),
    };
    let start = i;
    let mut v: Option<u64> = Some(0);
    while i < s.len() && digit_value(s[i]) < radix {
        let d = u64::from(digit_value(s[i]));
        v = v.and_then(|v| v.checked_mul(u64::from(radix))).and_then(|v| v.checked_add(d));
        i += 1;
    }
    if i == start {
        return (Some(0), 0);
    }
    (v, i)
}

/// `strtol(s, &end, base)` (`long` is 64 bits): saturates at `i64::MIN`/`i64::MAX`.
pub fn strtol(s: &str, base: u32) -> Read<i64> {
    strtol_in_range(s, base).0
}

/// [`strtol`] and whether the value was in range (C's `errno` left unset).
fn strtol_in_range(s: &str, base: u32) -> (Read<i64>, bool) {
    let b = s.as_bytes();
    let (negative, at) = sign(b);
    let (m, used) = magnitude(b, at, base);
    if used == 0 {
        return (Read { value: 0, used: 0 }, true);
    }
    let (value, in_range) = match (m, negative) {
        (Some(m), false) => i64::try_from(m).map_or((i64::MAX, false), |v| (v, true)),
        (Some(m), true) if m <= i64::MAX as u64 + 1 => ((m as i64).wrapping_neg(), true),
        (_, true) => (i64::MIN, false),
        (None, false) => (i64::MAX, false),
    };
    (Read { value, used }, in_range)
}

/// `strtoul(s, &end, base)` / `strtoull` (64 bits): `u64::MAX` on overflow, a minus sign
/// negates modulo 2⁶⁴ (`-1` is `u64::MAX`).
pub fn strtoul(s: &str, base: u32) -> Read<u64> {
    let b = s.as_bytes();
    let (negative, at) = sign(b);
    let (m, used) = magnitude(b, at, base);
    if used == 0 {
        return Read { value: 0, used: 0 };
    }
    let value = match m {
        None => u64::MAX,
        Some(m) if negative => m.wrapping_neg(),
        Some(m) => m,
    };
    Read { value, used }
}

/// `atoi(s)`: glibc's `(int) strtol(s, NULL, 10)`, so an out-of-range value keeps its low 32 bits.
pub fn atoi(s: &str) -> i32 {
    strtol(s, 10).value as i32
}

/// `atol(s)` / `atoll(s)`: `strtol(s, NULL, 10)`.
pub fn atol(s: &str) -> i64 {
    strtol(s, 10).value
}

/// samtools' `parse_int_value` (1.24, `sam_opts.c`): `strtol(s, &end, 10)` that read a number,
/// used the whole text and fits an `int`; `None` otherwise.
pub fn parse_int_value(s: &str) -> Option<i32> {
    parse_long_value(s, 10).and_then(|v| i32::try_from(v).ok())
}

/// samtools' `parse_long_value`: `strtol(s, &end, base)` that read a number, used the whole text
/// and did not overflow (`errno` unset); `None` otherwise.
pub fn parse_long_value(s: &str, base: u32) -> Option<i64> {
    let (read, in_range) = strtol_in_range(s, base);
    (read.used > 0 && read.used == s.len() && in_range).then_some(read.value)
}

/// `strtod(s, &end)`: the expression language's reader, which is C's (decimal, hex floats,
/// `inf`, `nan`).
pub fn strtod(s: &str) -> Read<f64> {
    parse_c_double(s.as_bytes())
        .map_or(Read { value: 0.0, used: 0 }, |(value, used)| Read { value, used })
}

/// `atof(s)`: `strtod(s, NULL)`.
pub fn atof(s: &str) -> f64 {
    strtod(s).value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_reads_a_decimal_prefix() {
        assert_eq!(atoi("010"), 10);
        assert_eq!(atoi("20x"), 20);
        assert_eq!(atoi("0x10"), 0);
        assert_eq!(atoi("  -7"), -7);
        assert_eq!(atoi("+3"), 3);
        assert_eq!(atoi("x"), 0);
        assert_eq!(atoi(""), 0);
        assert_eq!(atoi("- 1"), 0);
        // glibc: (int) of the saturated long.
        assert_eq!(atoi("4294967297"), 1);
        assert_eq!(atoi("99999999999999999999"), -1);
    }

    #[test]
    fn strtol_with_base_zero_reads_c_literals() {
        assert_eq!(strtol("010", 0), Read { value: 8, used: 3 });
        assert_eq!(strtol("0x10", 0), Read { value: 16, used: 4 });
        assert_eq!(strtol("0x", 0), Read { value: 0, used: 1 });
        assert_eq!(strtol("0xg", 0), Read { value: 0, used: 1 });
        assert_eq!(strtol("09", 0), Read { value: 0, used: 1 });
        assert_eq!(strtol("12k", 0), Read { value: 12, used: 2 });
        assert_eq!(strtol(" -0x1f", 0), Read { value: -31, used: 6 });
        assert_eq!(strtol("abc", 0), Read { value: 0, used: 0 });
        assert_eq!(strtol("-", 10), Read { value: 0, used: 0 });
        assert_eq!(strtol("99999999999999999999", 10).value, i64::MAX);
        assert_eq!(strtol("-99999999999999999999", 10).value, i64::MIN);
        assert_eq!(strtol("-9223372036854775808", 10).value, i64::MIN);
        assert_eq!(strtol("ff", 16), Read { value: 255, used: 2 });
        assert_eq!(strtol("0xff", 16), Read { value: 255, used: 4 });
    }

    #[test]
    fn samtools_strict_parsers_want_the_whole_text() {
        assert_eq!(parse_int_value("010"), Some(10));
        assert_eq!(parse_int_value(" 7"), Some(7));
        assert_eq!(parse_int_value("-3"), Some(-3));
        assert_eq!(parse_int_value("20x"), None);
        assert_eq!(parse_int_value("0x10"), None);
        assert_eq!(parse_int_value(""), None);
        assert_eq!(parse_int_value("4294967297"), None);
        assert_eq!(parse_long_value("0x10", 0), Some(16));
        assert_eq!(parse_long_value("4294967297", 10), Some(4_294_967_297));
        assert_eq!(parse_long_value("9223372036854775807", 10), Some(i64::MAX));
        assert_eq!(parse_long_value("9223372036854775808", 10), None);
    }

    #[test]
    fn strtoul_wraps_negatives_and_saturates() {
        assert_eq!(strtoul("-1", 10).value, u64::MAX);
        assert_eq!(strtoul("18446744073709551616", 10).value, u64::MAX);
        assert_eq!(strtoul("-18446744073709551616", 10).value, u64::MAX);
        assert_eq!(strtoul("0x1F", 0).value, 31);
        assert_eq!(strtoul("deadbeef", 16).value, 0xdead_beef);
    }

    #[test]
    fn strtod_reads_the_longest_float_prefix() {
        assert_eq!(strtod("0.5x"), Read { value: 0.5, used: 3 });
        assert_eq!(strtod("1e+"), Read { value: 1.0, used: 1 });
        assert_eq!(strtod(" -2.5E-1"), Read { value: -0.25, used: 8 });
        assert_eq!(strtod("."), Read { value: 0.0, used: 0 });
        assert_eq!(atof("abc"), 0.0);
    }
}
