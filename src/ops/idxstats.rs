//! `idxstats`' slow method (samtools 1.24 `slow_idxstats` in `bam_index.c`): mapped and
//! unmapped records per reference counted from the records themselves, for inputs without a
//! BAM index. Records must come grouped by reference, as in a position-sorted file.

use crate::record::RecordRef;
use crate::record::layout::flags;

/// Why counting stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum CountError {
    /// A reference's records came back after another reference's (samtools says so).
    NotSorted,
    /// A reference id outside the header (samtools fails without a message).
    BadReference,
}

/// Counts per reference id, `-1` (unplaced) included.
pub struct ReferenceCounts {
    /// `[mapped, unmapped]`; entry 0 is reference id -1.
    counts: Vec<[u64; 2]>,
    /// The reference id of the previous record; -2 before the first.
    last_tid: i32,
}

impl ReferenceCounts {
    pub fn new(n_ref: usize) -> Self {
        ReferenceCounts { counts: vec![[0; 2]; n_ref + 1], last_tid: -2 }
    }

    pub fn add(&mut self, record: &RecordRef<'_>) -> Result<(), CountError> {
        let tid = record.ref_id();
        let slot = usize::try_from(tid + 1).map_err(|_| CountError::BadReference)?;
        if slot >= self.counts.len() {
            return Err(CountError::BadReference);
        }
        if tid != self.last_tid {
            // As samtools: a return to a reference already counted means the input is unsorted.
            if self.last_tid >= -1 && self.counts[slot] != [0, 0] {
                return Err(CountError::NotSorted);
            }
            self.last_tid = tid;
        }
        let unmapped = record.flag() & flags::UNMAP != 0;
        self.counts[slot][usize::from(unmapped)] += 1;
        Ok(())
    }

    /// `(mapped, unmapped)` for reference `tid` (-1: unplaced).
    pub fn get(&self, tid: i32) -> (u64, u64) {
        let [mapped, unmapped] = self.counts[(tid + 1) as usize];
        (mapped, unmapped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    fn record(tid: i32, flag: u16) -> Vec<u8> {
        RecordBuilder::new(b"r").tid(tid).flag(flag).build()
    }

    #[test]
    fn counts_by_reference_and_refuses_a_return() {
        let mut counts = ReferenceCounts::new(2);
        for (tid, flag) in [(0, 0), (0, 4), (1, 0), (-1, 4)] {
            counts.add(&RecordRef::new(&record(tid, flag))).unwrap();
        }
        assert_eq!(counts.get(0), (1, 1));
        assert_eq!(counts.get(-1), (0, 1));
        assert_eq!(counts.add(&RecordRef::new(&record(0, 0))), Err(CountError::NotSorted));
        assert_eq!(counts.add(&RecordRef::new(&record(2, 0))), Err(CountError::BadReference));
    }
}
