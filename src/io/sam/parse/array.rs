//! `B` array aux values as htslib's `sam_parse_B_vals` reads them.
//!
//! The items follow the subtype as `,V,V…` (an empty item is 0). An integer that does not fit
//! the subtype is not an error: htslib reads every item again as a 64-bit integer and retypes the
//! array to the smallest subtype holding their range (with 0 in it: `c`/`s`/`i` when one is
//! negative, else `C` while the largest is below 255, `S`, `I`), then parses once more; past two
//! tries, or past 32 bits, it fails. Text after a number fails, except after a `-` item of an
//! unsigned subtype, which is an overflow and skipped to the next comma.

use super::numbers::{NumberError, leading_int, leading_uint};

/// Appends `value` (`c,1,2`: subtype and items) as a BAM `B` array; `None` when htslib fails.
/// Nothing is allocated: the items are split again on each pass and written straight into `buf`
/// (the SAM reader parses millions of these).
pub fn encode_array(value: &[u8], buf: &mut Vec<u8>) -> Option<()> {
    let (&sub, list) = value.split_first()?;
    let list = match list.split_first() {
        None => None,
        Some((b',', rest)) => Some(rest),
        Some(_) => return None,
    };
    let items = || list.into_iter().flat_map(|l| l.split(|&b| b == b','));
    if sub == b'f' {
        return encode_floats(items(), buf);
    }
    let start = buf.len();
    let mut ty = sub;
    for _ in 0..2 {
        if write_ints(items(), ty, buf)? {
            return Some(());
        }
        buf.truncate(start);
        ty = retyped(items())?;
    }
    None
}

/// Bytes per item of an integer subtype.
fn width(ty: u8) -> Option<usize> {
    match ty {
        b'c' | b'C' => Some(1),
        b's' | b'S' => Some(2),
        b'i' | b'I' => Some(4),
        _ => None,
    }
}

/// Writes the items as subtype `ty`: `None` when htslib fails, `Some(false)` when one
/// overflowed and the array must be retyped (what was written is then to be cut off).
fn write_ints<'a>(
    items: impl Iterator<Item = &'a [u8]>,
    ty: u8,
    buf: &mut Vec<u8>,
) -> Option<bool> {
    let width = width(ty)?;
    let bits = width as u32 * 8;
    let unsigned = ty.is_ascii_uppercase();
    buf.extend_from_slice(&[b'B', ty]);
    let count_at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let mut count = 0u32;
    let mut overflow = false;
    for item in items {
        if unsigned && item.first() == Some(&b'-') {
            overflow = true;
            continue;
        }
        let (value, rest) = if unsigned {
            let (v, rest) = leading_uint(item, bits);
            (v.map(|v| v as i64), rest)
        } else {
            leading_int(item, bits)
        };
        if !rest.is_empty() {
            return None;
        }
        match value {
            Ok(v) => {
                buf.extend_from_slice(&v.to_le_bytes()[..width]);
                count += 1;
            }
            Err(NumberError::Overflow | NumberError::Junk) => overflow = true,
        }
    }
    buf[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    Some(!overflow)
}

/// The subtype htslib retypes an overflowing array to, from its items' range (0 included).
fn retyped<'a>(items: impl Iterator<Item = &'a [u8]>) -> Option<u8> {
    let (mut min, mut max) = (0i64, 0i64);
    for item in items {
        let v = leading_int(item, 64).0.ok()?;
        min = min.min(v);
        max = max.max(v);
    }
    let fits = |lo: i64, hi: i64| min >= lo && max <= hi;
    if min < 0 {
        [(b'c', i8::MIN as i64, i8::MAX as i64), (b's', i16::MIN as i64, i16::MAX as i64)]
            .into_iter()
            .chain([(b'i', i32::MIN as i64, i32::MAX as i64)])
            .find(|&(_, lo, hi)| fits(lo, hi))
            .map(|(t, _, _)| t)
    } else if max < u8::MAX as i64 {
        // htslib's test is `max < UINT8_MAX`: 255 itself goes to S.
        Some(b'C')
    } else if max <= u16::MAX as i64 {
        Some(b'S')
    } else if max <= u32::MAX as i64 {
        Some(b'I')
    } else {
        None
    }
}

/// `f` items as C's `strtod`; an empty item is 0.
fn encode_floats<'a>(items: impl Iterator<Item = &'a [u8]>, buf: &mut Vec<u8>) -> Option<()> {
    buf.extend_from_slice(b"Bf");
    let count_at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let mut count = 0u32;
    for item in items {
        let v = if item.is_empty() { 0.0 } else { super::aux::parse_f64(item)? };
        buf.extend_from_slice(&(v as f32).to_le_bytes());
        count += 1;
    }
    buf[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(value: &str) -> Option<(u8, Vec<i64>)> {
        let mut buf = Vec::new();
        encode_array(value.as_bytes(), &mut buf)?;
        let ty = buf[1];
        let w = width(ty)?;
        let values = buf[6..]
            .chunks(w)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..w].copy_from_slice(c);
                let v = i64::from_le_bytes(b);
                if ty.is_ascii_lowercase() { (v << (64 - 8 * w)) >> (64 - 8 * w) } else { v }
            })
            .collect();
        Some((ty, values))
    }

    #[test]
    fn arrays_are_retyped_as_htslib_retypes_them() {
        assert_eq!(encoded("c,-128,127"), Some((b'c', vec![-128, 127])));
        assert_eq!(encoded("c,128"), Some((b'C', vec![128])));
        assert_eq!(encoded("c,255"), Some((b'S', vec![255])));
        assert_eq!(encoded("C,-1"), Some((b'c', vec![-1])));
        assert_eq!(encoded("C,256"), Some((b'S', vec![256])));
        assert_eq!(encoded("s,32768"), Some((b'S', vec![32768])));
        assert_eq!(encoded("S,65536"), Some((b'I', vec![65536])));
        assert_eq!(encoded("i,2147483648"), Some((b'I', vec![2147483648])));
        assert_eq!(encoded("i,-2147483649"), None);
        assert_eq!(encoded("I,4294967296"), None);
        assert_eq!(encoded("c,"), Some((b'c', vec![0])));
        assert_eq!(encoded("c,,1"), Some((b'c', vec![0, 1])));
        assert_eq!(encoded("c"), Some((b'c', vec![])));
        // A negative zero in an unsigned array overflows every try.
        assert_eq!(encoded("C,-0"), None);
        for bad in ["c,1x", "x,1", "c1", "C,-1x"] {
            assert_eq!(encoded(bad), None, "{bad}");
        }
    }
}
