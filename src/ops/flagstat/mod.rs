//! `flagstat` (samtools 1.24 `bam_stat.c`): record counts by flag, QC-passed and QC-failed
//! apart. Counting is a sum, so batches are counted in parallel and the counts added up
//! ([`FlagStats::merge`]); the report ([`report`]) is samtools' default, JSON or TSV text.

pub mod report;

use crate::record::RecordRef;
use crate::record::layout::flags;

/// One counter per class, `[QC-passed, QC-failed]` each (samtools' `bam_flagstat_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagStats {
    pub reads: [u64; 2],
    pub mapped: [u64; 2],
    pub paired: [u64; 2],
    pub paired_both_mapped: [u64; 2],
    pub properly_paired: [u64; 2],
    pub singletons: [u64; 2],
    pub read1: [u64; 2],
    pub read2: [u64; 2],
    pub duplicates: [u64; 2],
    pub mate_other_chr: [u64; 2],
    pub mate_other_chr_mapq5: [u64; 2],
    pub secondary: [u64; 2],
    pub supplementary: [u64; 2],
    pub primary: [u64; 2],
    pub primary_mapped: [u64; 2],
    pub primary_duplicates: [u64; 2],
}

impl FlagStats {
    /// samtools' `flagstat_loop` for one record.
    pub fn add(&mut self, record: &RecordRef<'_>) {
        let flag = record.flag();
        let has = |bit: u16| flag & bit != 0;
        let w = usize::from(has(flags::QCFAIL));
        self.reads[w] += 1;
        if has(flags::SECONDARY) {
            self.secondary[w] += 1;
        } else if has(flags::SUPPLEMENTARY) {
            self.supplementary[w] += 1;
        } else {
            self.primary[w] += 1;
            if has(flags::PAIRED) {
                self.add_pair_counts(record, w);
            }
            if !has(flags::UNMAP) {
                self.primary_mapped[w] += 1;
            }
            if has(flags::DUP) {
                self.primary_duplicates[w] += 1;
            }
        }
        if !has(flags::UNMAP) {
            self.mapped[w] += 1;
        }
        if has(flags::DUP) {
            self.duplicates[w] += 1;
        }
    }

    /// The counts of a primary record flagged as paired.
    fn add_pair_counts(&mut self, record: &RecordRef<'_>, w: usize) {
        let flag = record.flag();
        let has = |bit: u16| flag & bit != 0;
        self.paired[w] += 1;
        if has(flags::PROPER_PAIR) && !has(flags::UNMAP) {
            self.properly_paired[w] += 1;
        }
        if has(flags::READ1) {
            self.read1[w] += 1;
        }
        if has(flags::READ2) {
            self.read2[w] += 1;
        }
        if has(flags::MUNMAP) && !has(flags::UNMAP) {
            self.singletons[w] += 1;
        }
        if !has(flags::UNMAP) && !has(flags::MUNMAP) {
            self.paired_both_mapped[w] += 1;
            if record.next_ref_id() != record.ref_id() {
                self.mate_other_chr[w] += 1;
                if record.mapq() >= 5 {
                    self.mate_other_chr_mapq5[w] += 1;
                }
            }
        }
    }

    /// The counts of two disjoint sets of records, added.
    pub fn merge(mut self, other: &FlagStats) -> FlagStats {
        for (mine, theirs) in self.counters_mut().into_iter().zip(other.counters()) {
            mine[0] += theirs[0];
            mine[1] += theirs[1];
        }
        self
    }

    fn counters(&self) -> [&[u64; 2]; 16] {
        [
            &self.reads,
            &self.mapped,
            &self.paired,
            &self.paired_both_mapped,
            &self.properly_paired,
            &self.singletons,
            &self.read1,
            &self.read2,
            &self.duplicates,
            &self.mate_other_chr,
            &self.mate_other_chr_mapq5,
            &self.secondary,
            &self.supplementary,
            &self.primary,
            &self.primary_mapped,
            &self.primary_duplicates,
        ]
    }

    fn counters_mut(&mut self) -> [&mut [u64; 2]; 16] {
        [
            &mut self.reads,
            &mut self.mapped,
            &mut self.paired,
            &mut self.paired_both_mapped,
            &mut self.properly_paired,
            &mut self.singletons,
            &mut self.read1,
            &mut self.read2,
            &mut self.duplicates,
            &mut self.mate_other_chr,
            &mut self.mate_other_chr_mapq5,
            &mut self.secondary,
            &mut self.supplementary,
            &mut self.primary,
            &mut self.primary_mapped,
            &mut self.primary_duplicates,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    fn stats_of(records: &[(u16, i32, i32, u8)]) -> FlagStats {
        let mut s = FlagStats::default();
        for &(flag, tid, mate_tid, mapq) in records {
            let bytes =
                RecordBuilder::new(b"r").flag(flag).tid(tid).mate(mate_tid, 0).mapq(mapq).build();
            s.add(&RecordRef::new(&bytes));
        }
        s
    }

    #[test]
    fn counts_follow_samtools_flagstat_loop() {
        let s = stats_of(&[
            (0x1 | 0x2 | 0x40, 0, 1, 30), // paired, proper, read1, mate on another chr
            (0x1 | 0x8 | 0x80, 0, 0, 3),  // singleton read2
            (0x1 | 0x4 | 0x2, -1, 0, 0),  // unmapped: proper pair not counted
            (0x100, 0, 0, 0),             // secondary
            (0x800 | 0x400, 0, 0, 0),     // supplementary duplicate
            (0x200 | 0x400, 0, 0, 0),     // QC-failed primary duplicate
        ]);
        assert_eq!(s.reads, [5, 1]);
        assert_eq!(s.primary, [3, 1]);
        assert_eq!(s.paired, [3, 0]);
        assert_eq!(s.properly_paired, [1, 0]);
        assert_eq!(s.singletons, [1, 0]);
        assert_eq!(s.paired_both_mapped, [1, 0]);
        assert_eq!((s.mate_other_chr, s.mate_other_chr_mapq5), ([1, 0], [1, 0]));
        assert_eq!((s.secondary, s.supplementary), ([1, 0], [1, 0]));
        assert_eq!((s.duplicates, s.primary_duplicates), ([1, 1], [0, 1]));
        assert_eq!((s.mapped, s.primary_mapped), ([4, 1], [2, 1]));
        let halves = stats_of(&[(0x1, 0, 0, 0)]).merge(&stats_of(&[(0x200, 0, 0, 0)]));
        assert_eq!(halves.reads, [1, 1]);
        assert_eq!(halves.paired, [1, 0]);
    }
}
