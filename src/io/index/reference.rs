//! One reference's part of a BAI or CSI index: its bins (with chunks) and, for BAI, its linear index;
//! plus the little-endian cursor both formats decode with.
//!
//! Per-reference layout (SAMv1 §5.2 for BAI, CSIv1 §1 for CSI; all integers little-endian):
//!
//! | field        | type     | notes                                                         |
//! |--------------|----------|---------------------------------------------------------------|
//! | `n_bin`      | int32    | number of distinct bins                                       |
//! | `bin`        | uint32   | repeated `n_bin` times from here …                            |
//! | `loffset`    | uint64   | CSI only: virtual offset of the first record overlapping the bin |
//! | `n_chunk`    | int32    |                                                               |
//! | `chunk_beg`  | uint64   | virtual offsets, `n_chunk` pairs                              |
//! | `chunk_end`  | uint64   | … to here                                                     |
//! | `n_intv`     | int32    | BAI only: linear index size                                   |
//! | `ioffset`    | uint64   | BAI only: `n_intv` smallest offsets per 16 kbp window         |
//!
//! The pseudo-bin `n_bins + 1` (37450 for BAI) has two "chunks": `(off_beg, off_end)` of the
//! reference's records and `(n_mapped, n_unmapped)`.
//!
//! On load, htslib (`idx_read_core` + `update_loff`) fills holes in a BAI linear index from the right
//! and gives each BAI bin the linear-index offset of its leftmost window as `loffset`; [`ReferenceIndex`]
//! does the same so queries match, while keeping the stored linear index for re-encoding.

use std::collections::HashMap;

use super::IndexError;
use super::binning::Binning;

/// A range of BGZF virtual offsets (`coffset << 16 | uoffset`), `start` inclusive, `end` exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Chunk {
    pub start: u64,
    pub end: u64,
}

/// One bin: its number, its `loffset` (stored in CSI, derived from the linear index for BAI) and chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bin {
    pub id: u32,
    pub loffset: u64,
    pub chunks: Vec<Chunk>,
}

/// What the metadata pseudo-bin says about one reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceMetadata {
    /// Virtual offset where the reference's records start.
    pub start: u64,
    /// Virtual offset just after its last record.
    pub end: u64,
    pub n_mapped: u64,
    pub n_unmapped: u64,
}

/// Bins in file order plus the linear index (empty for CSI).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReferenceIndex {
    bins: Vec<Bin>,
    /// The linear index exactly as stored (BAI only).
    linear: Vec<u64>,
    /// The linear index with holes filled the way htslib does on load, used by queries.
    filled_linear: Vec<u64>,
    position_of_bin: HashMap<u32, usize>,
}

impl ReferenceIndex {
    /// A CSI reference: bins carry their own `loffset`; there is no linear index.
    pub fn with_bins(bins: Vec<Bin>) -> Self {
        let position_of_bin = bins.iter().enumerate().map(|(i, b)| (b.id, i)).collect();
        ReferenceIndex { bins, linear: Vec::new(), filled_linear: Vec::new(), position_of_bin }
    }

    /// A BAI reference: fills linear-index holes and derives each real bin's `loffset` from the
    /// window at its left edge, as htslib's loader does.
    pub fn with_bins_and_linear(mut bins: Vec<Bin>, linear: Vec<u64>, binning: Binning) -> Self {
        let filled_linear = fill_linear_holes(&linear);
        for bin in &mut bins {
            bin.loffset = if bin.id < binning.n_bins() {
                let window = binning.bottom_window(bin.id);
                usize::try_from(window)
                    .ok()
                    .and_then(|w| filled_linear.get(w))
                    .copied()
                    .unwrap_or(0)
            } else {
                0
            };
        }
        let position_of_bin = bins.iter().enumerate().map(|(i, b)| (b.id, i)).collect();
        ReferenceIndex { bins, linear, filled_linear, position_of_bin }
    }

    /// Bins in the order they are stored.
    pub fn bins(&self) -> &[Bin] {
        &self.bins
    }

    pub fn bin(&self, id: u32) -> Option<&Bin> {
        self.position_of_bin.get(&id).map(|&i| &self.bins[i])
    }

    /// The linear index as stored (empty for CSI).
    pub fn linear(&self) -> &[u64] {
        &self.linear
    }

    /// The linear index as queries use it (holes filled).
    pub(crate) fn query_linear(&self) -> &[u64] {
        &self.filled_linear
    }

    /// The metadata pseudo-bin's content, when present with its two pairs.
    pub fn metadata(&self, binning: Binning) -> Option<ReferenceMetadata> {
        let bin = self.bin(binning.metadata_bin())?;
        match bin.chunks.as_slice() {
            [span, counts, ..] => Some(ReferenceMetadata {
                start: span.start,
                end: span.end,
                n_mapped: counts.start,
                n_unmapped: counts.end,
            }),
            _ => None,
        }
    }

    /// Decodes one reference section; `csi` selects per-bin `loffset` and no linear index.
    pub(crate) fn decode(
        cursor: &mut Cursor<'_>,
        tid: usize,
        csi: bool,
        binning: Binning,
    ) -> Result<Self, IndexError> {
        let n_bin = cursor.count("n_bin")?;
        let mut bins = Vec::with_capacity(n_bin.min(cursor.remaining() / 8));
        let mut seen = HashMap::with_capacity(bins.capacity());
        for _ in 0..n_bin {
            let id = cursor.u32("bin")?;
            if seen.insert(id, ()).is_some() {
                return Err(IndexError::DuplicateBin { tid, bin: id });
            }
            let loffset = if csi { cursor.u64("loffset")? } else { 0 };
            let n_chunk = cursor.count("n_chunk")?;
            cursor.ensure(n_chunk.saturating_mul(16), "chunks")?;
            let chunks = (0..n_chunk)
                .map(|_| Ok(Chunk { start: cursor.u64("chunk")?, end: cursor.u64("chunk")? }))
                .collect::<Result<_, _>>()?;
            bins.push(Bin { id, loffset, chunks });
        }
        if csi {
            return Ok(ReferenceIndex::with_bins(bins));
        }
        let n_intv = cursor.count("n_intv")?;
        cursor.ensure(n_intv.saturating_mul(8), "linear index")?;
        let linear = (0..n_intv).map(|_| cursor.u64("ioffset")).collect::<Result<_, _>>()?;
        Ok(ReferenceIndex::with_bins_and_linear(bins, linear, binning))
    }

    /// Appends this reference section (the inverse of [`ReferenceIndex::decode`]).
    pub(crate) fn encode(&self, out: &mut Vec<u8>, csi: bool) {
        out.extend_from_slice(&(self.bins.len() as i32).to_le_bytes());
        for bin in &self.bins {
            out.extend_from_slice(&bin.id.to_le_bytes());
            if csi {
                out.extend_from_slice(&bin.loffset.to_le_bytes());
            }
            out.extend_from_slice(&(bin.chunks.len() as i32).to_le_bytes());
            for chunk in &bin.chunks {
                out.extend_from_slice(&chunk.start.to_le_bytes());
                out.extend_from_slice(&chunk.end.to_le_bytes());
            }
        }
        if !csi {
            out.extend_from_slice(&(self.linear.len() as i32).to_le_bytes());
            for offset in &self.linear {
                out.extend_from_slice(&offset.to_le_bytes());
            }
        }
    }
}

/// htslib's load-time repair of old linear indexes: leading zeros stay, later zeros (and unset
/// `u64::MAX` entries) take the value of the next entry to the right.
fn fill_linear_holes(linear: &[u64]) -> Vec<u64> {
    let mut filled = linear.to_vec();
    let first_nonzero = filled.iter().position(|&o| o != 0).unwrap_or(filled.len());
    for j in (first_nonzero + 1..filled.len()).rev() {
        if filled[j - 1] == 0 {
            filled[j - 1] = filled[j];
        }
    }
    for j in (0..filled.len().saturating_sub(1)).rev() {
        if filled[j] == u64::MAX {
            filled[j] = filled[j + 1];
        }
    }
    filled
}

/// A little-endian reader over index bytes whose errors name the field and byte offset.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, position: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    fn ensure(&self, n: usize, what: &'static str) -> Result<(), IndexError> {
        if self.remaining() < n {
            Err(IndexError::Truncated { what, offset: self.position })
        } else {
            Ok(())
        }
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], IndexError> {
        self.ensure(n, what)?;
        let slice = &self.bytes[self.position..self.position + n];
        self.position += n;
        Ok(slice)
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, IndexError> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    pub(crate) fn i32(&mut self, what: &'static str) -> Result<i32, IndexError> {
        Ok(i32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, IndexError> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    /// An int32 count that must not be negative.
    pub(crate) fn count(&mut self, what: &'static str) -> Result<usize, IndexError> {
        let offset = self.position;
        let value = self.i32(what)?;
        usize::try_from(value).map_err(|_| IndexError::NegativeCount { what, value, offset })
    }

    /// The trailing `n_no_coor`, which htslib treats as optional (old files lack it).
    pub(crate) fn optional_u64(&mut self) -> Option<u64> {
        self.u64("n_no_coor").ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(id: u32, chunks: &[(u64, u64)]) -> Bin {
        Bin {
            id,
            loffset: 0,
            chunks: chunks.iter().map(|&(start, end)| Chunk { start, end }).collect(),
        }
    }

    #[test]
    fn bai_bins_take_loffset_from_the_window_at_their_left_edge() {
        let reference = ReferenceIndex::with_bins_and_linear(
            vec![bin(4682, &[(70, 80)]), bin(585, &[(10, 20)]), bin(37450, &[(10, 80), (3, 0)])],
            vec![10, 70],
            Binning::BAI,
        );
        assert_eq!(reference.bin(4682).unwrap().loffset, 70);
        assert_eq!(reference.bin(585).unwrap().loffset, 10);
        assert_eq!(reference.bin(37450).unwrap().loffset, 0);
        let meta = reference.metadata(Binning::BAI).unwrap();
        assert_eq!((meta.start, meta.end, meta.n_mapped, meta.n_unmapped), (10, 80, 3, 0));
    }

    #[test]
    fn zero_linear_entries_after_the_first_offset_are_filled_from_the_right() {
        assert_eq!(fill_linear_holes(&[0, 0, 5, 0, 0, 9]), vec![0, 0, 5, 9, 9, 9]);
        assert_eq!(fill_linear_holes(&[u64::MAX, 4]), vec![4, 4]);
    }

    #[test]
    fn a_reference_section_round_trips_for_both_formats() {
        for csi in [false, true] {
            let reference = if csi {
                ReferenceIndex::with_bins(vec![Bin {
                    id: 9,
                    loffset: 42,
                    chunks: vec![Chunk { start: 1, end: 2 }],
                }])
            } else {
                ReferenceIndex::with_bins_and_linear(
                    vec![bin(4681, &[(1, 2)])],
                    vec![1],
                    Binning::BAI,
                )
            };
            let mut bytes = Vec::new();
            reference.encode(&mut bytes, csi);
            let decoded =
                ReferenceIndex::decode(&mut Cursor::new(&bytes), 0, csi, Binning::BAI).unwrap();
            assert_eq!(decoded, reference);
        }
    }

    #[test]
    fn a_duplicate_bin_is_an_error() {
        let mut bytes = Vec::new();
        ReferenceIndex::with_bins(vec![bin(3, &[]), bin(3, &[])]).encode(&mut bytes, true);
        let err =
            ReferenceIndex::decode(&mut Cursor::new(&bytes), 2, true, Binning::BAI).unwrap_err();
        assert_eq!(err, IndexError::DuplicateBin { tid: 2, bin: 3 });
    }

    #[test]
    fn a_huge_chunk_count_is_reported_as_truncation_without_allocating() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&1i32.to_le_bytes());
        bytes.extend_from_slice(&5u32.to_le_bytes());
        bytes.extend_from_slice(&i32::MAX.to_le_bytes());
        let err =
            ReferenceIndex::decode(&mut Cursor::new(&bytes), 0, false, Binning::BAI).unwrap_err();
        assert!(matches!(err, IndexError::Truncated { what: "chunks", .. }));
    }
}
