//! The optional tags a fraction of records carry so that every SAM aux type appears:
//! `A` (`XT:A:`), `i` over the whole 32-bit range (`XI:i:`), `f` (`XF:f:`), `H` (`XH:H:`) and `B`
//! arrays of every subtype (`XB:B:s`, `XC:B:f`, and `XD:B:` with `c`, `C`, `S`, `i` or `I`).
//!
//! Floats are multiples of 1/4 below 512 in magnitude, written as `%g` writes them ("12.25",
//! "-3.5", "0"), so samtools prints them back unchanged and SAM → BAM → SAM is exact.

use super::rng::Rng;

const MAX_ARRAY_LEN: u64 = 6;

/// Appends the extra tags of one record to `out` (each preceded by a tab). Each tag is present
/// with probability `rate`; the text is written at once, so a record carries no tag structure.
pub fn write_extra_tags(rng: &mut Rng, rate: f64, out: &mut Vec<u8>) {
    if rate <= 0.0 || !rng.chance(rate * 2.0) {
        return;
    }
    // Inside this branch each tag appears with probability one half, so overall with `rate`.
    let mut number = itoa::Buffer::new();
    let mask = rng.next_u64();
    if mask & 1 != 0 {
        out.extend_from_slice(b"\tXT:A:");
        out.push(b"UMRN"[rng.below(4) as usize]);
    }
    if mask & 2 != 0 {
        const WIDE: [(i64, i64); 4] = [
            (-2_147_483_648, -32_769),
            (-128, 255),
            (65_536, 2_147_483_647),
            (2_147_483_648, 4_294_967_295),
        ];
        let (low, high) = WIDE[rng.below(4) as usize];
        out.extend_from_slice(b"\tXI:i:");
        out.extend_from_slice(
            number.format(low + rng.below((high - low + 1) as u64) as i64).as_bytes(),
        );
    }
    if mask & 4 != 0 {
        out.extend_from_slice(b"\tXF:f:");
        write_quarters(rng.below(4096) as i64 - 2048, out);
    }
    if mask & 8 != 0 {
        out.extend_from_slice(b"\tXH:H:");
        let hex = rng.next_u64() as u32;
        for shift in (0..8).rev() {
            out.push(b"0123456789ABCDEF"[(hex >> (shift * 4)) as usize & 15]);
        }
    }
    if mask & 16 != 0 {
        write_array(rng, b"XB", b's', -32_768, 32_767, out);
    }
    if mask & 32 != 0 {
        write_array(rng, b"XC", b'f', -2048, 2047, out);
    }
    if mask & 64 != 0 {
        const OTHERS: [(u8, i64, i64); 5] = [
            (b'c', -128, 127),
            (b'C', 0, 255),
            (b'S', 0, 65_535),
            (b'i', -2_147_483_648, 2_147_483_647),
            (b'I', 0, 4_294_967_295),
        ];
        let (subtype, low, high) = OTHERS[rng.below(5) as usize];
        write_array(rng, b"XD", subtype, low, high, out);
    }
}

/// Appends `\tTAG:B:subtype,v1,…` with 1–6 values in `low..=high` (quarters for `f`).
fn write_array(rng: &mut Rng, tag: &[u8; 2], subtype: u8, low: i64, high: i64, out: &mut Vec<u8>) {
    let mut number = itoa::Buffer::new();
    out.push(b'\t');
    out.extend_from_slice(tag);
    out.extend_from_slice(b":B:");
    out.push(subtype);
    for _ in 0..1 + rng.below(MAX_ARRAY_LEN) {
        out.push(b',');
        let value = low + rng.below((high - low + 1) as u64) as i64;
        if subtype == b'f' {
            write_quarters(value, out);
        } else {
            out.extend_from_slice(number.format(value).as_bytes());
        }
    }
}

/// Writes `quarters / 4` as C's `%g` would (at most 6 significant digits; exact for |v| < 512).
fn write_quarters(quarters: i64, out: &mut Vec<u8>) {
    if quarters < 0 {
        out.push(b'-');
    }
    let magnitude = quarters.unsigned_abs();
    out.extend_from_slice(itoa::Buffer::new().format(magnitude / 4).as_bytes());
    out.extend_from_slice(match magnitude % 4 {
        1 => b".25".as_slice(),
        2 => b".5",
        3 => b".75",
        _ => b"",
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarters_format_like_percent_g() {
        for (quarters, text) in
            [(0, "0"), (1, "0.25"), (-2, "-0.5"), (49, "12.25"), (-8191, "-2047.75"), (8, "2")]
        {
            let mut out = Vec::new();
            write_quarters(quarters, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }

    #[test]
    fn every_type_appears() {
        let mut rng = Rng::new(3);
        let mut text = Vec::new();
        for _ in 0..200 {
            write_extra_tags(&mut rng, 0.5, &mut text);
        }
        let text = String::from_utf8(text).unwrap();
        for needle in
            ["XT:A:", "XI:i:", "XF:f:", "XH:H:", "XB:B:s,", "XC:B:f,", "XD:B:c,", "XD:B:I,"]
        {
            assert!(text.contains(needle), "{needle} missing");
        }
    }

    #[test]
    fn no_tags_at_rate_zero() {
        let mut rng = Rng::new(3);
        let mut text = Vec::new();
        write_extra_tags(&mut rng, 0.0, &mut text);
        assert!(text.is_empty());
    }
}
