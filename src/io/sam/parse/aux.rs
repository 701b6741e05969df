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

fn parse_f64(s: &[u8]) -> Option<f64> {
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
pub(super) fn encode_aux(field: &[u8], buf: &mut Vec<u8>) -> Result<(), ParseError> {
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
            if ty == b'H'
                && (!value.len().is_multiple_of(2) || !value.iter().all(u8::is_ascii_hexdigit))
            {
                return Err(bad());
            }
            buf.push(ty);
            buf.extend_from_slice(value);
            buf.push(0);
        }
        b'B' => encode_array(value, buf).ok_or_else(bad)?,
        _ => return Err(bad()),
    }
    Ok(())
}

fn encode_array(value: &[u8], buf: &mut Vec<u8>) -> Option<()> {
    let sub = *value.first()?;
    let items: &[u8] = match value.get(1) {
        None => b"",
        Some(b',') => &value[2..],
        Some(_) => return None,
    };
    buf.push(b'B');
    buf.push(sub);
    let count_at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let mut count = 0u32;
    if !value[1..].is_empty() {
        for item in items.split(|&b| b == b',') {
            count += 1;
            match sub {
                b'f' => buf.extend_from_slice(&(parse_f64(item)? as f32).to_le_bytes()),
                _ => {
                    let v = parse_i64(item)?;
                    let (lo, hi, size) = match sub {
                        b'c' => (i8::MIN as i64, i8::MAX as i64, 1),
                        b'C' => (0, u8::MAX as i64, 1),
                        b's' => (i16::MIN as i64, i16::MAX as i64, 2),
                        b'S' => (0, u16::MAX as i64, 2),
                        b'i' => (i32::MIN as i64, i32::MAX as i64, 4),
                        b'I' => (0, u32::MAX as i64, 4),
                        _ => return None,
                    };
                    if v < lo || v > hi {
                        return None;
                    }
                    buf.extend_from_slice(&v.to_le_bytes()[..size]);
                }
            }
        }
    } else if !matches!(sub, b'c' | b'C' | b's' | b'S' | b'i' | b'I' | b'f') {
        return None;
    }
    buf[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    Some(())
}
