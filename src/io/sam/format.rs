//! One BAM record → one SAM text line, byte for byte as htslib's `sam_format1`.
//!
//! - RNEXT is `=` when it equals RNAME, `*` when unset; POS/PNEXT print pos+1.
//! - SEQ is `*` when empty; QUAL is `*` when its first byte is 0xff.
//! - Integer aux types print as `i`; `f` prints with C's `%g`; `B:f` elements with htslib's
//!   `kputd`, which agrees with `%g` (see [`push_g`]).

use crate::record::aux::AuxValue;
use crate::record::layout::SEQ_CODES;
use crate::record::{Header, RecordRef, cigar};

fn push_int(out: &mut Vec<u8>, v: i64) {
    // itoa writes two digits per step from a table (a digit per division was 7 % of BAM→SAM).
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends `x` formatted like C's `printf("%g", x)`: 6 significant digits, trailing zeros removed,
/// exponent form when the exponent is < −4 or ≥ 6.
pub fn push_g(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(if x.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x < 0.0 { b"-inf" } else { b"inf" });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    if !push_g_exact(out, x) {
        push_g_rounded(out, x);
    }
}

/// `%g` of a value that needs no rounding: a binary fraction (`m / 2^k`, `k` ≤ 20) whose exact
/// decimal expansion has at most six significant digits and prints in fixed notation is that
/// expansion. Float tags are mostly such values (quarters, halves, small integers), for which
/// the general path's exact formatting fell back to big-number arithmetic: 7 % of SAM output.
/// Returns false, writing nothing, for any other value.
fn push_g_exact(out: &mut Vec<u8>, x: f64) -> bool {
    const MAX_HALVINGS: u32 = 20;
    let mut scaled = x.abs();
    let mut k = 0;
    while scaled.fract() != 0.0 {
        if k == MAX_HALVINGS {
            return false;
        }
        scaled *= 2.0;
        k += 1;
    }
    if scaled >= (1u64 << 53) as f64 {
        return false;
    }
    // |x| = digits / 10^k exactly.
    let mut digits = scaled as u128 * 5u128.pow(k);
    let mut text = [0u8; 40];
    let mut start = text.len();
    while digits > 0 {
        start -= 1;
        text[start] = b'0' + (digits % 10) as u8;
        digits /= 10;
    }
    let text = &text[start..];
    let exponent = text.len() as i32 - k as i32 - 1;
    let significant = text.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
    if significant > 6 || !(-4..6).contains(&exponent) {
        return false;
    }
    if x < 0.0 {
        out.push(b'-');
    }
    if exponent >= 0 {
        let int_len = exponent as usize + 1;
        out.extend_from_slice(&text[..int_len]);
        if significant > int_len {
            out.push(b'.');
            out.extend_from_slice(&text[int_len..significant]);
        }
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-exponent - 1) as usize));
        out.extend_from_slice(&text[..significant]);
    }
    true
}

/// `%g` by formatting with six significant digits and trimming.
fn push_g_rounded(out: &mut Vec<u8>, x: f64) {
    // Rust's `{:.5e}` rounds to 6 significant digits exactly as printf does (round-half-even on
    // the exact binary value), which also gives the exponent after rounding.
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        out.extend_from_slice(strip_zeros(mantissa).as_bytes());
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(e.to_string().as_bytes());
    } else {
        let decimals = (5 - exp) as usize;
        let fixed = format!("{x:.decimals$}");
        out.extend_from_slice(strip_zeros(&fixed).as_bytes());
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

fn push_ref(out: &mut Vec<u8>, header: &Header, tid: i32) {
    match header.ref_name(tid) {
        Some(name) => out.extend_from_slice(name),
        None => out.push(b'*'),
    }
}

/// Both letters of every packed sequence byte, so decoding is one lookup per two bases
/// (per-base decoding was 20 % of SAM output time under callgrind).
const SEQ_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [SEQ_CODES[i >> 4], SEQ_CODES[i & 0xf]];
        i += 1;
    }
    t
};

/// Appends the `l_seq` bases of `packed` as letters.
pub fn push_seq(out: &mut Vec<u8>, packed: &[u8], l_seq: usize) {
    let at = out.len();
    out.resize(at + packed.len() * 2, 0);
    // Pairs of letters into a slice sized up front (a checked push per pair cost twice as much).
    for (pair, &b) in out[at..].as_chunks_mut::<2>().0.iter_mut().zip(packed) {
        *pair = SEQ_PAIRS[b as usize];
    }
    out.truncate(at + l_seq);
}

/// Appends the SAM line for `r` (with its `\n`).
pub fn format_record(out: &mut Vec<u8>, r: &RecordRef<'_>, header: &Header) {
    out.reserve(2 * r.bytes().len() + 64);
    out.extend_from_slice(r.read_name());
    out.push(b'\t');
    push_int(out, r.flag() as i64);
    out.push(b'\t');
    push_ref(out, header, r.ref_id());
    out.push(b'\t');
    push_int(out, r.pos() + 1);
    out.push(b'\t');
    push_int(out, r.mapq() as i64);
    out.push(b'\t');
    if r.n_cigar_op() == 0 {
        out.push(b'*');
    } else {
        for c in r.cigar() {
            push_int(out, cigar::len(c) as i64);
            out.push(cigar::op_char(cigar::op(c)));
        }
    }
    out.push(b'\t');
    let (tid, mtid) = (r.ref_id(), r.next_ref_id());
    if mtid < 0 {
        out.push(b'*');
    } else if mtid == tid {
        out.push(b'=');
    } else {
        push_ref(out, header, mtid);
    }
    out.push(b'\t');
    push_int(out, r.next_pos() + 1);
    out.push(b'\t');
    push_int(out, r.tlen());
    out.push(b'\t');
    let l_seq = r.l_seq();
    if l_seq == 0 {
        out.push(b'*');
    } else {
        push_seq(out, r.seq_packed(), l_seq);
    }
    out.push(b'\t');
    let qual = r.qual();
    if l_seq == 0 || qual[0] == 0xff {
        out.push(b'*');
    } else {
        let at = out.len();
        out.extend_from_slice(qual);
        out[at..].iter_mut().for_each(|q| *q = q.wrapping_add(33));
    }
    for f in r.aux() {
        out.push(b'\t');
        push_aux_field(out, &f);
    }
    out.push(b'\n');
}

/// Appends one aux field as SAM text (`TAG:TYPE:VALUE`), as htslib's `sam_format_aux1`.
pub fn push_aux_field(out: &mut Vec<u8>, f: &crate::record::aux::AuxField<'_>) {
    out.extend_from_slice(&f.tag);
    out.push(b':');
    match f.typed() {
        AuxValue::Char(c) => {
            out.extend_from_slice(b"A:");
            out.push(c);
        }
        AuxValue::Int(v) => {
            out.extend_from_slice(b"i:");
            push_int(out, v);
        }
        AuxValue::Float(v) => {
            out.push(f.ty);
            out.push(b':');
            push_g(out, v);
        }
        AuxValue::Str(s) => {
            out.push(f.ty);
            out.push(b':');
            out.extend_from_slice(s);
        }
        AuxValue::Array(sub, items) => push_array(out, sub, items),
    }
}

fn push_array(out: &mut Vec<u8>, sub: u8, items: &[u8]) {
    out.extend_from_slice(b"B:");
    out.push(sub);
    let size = crate::record::aux::type_size(sub).unwrap_or(1);
    for v in items.chunks_exact(size) {
        out.push(b',');
        match sub {
            b'c' => push_int(out, v[0] as i8 as i64),
            b'C' => push_int(out, v[0] as i64),
            b's' => push_int(out, i16::from_le_bytes([v[0], v[1]]) as i64),
            b'S' => push_int(out, u16::from_le_bytes([v[0], v[1]]) as i64),
            b'i' => push_int(out, i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64),
            b'I' => push_int(out, u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64),
            _ => push_g(out, f32::from_le_bytes([v[0], v[1], v[2], v[3]]) as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(x: f64) -> String {
        let mut v = Vec::new();
        push_g(&mut v, x);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn formats_like_printf_g() {
        assert_eq!(g(123456.7), "123457");
        assert_eq!(g(1e-5), "1e-05");
        assert_eq!(g(1234567.0), "1.23457e+06");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(1.5), "1.5");
        assert_eq!(g(100.0), "100");
        assert_eq!(g(999999.5), "1e+06");
        assert_eq!(g(1.234567891), "1.23457");
        assert_eq!(g(f64::INFINITY), "inf");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(0.1f32 as f64), "0.1");
        assert_eq!(g(137.25), "137.25");
        assert_eq!(g(-0.0625), "-0.0625");
        assert_eq!(g(500.0), "500");
    }

    /// The no-rounding path gives what the general path gives, or declines.
    #[test]
    fn exact_path_agrees_with_rounding_path() {
        let mut values = Vec::new();
        for m in -5000i64..5000 {
            for k in [0, 1, 2, 3, 4, 7, 10, 16, 20, 21] {
                values.push(m as f64 / (1u64 << k) as f64);
                values.push(m as f64 * 997.0 / (1u64 << k) as f64);
            }
        }
        values.extend([1e5, 999999.0, 1e6, 123456.5, 0.0001220703125, 65536.0 * 65536.0]);
        let mut taken = 0;
        for x in values.into_iter().filter(|x| *x != 0.0) {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            push_g_rounded(&mut slow, x);
            if push_g_exact(&mut fast, x) {
                taken += 1;
                assert_eq!(fast, slow, "{x}");
            } else {
                assert!(fast.is_empty());
            }
        }
        assert!(taken > 50_000, "the exact path took only {taken} values");
    }
}
