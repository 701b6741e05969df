//! `stats` (samtools 1.24 `stats.c`): the report `samtools stats` prints for the records of one
//! input. A report's numbers come in two kinds:
//!
//! - [`counters::Counters`]: sums over the records a report takes (checksums, histograms of
//!   qualities, bases per cycle, lengths, insert sizes, indels). They do not depend on the
//!   records' order, so record ranges are counted apart on the pool and added up.
//! - [`tracker::Tracker`]: what depends on the order (target regions, coverage, GC-depth bins,
//!   mismatches per cycle against the reference, overlap removal, barcodes) and which records
//!   the report takes at all. It sees every record in input order, on one thread.
//!
//! [`report::write_report`] prints both as samtools does.

pub mod barcodes;
pub mod counters;
pub mod coverage;
pub mod gc_depth;
pub mod insert_sizes;
pub mod mismatches;
pub mod overlaps;
pub mod printf;
pub mod ref_stats;
pub mod report;
mod report_tail;
pub mod targets;
pub mod tracker;

use crate::record::RecordRef;
use crate::record::layout::flags;

/// samtools' `nquals`: the quality columns of the mismatch table.
pub const QUALITY_SLOTS: usize = 257;
/// samtools' initial `nbases`: cycles the arrays hold before the first longer read.
pub const INITIAL_CYCLES: usize = 300;

/// The options a report is made with (samtools' `stats_info_t`).
#[derive(Clone, Debug)]
pub struct Settings {
    pub flag_require: u16,
    pub flag_filter: u16,
    /// `--GC-depth`, truncated to an integer as samtools stores it.
    pub gcd_bin_size: i32,
    /// `-i`: the largest insert size kept apart (larger ones count as this); 0 or less: no limit.
    pub max_insert: i32,
    /// `-q`: BWA's trimming quality.
    pub trim_quality: i32,
    /// `-m`: the share of insert sizes the averages use.
    pub main_bulk: f32,
    pub coverage: CoverageBins,
    /// `-l`: only reads of this length (-1: all).
    pub read_length: i32,
    /// `-p`
    pub remove_overlaps: bool,
    /// `-g`
    pub cov_threshold: i32,
    /// `-x`
    pub sparse: bool,
    /// `-r` was given: mismatches per cycle and the GC of the reference.
    pub has_reference: bool,
}

/// `-c min,max,step`, adjusted as samtools' `init_stat_structs` adjusts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoverageBins {
    pub min: i32,
    pub max: i32,
    pub step: i32,
    /// The number of bins, the two open-ended ones included.
    pub count: i32,
}

impl CoverageBins {
    /// From `-c`'s three numbers; `None` where samtools' allocation fails ("Out of memory").
    pub fn new(min: i32, max: i32, step: i32) -> Option<CoverageBins> {
        let span = max.wrapping_sub(min);
        let mut step = step;
        if step > span.wrapping_add(1) {
            step = span;
            if step <= 0 {
                step = 1;
            }
        }
        // samtools divides by a zero step and dies; refuse it instead of dividing.
        if step == 0 {
            return None;
        }
        let count = 3 + span / step;
        if count <= 0 {
            return None;
        }
        let max = min + (span / step + 1) * step - 1;
        Some(CoverageBins { min, max, step, count })
    }

    /// samtools' `coverage_idx`.
    pub fn index(&self, depth: i32) -> usize {
        if depth < self.min {
            0
        } else if depth > self.max {
            (self.count - 1) as usize
        } else {
            (1 + (depth - self.min) / self.step) as usize
        }
    }
}

/// Which fragment of its template a read is (samtools' `READ_ORDER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOrder {
    First,
    Last,
    /// Both or neither of READ1 and READ2 on a paired read.
    Other,
}

pub fn read_order(flag: u16) -> ReadOrder {
    if flag & flags::PAIRED == 0 {
        return ReadOrder::First;
    }
    match (flag & flags::READ1 != 0, flag & flags::READ2 != 0) {
        (true, false) => ReadOrder::First,
        (false, true) => ReadOrder::Last,
        _ => ReadOrder::Other,
    }
}

/// Neither secondary nor supplementary.
pub fn is_original(flag: u16) -> bool {
    flag & (flags::SECONDARY | flags::SUPPLEMENTARY) == 0
}

/// Paired, and neither the read nor its mate unmapped.
pub fn is_paired_and_mapped(flag: u16) -> bool {
    flag & flags::PAIRED != 0 && flag & (flags::UNMAP | flags::MUNMAP) == 0
}

/// The read's length with hard clips added back (samtools' `unclipped_length`).
pub fn unclipped_length(r: &RecordRef<'_>) -> usize {
    let hard: u32 = r
        .cigar()
        .filter(|&c| crate::record::cigar::op(c) == crate::record::cigar::HARD_CLIP)
        .map(crate::record::cigar::len)
        .sum();
    r.l_seq() + hard as usize
}

/// G and C bases (codes 2 and 4) in each packed byte of two bases.
const GC_PER_BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let (hi, lo) = (b >> 4, b & 0xf);
        t[b] = (hi == 2 || hi == 4) as u8 + (lo == 2 || lo == 4) as u8;
        b += 1;
    }
    t
};

/// How many G and C bases the read has (base codes 2 and 4).
pub fn gc_bases(r: &RecordRef<'_>) -> usize {
    let (packed, len) = (r.seq_packed(), r.l_seq());
    let whole: usize =
        packed[..len / 2].iter().map(|&b| usize::from(GC_PER_BYTE[b as usize])).sum();
    // An odd length leaves one base in the high half of the last byte.
    let last = if len % 2 == 1 { usize::from(matches!(packed[len / 2] >> 4, 2 | 4)) } else { 0 };
    whole + last
}

/// The reference bases a report may ask for (htslib's `faidx_fetch_seq64`).
pub trait ReferenceSource: Sync {
    /// The bases `beg..=end` (0-based) of sequence `name`, clamped to the sequence as htslib
    /// clamps them; `None` when the reference has no such sequence.
    fn fetch(&self, name: &[u8], beg: i64, end: i64) -> Option<Vec<u8>>;
}
