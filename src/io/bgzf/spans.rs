//! Where the inflated bytes of a piece came from, for virtual offsets (`bgzf_tell`) of what a
//! reader finds in them, and what of it is carried into the next piece with an unfinished
//! record or line.

use super::reader::BlockSpan;

/// Blocks as (compressed offset, where the block's first byte is relative to the data's start;
/// negative when the data starts inside the block).
#[derive(Clone, Debug, Default)]
pub struct Spans(Vec<(u64, i64)>);

impl Spans {
    /// Adds a piece's blocks, after the ones already held.
    pub fn add(&mut self, blocks: &[BlockSpan]) {
        self.0.extend(blocks.iter().map(|b| (b.coffset, b.data_start as i64)));
    }

    /// The virtual offset of byte `at`. A byte at a block's end is the next block's first, as
    /// htslib's position after reading a block to its end.
    pub fn voffset(&self, at: usize) -> u64 {
        let i = self.0.partition_point(|&(_, d)| d <= at as i64).max(1) - 1;
        let (c, d) = self.0[i];
        c << 16 | (at as i64 - d) as u64
    }

    /// The spans of the bytes from `used` on, counted from there.
    pub fn carried_past(&self, used: usize) -> Spans {
        let s = &self.0;
        Spans(
            s.iter()
                .enumerate()
                .filter(|&(i, _)| s.get(i + 1).is_none_or(|n| n.1 > used as i64))
                .map(|(_, &(c, d))| (c, d - used as i64))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_blocks_and_survive_a_carry() {
        let mut s = Spans::default();
        let blocks = [
            BlockSpan { coffset: 100, data_start: 0 },
            BlockSpan { coffset: 200, data_start: 10 },
            BlockSpan { coffset: 300, data_start: 25 },
        ];
        s.add(&blocks);
        assert_eq!(s.voffset(0), 100 << 16);
        assert_eq!(s.voffset(9), 100 << 16 | 9);
        assert_eq!(s.voffset(10), 200 << 16, "a block's end is the next block's start");
        assert_eq!(s.voffset(27), 300 << 16 | 2);
        let carried = s.carried_past(12);
        assert_eq!(carried.voffset(0), 200 << 16 | 2);
        assert_eq!(carried.voffset(13), 300 << 16);
        assert_eq!(carried.0.len(), 2, "blocks wholly before the carry are dropped");
    }
}
