//! SAM aux fields (`TAG:TYPE:VALUE`) → their BAM encoding, read as leniently as htslib reads them.

use super::{ParseError, parse_i64};

/// C `strtol` leniency for aux integers: an optional sign and the leading digits; none → 0.
fn parse_i64_lenient(s: &[u8]) -> Option<i64> {
    let sign = usize::from(matches!(s.first(), Some(b'-' | b'+')));
    let digits = s[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return Some(0);
    }
    parse_i64(&s[..sign + digits])
}

pub(super) fn parse_f64(s: &[u8]) -> Option<f64> {
    std::str::from_utf8(s).ok()?.trim().parse::<f64>().ok()
}

/// C `strtod` leniency for `f`/`d` aux values, as htslib reads them: the longest leading number
/// (`1.5x` is 1.5); none → 0.
fn parse_f64_lenient(s: &[u8]) -> f64 {
    let s = s.trim_ascii_start();
    // A number is at most a few dozen characters; longer prefixes are not worth trying.
    let longest = s.len().min(64);
    (1..=longest).rev().find_map(|n| parse_f64(&s[..n])).unwrap_or(0.0)
}

/// Encodes one `TAG:TYPE:VALUE` field.
pub(crate) fn encode_aux(field: &[u8], buf: &mut Vec<u8>) -> Result<(), ParseError> {
    let bad = || ParseError::BadAux(String::from_utf8_lossy(field).into_owned());
    if field.len() < 5 || field[2] != b':' || field[4] != b':' {
        return Err(bad());
    }
    let tag = [field[0], field[1]];
    // htslib checks only that both are at least '!' as signed chars (so no byte above 0x7f), not
    // the spec's [A-Za-z][A-Za-z0-9].
    if !tag.iter().all(|&b| (b'!'..=0x7f).contains(&b)) {
        return Err(bad());
    }
    let value = &field[5..];
    // htslib tests the value's first byte against '\t', so control bytes below it count as none.
    if !matches!(field[3], b'Z' | b'H') && value.first().is_none_or(|&b| b <= b'\t') {
        return Err(ParseError::IncompleteAux);
    }
    buf.extend_from_slice(&tag);
    match field[3] {
        b'A' | b'c' | b'C' => {
            // htslib keeps the first character of a longer value.
            if value.is_empty() {
                return Err(bad());
            }
            buf.push(b'A');
            buf.push(value[0]);
        }
        b'i' | b's' | b'S' | b'I' => {
            buf.truncate(buf.len() - 2);
            let v = parse_i64_lenient(value).ok_or_else(bad)?;
            if v < i32::MIN as i64 || v > u32::MAX as i64 {
                return Err(bad());
            }
            crate::record::aux::push_int(buf, tag, v);
        }
        b'f' => {
            let v = parse_f64_lenient(value) as f32;
            buf.push(b'f');
            buf.extend_from_slice(&v.to_le_bytes());
        }
        b'd' => {
            let v = parse_f64_lenient(value);
            buf.push(b'd');
            buf.extend_from_slice(&v.to_le_bytes());
        }
        ty @ (b'Z' | b'H') => {
            // htslib checks only that a hex string has an even number of characters.
            if ty == b'H' && !value.len().is_multiple_of(2) {
                return Err(bad());
            }
            buf.push(ty);
            buf.extend_from_slice(value);
            buf.push(0);
        }
        b'B' => super::array::encode_array(value, buf).ok_or_else(bad)?,
        _ => return Err(bad()),
    }
    Ok(())
}
