//! The BAI index format: decode, validate, encode. Always binning `min_shift = 14`, `depth = 5`.
//!
//! File layout (SAMv1 §5.2; uncompressed, little-endian):
//!
//! | field        | type       | notes                                                  |
//! |--------------|------------|--------------------------------------------------------|
//! | `magic`      | char[4]    | `BAI\1`                                                |
//! | `n_ref`      | int32      | number of references                                   |
//! | references   | `n_ref` ×  | bins and linear index, see [`super::reference`]        |
//! | `n_no_coor`  | uint64     | optional: number of unplaced unmapped reads            |
//!
//! Decoding follows htslib's `idx_read` / `idx_read_core` (`hts.c`): a missing `n_no_coor` is
//! accepted, bytes after it are ignored, and every other short read is an error.

use super::IndexError;
use super::binning::Binning;
use super::reference::{Cursor, ReferenceIndex};

/// The BAI magic number.
pub const MAGIC: &[u8; 4] = b"BAI\x01";

/// A decoded BAI index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bai {
    pub references: Vec<ReferenceIndex>,
    /// The trailing count of unplaced unmapped reads; `None` when the file ends without it.
    pub n_no_coor: Option<u64>,
}

impl Bai {
    /// Decodes a `.bai` file's bytes (already decompressed, if it was BGZF).
    pub fn decode(bytes: &[u8]) -> Result<Bai, IndexError> {
        let mut cursor = Cursor::new(bytes);
        let magic = cursor.take(4, "magic")?;
        if magic != MAGIC {
            return Err(IndexError::BadMagic { found: magic.try_into().expect("4 bytes") });
        }
        let n_ref = cursor.count("n_ref")?;
        let references = (0..n_ref)
            .map(|tid| ReferenceIndex::decode(&mut cursor, tid, false, Binning::BAI))
            .collect::<Result<Vec<_>, _>>()?;
        let n_no_coor = cursor.optional_u64();
        Ok(Bai { references, n_no_coor })
    }

    /// The `.bai` file bytes (as `samtools index` writes them, uncompressed).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.references.len() as i32).to_le_bytes());
        for reference in &self.references {
            reference.encode(&mut out, false);
        }
        if let Some(n) = self.n_no_coor {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL_BAI: &[u8] = include_bytes!("../../../fixtures/index/small.bam.bai");
    const BUILD_BAI: &[u8] = include_bytes!("../../../fixtures/index/build.bam.bai");

    #[test]
    fn samtools_bai_files_round_trip_byte_for_byte() {
        for bytes in [SMALL_BAI, BUILD_BAI] {
            let bai = Bai::decode(bytes).unwrap();
            assert_eq!(bai.encode(), bytes);
        }
    }

    #[test]
    fn small_bai_has_metadata_matching_idxstats() {
        // samtools idxstats small.bam: ref1 26 mapped, ref2 6, ref3_unused 0, 2 unplaced.
        let bai = Bai::decode(SMALL_BAI).unwrap();
        assert_eq!(bai.references.len(), 3);
        let mapped: Vec<u64> = bai
            .references
            .iter()
            .map(|r| r.metadata(Binning::BAI).map_or(0, |m| m.n_mapped))
            .collect();
        assert_eq!(mapped, vec![26, 6, 0]);
        assert_eq!(bai.n_no_coor, Some(2));
    }

    #[test]
    fn a_missing_n_no_coor_is_accepted() {
        let bai = Bai::decode(&SMALL_BAI[..SMALL_BAI.len() - 8]).unwrap();
        assert_eq!(bai.n_no_coor, None);
    }

    #[test]
    fn truncation_inside_a_reference_is_an_error_naming_the_field() {
        let err = Bai::decode(&SMALL_BAI[..40]).unwrap_err();
        assert!(matches!(err, IndexError::Truncated { .. }), "{err}");
        assert!(!err.to_string().contains('\n'));
    }

    #[test]
    fn wrong_magic_and_negative_counts_are_errors() {
        assert!(matches!(Bai::decode(b"BAM\x01\0\0\0\0"), Err(IndexError::BadMagic { .. })));
        let mut negative = MAGIC.to_vec();
        negative.extend_from_slice(&(-1i32).to_le_bytes());
        assert!(matches!(
            Bai::decode(&negative),
            Err(IndexError::NegativeCount { what: "n_ref", .. })
        ));
    }
}
