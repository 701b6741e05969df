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
}

/// The 4-bit base codes of packed sequences, in code order.
pub const SEQ_CODES: &[u8; 16] = b"=ACMGRSVTWYHKDBN";

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
    fn reg2bin_matches_spec_examples() {
        assert_eq!(reg2bin(-1, 0), 4680);
        assert_eq!(reg2bin(0, 1), 4681);
        assert_eq!(reg2bin(0, 1 << 14), 4681);
        assert_eq!(reg2bin(0, (1 << 14) + 1), 585);
        assert_eq!(reg2bin(0, 1 << 29), 0);
    }
}
