//! The simple mode's counts, taken without visiting every read at every column: all `-m simple`
//! needs of a column is how much of each base code its reads weigh (a sum, so the reads' order
//! does not matter), and a read in the middle of a long match adds the same thing it would add
//! column by column if it is counted ahead, along its bases, into the columns it will cover.
//! Deep data (200 reads a column) spent most of its time loading every read at every column.

/// Which bases count and how much: `calculate_consensus_simple`'s quality filter and weight.
#[derive(Clone, Copy, Debug)]
pub struct QualWeight {
    pub min_qual: i32,
    pub use_qual: bool,
}

impl QualWeight {
    /// The weight of a base of quality `qual`, or `None` when the base does not count.
    #[inline]
    fn of(self, qual: i32) -> Option<u64> {
        if qual < self.min_qual {
            None
        } else if self.use_qual {
            Some(qual as u64)
        } else {
            Some(1)
        }
    }
}

/// One column's reads counted: the weight on each 4-bit base code (16: a gap), and how many
/// reads count (the depth `-d` is held against).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseCounts {
    pub weight: [u64; 17],
    pub depth: u64,
}

impl BaseCounts {
    /// One read's base `code` (0-16) of quality `qual`.
    #[inline]
    pub fn add(&mut self, code: u8, qual: i32, w: QualWeight) {
        if let Some(weight) = w.of(qual) {
            self.weight[code as usize] += weight;
            self.depth += 1;
        }
    }

    fn add_counts(&mut self, other: &BaseCounts) {
        for (a, b) in self.weight.iter_mut().zip(other.weight) {
            *a += b;
        }
        self.depth += other.depth;
    }
}

/// The counts ahead of the pileup: the bases the reads counted ahead have at each of the next
/// [`CountsAhead::SPAN`] positions. (Their gaps in inserted columns, rare, are taken from the
/// reads when such a column comes.)
pub struct CountsAhead {
    ring: Vec<BaseCounts>,
    pub weight: QualWeight,
}

impl CountsAhead {
    /// How far ahead a read is counted (a power of two); a longer match is counted again when
    /// the read is met there. 256 positions of counts (37 KB) stay in the L1 cache.
    pub const SPAN: i64 = 256;

    pub fn new(weight: QualWeight) -> Self {
        CountsAhead { ring: vec![BaseCounts::default(); Self::SPAN as usize], weight }
    }

    /// Whether every base weighs 1 (no `-q`, no `--min-BQ`): then qualities are not read.
    pub fn by_count(&self) -> bool {
        !self.weight.use_qual && self.weight.min_qual <= 0
    }

    #[inline]
    fn at(&mut self, pos: i64) -> &mut BaseCounts {
        &mut self.ring[(pos & (Self::SPAN - 1)) as usize]
    }

    /// A read's base `code` of quality `qual` at position `pos`.
    #[inline]
    pub fn add_base(&mut self, pos: i64, code: u8, qual: i32) {
        let w = self.weight;
        self.at(pos).add(code, qual, w);
    }

    /// A read's base `code` at position `pos`, where [`Self::by_count`]. (The depth is then
    /// the sum of the weights, taken in [`Self::add_to`].)
    #[inline]
    pub fn add_code(&mut self, pos: i64, code: u8) {
        self.at(pos).weight[code as usize] += 1;
    }

    /// What was counted ahead for position `pos` (its base column), added to `into`.
    pub fn add_to(&mut self, pos: i64, into: &mut BaseCounts) {
        let by_count = self.by_count();
        let c = self.at(pos);
        if by_count {
            c.depth = c.weight.iter().sum();
        }
        into.add_counts(c);
    }

    /// Forgets position `pos` once the pileup has moved past it (the slot serves `pos + SPAN`).
    pub fn clear(&mut self, pos: i64) {
        *self.at(pos) = BaseCounts::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_filter_and_weigh_as_the_simple_call() {
        let by_qual = QualWeight { min_qual: 10, use_qual: true };
        let mut c = BaseCounts::default();
        c.add(1, 30, by_qual);
        c.add(1, 9, by_qual);
        c.add(16, 12, by_qual);
        assert_eq!((c.weight[1], c.weight[16], c.depth), (30, 12, 2));
        let ahead_pos = 1000;
        let mut ahead = CountsAhead::new(QualWeight { min_qual: 0, use_qual: false });
        assert!(ahead.by_count());
        ahead.add_base(ahead_pos, 2, 40);
        ahead.add_code(ahead_pos, 8);
        let mut col = BaseCounts::default();
        ahead.add_to(ahead_pos + CountsAhead::SPAN, &mut col);
        assert_eq!(col.depth, 2, "a slot serves the position one span later");
        ahead.add_to(ahead_pos, &mut col);
        assert_eq!((col.weight[2], col.weight[8], col.depth), (2, 2, 4));
        ahead.clear(ahead_pos);
        let mut empty = BaseCounts::default();
        ahead.add_to(ahead_pos, &mut empty);
        assert_eq!(empty, BaseCounts::default());
    }

    /// Sorted reads on one reference: long matches (some past [`CountsAhead::SPAN`]) broken by
    /// every other operation, bases of every code, qualities 0-60, a few reads without bases.
    fn random_reads(seed: u64) -> Vec<Vec<u8>> {
        use crate::record::build::RecordBuilder;
        let mut n = crate::simulate::rng::Rng::new(seed);
        let mut reads: Vec<(i32, Vec<u8>)> = (0..300)
            .map(|i| {
                let ops: Vec<u32> = (0..1 + n.below(6))
                    .map(|_| {
                        let op = [0, 0, 0, 1, 2, 3, 4, 6, 7, 8][n.below(10) as usize];
                        let len =
                            if op == 0 || op >= 7 { 1 + n.below(700) } else { 1 + n.below(5) };
                        (len as u32) << 4 | op
                    })
                    .collect();
                let l_seq: u32 = ops
                    .iter()
                    .filter(|&&c| [0, 1, 4, 7, 8].contains(&(c & 0xf)))
                    .map(|&c| c >> 4)
                    .sum();
                let pos = n.below(2000) as i32;
                let mut b = RecordBuilder::new(format!("r{i}").as_bytes()).pos(pos).cigar(&ops);
                if n.below(20) != 0 {
                    let codes: Vec<u8> = (0..l_seq).map(|_| n.below(16) as u8).collect();
                    let quals: Vec<u8> = (0..l_seq).map(|_| n.below(61) as u8).collect();
                    b = b.seq_codes(&codes).qual(&quals);
                }
                (pos, b.aux(b"NMC\x01").build())
            })
            .collect();
        reads.sort_by_key(|r| r.0);
        reads.into_iter().map(|r| r.1).collect()
    }

    /// Every column's counts, from the reads as the plain pileup leaves them or as the
    /// counting pileup hands them over.
    fn column_counts(reads: &[Vec<u8>], weight: QualWeight, counting: bool) -> Vec<String> {
        use super::super::pileup::{NotSorted, Pileup};
        use crate::record::RecordRef;
        let mut pileup = if counting { Pileup::counting(weight) } else { Pileup::new() };
        let mut columns = Vec::new();
        let mut column = |reads: &mut [Box<super::super::pileup::PileupRead>],
                          counts: Option<&BaseCounts>,
                          pos: i64,
                          nth: i32|
         -> Result<(), NotSorted> {
            let counts = counts.copied().unwrap_or_else(|| {
                let mut c = BaseCounts::default();
                reads.iter().for_each(|p| c.add(p.base4, p.qual, weight));
                c
            });
            columns.push(format!("{pos}/{nth} {} {counts:?}", reads.len()));
            Ok(())
        };
        let mut keep = |_: &mut super::super::pileup::PileupRead| Ok(true);
        for r in reads {
            pileup.add(RecordRef::new(r), &mut keep, &mut column).unwrap();
        }
        pileup.finish(&mut column).unwrap();
        columns
    }

    #[test]
    fn counting_ahead_gives_every_column_the_counts_of_its_reads() {
        let weights = [(0, false), (0, true), (25, false), (15, true)];
        for seed in 1..=6 {
            let reads = random_reads(seed);
            for (min_qual, use_qual) in weights {
                let w = QualWeight { min_qual, use_qual };
                let plain = column_counts(&reads, w, false);
                let counted = column_counts(&reads, w, true);
                assert!(plain.len() > 2000, "seed {seed}: {} columns", plain.len());
                assert!(plain.iter().any(|c| !c.contains("/0 ")), "inserted columns");
                for (a, b) in plain.iter().zip(&counted) {
                    assert_eq!(a, b, "seed {seed}, min_qual {min_qual}, use_qual {use_qual}");
                }
                assert_eq!(plain.len(), counted.len());
            }
        }
    }
}
