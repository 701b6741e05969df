//! Building a BAI or CSI index from records in file order, byte-identical to `samtools index`
//! (BAI) and `samtools index -c` (CSI payload).
//!
//! This reproduces htslib's `hts_idx_push`, `hts_idx_finish`, `insert_to_b`, `insert_to_l`,
//! `update_loff` and `compress_binning` (`hts.c`), and writes with `idx_save_core`'s layout
//! (see [`super::bai`], [`super::csi`]).
//!
//! Per record, in file order (`push`):
//! 1. Unplaced reads (`tid < 0`) count as `[-1, 0)` and only bump `n_no_coor`; they must come last.
//! 2. A new reference must not have been seen before; within one, starts must not decrease.
//! 3. Placed records fill the linear-index windows `beg >> min_shift ..= (end−1) >> min_shift` that are
//!    still unset with the record's start offset.
//! 4. When the record's bin differs from the previous record's, the previous run becomes a chunk
//!    `(run start, this record's start)` of the previous bin. On a change of reference, the metadata
//!    pseudo-bin of the previous reference gets `(off_beg, off_end)` and `(n_mapped, n_unmapped)`.
//!
//! At the end (`finish`): close the last run and metadata with the file's end offset; fill the
//! linear index from the right; give every bin the linear offset of its left edge (`loffset`); merge
//! each bin whose chunks span less than 64 KiB of compressed file (`HTS_MIN_MARKER_DIST`) into its
//! parent, deepest level first; sort; join chunks that end in the block where the next starts.
//!
//! Bins are emitted in htslib's hash-table bucket order (see `khash`), which is what makes the bytes
//! identical. Virtual offsets must follow htslib's `bgzf_tell` convention: once a block has been read
//! to its end, the position is `(next block, 0)`; so the header's end (the first record's start) is
//! usually `(second block, 0)` and the file's end is the EOF block's offset `<< 16`.

use super::binning::Binning;
use super::khash::BinTable;
use super::reference::{Bin, Chunk, ReferenceIndex};
use super::{Bai, Csi, Index, IndexError};

/// Chunks spanning fewer compressed bytes than this are merged into the parent bin.
const MIN_MARKER_DISTANCE: u64 = 0x10000;

/// Which index to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// BAI: fixed binning (min_shift 14, depth 5) plus a linear index.
    Bai,
    /// CSI with the given binning.
    Csi(Binning),
}

impl Format {
    /// The CSI format samtools chooses (`samtools index -c`, `--write-index`): depth grown to fit the
    /// longest reference (`hts_adjust_csi_settings`). samtools' default `min_shift` is 14.
    pub fn csi_for_longest_reference(min_shift: u32, longest_reference: i64) -> Format {
        Format::Csi(Binning::csi_for_longest_reference(min_shift, longest_reference))
    }

    fn binning(self) -> Binning {
        match self {
            Format::Bai => Binning::BAI,
            Format::Csi(binning) => binning,
        }
    }
}

/// What the index needs to know about one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexedRecord {
    /// Reference id; negative for unplaced reads.
    pub tid: i32,
    /// 0-based leftmost position (`pos`).
    pub beg: i64,
    /// Exclusive end as `bam_endpos`: `pos` + reference length of the CIGAR, or `pos + 1` when
    /// unmapped or the CIGAR consumes no reference.
    pub end: i64,
    /// `FLAG & 0x4 == 0`.
    pub is_mapped: bool,
    /// Virtual offset where the record starts (`bgzf_tell` before reading or writing it).
    pub voffset_start: u64,
    /// Virtual offset just after the record.
    pub voffset_end: u64,
}

/// A bin under construction: its chunks and, once finished, its `loffset`.
#[derive(Clone, Debug, Default)]
struct BinEntry {
    loffset: u64,
    chunks: Vec<Chunk>,
}

/// The running state of `hts_idx_push` (htslib's `idx->z`).
#[derive(Clone, Debug)]
struct RunState {
    last_tid: i32,
    last_bin: u32,
    last_coor: i64,
    last_off: u64,
    save_tid: i32,
    save_bin: u32,
    save_off: u64,
    off_beg: u64,
    n_mapped: u64,
    n_unmapped: u64,
}

/// No bin yet (htslib's `0xffffffffu`).
const NO_BIN: u32 = u32::MAX;

/// Accumulates records in file order and produces the index `samtools index` would write.
#[derive(Clone, Debug)]
pub struct IndexBuilder {
    format: Format,
    binning: Binning,
    /// Per reference; `None` until the reference's first record (htslib's NULL `bidx`).
    bins: Vec<Option<BinTable<BinEntry>>>,
    /// Per reference; `u64::MAX` marks windows not yet set.
    linear: Vec<Vec<u64>>,
    n_no_coor: u64,
    run: Option<RunState>,
}

impl IndexBuilder {
    /// A builder for a header with `n_refs` references.
    pub fn new(n_refs: usize, format: Format) -> Self {
        IndexBuilder {
            format,
            binning: format.binning(),
            bins: (0..n_refs).map(|_| None).collect(),
            linear: vec![Vec::new(); n_refs],
            n_no_coor: 0,
            run: None,
        }
    }

    /// Adds the next record in file order. Errors are those `samtools index` stops on; after one,
    /// the builder's state is unspecified and it should be dropped.
    pub fn push(&mut self, record: &IndexedRecord) -> Result<(), IndexError> {
        let tid = record.tid;
        let (mut beg, mut end) = if tid < 0 { (-1, 0) } else { (record.beg, record.end) };
        let max_pos = self.binning.max_pos();
        if tid >= 0 && (beg > max_pos || end > max_pos) {
            return Err(IndexError::OutOfRange {
                format: if self.format == Format::Bai { "bai" } else { "csi" },
                beg,
                end,
                min_shift: self.binning.min_shift,
                depth: self.binning.depth,
            });
        }
        if let Ok(t) = usize::try_from(tid)
            && t >= self.bins.len()
        {
            self.bins.resize_with(t + 1, || None);
            self.linear.resize(t + 1, Vec::new());
        }
        // The first record's start is where the header ended (htslib's `offset0`).
        let run = self.run.get_or_insert(RunState {
            last_tid: -1,
            last_bin: NO_BIN,
            last_coor: 0xffff_ffff,
            last_off: record.voffset_start,
            save_tid: -1,
            save_bin: NO_BIN,
            save_off: record.voffset_start,
            off_beg: record.voffset_start,
            n_mapped: 0,
            n_unmapped: 0,
        });
        run.last_off = record.voffset_start;

        if run.last_tid != tid {
            if tid >= 0 && self.n_no_coor > 0 {
                return Err(IndexError::UnplacedNotAtEnd { tid });
            }
            if tid >= 0 && self.bins[tid as usize].is_some() {
                return Err(IndexError::ReferenceNotContiguous { tid });
            }
            run.last_tid = tid;
            run.last_bin = NO_BIN;
        } else if tid >= 0 && run.last_coor > beg {
            return Err(IndexError::Unsorted { tid, previous: run.last_coor, position: beg });
        }
        if end < beg {
            return Err(IndexError::EndBeforeStart { tid, beg, end });
        }

        if tid >= 0 {
            self.bins[tid as usize].get_or_insert_with(BinTable::default);
            beg = beg.max(0);
            if end <= 0 {
                end = 1;
            }
            fill_linear_windows(
                &mut self.linear[tid as usize],
                beg,
                end,
                run.last_off,
                self.binning.min_shift,
            );
        } else {
            self.n_no_coor += 1;
        }

        let bin = self.binning.reg2bin(beg, end);
        if run.last_bin != bin {
            if run.save_bin != NO_BIN {
                add_chunk(&mut self.bins, run.save_tid, run.save_bin, run.save_off, run.last_off);
            }
            if run.last_bin == NO_BIN && run.save_bin != NO_BIN {
                let meta = self.binning.metadata_bin();
                add_chunk(&mut self.bins, run.save_tid, meta, run.off_beg, run.last_off);
                add_chunk(&mut self.bins, run.save_tid, meta, run.n_mapped, run.n_unmapped);
                run.n_mapped = 0;
                run.n_unmapped = 0;
                run.off_beg = run.last_off;
            }
            run.save_off = run.last_off;
            run.save_bin = bin;
            run.last_bin = bin;
            run.save_tid = tid;
        }
        if record.is_mapped {
            run.n_mapped += 1;
        } else {
            run.n_unmapped += 1;
        }
        run.last_off = record.voffset_end;
        run.last_coor = beg;
        Ok(())
    }

    /// Closes the index at `file_end_voffset` (the virtual offset after the last record, before the
    /// EOF block) and returns it; [`Index::encode`] gives the file bytes.
    pub fn finish(mut self, file_end_voffset: u64) -> Index {
        if let Some(run) = self.run.take()
            && run.save_tid >= 0
        {
            let meta = self.binning.metadata_bin();
            add_chunk(&mut self.bins, run.save_tid, run.save_bin, run.save_off, file_end_voffset);
            add_chunk(&mut self.bins, run.save_tid, meta, run.off_beg, file_end_voffset);
            add_chunk(&mut self.bins, run.save_tid, meta, run.n_mapped, run.n_unmapped);
        }
        let binning = self.binning;
        let references: Vec<ReferenceIndex> = self
            .bins
            .into_iter()
            .zip(self.linear)
            .map(|(table, mut linear)| {
                fill_unset_windows(&mut linear);
                let bins = match table {
                    Some(mut table) => {
                        set_loffsets(&mut table, &linear, binning);
                        compress_binning(&mut table, binning);
                        table
                            .into_entries()
                            .into_iter()
                            .map(|(id, e)| Bin { id, loffset: e.loffset, chunks: e.chunks })
                            .collect()
                    }
                    None => Vec::new(),
                };
                match self.format {
                    Format::Bai => ReferenceIndex::with_bins_and_linear(bins, linear, binning),
                    Format::Csi(_) => ReferenceIndex::with_bins(bins),
                }
            })
            .collect();
        let n_no_coor = Some(self.n_no_coor);
        match self.format {
            Format::Bai => Index::Bai(Bai { references, n_no_coor }),
            Format::Csi(binning) => {
                Index::Csi(Csi { binning, aux: Vec::new(), references, n_no_coor })
            }
        }
    }
}

/// `insert_to_b`: append a chunk to `bin` of reference `tid` (creating the bin).
fn add_chunk(bins: &mut [Option<BinTable<BinEntry>>], tid: i32, bin: u32, start: u64, end: u64) {
    let Some(Some(table)) = usize::try_from(tid).ok().and_then(|t| bins.get_mut(t)) else {
        return;
    };
    table.entry(bin).chunks.push(Chunk { start, end });
}

/// `insert_to_l`: windows overlapped by `[beg, end)` that are still unset get `offset`.
fn fill_linear_windows(linear: &mut Vec<u64>, beg: i64, end: i64, offset: u64, min_shift: u32) {
    let first = (beg >> min_shift) as usize;
    let last = ((end - 1) >> min_shift) as usize;
    if linear.len() < last + 1 {
        linear.resize(last + 1, u64::MAX);
    }
    for window in &mut linear[first..=last] {
        if *window == u64::MAX {
            *window = offset;
        }
    }
}

/// First half of `update_loff`: unset windows take the value of the next window to the right.
fn fill_unset_windows(linear: &mut [u64]) {
    for i in (0..linear.len().saturating_sub(1)).rev() {
        if linear[i] == u64::MAX {
            linear[i] = linear[i + 1];
        }
    }
}

/// Second half of `update_loff`: each real bin's `loffset` is the window at its left edge.
fn set_loffsets(table: &mut BinTable<BinEntry>, linear: &[u64], binning: Binning) {
    for (bucket, id) in table.live_buckets() {
        let loffset = if id < binning.n_bins() {
            let window = binning.bottom_window(id);
            usize::try_from(window).ok().and_then(|w| linear.get(w)).copied().unwrap_or(0)
        } else {
            0
        };
        table.value_mut(bucket).loffset = loffset;
    }
}

/// `compress_binning`: fold small bins into their parents, then join same-block chunks.
fn compress_binning(table: &mut BinTable<BinEntry>, binning: Binning) {
    let n_bins = binning.n_bins();
    for level in (1..=binning.depth).rev() {
        let first_of_level = Binning::first_bin_of_level(level);
        for (bucket, id) in table.live_buckets() {
            if !table.is_live(bucket) || id >= n_bins || id < first_of_level {
                continue;
            }
            let entry = table.value_mut(bucket);
            if level < binning.depth && entry.chunks.len() > 1 {
                entry.chunks.sort_by_key(|c| c.start);
            }
            let (first, last) = (entry.chunks[0], entry.chunks[entry.chunks.len() - 1]);
            if (last.end >> 16).wrapping_sub(first.start >> 16) < MIN_MARKER_DISTANCE {
                let Some(parent) = table.find(Binning::parent(id)) else {
                    continue;
                };
                let moved = table.remove_bucket(bucket).expect("live bucket").chunks;
                table.value_mut(parent).chunks.extend(moved);
            }
        }
    }
    if let Some(root) = table.find(0) {
        table.value_mut(root).chunks.sort_by_key(|c| c.start);
    }
    for (bucket, id) in table.live_buckets() {
        if id < n_bins {
            join_same_block_chunks(&mut table.value_mut(bucket).chunks);
        }
    }
}

/// Chunks whose end lies in the block where the next chunk starts become one.
fn join_same_block_chunks(chunks: &mut Vec<Chunk>) {
    let mut kept = 0;
    for i in 1..chunks.len() {
        if chunks[kept].end >> 16 >= chunks[i].start >> 16 {
            chunks[kept].end = chunks[kept].end.max(chunks[i].end);
        } else {
            kept += 1;
            chunks[kept] = chunks[i];
        }
    }
    chunks.truncate(kept + 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::index::test_bam::{self, BamWalk};

    const BUILD_BAM: &[u8] = include_bytes!("../../../fixtures/index/build.bam");
    const BUILD_BAI: &[u8] = include_bytes!("../../../fixtures/index/build.bam.bai");
    const BUILD_CSI: &[u8] = include_bytes!("../../../fixtures/index/build.bam.csi");
    const SMALL_BAM: &[u8] = include_bytes!("../../../fixtures/index/small.bam");
    const SMALL_BAI: &[u8] = include_bytes!("../../../fixtures/index/small.bam.bai");
    const SMALL_CSI: &[u8] = include_bytes!("../../../fixtures/index/small.bam.csi");
    const PLACED_BAM: &[u8] = include_bytes!("../../../fixtures/index/placed.bam");
    const PLACED_BAI: &[u8] = include_bytes!("../../../fixtures/index/placed.bam.bai");
    const PLACED_CSI: &[u8] = include_bytes!("../../../fixtures/index/placed.bam.csi");

    fn build(walk: &BamWalk, format: Format) -> Index {
        let mut builder = IndexBuilder::new(walk.ref_lengths.len(), format);
        for record in &walk.records {
            builder.push(record).unwrap();
        }
        builder.finish(walk.end_voffset)
    }

    fn samtools_csi_format(walk: &BamWalk) -> Format {
        Format::csi_for_longest_reference(14, walk.ref_lengths.iter().copied().max().unwrap_or(0))
    }

    #[test]
    fn built_bai_is_byte_identical_to_samtools_index() {
        for (bam, bai) in [(BUILD_BAM, BUILD_BAI), (SMALL_BAM, SMALL_BAI), (PLACED_BAM, PLACED_BAI)]
        {
            let walk = test_bam::walk(bam);
            assert_eq!(build(&walk, Format::Bai).encode(), bai);
        }
    }

    #[test]
    fn built_csi_payload_is_byte_identical_to_samtools_index_c() {
        for (bam, csi) in [(BUILD_BAM, BUILD_CSI), (SMALL_BAM, SMALL_CSI), (PLACED_BAM, PLACED_CSI)]
        {
            let walk = test_bam::walk(bam);
            let Index::Csi(built) = build(&walk, samtools_csi_format(&walk)) else { panic!("csi") };
            assert_eq!(built.encode_payload(), super::super::csi::bgzf_decompress(csi).unwrap());
        }
    }

    #[test]
    fn big_bins_survive_and_small_bins_fold_into_parents() {
        let walk = test_bam::walk(BUILD_BAM);
        let index = build(&walk, Format::Bai);
        let chr_a = &index.references()[0];
        // Bin 9 holds a read at 100 and one at 2.5 Mbp: more than 64 KiB apart, so it stays.
        assert!(chr_a.bin(9).is_some());
        // chrC has no reads: no bins, no linear index.
        assert!(index.references()[2].bins().is_empty());
        assert_eq!(index.n_no_coor(), 20);
    }

    #[test]
    fn unsorted_positions_are_rejected() {
        let mut builder = IndexBuilder::new(1, Format::Bai);
        let record = |beg| IndexedRecord {
            tid: 0,
            beg,
            end: beg + 10,
            is_mapped: true,
            voffset_start: 0,
            voffset_end: 0,
        };
        builder.push(&record(100)).unwrap();
        let err = builder.push(&record(50)).unwrap_err();
        assert_eq!(err, IndexError::Unsorted { tid: 0, previous: 100, position: 50 });
        assert_eq!(err.to_string(), "unsorted positions on sequence #1: 101 followed by 51");
    }

    #[test]
    fn a_reference_seen_twice_or_after_unplaced_reads_is_rejected() {
        let record = |tid, beg| IndexedRecord {
            tid,
            beg,
            end: beg + 1,
            is_mapped: tid >= 0,
            voffset_start: 0,
            voffset_end: 0,
        };
        let mut builder = IndexBuilder::new(2, Format::Bai);
        builder.push(&record(0, 5)).unwrap();
        builder.push(&record(1, 5)).unwrap();
        assert_eq!(builder.push(&record(0, 9)), Err(IndexError::ReferenceNotContiguous { tid: 0 }));
        let mut builder = IndexBuilder::new(2, Format::Bai);
        builder.push(&record(-1, 0)).unwrap();
        assert_eq!(builder.push(&record(1, 5)), Err(IndexError::UnplacedNotAtEnd { tid: 1 }));
    }

    #[test]
    fn positions_beyond_the_bai_range_are_rejected() {
        let mut builder = IndexBuilder::new(1, Format::Bai);
        let record = IndexedRecord {
            tid: 0,
            beg: 1 << 29,
            end: (1 << 29) + 5,
            is_mapped: true,
            voffset_start: 0,
            voffset_end: 0,
        };
        assert!(matches!(builder.push(&record), Err(IndexError::OutOfRange { format: "bai", .. })));
    }

    #[test]
    fn only_unplaced_reads_give_an_index_with_just_n_no_coor() {
        let mut builder = IndexBuilder::new(1, Format::Bai);
        for i in 0..3 {
            let record = IndexedRecord {
                tid: -1,
                beg: -1,
                end: 0,
                is_mapped: false,
                voffset_start: i,
                voffset_end: i + 1,
            };
            builder.push(&record).unwrap();
        }
        let index = builder.finish(3);
        assert!(index.references()[0].bins().is_empty());
        assert_eq!(index.n_no_coor(), 3);
        assert_eq!(index.unplaced_start(), Some(0));
    }

    #[test]
    fn same_block_chunks_join() {
        let mut chunks = vec![
            Chunk { start: 1 << 16, end: 2 << 16 | 5 },
            Chunk { start: 2 << 16 | 9, end: 3 << 16 },
            Chunk { start: 5 << 16, end: 6 << 16 },
        ];
        join_same_block_chunks(&mut chunks);
        assert_eq!(
            chunks,
            vec![Chunk { start: 1 << 16, end: 3 << 16 }, Chunk { start: 5 << 16, end: 6 << 16 }]
        );
    }
}
