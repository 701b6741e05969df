//! BAI and CSI indexes: reading, region queries, building, and htslib region strings.
//!
//! | file            | concept                                                                  |
//! |-----------------|--------------------------------------------------------------------------|
//! | [`binning`]     | the bin hierarchy (`reg2bin`, levels, parents), BAI's and CSI's          |
//! | [`reference`]   | one reference's bins, chunks, linear index and metadata pseudo-bin      |
//! | [`bai`]         | the `.bai` file format (SAMv1 §5.2)                                      |
//! | [`csi`]         | the `.csi` file format (CSIv1), BGZF-framed                              |
//! | [`query`]       | region → chunks of virtual offsets, as htslib's `hts_itr_query`          |
//! | [`region`]      | `chr:beg-end` strings → 0-based half-open regions, as `hts_parse_region` |
//! | [`build`]       | records in file order → a BAI/CSI identical to `samtools index`          |
//! | `khash`         | htslib's hash-table bucket order, which fixes the bin order (and more)  |
//!
//! Coordinates are 0-based and half-open throughout; offsets are BGZF virtual offsets
//! (`compressed block offset << 16 | offset inside the uncompressed block`).
//!
//! ```text
//! bytes ──Index::from_bytes──▶ Index ──query(tid, beg, end)──▶ Vec<Chunk> ──▶ BAM reader seeks
//! "chr1:100-200" ──parse_region(text, refs)──▶ Region { tid, beg, end }
//! records ──IndexBuilder::push…finish──▶ Index ──encode()──▶ .bai / .csi bytes
//! ```

pub mod bai;
pub mod binning;
pub mod build;
pub mod csi;
pub(crate) mod khash;
pub mod query;
pub mod reference;
pub mod region;
#[cfg(test)]
mod test_bam;

pub use bai::Bai;
pub use binning::Binning;
pub use build::{Format, IndexBuilder, IndexedRecord};
pub use csi::Csi;
pub use reference::{Bin, Chunk, ReferenceIndex, ReferenceMetadata};
pub use region::{Region, RegionError, parse_region, parse_region_detailed, parse_region_with};

/// Why index bytes cannot be used, or why records cannot be indexed. Each message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error("index truncated: {what} missing at byte {offset}")]
    Truncated { what: &'static str, offset: usize },
    #[error("not a BAI or CSI index (magic {found:02x?})")]
    BadMagic { found: [u8; 4] },
    #[error("TBI (tabix) indexes are not supported for BAM")]
    Tabix,
    #[error("corrupt index: negative {what} ({value}) at byte {offset}")]
    NegativeCount { what: &'static str, value: i32, offset: usize },
    #[error("corrupt index: bin {bin} appears twice for reference #{tid}")]
    DuplicateBin { tid: usize, bin: u32 },
    #[error("corrupt CSI: unusable binning min_shift={min_shift} depth={depth}")]
    BadBinning { min_shift: i32, depth: i32 },
    #[error("corrupt BGZF in index: {0}")]
    Decompress(String),
    /// Positions as htslib prints them: sequence number and positions 1-based.
    #[error("unsorted positions on sequence #{}: {} followed by {}", .tid + 1, .previous + 1, .position + 1)]
    Unsorted { tid: i32, previous: i64, position: i64 },
    #[error("chromosome blocks not continuous: sequence #{} appears again", .tid + 1)]
    ReferenceNotContiguous { tid: i32 },
    #[error("unplaced reads not in a single block at the end: sequence #{} follows them", .tid + 1)]
    UnplacedNotAtEnd { tid: i32 },
    #[error("invalid record on sequence #{}: end {end} < begin {}", .tid + 1, .beg + 1)]
    EndBeforeStart { tid: i32, beg: i64, end: i64 },
    #[error(
        "region {beg}..{end} cannot be stored in a {format} index with min_shift={min_shift} depth={depth}"
    )]
    OutOfRange { format: &'static str, beg: i64, end: i64, min_shift: u32, depth: u32 },
}

impl From<IndexError> for std::io::Error {
    fn from(e: IndexError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}

/// A decoded index of either format, with one query API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Index {
    Bai(Bai),
    Csi(Csi),
}

impl Index {
    /// Decodes index file bytes, sniffing the format as htslib does: the bytes may be BGZF/gzip
    /// (always for CSI; htslib accepts it for BAI too) and then start with `BAI\1` or `CSI\1`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Index, IndexError> {
        let inflated;
        let payload = if bytes.starts_with(&[0x1f, 0x8b]) {
            inflated = csi::bgzf_decompress(bytes)?;
            inflated.as_slice()
        } else {
            bytes
        };
        match payload.get(..4) {
            Some(m) if m == bai::MAGIC => Ok(Index::Bai(Bai::decode(payload)?)),
            Some(m) if m == csi::MAGIC => Ok(Index::Csi(Csi::decode(payload)?)),
            Some(b"TBI\x01") => Err(IndexError::Tabix),
            Some(m) => Err(IndexError::BadMagic { found: m.try_into().expect("4 bytes") }),
            None => Err(IndexError::Truncated { what: "magic", offset: 0 }),
        }
    }

    /// The file bytes: a plain `.bai`, or a BGZF-framed `.csi`.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Index::Bai(bai) => bai.encode(),
            Index::Csi(csi) => csi.encode(),
        }
    }

    pub fn binning(&self) -> Binning {
        match self {
            Index::Bai(_) => Binning::BAI,
            Index::Csi(csi) => csi.binning,
        }
    }

    pub fn references(&self) -> &[ReferenceIndex] {
        match self {
            Index::Bai(bai) => &bai.references,
            Index::Csi(csi) => &csi.references,
        }
    }

    /// The number of unplaced unmapped reads (0 when the file does not say).
    pub fn n_no_coor(&self) -> u64 {
        match self {
            Index::Bai(bai) => bai.n_no_coor,
            Index::Csi(csi) => csi.n_no_coor,
        }
        .unwrap_or(0)
    }

    /// Mapped/unmapped counts and offsets for reference `tid`, from its metadata pseudo-bin.
    pub fn metadata(&self, tid: i32) -> Option<ReferenceMetadata> {
        let reference = self.references().get(usize::try_from(tid).ok()?)?;
        reference.metadata(self.binning())
    }

    /// The chunks holding every record that may overlap `[beg, end)` on `tid` (0-based, half-open),
    /// sorted and merged as `hts_itr_query` does. Empty for an unknown `tid` or an empty region.
    pub fn query(&self, tid: i32, beg: i64, end: i64) -> Vec<Chunk> {
        match usize::try_from(tid).ok().and_then(|t| self.references().get(t)) {
            Some(reference) => query::query_chunks(self.binning(), reference, beg, end),
            None => Vec::new(),
        }
    }

    /// Where the unplaced unmapped reads (region `*`) start: read from here to the end of file.
    /// `Some(0)` means "directly after the header"; `None` means samtools reports a failed query.
    pub fn unplaced_start(&self) -> Option<u64> {
        query::unplaced_start(self.binning(), self.references(), self.n_no_coor())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL_BAI: &[u8] = include_bytes!("../../../fixtures/index/small.bam.bai");
    const SMALL_CSI: &[u8] = include_bytes!("../../../fixtures/index/small.bam.csi");
    const BUILD_BAM: &[u8] = include_bytes!("../../../fixtures/index/build.bam");
    const BUILD_BAI: &[u8] = include_bytes!("../../../fixtures/index/build.bam.bai");
    const BUILD_CSI: &[u8] = include_bytes!("../../../fixtures/index/build.bam.csi");

    /// `samtools view -c build.bam REGION` (same with `-X build.bam build.bam.csi`), samtools 1.24.
    const SAMTOOLS_COUNTS: &[(&str, usize)] = &[
        ("chrA", 1680),
        ("chrA:1-1", 4),
        ("chrA:100-200", 2),
        ("chrA:16000-17000", 4),
        ("chrA:1000000-1000100", 1),
        ("chrA:1990000-2010000", 13),
        ("chrA:2500000-2500001", 1),
        ("chrA:2999000-3000000", 0),
        ("chrA:2900001", 36),
        ("chrB", 201),
        ("chrB:131000-131500", 3),
        ("chrB:400000-400010", 0),
        ("chrC", 0),
        ("chrD:100000-150000", 9),
        ("*", 20),
    ];

    /// What an iterator over `chunks` would return for `region`: records starting inside a chunk
    /// that overlap the region (or, for `*`, unplaced records from `unplaced_start` on).
    fn count_via_index(index: &Index, walk: &test_bam::BamWalk, region: &Region) -> usize {
        if region.is_unplaced() {
            let start = index.unplaced_start().expect("unplaced reads exist");
            return walk.records.iter().filter(|r| r.voffset_start >= start && r.tid < 0).count();
        }
        let chunks = index.query(region.tid, region.beg, region.end);
        walk.records
            .iter()
            .filter(|r| {
                chunks.iter().any(|c| c.start <= r.voffset_start && r.voffset_start < c.end)
            })
            .filter(|r| r.tid == region.tid && r.beg < region.end && r.end > region.beg)
            .count()
    }

    #[test]
    fn queries_find_exactly_the_records_samtools_view_counts() {
        let walk = test_bam::walk(BUILD_BAM);
        let refs: Vec<crate::record::header::Reference> = ["chrA", "chrB", "chrC", "chrD"]
            .iter()
            .zip(&walk.ref_lengths)
            .map(|(name, &len)| crate::record::header::Reference {
                name: name.as_bytes().to_vec(),
                len: len as u64,
            })
            .collect();
        for bytes in [BUILD_BAI, BUILD_CSI] {
            let index = Index::from_bytes(bytes).unwrap();
            for &(text, expected) in SAMTOOLS_COUNTS {
                let region = parse_region(text, &refs).unwrap();
                assert_eq!(count_via_index(&index, &walk, &region), expected, "{text}");
            }
        }
    }

    /// `iter->off` from htslib's `sam_itr_queryi` on build.bam with its .bai (identical with the .csi),
    /// printed by a small C program linked against libhts (see fixtures/README.md).
    const HTSLIB_CHUNKS: &[(&str, &[(u64, u64)])] = &[
        ("chrA", &[(12582912, 4695598132)]),
        ("chrA:1-1", &[(12582912, 12637466), (1564417660, 4695592158)]),
        ("chrA:100-200", &[(12582912, 12637466), (1564417660, 4695592158)]),
        ("chrA:16000-17000", &[(12582912, 12637466), (1564417660, 4695592158)]),
        ("chrA:1000000-1000100", &[(12583404, 12637466), (1564413882, 1564414980)]),
        ("chrA:1990000-2010000", &[(12583404, 12637466), (1564417660, 3127911110)]),
        ("chrA:2500000-2500001", &[(3127943680, 3127944542)]),
        ("chrA:2999000-3000000", &[]),
        ("chrA:2900001", &[(3127944168, 4695598132)]),
        ("chrB", &[(4695598132, 4695622662)]),
        ("chrB:131000-131500", &[(4695603622, 4695604972)]),
        ("chrB:400000-400010", &[(4695616196, 4695617172)]),
        ("chrC", &[]),
        ("chrD:100000-150000", &[(4695625224, 4695627054)]),
    ];

    #[test]
    fn query_chunks_equal_htslib_iterator_offsets() {
        let refs: Vec<crate::record::header::Reference> = ["chrA", "chrB", "chrC", "chrD"]
            .iter()
            .map(|name| crate::record::header::Reference {
                name: name.as_bytes().to_vec(),
                len: 3_000_000,
            })
            .collect();
        for bytes in [BUILD_BAI, BUILD_CSI] {
            let index = Index::from_bytes(bytes).unwrap();
            for &(text, expected) in HTSLIB_CHUNKS {
                let region = parse_region(text, &refs).unwrap();
                let chunks: Vec<(u64, u64)> = index
                    .query(region.tid, region.beg, region.end)
                    .iter()
                    .map(|c| (c.start, c.end))
                    .collect();
                assert_eq!(chunks, expected, "{text}");
            }
        }
    }

    #[test]
    fn small_file_queries_and_unplaced_start_equal_htslib() {
        for bytes in [SMALL_BAI, SMALL_CSI] {
            let index = Index::from_bytes(bytes).unwrap();
            assert_eq!(index.query(0, 9, 20), vec![Chunk { start: 63045632, end: 63048261 }]);
            assert_eq!(
                index.query(1, 0, Region::END_OF_REFERENCE),
                vec![Chunk { start: 63048261, end: 63048848 }]
            );
            assert_eq!(index.unplaced_start(), Some(63048848));
        }
    }

    #[test]
    fn a_narrow_query_reads_a_small_part_of_the_file() {
        let index = Index::from_bytes(BUILD_BAI).unwrap();
        let chunks = index.query(0, 1_000_000, 1_000_100);
        let span: u64 = chunks.iter().map(|c| (c.end >> 16) - (c.start >> 16)).sum();
        assert!(span < 20_000, "{chunks:?}");
        assert!(chunks.windows(2).all(|w| w[0].end >> 16 < w[1].start >> 16));
    }

    #[test]
    fn from_bytes_sniffs_plain_bai_and_bgzf_csi() {
        assert!(matches!(Index::from_bytes(SMALL_BAI), Ok(Index::Bai(_))));
        assert!(matches!(Index::from_bytes(SMALL_CSI), Ok(Index::Csi(_))));
    }

    #[test]
    fn a_bgzf_compressed_bai_is_accepted_like_htslib() {
        let compressed = csi::bgzf_compress(SMALL_BAI);
        assert_eq!(Index::from_bytes(&compressed).unwrap(), Index::from_bytes(SMALL_BAI).unwrap());
    }

    #[test]
    fn unknown_magic_tabix_and_empty_input_are_errors() {
        assert!(matches!(Index::from_bytes(b"BAM\x01...."), Err(IndexError::BadMagic { .. })));
        assert_eq!(Index::from_bytes(&csi::bgzf_compress(b"TBI\x01")), Err(IndexError::Tabix));
        assert!(matches!(Index::from_bytes(b""), Err(IndexError::Truncated { .. })));
    }

    #[test]
    fn both_formats_agree_on_metadata_and_unplaced_start() {
        let bai = Index::from_bytes(SMALL_BAI).unwrap();
        let csi = Index::from_bytes(SMALL_CSI).unwrap();
        for tid in 0..3 {
            assert_eq!(bai.metadata(tid), csi.metadata(tid));
        }
        assert_eq!(bai.unplaced_start(), csi.unplaced_start());
        assert!(bai.unplaced_start().is_some());
        assert_eq!(bai.n_no_coor(), 2);
    }

    #[test]
    fn queries_on_unknown_references_are_empty() {
        let bai = Index::from_bytes(SMALL_BAI).unwrap();
        assert!(bai.query(-1, 0, 10).is_empty());
        assert!(bai.query(3, 0, 10).is_empty());
        assert!(bai.query(2, 0, 10).is_empty());
        assert!(!bai.query(0, 0, 100).is_empty());
    }
}
