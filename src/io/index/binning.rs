//! The hierarchical binning scheme shared by BAI and CSI: which bin a record falls into, and how bins nest.
//!
//! A scheme is fixed by `min_shift` (the width of a bottom-level bin is `2^min_shift` bases) and `depth`
//! (the number of levels below the root). BAI always uses `min_shift = 14, depth = 5` (SAMv1 §5.3); CSI
//! stores both in its header (CSIv1 §1).
//!
//! | level | first bin `((1 << 3·l) − 1) / 7` | bin width (bases)              | BAI example        |
//! |-------|----------------------------------|--------------------------------|--------------------|
//! | 0     | 0                                | `2^(min_shift + 3·depth)`      | 512 Mbp            |
//! | 1     | 1                                | `2^(min_shift + 3·(depth−1))`  | 64 Mbp             |
//! | …     | …                                | …                              | …                  |
//! | depth | `((1 << 3·depth) − 1) / 7`       | `2^min_shift`                  | 16 kbp (bins 4681…)|
//!
//! After the real bins (`n_bins = ((1 << 3·(depth+1)) − 1) / 7` of them) comes one pseudo-bin,
//! `n_bins + 1` (37450 for BAI), holding per-reference metadata.
//!
//! The functions mirror htslib's `hts_reg2bin`, `hts_bin_first`, `hts_bin_parent`, `hts_bin_level`,
//! `hts_bin_bot`, `hts_bin_maxpos` and `hts_adjust_csi_settings` (htslib `hts.h` / `hts.c`).

/// A binning scheme: bottom-bin width `2^min_shift` and `depth` levels below the root bin 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binning {
    pub min_shift: u32,
    pub depth: u32,
}

/// The deepest scheme htslib allows (more levels would overflow 32-bit bin numbers).
const MAX_DEPTH: u32 = 9;

impl Binning {
    /// The fixed BAI scheme.
    pub const BAI: Binning = Binning { min_shift: 14, depth: 5 };

    /// The CSI scheme samtools uses for a header whose longest reference is `max_ref_len`
    /// (`hts_adjust_csi_settings` starting from depth 0, as `samtools index -c` and `--write-index` do):
    /// add levels until `max_ref_len + 256` fits; past depth 9, widen `min_shift` instead.
    pub fn csi_for_longest_reference(min_shift: u32, max_ref_len: i64) -> Binning {
        let needed = max_ref_len + 256;
        if needed <= (Binning { min_shift, depth: MAX_DEPTH }).max_pos() {
            let mut depth = 0;
            while needed > (Binning { min_shift, depth }).max_pos() {
                depth += 1;
            }
            Binning { min_shift, depth }
        } else {
            let mut min_shift = min_shift;
            while needed > (Binning { min_shift, depth: MAX_DEPTH }).max_pos() {
                min_shift += 1;
            }
            Binning { min_shift, depth: MAX_DEPTH }
        }
    }

    /// Number of real bins (`idx->n_bins`): 37449 for BAI.
    pub fn n_bins(self) -> u32 {
        (((1u64 << (3 * self.depth + 3)) - 1) / 7) as u32
    }

    /// The pseudo-bin that carries per-reference metadata (`META_BIN`): 37450 for BAI.
    pub fn metadata_bin(self) -> u32 {
        self.n_bins() + 1
    }

    /// The exclusive maximum position the scheme can hold (`hts_bin_maxpos`): 2^29 for BAI.
    pub fn max_pos(self) -> i64 {
        1i64 << (self.min_shift + 3 * self.depth)
    }

    /// The first bin number at `level` (`hts_bin_first`).
    pub fn first_bin_of_level(level: u32) -> u32 {
        (((1u64 << (3 * level)) - 1) / 7) as u32
    }

    /// The parent of a non-root bin (`hts_bin_parent`).
    pub fn parent(bin: u32) -> u32 {
        (bin - 1) >> 3
    }

    /// The level of a bin, 0 for the root (`hts_bin_level`).
    pub fn level(bin: u32) -> u32 {
        let mut level = 0;
        let mut b = bin;
        while b != 0 {
            level += 1;
            b = Binning::parent(b);
        }
        level
    }

    /// The linear-index window holding the left edge of `bin` (`hts_bin_bot`).
    pub fn bottom_window(self, bin: u32) -> i64 {
        let level = Binning::level(bin);
        i64::from(bin - Binning::first_bin_of_level(level))
            << (3 * (self.depth.saturating_sub(level)))
    }

    /// The smallest bin containing `[beg, end)` (`hts_reg2bin`). `beg = -1, end = 0` gives the bin
    /// just before the bottom level (4680 for BAI), as htslib assigns to unplaced reads.
    pub fn reg2bin(self, beg: i64, end: i64) -> u32 {
        let last = end - 1;
        let mut shift = self.min_shift;
        let mut level = self.depth;
        while level > 0 {
            if beg >> shift == last >> shift {
                return (i64::from(Binning::first_bin_of_level(level)) + (beg >> shift)) as u32;
            }
            shift += 3;
            level -= 1;
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bai_scheme_has_37449_bins_and_metadata_bin_37450() {
        assert_eq!(Binning::BAI.n_bins(), 37449);
        assert_eq!(Binning::BAI.metadata_bin(), 37450);
        assert_eq!(Binning::BAI.max_pos(), 1 << 29);
    }

    #[test]
    fn reg2bin_agrees_with_record_layer_for_bai() {
        for (beg, end) in
            [(0, 1), (0, 1 << 14), (0, (1 << 14) + 1), (100, 2_000_100), (-1, 0), (0, 1 << 29)]
        {
            assert_eq!(
                Binning::BAI.reg2bin(beg, end),
                u32::from(crate::record::layout::reg2bin(beg, end))
            );
        }
    }

    #[test]
    fn levels_parents_and_bottom_windows_follow_the_octree() {
        assert_eq!(Binning::level(0), 0);
        assert_eq!(Binning::level(1), 1);
        assert_eq!(Binning::level(4681), 5);
        assert_eq!(Binning::parent(4681), 585);
        assert_eq!(Binning::BAI.bottom_window(4681 + 7), 7);
        assert_eq!(Binning::BAI.bottom_window(2), 8 * 8 * 8 * 8);
    }

    #[test]
    fn csi_depth_grows_with_the_longest_reference() {
        assert_eq!(Binning::csi_for_longest_reference(14, 70), Binning { min_shift: 14, depth: 0 });
        assert_eq!(
            Binning::csi_for_longest_reference(14, 3_000_000),
            Binning { min_shift: 14, depth: 3 }
        );
        assert_eq!(
            Binning::csi_for_longest_reference(14, 248_956_422),
            Binning { min_shift: 14, depth: 5 }
        );
        let huge = Binning::csi_for_longest_reference(14, 1 << 45);
        assert_eq!(huge.depth, 9);
        assert!(huge.max_pos() >= (1 << 45) + 256);
    }

    #[test]
    fn depth_zero_puts_everything_in_the_root_bin() {
        let scheme = Binning { min_shift: 14, depth: 0 };
        assert_eq!(scheme.n_bins(), 1);
        assert_eq!(scheme.metadata_bin(), 2);
        assert_eq!(scheme.reg2bin(5, 60), 0);
    }
}
