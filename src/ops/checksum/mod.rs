//! `checksum` (samtools 1.24 `bam_checksum.c`): order-agnostic checksums of a file's reads, per
//! read group, that survive sorting and format conversion. Each read's CRC32s (of flag + seq,
//! and of that with the name, qualities, tags, position, CIGAR, mate: [`crcs`]) are multiplied
//! together modulo 2^31 − 1, so the order of reads does not matter (unless `-O`). [`report`]
//! writes the table; merging reports adds their rows back up ([`Groups::add_row`]).

pub mod crcs;
pub mod read_back;
pub mod report;

use std::collections::BTreeMap;

pub use crcs::{Crcs, RecordHasher, TagSelection};

/// The modulus of the product: 2^31 − 1, a prime.
const PRIME: u64 = (1 << 31) - 1;

/// One more factor into a product (samtools' `update_hash`): zero and the prime itself would
/// stick the product at zero, so they count as 1.
pub fn update_hash(hash: u64, crc: u32) -> u64 {
    let mut crc = u64::from(crc) & PRIME;
    if crc == 0 || crc == PRIME {
        crc = 1;
    }
    (hash * crc) % PRIME
}

/// What is summed and shown (samtools' `opts`, but for the record filters).
#[derive(Clone, Debug)]
pub struct Settings {
    /// `-O` given once (1: each group's own count) or more (2: the whole file's count).
    pub in_order: u32,
    /// Count pass and fail rows (`-q`, or `-B` for pass).
    pub show_pass: bool,
    pub show_fail: bool,
}

/// The three rows of a group: all reads, those passing QC, those failing it.
pub const ROWS: [&str; 3] = ["all", "pass", "fail"];

/// One group's products, per row (samtools' `sums_t`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sums {
    pub sums: [Crcs64; 3],
    pub count: [u64; 3],
}

/// The seven products of one row, in the report's column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crcs64 {
    pub seq: u64,
    pub name: u64,
    pub qual: u64,
    pub aux: u64,
    pub pos: u64,
    pub cigar: u64,
    pub mate: u64,
}

impl Default for Sums {
    fn default() -> Self {
        let ones = Crcs64 { seq: 1, name: 1, qual: 1, aux: 1, pos: 1, cigar: 1, mate: 1 };
        Sums { sums: [ones; 3], count: [0; 3] }
    }
}

impl Sums {
    /// Multiplies row `row` by `crcs` (each XORed with `count_crc`) and adds `n` reads.
    pub fn update_row(&mut self, row: usize, crcs: &Crcs, count_crc: u32, n: u64) {
        let s = &mut self.sums[row];
        s.seq = update_hash(s.seq, count_crc ^ crcs.seq);
        s.name = update_hash(s.name, count_crc ^ crcs.name);
        s.qual = update_hash(s.qual, count_crc ^ crcs.qual);
        s.aux = update_hash(s.aux, count_crc ^ crcs.aux);
        s.pos = update_hash(s.pos, count_crc ^ crcs.pos);
        s.cigar = update_hash(s.cigar, count_crc ^ crcs.cigar);
        s.mate = update_hash(s.mate, count_crc ^ crcs.mate);
        self.count[row] += n;
    }

    /// Adds one read: row "all", and "pass" or "fail" when shown. With `-O` each CRC is XORed
    /// with the CRC of the read's number `count` (or, with `-OO`, of this group's own count).
    fn update(&mut self, qc_fail: bool, crcs: &Crcs, settings: &Settings, count: u64) {
        let count_crc = match settings.in_order {
            0 => 0,
            1 => crc32(0, &count.to_le_bytes()),
            _ => crc32(0, &self.count[0].to_le_bytes()),
        };
        self.update_row(0, crcs, count_crc, 1);
        if settings.show_pass && !qc_fail {
            self.update_row(1, crcs, count_crc, 1);
        }
        if settings.show_fail && qc_fail {
            self.update_row(2, crcs, count_crc, 1);
        }
    }
}

/// zlib's `crc32(crc, data)`: continues a CRC32 over more bytes.
pub fn crc32(crc: u32, data: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial(crc);
    hasher.update(data);
    hasher.finalize()
}

/// Every group of a file: all reads, reads without a read group, and each read group by name.
#[derive(Clone, Debug, Default)]
pub struct Groups {
    pub all: Sums,
    pub no_group: Sums,
    pub by_group: BTreeMap<Vec<u8>, Sums>,
}

impl Groups {
    /// Adds one read of read group `group` (its `RG:Z` value, if any).
    pub fn add_read(&mut self, group: Option<&[u8]>, qc_fail: bool, crcs: &Crcs, s: &Settings) {
        let sums = match group {
            Some(g) => self.by_group.entry(g.to_vec()).or_default(),
            None => &mut self.no_group,
        };
        // "all" uses the read's number within its group too, as samtools does.
        let count = sums.count[0];
        sums.update(qc_fail, crcs, s, count);
        self.all.update(qc_fail, crcs, s, count);
    }

    /// Adds one row of a report being merged: `count` reads whose products are `crcs`.
    pub fn add_row(&mut self, group: Option<&[u8]>, row: usize, crcs: &Crcs, count: u64) {
        let sums = match group {
            Some(g) => self.by_group.entry(g.to_vec()).or_default(),
            None => &mut self.no_group,
        };
        sums.update_row(row, crcs, 0, count);
        self.all.update_row(row, crcs, 0, count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_skip_zero_and_the_prime() {
        assert_eq!(update_hash(1, 0), 1);
        assert_eq!(update_hash(5, PRIME as u32), 5);
        assert_eq!(update_hash(3, 0x8000_0002), 6);
        assert_eq!(update_hash(PRIME - 1, 2), PRIME - 2);
    }

    #[test]
    fn crc32_continues_like_zlib() {
        assert_eq!(crc32(0, b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(crc32(0, b"1234"), b"56789"), 0xcbf4_3926);
    }

    #[test]
    fn reads_count_in_their_group_and_in_all() {
        let s = Settings { in_order: 0, show_pass: true, show_fail: true };
        let mut g = Groups::default();
        let c = Crcs { seq: 7, name: 8, qual: 9, aux: 10, pos: 11, cigar: 12, mate: 13 };
        g.add_read(Some(b"rg"), false, &c, &s);
        g.add_read(None, true, &c, &s);
        assert_eq!(g.all.count, [2, 1, 1]);
        assert_eq!(g.by_group[&b"rg"[..]].count, [1, 1, 0]);
        assert_eq!(g.no_group.count, [1, 0, 1]);
        assert_eq!(g.all.sums[0].seq, 49);
    }
}
