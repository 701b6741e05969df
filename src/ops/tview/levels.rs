//! Which screen row each read gets (samtools' `bam_lpileup.c`): a read keeps its row from its
//! first column to its last; a new read takes the freed row that has been free longest enough
//! (two columns, `TV_GAP`), the lowest such, else a new row below the others.
//!
//! The free rows are a list htslib keeps as nodes from a pool; the pool's quirk is kept: the
//! list's spare end node becomes the next free row, and its wait count is 0 when it was newly
//! allocated but `TV_GAP` when it came back from the pool.

/// `TV_GAP`: columns a freed row waits before another read may take it.
const GAP: u8 = 2;

/// A read's place in a column, as the layout needs it.
#[derive(Clone, Copy)]
pub struct Span {
    pub is_head: bool,
    pub is_tail: bool,
}

#[derive(Default)]
pub struct Levels {
    /// Free rows in list order: (row, columns still to wait).
    free: Vec<(i32, u8)>,
    /// The wait count of the list's end node.
    spare_wait: u8,
    /// Nodes back in the pool.
    pooled: usize,
    max_level: i32,
    /// Rows of the previous column's reads that go on, in column order.
    previous: Vec<i32>,
}

impl Levels {
    fn alloc(&mut self) -> u8 {
        if self.pooled == 0 {
            0
        } else {
            self.pooled -= 1;
            GAP
        }
    }

    /// `tview_func`: the rows of one column's reads, in column order.
    pub fn column(&mut self, reads: &[Span]) -> Vec<i32> {
        for node in &mut self.free {
            node.1 = node.1.saturating_sub(1);
        }
        let mut rows = Vec::with_capacity(reads.len());
        let previous = std::mem::take(&mut self.previous);
        let mut carried = previous.iter();
        let mut max_level = 0;
        for s in reads {
            let row = if s.is_head {
                if !self.free.is_empty() && self.free[0].1 == 0 {
                    let (row, _) = self.free.remove(0);
                    self.pooled += 1;
                    row
                } else {
                    self.max_level += 1;
                    self.max_level
                }
            } else {
                let row = carried.next().copied().unwrap_or(0);
                if s.is_tail {
                    self.free.push((row, self.spare_wait));
                    self.spare_wait = self.alloc();
                }
                row
            };
            max_level = max_level.max(row);
            rows.push(row);
        }
        if !self.free.is_empty() {
            let before = self.free.len();
            self.free.retain(|&(row, _)| row <= max_level);
            self.pooled += before - self.free.len();
            self.free.sort_by_key(|&(row, wait)| (wait, row));
        }
        self.max_level = max_level;
        self.previous =
            rows.iter().zip(reads).filter(|(_, s)| !s.is_tail).map(|(r, _)| *r).collect();
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: Span = Span { is_head: true, is_tail: false };
    const MID: Span = Span { is_head: false, is_tail: false };
    const TAIL: Span = Span { is_head: false, is_tail: true };

    #[test]
    fn a_freed_row_waits_before_reuse() {
        let mut l = Levels::default();
        assert_eq!(l.column(&[HEAD, HEAD]), [1, 2]);
        assert_eq!(l.column(&[TAIL, MID]), [1, 2]);
        // Row 1 was freed by a fresh spare node (wait 0): taken at once.
        assert_eq!(l.column(&[MID, HEAD]), [2, 1]);
    }
}
