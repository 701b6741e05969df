//! CIGAR operations as stored in BAM: `len << 4 | op`.

use super::layout::CIGAR_OPS;

pub const MATCH: u8 = 0;
pub const INS: u8 = 1;
pub const DEL: u8 = 2;
pub const REF_SKIP: u8 = 3;
pub const SOFT_CLIP: u8 = 4;
pub const HARD_CLIP: u8 = 5;
pub const PAD: u8 = 6;
pub const EQUAL: u8 = 7;
pub const DIFF: u8 = 8;
/// samtools' "B" (back) operation, code 9, which only appears in old files.
pub const BACK: u8 = 9;

#[inline]
pub fn op(raw: u32) -> u8 {
    (raw & 0xf) as u8
}

#[inline]
pub fn len(raw: u32) -> u32 {
    raw >> 4
}

/// The letter for a CIGAR op code; `?` for codes samtools cannot print.
pub fn op_char(op: u8) -> u8 {
    if op == BACK { b'B' } else { CIGAR_OPS.get(op as usize).copied().unwrap_or(b'?') }
}

/// The code of a CIGAR letter.
pub fn op_code(c: u8) -> Option<u8> {
    if c == b'B' {
        return Some(BACK);
    }
    CIGAR_OPS.iter().position(|&o| o == c).map(|p| p as u8)
}

#[inline]
pub fn consumes_ref(op: u8) -> bool {
    matches!(op, MATCH | DEL | REF_SKIP | EQUAL | DIFF)
}

#[inline]
pub fn consumes_query(op: u8) -> bool {
    matches!(op, MATCH | INS | SOFT_CLIP | EQUAL | DIFF)
}

/// Reference length covered by a CIGAR, as htslib's `bam_cigar2rlen`.
pub fn ref_len(cigar: impl Iterator<Item = u32>) -> i64 {
    cigar.filter(|&c| consumes_ref(op(c))).map(|c| len(c) as i64).sum()
}

/// Query length as htslib's `bam_cigar2qlen`.
pub fn query_len(cigar: impl Iterator<Item = u32>) -> i64 {
    cigar.filter(|&c| consumes_query(op(c))).map(|c| len(c) as i64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_op_classes() {
        let c = [
            (10 << 4) | MATCH as u32,
            (2 << 4) | INS as u32,
            (3 << 4) | DEL as u32,
            (5 << 4) | SOFT_CLIP as u32,
        ];
        assert_eq!(ref_len(c.iter().copied()), 13);
        assert_eq!(query_len(c.iter().copied()), 17);
        assert_eq!(op_code(b'='), Some(EQUAL));
        assert_eq!(op_char(BACK), b'B');
    }
}
