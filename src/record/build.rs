//! Test records: one builder for the raw BAM bytes unit tests need, instead of a hand-written
//! helper in every module. Every field starts at zero, as a zeroed 32-byte block does; a test
//! sets what it is about.

use super::layout::{FIXED_LEN, REF_ID, SEQ_NT16};
use super::layout::{FLAG, L_READ_NAME, L_SEQ, MAPQ, N_CIGAR_OP, NEXT_POS, NEXT_REF_ID, POS, TLEN};

#[derive(Clone, Default)]
pub struct RecordBuilder {
    name: Vec<u8>,
    fixed: [u8; FIXED_LEN],
    cigar: Vec<u32>,
    /// Packed 4-bit bases, and how many bases they hold.
    seq: (Vec<u8>, usize),
    qual: Vec<u8>,
    aux: Vec<u8>,
}

impl RecordBuilder {
    /// A record named `name` (without its NUL), every other field zero.
    pub fn new(name: &[u8]) -> Self {
        RecordBuilder { name: name.to_vec(), ..Default::default() }
    }

    fn set_i32(mut self, at: usize, v: i32) -> Self {
        self.fixed[at..at + 4].copy_from_slice(&v.to_le_bytes());
        self
    }

    pub fn tid(self, tid: i32) -> Self {
        self.set_i32(REF_ID, tid)
    }

    pub fn pos(self, pos: i32) -> Self {
        self.set_i32(POS, pos)
    }

    /// The mate's reference and position.
    pub fn mate(self, tid: i32, pos: i32) -> Self {
        self.set_i32(NEXT_REF_ID, tid).set_i32(NEXT_POS, pos)
    }

    pub fn tlen(self, tlen: i32) -> Self {
        self.set_i32(TLEN, tlen)
    }

    pub fn mapq(mut self, mapq: u8) -> Self {
        self.fixed[MAPQ] = mapq;
        self
    }

    pub fn flag(mut self, flag: u16) -> Self {
        self.fixed[FLAG..FLAG + 2].copy_from_slice(&flag.to_le_bytes());
        self
    }

    /// CIGAR operations as BAM stores them (`len << 4 | op`).
    pub fn cigar(mut self, ops: &[u32]) -> Self {
        self.cigar = ops.to_vec();
        self
    }

    /// `len` bases stored as `packed` repeated (two bases a byte), e.g. `0x11` for all `A`.
    pub fn seq_fill(mut self, packed: u8, len: usize) -> Self {
        self.seq = (vec![packed; len.div_ceil(2)], len);
        self
    }

    /// Bases as 4-bit codes (`1` A, `2` C, `4` G, `8` T, `15` N).
    pub fn seq_codes(mut self, codes: &[u8]) -> Self {
        let packed = codes.chunks(2).map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0)).collect();
        self.seq = (packed, codes.len());
        self
    }

    /// Bases as letters, coded as htslib codes them.
    pub fn seq(self, bases: &[u8]) -> Self {
        self.seq_codes(&bases.iter().map(|&c| SEQ_NT16[c as usize]).collect::<Vec<_>>())
    }

    /// Base qualities, one a base.
    pub fn qual(mut self, qual: &[u8]) -> Self {
        self.qual = qual.to_vec();
        self
    }

    /// Aux fields as raw BAM bytes (`b"NMC\x01"`), appended.
    pub fn aux(mut self, aux: &[u8]) -> Self {
        self.aux.extend_from_slice(aux);
        self
    }

    /// The record's bytes (without the leading `block_size`).
    pub fn build(self) -> Vec<u8> {
        let mut fixed = self.fixed;
        fixed[L_READ_NAME] = self.name.len() as u8 + 1;
        fixed[N_CIGAR_OP..N_CIGAR_OP + 2].copy_from_slice(&(self.cigar.len() as u16).to_le_bytes());
        fixed[L_SEQ..L_SEQ + 4].copy_from_slice(&(self.seq.1 as i32).to_le_bytes());
        let mut b = fixed.to_vec();
        b.extend_from_slice(&self.name);
        b.push(0);
        for op in &self.cigar {
            b.extend_from_slice(&op.to_le_bytes());
        }
        b.extend_from_slice(&self.seq.0);
        // No qualities given: SAM's `*`, one 0xff a base (the record stays valid).
        if self.qual.is_empty() {
            b.resize(b.len() + self.seq.1, 0xff);
        } else {
            b.extend_from_slice(&self.qual);
        }
        b.extend_from_slice(&self.aux);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::view::RecordRef;

    #[test]
    fn fields_land_where_the_layout_puts_them() {
        let b = RecordBuilder::new(b"read1")
            .tid(2)
            .pos(100)
            .mapq(30)
            .flag(0x63)
            .mate(2, 300)
            .cigar(&[5 << 4])
            .seq(b"ACGTN")
            .qual(&[30; 5])
            .aux(b"NMC\x01")
            .build();
        let r = RecordRef::new(&b);
        assert_eq!((r.ref_id(), r.pos(), r.mapq(), r.flag()), (2, 100, 30, 0x63));
        assert_eq!((r.next_ref_id(), r.next_pos(), r.l_seq()), (2, 300, 5));
        assert_eq!(r.read_name(), b"read1");
        assert_eq!((0..5).map(|i| r.base_code(i)).collect::<Vec<_>>(), [1, 2, 4, 8, 15]);
        assert!(b.ends_with(b"\x1e\x1e\x1e\x1e\x1eNMC\x01"));
    }
}
