//! The BAM record byte layout (SAMv1 §4.2), named once so the rest of the code never indexes
//! record bytes by magic number.
//!
//! A record in memory is the BAM on-disk record *without* its leading `block_size`:
//!
//! | offset | size | field          |
//! |--------|------|----------------|
//! | 0      | 4    | `ref_id` i32   |
//! | 4      | 4    | `pos` i32 (0-based) |
//! | 8      | 1    | `l_read_name` u8 (incl. NUL) |
//! | 9      | 1    | `mapq` u8      |
//! | 10     | 2    | `bin` u16      |
//! | 12     | 2    | `n_cigar_op` u16 |
//! | 14     | 2    | `flag` u16     |
//! | 16     | 4    | `l_seq` i32    |
//! | 20     | 4    | `next_ref_id` i32 |
//! | 24     | 4    | `next_pos` i32 |
//! | 28     | 4    | `tlen` i32     |
//! | 32     | ..   | read_name, cigar (u32 × n), seq (4-bit packed), qual, aux |
//!
//! **Positions above 2³¹** (SAM in, SAM out only). htslib holds POS, PNEXT and TLEN as 64-bit
//! values in memory and only `bam_write1` refuses those that do not fit 32 bits. Like htslib's
//! `l_extranul` padding, a record holding such a value carries a [`NAME_EXT_LEN`]-byte extension
//! after its read name's NUL, counted in `l_read_name`:
//!
//! | offset after the name's NUL | size | field |
//! |-----------------------------|------|-------|
//! | 0                           | 4    | high part of `pos` i32 |
//! | 4                           | 4    | high part of `next_pos` i32 |
//! | 8                           | 4    | high part of `tlen` i32 |
//! | 12                          | 2    | high 16 bits of `n_cigar_op` (CIGARs of more than 65,535 operations) |
//! | 14                          | 2    | zero (the name region stays NUL-terminated, and its second-last byte NUL) |
//!
//! **CIGARs of more than 65,535 operations.** BAM stores them as a placeholder CIGAR
//! `<l_seq>S<ref_len>N` plus a `CG:B:I` tag holding the real operations (SAMv1 §4.2.2). As
//! htslib, a record in memory holds the real CIGAR in place; the operation count's high half
//! lives in the extension ([`n_cigar`]). The BAM reader and writer convert between the two forms
//! (`record::long_cigar`).
//!
//! A value is `low as i64 + (high as i64) << 32`, `low` being the i32 in the fixed part. The
//! extension is found by its position alone: the byte [`NAME_EXT_LEN`] + 1 before the end of the
//! name region is the name's NUL. An ordinary name never has a NUL there, and stray NUL padding
//! reads as an all-zero extension, i.e. as an ordinary record. Ordinary records pay one byte
//! load and one branch per 64-bit accessor: the byte before the name's NUL is a name character
//! ([`name_ext_start`]).

pub const REF_ID: usize = 0;
pub const POS: usize = 4;
pub const L_READ_NAME: usize = 8;
pub const MAPQ: usize = 9;
pub const BIN: usize = 10;
pub const N_CIGAR_OP: usize = 12;
pub const FLAG: usize = 14;
pub const L_SEQ: usize = 16;
pub const NEXT_REF_ID: usize = 20;
pub const NEXT_POS: usize = 24;
pub const TLEN: usize = 28;
/// Size of the fixed part; the read name starts here.
pub const FIXED_LEN: usize = 32;

/// Size of the name extension that holds the high halves of 64-bit positions (see module doc).
pub const NAME_EXT_LEN: usize = 16;
/// Offsets inside the name extension of the high halves.
pub const EXT_POS_HIGH: usize = 0;
pub const EXT_NEXT_POS_HIGH: usize = 4;
pub const EXT_TLEN_HIGH: usize = 8;
/// Offset inside the name extension of the high 16 bits of the CIGAR operation count.
pub const EXT_N_CIGAR_HIGH: usize = 12;
/// The most CIGAR operations the fixed part's u16 holds; more need the extension in memory and
/// the `CG` tag in BAM.
pub const MAX_SHORT_CIGAR: usize = 0xffff;
/// The longest read name (without NUL) that still leaves room for the extension in the u8
/// `l_read_name`.
pub const MAX_EXTENDED_NAME_LEN: usize = 255 - 1 - NAME_EXT_LEN;

/// One of the three fields that may hold a value beyond i32: where its low half sits in the fixed
/// part and its high half in the name extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideField {
    pub low: usize,
    pub high: usize,
}

pub const WIDE_POS: WideField = WideField { low: POS, high: EXT_POS_HIGH };
pub const WIDE_NEXT_POS: WideField = WideField { low: NEXT_POS, high: EXT_NEXT_POS_HIGH };
pub const WIDE_TLEN: WideField = WideField { low: TLEN, high: EXT_TLEN_HIGH };

/// Where the name extension starts in record bytes `b`, if it has one.
///
/// Inlined into every 64-bit accessor: the common case is one byte load and one branch. Out of
/// line (`#[inline]` left to the compiler) it cost `markdup -u` 0.8 % more instructions than the
/// 32-bit fields did (callgrind on `bench-out/cmp-200000.sorted.bam`, non-LTO build).
#[inline(always)]
pub fn name_ext_start(b: &[u8]) -> Option<usize> {
    let l = b[L_READ_NAME] as usize;
    // Fast path: an ordinary name's last character (just before its NUL) is not NUL, while an
    // extension ends with its zero word. (With l_read_name 1 this reads TLEN's top byte; the
    // slow path then finds no extension either.)
    if b[FIXED_LEN + l - 2] != 0 {
        return None;
    }
    name_ext_start_slow(b, l)
}

/// The name's NUL sits right before the extension (see the module doc).
#[cold]
#[inline(never)]
fn name_ext_start_slow(b: &[u8], l: usize) -> Option<usize> {
    (l > NAME_EXT_LEN && b[FIXED_LEN + l - NAME_EXT_LEN - 1] == 0)
        .then_some(FIXED_LEN + l - NAME_EXT_LEN)
}

/// Splits a 64-bit value into the i32 stored in the fixed part and the high half.
#[inline]
pub fn split_wide(v: i64) -> (i32, i32) {
    let low = v as i32;
    (low, ((v - low as i64) >> 32) as i32)
}

/// Joins the halves made by [`split_wide`].
#[inline]
pub fn join_wide(low: i32, high: i32) -> i64 {
    low as i64 + ((high as i64) << 32)
}

/// Reads a field that may be wider than i32.
#[inline(always)]
pub fn read_wide(b: &[u8], field: WideField) -> i64 {
    let low = read_i32(b, field.low);
    match name_ext_start(b) {
        None => low as i64,
        Some(at) => join_wide(low, read_i32(b, at + field.high)),
    }
}

/// True when some value does not fit its 32-bit BAM field (the record cannot be written as BAM).
/// Checked for every record the BAM reader and writer pass: inlined, like [`name_ext_start`].
#[inline(always)]
pub fn has_wide_values(b: &[u8]) -> bool {
    match name_ext_start(b) {
        None => false,
        Some(at) => has_nonzero_high_halves(b, at),
    }
}

/// The number of CIGAR operations: `n_cigar_op` plus, past 65,535, its high half from the name
/// extension. Ordinary records pay one byte load and one branch, as for [`read_wide`].
#[inline(always)]
pub fn n_cigar(b: &[u8]) -> usize {
    let low = read_u16(b, N_CIGAR_OP) as usize;
    match name_ext_start(b) {
        None => low,
        Some(at) => low | (read_u16(b, at + EXT_N_CIGAR_HIGH) as usize) << 16,
    }
}

/// True when the CIGAR has more than 65,535 operations (BAM holds it in a `CG` tag).
#[inline(always)]
pub fn has_long_cigar(b: &[u8]) -> bool {
    match name_ext_start(b) {
        None => false,
        Some(at) => read_u16(b, at + EXT_N_CIGAR_HIGH) != 0,
    }
}

/// True when the name extension holds anything: a value beyond 32 bits or a long CIGAR's count.
/// A BAM file's record never does (bytes there are NUL padding to htslib).
#[inline(always)]
pub fn uses_name_ext(b: &[u8]) -> bool {
    match name_ext_start(b) {
        None => false,
        Some(at) => has_nonzero_ext(b, at),
    }
}

#[cold]
#[inline(never)]
fn has_nonzero_ext(b: &[u8], at: usize) -> bool {
    b[at..at + EXT_N_CIGAR_HIGH + 2].iter().any(|&x| x != 0)
}

#[cold]
#[inline(never)]
fn has_nonzero_high_halves(b: &[u8], at: usize) -> bool {
    b[at..at + EXT_TLEN_HIGH + 4].iter().any(|&x| x != 0)
}

/// Flag bits (SAMv1 §1.4).
pub mod flags {
    pub const PAIRED: u16 = 0x1;
    pub const PROPER_PAIR: u16 = 0x2;
    pub const UNMAP: u16 = 0x4;
    pub const MUNMAP: u16 = 0x8;
    pub const REVERSE: u16 = 0x10;
    pub const MREVERSE: u16 = 0x20;
    pub const READ1: u16 = 0x40;
    pub const READ2: u16 = 0x80;
    pub const SECONDARY: u16 = 0x100;
    pub const QCFAIL: u16 = 0x200;
    pub const DUP: u16 = 0x400;
    pub const SUPPLEMENTARY: u16 = 0x800;

    /// The flag names htslib reads and writes (`bam_str2flag`, `bam_flag2str`), in bit order.
    pub const NAMES: [(&str, u16); 12] = [
        ("PAIRED", PAIRED),
        ("PROPER_PAIR", PROPER_PAIR),
        ("UNMAP", UNMAP),
        ("MUNMAP", MUNMAP),
        ("REVERSE", REVERSE),
        ("MREVERSE", MREVERSE),
        ("READ1", READ1),
        ("READ2", READ2),
        ("SECONDARY", SECONDARY),
        ("QCFAIL", QCFAIL),
        ("DUP", DUP),
        ("SUPPLEMENTARY", SUPPLEMENTARY),
    ];

    /// A flag as htslib's `bam_str2flag` reads a report's `# BAM flags:` (names, or a number);
    /// −1 when a name is unknown.
    pub fn parse_names(text: &str) -> i32 {
        if text.starts_with(|c: char| c.is_ascii_digit()) {
            let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
            let value = match hex {
                Some(h) => i64::from_str_radix(h.trim_end(), 16),
                None => text.trim_end().parse::<i64>(),
            };
            return value.map_or(-1, |v| v as i32);
        }
        let mut mask = 0;
        for name in text.split(',') {
            match NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                Some((_, bit)) => mask |= i32::from(*bit),
                None => return -1,
            }
        }
        mask
    }

    /// The names of the bits set in `mask`, comma-separated (htslib's `bam_flag2str`).
    pub fn names_of(mask: i32) -> String {
        let set = NAMES.iter().filter(|(_, bit)| mask & i32::from(*bit) != 0);
        set.map(|(name, _)| *name).collect::<Vec<_>>().join(",")
    }
}

/// The 4-bit base codes of packed sequences, in code order.
pub const SEQ_CODES: &[u8; 16] = b"=ACMGRSVTWYHKDBN";

/// Base letter → 4-bit code, as htslib's `seq_nt16_table`: [`SEQ_CODES`] in either case, RNA
/// `U`/`u` as `T` (8, htslib 1.22 on) and the digits `0`-`3` as `A`/`C`/`G`/`T`; anything else
/// is N (15). The one table for every base letter read: SAM `SEQ`, FASTA references,
/// base-modification base types.
pub const SEQ_NT16: [u8; 256] = {
    let mut t = [15u8; 256];
    let mut i = 0;
    while i < 16 {
        t[SEQ_CODES[i] as usize] = i as u8;
        t[SEQ_CODES[i].to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    t[b'U' as usize] = 8;
    t[b'u' as usize] = 8;
    // htslib's seq_nt16_table reads the digits 0-3 as A, C, G, T (colour-space SAM).
    t[b'0' as usize] = 1;
    t[b'1' as usize] = 2;
    t[b'2' as usize] = 4;
    t[b'3' as usize] = 8;
    t
};

/// CIGAR operation letters, in BAM code order.
pub const CIGAR_OPS: &[u8; 9] = b"MIDNSHP=X";

#[inline]
pub fn read_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// UCSC binning scheme bin for a 0-based half-open interval (SAMv1 §5.3).
pub fn reg2bin(beg: i64, end: i64) -> u16 {
    let end = end - 1;
    let levels = [(14, 4681), (17, 585), (20, 73), (23, 9), (26, 1)];
    for (shift, offset) in levels {
        if beg >> shift == end >> shift {
            return (offset + (beg >> shift)) as u16;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_join_round_trip() {
        for v in [0, -1, 1, i32::MAX as i64, i32::MAX as i64 + 1, 10_000_000_045, -3_000_000_000] {
            let (low, high) = split_wide(v);
            assert_eq!(join_wide(low, high), v);
            assert_eq!(high == 0, i32::try_from(v).is_ok());
        }
        assert_eq!(split_wide(10_000_000_009), (1_410_065_417, 2));
    }

    #[test]
    fn reg2bin_matches_spec_examples() {
        assert_eq!(reg2bin(-1, 0), 4680);
        assert_eq!(reg2bin(0, 1), 4681);
        assert_eq!(reg2bin(0, 1 << 14), 4681);
        assert_eq!(reg2bin(0, (1 << 14) + 1), 585);
        assert_eq!(reg2bin(0, 1 << 29), 0);
    }
}
