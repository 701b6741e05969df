//! `sort -M`: minimiser keys for unplaced reads (samtools' `minhash` and `worker_minhash`,
//! without a `-I` reference index).
//!
//! Each unplaced read (`tid == -1`) gets the smallest canonical k-mer hash over its sequence
//! (homopolymer runs optionally squashed, hashes XORed with a constant to push poly-A away from 0).
//! When the reverse strand gives the smaller hash, the read is reverse-complemented in place and
//! REVERSE toggled. The read's `pos`, `mpos` and `isize` become −1, −1, 0 as in samtools' output.

use crate::record::layout::{self, flags};

const XOR: u64 = 0xdead_7878_beef_7878;

/// bam_seqi code → 2-bit forward code (A C G T; others 0).
const FWD: [u64; 16] = [0, 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
/// bam_seqi code → 2-bit complement code.
const REV: [u64; 16] = [0, 3, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// Complement of each 4-bit base code through samtools' `comp` table (`=`→N, and Y→Y as in
/// samtools' table).
const COMP: [u8; 16] = [15, 8, 4, 12, 2, 10, 6, 14, 1, 9, 10, 13, 3, 11, 7, 15];

/// Minimiser settings: `-K`, not `-R`, `-H`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Minimiser {
    pub kmer: u32,
    pub try_rev: bool,
    pub squash: bool,
}

/// The sort key of an unplaced read: hash (62 bits as samtools splits it over pos/mpos), then the
/// hash position *descending*; ties then fall to the strand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MinKey {
    pub hash: u64,
    pub pos_desc: u32,
}

fn base(seq: &[u8], i: usize) -> usize {
    let b = seq[i / 2];
    (if i.is_multiple_of(2) { b >> 4 } else { b & 0xf }) as usize
}

/// samtools' `minhash` over the whole read from position 0: (hash, curr_pos, is_rev).
fn minhash(seq: &[u8], len: usize, m: Minimiser) -> (u64, i64, bool) {
    let kmer = m.kmer as u64;
    let mask = (1u64 << (2 * kmer)) - 1;
    let xor = XOR & mask;
    let no_squash = !m.squash;
    let mut minhashf = u64::MAX;
    let mut minhashpf: i64 = 0;
    let mut is_rev = false;
    let (mut hashf, mut last_base) = (0u64, -1i32);
    let mut i = 0usize;
    let mut j = 0u64;
    while j < kmer - 1 && i < len {
        let b = base(seq, i);
        if no_squash || last_base != b as i32 {
            last_base = b as i32;
            hashf = (hashf << 2) | FWD[b];
            j += 1;
        }
        i += 1;
    }
    while i < len {
        let b = base(seq, i);
        if no_squash || last_base != b as i32 {
            last_base = b as i32;
            hashf = (hashf << 2) | FWD[b];
            let x = (hashf ^ XOR) & mask;
            if minhashf > x {
                minhashf = x;
                minhashpf = i as i64;
            }
        }
        i += 1;
    }
    if m.try_rev {
        let shift = 2 * (kmer - 1);
        let (mut hashr, mut minhashr, mut minhashpr, mut last_base) = (0u64, u64::MAX, 0i64, -1i32);
        let (mut i, mut j) = (0usize, 0u64);
        while j < kmer - 1 && i < len {
            let b = base(seq, i);
            if no_squash || last_base != b as i32 {
                last_base = b as i32;
                hashr = (hashr >> 2) | (REV[b] << shift);
                j += 1;
            }
            i += 1;
        }
        while i < len {
            let b = base(seq, i);
            if no_squash || last_base != b as i32 {
                last_base = b as i32;
                hashr = (hashr >> 2) | (REV[b] << shift);
                if minhashr > (hashr ^ xor) {
                    minhashr = hashr ^ xor;
                    minhashpr = len as i64 - i as i64 + kmer as i64 - 2;
                }
            }
            i += 1;
        }
        if minhashr < minhashf {
            minhashf = minhashr;
            minhashpf = minhashpr;
            is_rev = true;
        }
    }
    (minhashf, minhashpf - (kmer as i64 - 1), is_rev)
}

/// Reverse-complements the sequence and reverses the qualities of a record in place; toggles REVERSE.
fn reverse_complement(rec: &mut [u8], seq_at: usize, len: usize) {
    let packed = len.div_ceil(2);
    let mut codes: Vec<u8> =
        (0..len).map(|i| base(&rec[seq_at..seq_at + packed], i) as u8).collect();
    codes.reverse();
    for c in &mut codes {
        *c = COMP[*c as usize];
    }
    for (i, pair) in codes.chunks(2).enumerate() {
        rec[seq_at + i] = pair[0] << 4 | pair.get(1).copied().unwrap_or(0);
    }
    rec[seq_at + packed..seq_at + packed + len].reverse();
    let flag = u16::from_le_bytes([rec[layout::FLAG], rec[layout::FLAG + 1]]) ^ flags::REVERSE;
    rec[layout::FLAG..layout::FLAG + 2].copy_from_slice(&flag.to_le_bytes());
}

/// For an unplaced record (`tid == -1`): computes its key, reverse-complements it when the reverse
/// strand wins, and sets pos/mpos/tlen to −1/−1/0 as samtools writes them. `None` for other records.
pub fn apply(rec: &mut [u8], m: Minimiser) -> Option<MinKey> {
    if layout::read_i32(rec, layout::REF_ID) != -1 {
        return None;
    }
    let l_name = rec[layout::L_READ_NAME] as usize;
    let n_cigar = layout::read_u16(rec, layout::N_CIGAR_OP) as usize;
    let len = layout::read_i32(rec, layout::L_SEQ).max(0) as usize;
    let seq_at = layout::FIXED_LEN + l_name + 4 * n_cigar;
    let (hash, pos, rev) = minhash(&rec[seq_at..seq_at + len.div_ceil(2)], len, m);
    if rev {
        reverse_complement(rec, seq_at, len);
    }
    let mh = hash.wrapping_add(1 << 30);
    let pos = if 65535 - pos >= 0 { 65535 - pos } else { 0 };
    // samtools keeps (mh >> 31) & 0x7fffffff in pos and mh & 0x7fffffff in mpos, then compares
    // pos << 31 | mpos: the hash's low 62 bits.
    let hash = (((mh >> 31) & 0x7fff_ffff) << 31) | (mh & 0x7fff_ffff);
    rec[layout::POS..layout::POS + 4].copy_from_slice(&(-1i32).to_le_bytes());
    rec[layout::NEXT_POS..layout::NEXT_POS + 4].copy_from_slice(&(-1i32).to_le_bytes());
    rec[layout::TLEN..layout::TLEN + 4].copy_from_slice(&0i32.to_le_bytes());
    Some(MinKey { hash, pos_desc: u32::MAX - pos as u32 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_complement_round_trips() {
        let mut rec = vec![0u8; 32];
        rec[layout::L_READ_NAME] = 2;
        rec[layout::L_SEQ..layout::L_SEQ + 4].copy_from_slice(&3i32.to_le_bytes());
        rec.extend_from_slice(b"r\0");
        rec.extend_from_slice(&[0x12, 0x40]); // A C G
        rec.extend_from_slice(&[10, 20, 30]);
        reverse_complement(&mut rec, 34, 3);
        assert_eq!(&rec[34..], &[0x24, 0x80, 30, 20, 10]); // C G T
        assert_eq!(layout::read_u16(&rec, layout::FLAG), flags::REVERSE);
    }
}
