//! htslib's pileup depth cap (`bam_plp_set_maxcnt`), which `coverage -d` and `bedcov
//! --max-depth` set: a read is left out of the pileup when it starts at the position the pileup
//! has reached (not the first read to start there) and the pileup already holds more than the
//! cap, counting its one spare node (`iter->mp->cnt > iter->maxcnt` in `bam_plp_push`).
//!
//! The pileup holds the reads not yet passed: when a read at `pos` arrives, every column before
//! `pos` has been emitted, so the reads kept are those ending at `pos` or later.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::record::RecordRef;

/// htslib's cap when a command sets none (`bam_plp_init`).
pub const HTSLIB_DEFAULT: i64 = 8000;

/// The cap of one input's pileup.
pub struct PileupCap {
    cap: i64,
    /// Reference and start of the last read pushed (`max_tid`, `max_pos`).
    tid: i32,
    pos: i64,
    /// Ends (exclusive) of the reads the pileup holds.
    ends: BinaryHeap<Reverse<i64>>,
}

impl PileupCap {
    pub fn new(cap: i64) -> Self {
        // A fresh iterator stands at 0:0 (`calloc`), so a first read there is capped too.
        PileupCap { cap, tid: 0, pos: 0, ends: BinaryHeap::new() }
    }

    /// [`PileupCap::admits`] for a mapped read.
    pub fn admits_read(&mut self, r: &RecordRef<'_>) -> bool {
        let pos = r.pos();
        self.admits(r.ref_id(), pos, pos + crate::record::cigar::ref_len(r.cigar()))
    }

    /// Whether a mapped read at `tid:pos` covering reference up to `end` (exclusive, from its
    /// raw CIGAR length) enters the pileup. Reads must come in coordinate order.
    pub fn admits(&mut self, tid: i32, pos: i64, end: i64) -> bool {
        if tid != self.tid {
            // A new reference: the pileup is still on the last one, so no cap applies.
            self.ends.clear();
        } else if pos == self.pos {
            // `+ 1`: the spare node htslib keeps allocated at the list's tail.
            if self.ends.len() as i64 + 1 > self.cap {
                return false;
            }
            if end > pos {
                self.ends.push(Reverse(end));
            }
            return true;
        }
        // The first read at a new position: the columns before it are emitted, and the reads
        // that ended before it leave the pileup.
        while self.ends.peek().is_some_and(|&Reverse(e)| e < pos) {
            self.ends.pop();
        }
        (self.tid, self.pos) = (tid, pos);
        self.ends.push(Reverse(end));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_the_cap_at_one_position_are_left_out() {
        let mut cap = PileupCap::new(3);
        // The first read at a position always enters; then the pileup holds 1 read + 1 node.
        let admitted: Vec<bool> = (0..5).map(|_| cap.admits(0, 100, 150)).collect();
        assert_eq!(admitted, [true, true, true, false, false]);
        // A new position: reads that ended before it have left; these three still cover it.
        assert!(cap.admits(0, 120, 170));
        assert!(!cap.admits(0, 120, 170), "3 reads held + the spare node pass a cap of 3");
        // Past their ends the pileup empties.
        assert!(cap.admits(0, 200, 250));
        assert!(cap.admits(0, 200, 250));
        assert!(cap.admits(0, 200, 250));
        assert!(!cap.admits(0, 200, 250));
    }

    #[test]
    fn a_read_ending_right_before_the_position_still_counts() {
        let mut cap = PileupCap::new(2);
        assert!(cap.admits(0, 10, 20));
        // The read ending at 20 (exclusive) is held until column 20 is emitted.
        assert!(cap.admits(0, 20, 30));
        assert!(!cap.admits(0, 20, 30));
        let mut cap = PileupCap::new(2);
        assert!(cap.admits(0, 10, 19));
        assert!(cap.admits(0, 20, 30));
        assert!(cap.admits(0, 20, 30), "the read ending at 19 left at column 19");
    }

    #[test]
    fn a_fresh_pileup_stands_at_the_first_position() {
        let mut cap = PileupCap::new(0);
        assert!(!cap.admits(0, 0, 50), "at 0:0 even the first read meets the cap");
        assert!(cap.admits(0, 1, 50));
        assert!(PileupCap::new(0).admits(1, 0, 50));
    }

    #[test]
    fn a_new_reference_starts_an_empty_pileup() {
        let mut cap = PileupCap::new(1);
        assert!(cap.admits(0, 5, 50));
        assert!(!cap.admits(0, 5, 50));
        assert!(cap.admits(1, 5, 50));
        assert!(!cap.admits(1, 5, 50));
    }
}
