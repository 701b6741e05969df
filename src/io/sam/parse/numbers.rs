//! Numbers as htslib's SAM parser reads them (`hts_str2uint`, `hts_str2int`, `parse_sam_flag`):
//! an empty field is 0, a `+` may lead, and a value past the field's bits is an overflow (an
//! error for a mandatory field, a retyping for a `B` array).

/// Why a number was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberError {
    /// Text after the digits.
    Junk,
    /// Past the limit of the field's bits.
    Overflow,
}

/// The leading number of `s` as `hts_str2uint(s, &end, bits)`: optional `+`, decimal digits,
/// at most 2^bits − 1; the rest of `s` after the digits.
pub fn leading_uint(s: &[u8], bits: u32) -> (Result<u64, NumberError>, &[u8]) {
    let limit = if bits < 64 { (1u64 << bits) - 1 } else { u64::MAX };
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let digits = s.iter().take_while(|d| d.is_ascii_digit()).count();
    let value = s[..digits].iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10).and_then(|n| n.checked_add((d - b'0') as u64)).filter(|&n| n <= limit)
    });
    (value.ok_or(NumberError::Overflow), &s[digits..])
}

/// The leading number of `s` as `hts_str2int(s, &end, bits)`: optional sign, decimal digits,
/// within −2^(bits−1) ..= 2^(bits−1) − 1; the rest of `s` after the digits.
pub fn leading_int(s: &[u8], bits: u32) -> (Result<i64, NumberError>, &[u8]) {
    let (negative, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let limit = (1u64 << (bits - 1)) - 1 + u64::from(negative);
    let digits = body.iter().take_while(|d| d.is_ascii_digit()).count();
    let value = body[..digits].iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10).and_then(|n| n.checked_add((d - b'0') as u64)).filter(|&n| n <= limit)
    });
    let value = value.map(|n| if negative { (n as i64).wrapping_neg() } else { n as i64 });
    (value.ok_or(NumberError::Overflow), &body[digits..])
}

/// A whole mandatory field read by `read` (no text may follow the number).
fn whole<T>(read: (Result<T, NumberError>, &[u8])) -> Result<T, NumberError> {
    match read {
        (Ok(v), []) => Ok(v),
        (Ok(_), _) => Err(NumberError::Junk),
        (Err(e), _) => Err(e),
    }
}

/// An unsigned mandatory field (POS, MAPQ, PNEXT).
pub fn field_uint(s: &[u8], bits: u32) -> Result<u64, NumberError> {
    whole(leading_uint(s, bits))
}

/// A signed mandatory field (TLEN).
pub fn field_int(s: &[u8], bits: u32) -> Result<i64, NumberError> {
    whole(leading_int(s, bits))
}

/// FLAG as `parse_sam_flag`: decimal from a leading 1-9; C's `strtoul(s, 0)` (hex `0x…`, octal
/// `0…`) from a leading 0; anything else reads as 0 and must be empty.
pub fn field_flag(s: &[u8]) -> Result<u16, NumberError> {
    match s.first() {
        Some(b'1'..=b'9') => whole(leading_uint(s, 16)).map(|v| v as u16),
        Some(b'0') => {
            let (radix, digits) = match s.get(1) {
                Some(b'x' | b'X') if s.get(2).is_some_and(u8::is_ascii_hexdigit) => (16, &s[2..]),
                _ => (8, s),
            };
            let n = digits.iter().take_while(|d| (**d as char).is_digit(radix)).count();
            if n < digits.len() {
                return Err(NumberError::Junk);
            }
            let v = digits.iter().try_fold(0u64, |v, &d| {
                let d = (d as char).to_digit(radix).unwrap_or(0) as u64;
                v.checked_mul(radix as u64).and_then(|v| v.checked_add(d))
            });
            v.filter(|&v| v <= 0xffff).map(|v| v as u16).ok_or(NumberError::Overflow)
        }
        None => Ok(0),
        Some(_) => Err(NumberError::Junk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_as_htslib_reads_them() {
        assert_eq!(field_uint(b"", 62), Ok(0));
        assert_eq!(field_uint(b"+7", 62), Ok(7));
        assert_eq!(field_uint(b" 1", 62), Err(NumberError::Junk));
        assert_eq!(field_uint(b"-1", 62), Err(NumberError::Junk));
        assert_eq!(field_uint(b"255", 8), Ok(255));
        assert_eq!(field_uint(b"256", 8), Err(NumberError::Overflow));
        assert_eq!(field_int(b"-5", 63), Ok(-5));
        assert_eq!(field_int(b"", 63), Ok(0));
        assert_eq!(field_int(b"4611686018427387904", 63), Err(NumberError::Overflow));
        assert_eq!(field_int(b"-4611686018427387904", 63), Ok(-(1 << 62)));
        assert_eq!(leading_int(b"-128,", 8), (Ok(-128), &b","[..]));
        assert_eq!(leading_int(b"128", 8).0, Err(NumberError::Overflow));
    }

    #[test]
    fn flags_read_as_parse_sam_flag() {
        for (text, want) in [
            (&b""[..], Ok(0)),
            (b"0", Ok(0)),
            (b"16", Ok(16)),
            (b"0x10", Ok(16)),
            (b"0X1f", Ok(31)),
            (b"010", Ok(8)),
            (b"65535", Ok(65535)),
            (b"65536", Err(NumberError::Overflow)),
            (b"0x10000", Err(NumberError::Overflow)),
            (b"09", Err(NumberError::Junk)),
            (b"0x", Err(NumberError::Junk)),
            (b"-1", Err(NumberError::Junk)),
            (b"+1", Err(NumberError::Junk)),
            (b"1a", Err(NumberError::Junk)),
        ] {
            assert_eq!(field_flag(text), want, "{:?}", String::from_utf8_lossy(text));
        }
    }
}
