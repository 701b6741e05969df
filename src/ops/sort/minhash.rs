//! `sort -M`: minimiser keys for unplaced reads (samtools' `minhash` and `worker_minhash`),
//! and with `-I ref.fa` ([`KmerIndex`]) keys that place reads by where their k-mers lie in the
//! reference (`build_minhash_index`, `minhash_with_idx`).
//!
//! Each unplaced read (`tid == -1`) gets the smallest canonical k-mer hash over its sequence
//! (homopolymer runs optionally squashed, hashes XORed with a constant to push poly-A away from 0).
//! When the reverse strand gives the smaller hash, the read is reverse-complemented in place and
//! REVERSE toggled. The read's `pos`, `mpos` and `isize` become −1, −1, 0 as in samtools' output.

use crate::record::edit;
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

/// Bit 60 of an index value: the k-mer occurs more than once.
const UNIQ_BIT: u64 = 1 << 60;

/// `-I`: each minimiser of the reference (one per window) → its position in the concatenated
/// reference, with [`UNIQ_BIT`] set when it was seen more than once (the last position wins).
#[derive(Debug, Default)]
pub struct KmerIndex {
    map: std::collections::HashMap<u64, u64>,
}

/// samtools' `minhash` over `[start, start + window)` of `codes`, forward strand only:
/// (hash, next start, reached the end).
fn window_minhash(
    codes: &[u8],
    kmer: u32,
    start: usize,
    window: usize,
    squash: bool,
) -> (u64, i64, bool) {
    let len = codes.len();
    let mask = (1u64 << (2 * kmer)) - 1;
    let (mut hash, mut min, mut min_pos) = (0u64, u64::MAX, start as i64);
    let end = (start + window).min(len);
    let mut last = -1i32;
    let (mut i, mut j) = (start, 0u32);
    while j < kmer - 1 && i < end {
        let b = codes[i];
        if !squash || last != b as i32 {
            last = b as i32;
            hash = (hash << 2) | FWD[b as usize];
            j += 1;
        }
        i += 1;
    }
    while i < end {
        let b = codes[i];
        if !squash || last != b as i32 {
            last = b as i32;
            hash = (hash << 2) | FWD[b as usize];
            let x = (hash ^ XOR) & mask;
            if min > x {
                min = x;
                min_pos = i as i64;
            }
        }
        i += 1;
    }
    (min, min_pos - (kmer as i64 - 1), end == len)
}

impl KmerIndex {
    /// Indexes reference sequences (4-bit base codes, one `Vec` per sequence, in file order) as
    /// `build_minhash_index` does.
    pub fn from_sequences(seqs: &[Vec<u8>], kmer: u32, window: usize, squash: bool) -> KmerIndex {
        let mut map = std::collections::HashMap::new();
        let mut tpos = 0u64;
        for codes in seqs {
            if codes.len() < window {
                continue;
            }
            let (mut pos, mut end) = (0i64, false);
            while !end {
                let last_pos = pos;
                let (hash, p, e) = window_minhash(codes, kmer, pos.max(0) as usize, window, squash);
                end = e;
                let at = tpos.wrapping_add(p as u64);
                match map.entry(hash) {
                    std::collections::hash_map::Entry::Occupied(mut o) => {
                        *o.get_mut() = at.wrapping_add(UNIQ_BIT);
                    }
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(at);
                    }
                }
                pos = (last_pos + kmer as i64).max(p + 1);
            }
            tpos += codes.len() as u64;
        }
        KmerIndex { map }
    }

    /// 2 for a unique k-mer, 1 for a repeated one, 0 when absent.
    fn class(&self, hash: u64) -> u8 {
        match self.map.get(&hash) {
            Some(&v) if v & UNIQ_BIT == 0 => 2,
            Some(_) => 1,
            None => 0,
        }
    }
}

/// `minhash_with_idx` (and its `_squash` twin): prefer k-mers unique in the index, then repeated
/// ones, then the smallest hash; returns (key, position, reverse?).
fn minhash_with_index(seq: &[u8], len: usize, m: Minimiser, index: &KmerIndex) -> (u64, i64, bool) {
    let kmer = m.kmer as u64;
    let mask = (1u64 << (2 * kmer)) - 1;
    let xor = XOR & mask;
    let shift = 2 * (kmer - 1);
    // One strand: (min, pos, found) with the index preferences.
    let scan = |rev: bool| -> (u64, i64, u8) {
        let (mut hash, mut last) = (0u64, -1i32);
        let (mut min, mut min_i, mut min_d) = (u64::MAX, u64::MAX, u64::MAX);
        let (mut pos, mut pos_i, mut pos_d) = (0i64, 0i64, 0i64);
        let mut found = 0u8;
        let step = |hash: u64, b: usize| -> u64 {
            if rev { (hash >> 2) | (REV[b] << shift) } else { ((hash << 2) | FWD[b]) & mask }
        };
        let (mut i, mut j) = (0usize, 0u64);
        while j < kmer - 1 && i < len {
            let b = base(seq, i);
            i += 1;
            if m.squash && b as i32 == last {
                continue;
            }
            last = b as i32;
            j += 1;
            hash = if rev { (hash >> 2) | (REV[b] << shift) } else { (hash << 2) | FWD[b] };
        }
        while i < len {
            let b = base(seq, i);
            if m.squash && b as i32 == last {
                i += 1;
                continue;
            }
            last = b as i32;
            hash = step(hash, b);
            let x = hash ^ xor;
            let mut class = 0;
            if min_i > x || (found < 2 && min_d > x) {
                class = index.class(x);
            }
            found |= class;
            match class {
                2 => (min_i, pos_i) = (x, i as i64),
                1 => (min_d, pos_d) = (x, i as i64),
                _ => {
                    if min > x {
                        (min, pos) = (x, i as i64);
                    }
                }
            }
            i += 1;
        }
        if min_i != u64::MAX {
            (min, pos) = (min_i, pos_i);
        } else if min_d != u64::MAX {
            (min, pos) = (min_d, pos_d);
        }
        (min, pos, found)
    };
    let (mut min, mut pos, found_f) = scan(false);
    let mut dir = false;
    if m.try_rev {
        let (min_r, pos_r, found_r) = scan(true);
        if (min > min_r || (found_f == 0 && found_r != 0)) && (found_f == 0 || found_r != 0) {
            min = min_r;
            pos = len as i64 - pos_r + kmer as i64 - 2;
            dir = true;
        }
    }
    if let Some(&v) = index.map.get(&min) {
        min = v & (UNIQ_BIT - 1);
    }
    (if min != u64::MAX { min } else { 0 }, pos, dir)
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
pub fn apply(rec: &mut [u8], m: Minimiser, index: Option<&KmerIndex>) -> Option<MinKey> {
    if layout::read_i32(rec, layout::REF_ID) != -1 {
        return None;
    }
    let l_name = rec[layout::L_READ_NAME] as usize;
    let n_cigar = layout::n_cigar(rec);
    let len = layout::read_i32(rec, layout::L_SEQ).max(0) as usize;
    let seq_at = layout::FIXED_LEN + l_name + 4 * n_cigar;
    let seq = &rec[seq_at..seq_at + len.div_ceil(2)];
    let (hash, pos, rev) = match index {
        Some(ix) => minhash_with_index(seq, len, m, ix),
        None => minhash(seq, len, m),
    };
    if rev {
        reverse_complement(rec, seq_at, len);
    }
    let (mh, pos) = match index {
        Some(_) => (hash.wrapping_sub(pos as u64), 0),
        None => (hash.wrapping_add(1 << 30), if 65535 - pos >= 0 { 65535 - pos } else { 0 }),
    };
    // samtools keeps (mh >> 31) & 0x7fffffff in pos and mh & 0x7fffffff in mpos, then compares
    // pos << 31 | mpos: the hash's low 62 bits.
    let hash = (((mh >> 31) & 0x7fff_ffff) << 31) | (mh & 0x7fff_ffff);
    edit::set_narrow(rec, layout::WIDE_POS, -1);
    edit::set_narrow(rec, layout::WIDE_NEXT_POS, -1);
    edit::set_narrow(rec, layout::WIDE_TLEN, 0);
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
