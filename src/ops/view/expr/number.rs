//! Numeric literals as htslib reads them: `hts_str2dbl`, which is C's `strtod` with a fast path
//! for plain decimals. So besides `12`, `1.5` and `1e3` the language accepts hex (`0x1F`, hex
//! floats such as `0x1p4`), `inf`, `infinity` and `nan` in any case, and a leading sign.

/// C's `isspace` in the "C" locale; `strtod` skips these before the number.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn count_while(text: &[u8], at: usize, pred: impl Fn(u8) -> bool) -> usize {
    text[at..].iter().take_while(|&&b| pred(b)).count()
}

fn starts_with_ignore_case(text: &[u8], word: &[u8]) -> bool {
    text.len() >= word.len() && text[..word.len()].eq_ignore_ascii_case(word)
}

/// Reads a number at the start of `text` as `strtod` does: the value and the number of bytes
/// used, or `None` when no number starts there.
pub fn parse_c_double(text: &[u8]) -> Option<(f64, usize)> {
    let mut at = count_while(text, 0, is_c_space);
    let negative = match text.get(at) {
        Some(b'-') => {
            at += 1;
            true
        }
        Some(b'+') => {
            at += 1;
            false
        }
        _ => false,
    };
    let rest = &text[at..];
    let (magnitude, used) = if starts_with_ignore_case(rest, b"infinity") {
        (f64::INFINITY, 8)
    } else if starts_with_ignore_case(rest, b"inf") {
        (f64::INFINITY, 3)
    } else if starts_with_ignore_case(rest, b"nan") {
        (f64::NAN, 3 + nan_payload_len(&rest[3..]))
    } else if starts_with_ignore_case(rest, b"0x") {
        parse_hex(rest)
    } else {
        parse_decimal(rest)?
    };
    Some((if negative { -magnitude } else { magnitude }, at + used))
}

/// `nan(chars)`: strtod also takes a parenthesised run of letters, digits and `_`.
fn nan_payload_len(rest: &[u8]) -> usize {
    if rest.first() != Some(&b'(') {
        return 0;
    }
    let inner = count_while(rest, 1, |b| b.is_ascii_alphanumeric() || b == b'_');
    if rest.get(1 + inner) == Some(&b')') { inner + 2 } else { 0 }
}

/// Digits, an optional fraction and an optional exponent (only taken when digits follow it).
fn parse_decimal(rest: &[u8]) -> Option<(f64, usize)> {
    let int_digits = count_while(rest, 0, |b| b.is_ascii_digit());
    let mut at = int_digits;
    let mut frac_digits = 0;
    if rest.get(at) == Some(&b'.') {
        frac_digits = count_while(rest, at + 1, |b| b.is_ascii_digit());
        if int_digits + frac_digits > 0 {
            at += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(rest.get(at), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(rest.get(at + 1), Some(b'+' | b'-')));
        let exp_digits = count_while(rest, at + 1 + sign, |b| b.is_ascii_digit());
        if exp_digits > 0 {
            at += 1 + sign + exp_digits;
        }
    }
    // The slice is ASCII digits, '.', 'e' and a sign: always valid UTF-8 and a valid Rust float.
    let value = std::str::from_utf8(&rest[..at]).ok()?.parse::<f64>().ok()?;
    Some((value, at))
}

/// `0x` hex digits, an optional hex fraction and an optional binary exponent `p±N`.
/// Without a hex digit after `0x`, strtod reads just the `0`.
fn parse_hex(rest: &[u8]) -> (f64, usize) {
    let mut at = 2;
    let mut mantissa = 0.0f64;
    let mut digits = 0;
    let mut scale = 0i32;
    while let Some(d) = rest.get(at).and_then(|&b| (b as char).to_digit(16)) {
        mantissa = mantissa * 16.0 + d as f64;
        digits += 1;
        at += 1;
    }
    if rest.get(at) == Some(&b'.') {
        let mut frac_at = at + 1;
        while let Some(d) = rest.get(frac_at).and_then(|&b| (b as char).to_digit(16)) {
            mantissa = mantissa * 16.0 + d as f64;
            scale -= 4;
            digits += 1;
            frac_at += 1;
        }
        if digits > 0 {
            at = frac_at;
        }
    }
    if digits == 0 {
        return (0.0, 1);
    }
    if matches!(rest.get(at), Some(b'p' | b'P')) {
        let sign = usize::from(matches!(rest.get(at + 1), Some(b'+' | b'-')));
        let exp_digits = count_while(rest, at + 1 + sign, |b| b.is_ascii_digit());
        if exp_digits > 0 {
            let digits_text = &rest[at + 1 + sign..at + 1 + sign + exp_digits];
            let exponent = digits_text
                .iter()
                .fold(0i32, |acc, &b| acc.saturating_mul(10).saturating_add((b - b'0') as i32));
            scale = scale.saturating_add(if rest[at + 1] == b'-' { -exponent } else { exponent });
            at += 1 + sign + exp_digits;
        }
    }
    (mantissa * 2f64.powi(scale), at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(text: &str) -> Option<(f64, usize)> {
        parse_c_double(text.as_bytes())
    }

    #[test]
    fn reads_decimals_and_stops_at_the_first_non_number_byte() {
        assert_eq!(num("12"), Some((12.0, 2)));
        assert_eq!(num("5-3"), Some((5.0, 1)));
        assert_eq!(num("1.5)"), Some((1.5, 3)));
        assert_eq!(num(".5"), Some((0.5, 2)));
        assert_eq!(num("5."), Some((5.0, 2)));
        assert_eq!(num("1.2.3"), Some((1.2, 3)));
        assert_eq!(num("1e2"), Some((100.0, 3)));
        assert_eq!(num("2e"), Some((2.0, 1)));
        assert_eq!(num("2e-3x"), Some((0.002, 4)));
        assert_eq!(num("."), None);
        assert_eq!(num("mapq"), None);
    }

    #[test]
    fn takes_sign_and_leading_c_whitespace() {
        assert_eq!(num("-5"), Some((-5.0, 2)));
        assert_eq!(num("+5"), Some((5.0, 2)));
        assert_eq!(num("\n 7"), Some((7.0, 3)));
        assert_eq!(num("--5"), None);
    }

    #[test]
    fn reads_hex_integers_and_hex_floats() {
        assert_eq!(num("0x10"), Some((16.0, 4)));
        assert_eq!(num("0X1f"), Some((31.0, 4)));
        assert_eq!(num("0x1p4"), Some((16.0, 5)));
        assert_eq!(num("0x1.8p1"), Some((3.0, 7)));
        assert_eq!(num("0xg"), Some((0.0, 1)));
    }

    #[test]
    fn reads_infinity_and_nan_in_any_case() {
        assert_eq!(num("inf"), Some((f64::INFINITY, 3)));
        assert_eq!(num("-Infinity"), Some((f64::NEG_INFINITY, 9)));
        let (nan, used) = num("NaN(1)x").unwrap();
        assert!(nan.is_nan());
        assert_eq!(used, 6);
        assert_eq!(num("ncigar"), None);
    }
}
