//! The CSI index format: decode, validate, encode. A CSI file is BGZF-compressed; its binning scheme
//! (`min_shift`, `depth`) is stored in the header and bins carry their own `loffset` instead of a
//! linear index.
//!
//! Decompressed layout (CSIv1 §1; little-endian):
//!
//! | field        | type       | notes                                                  |
//! |--------------|------------|--------------------------------------------------------|
//! | `magic`      | char[4]    | `CSI\1`                                                |
//! | `min_shift`  | int32      | bottom-level bin width is `2^min_shift`                |
//! | `depth`      | int32      | levels below the root                                  |
//! | `l_aux`      | int32      | length of `aux` (0 for BAM; tabix puts its header here)|
//! | `aux`        | uint8[l_aux] |                                                      |
//! | `n_ref`      | int32      | number of references                                   |
//! | references   | `n_ref` ×  | bins with `loffset`, see [`super::reference`]          |
//! | `n_no_coor`  | uint64     | optional: number of unplaced unmapped reads            |
//!
//! Decoding follows htslib's `idx_read` / `idx_read_core` (`hts.c`). Encoding writes the payload
//! and frames it as htslib's `bgzf_write` + `bgzf_close` do, with the project's BGZF block writer
//! ([`crate::io::bgzf::block`]): blocks of at most 0xff00 input bytes, then the 28-byte EOF block.
//! The deflate stream comes from libdeflate at samtools' default level (libdeflate's 7 under a
//! libdeflate build), so compressed bytes can differ from a zlib-built samtools; the decompressed
//! payload is identical.

use std::io::Read;

use super::IndexError;
use super::binning::Binning;
use super::reference::{Cursor, ReferenceIndex};
use crate::io::bgzf::block::{BLOCK_DATA_MAX, Deflater, EOF_BLOCK};

/// The CSI magic number (inside the BGZF stream).
pub const MAGIC: &[u8; 4] = b"CSI\x01";

/// The largest depth htslib accepts before bin numbers overflow.
const MAX_DEPTH: i32 = 9;

/// A decoded CSI index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csi {
    pub binning: Binning,
    pub aux: Vec<u8>,
    pub references: Vec<ReferenceIndex>,
    /// The trailing count of unplaced unmapped reads; `None` when the file ends without it.
    pub n_no_coor: Option<u64>,
}

impl Csi {
    /// Decodes the decompressed CSI payload (starting with `CSI\1`).
    pub fn decode(payload: &[u8]) -> Result<Csi, IndexError> {
        let mut cursor = Cursor::new(payload);
        let magic = cursor.take(4, "magic")?;
        if magic != MAGIC {
            return Err(IndexError::BadMagic { found: magic.try_into().expect("4 bytes") });
        }
        let min_shift = cursor.i32("min_shift")?;
        let depth = cursor.i32("depth")?;
        if !(0..=MAX_DEPTH).contains(&depth)
            || !(0..64).contains(&min_shift)
            || min_shift + 3 * depth >= 63
        {
            return Err(IndexError::BadBinning { min_shift, depth });
        }
        let binning = Binning { min_shift: min_shift as u32, depth: depth as u32 };
        let l_aux = cursor.u32("l_aux")? as usize;
        let aux = cursor.take(l_aux, "aux")?.to_vec();
        let n_ref = cursor.count("n_ref")?;
        let references = (0..n_ref)
            .map(|tid| ReferenceIndex::decode(&mut cursor, tid, true, binning))
            .collect::<Result<Vec<_>, _>>()?;
        let n_no_coor = cursor.optional_u64();
        Ok(Csi { binning, aux, references, n_no_coor })
    }

    /// The uncompressed payload (what `gzip -dc file.csi` shows).
    pub fn encode_payload(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.binning.min_shift as i32).to_le_bytes());
        out.extend_from_slice(&(self.binning.depth as i32).to_le_bytes());
        out.extend_from_slice(&(self.aux.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.aux);
        out.extend_from_slice(&(self.references.len() as i32).to_le_bytes());
        for reference in &self.references {
            reference.encode(&mut out, true);
        }
        if let Some(n) = self.n_no_coor {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out
    }

    /// The `.csi` file bytes: the payload in BGZF blocks, then the EOF block.
    pub fn encode(&self) -> Vec<u8> {
        bgzf_compress(&self.encode_payload())
    }
}

/// Inflates a BGZF (or any multi-member gzip) stream.
pub(crate) fn bgzf_decompress(bytes: &[u8]) -> Result<Vec<u8>, IndexError> {
    let mut payload = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut payload)
        .map_err(|e| IndexError::Decompress(e.to_string()))?;
    Ok(payload)
}

/// Frames `payload` as htslib's BGZF writer does, ending with the EOF block.
pub(crate) fn bgzf_compress(payload: &[u8]) -> Vec<u8> {
    // samtools index writes at its default level (-1).
    let mut deflater = Deflater::new(-1);
    let mut out = Vec::new();
    for block in payload.chunks(BLOCK_DATA_MAX) {
        deflater.deflate_into(block, &mut out);
    }
    out.extend_from_slice(&EOF_BLOCK);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL_CSI: &[u8] = include_bytes!("../../../fixtures/index/small.bam.csi");
    const BUILD_CSI: &[u8] = include_bytes!("../../../fixtures/index/build.bam.csi");

    #[test]
    fn samtools_csi_payloads_round_trip_byte_for_byte() {
        for bytes in [SMALL_CSI, BUILD_CSI] {
            let payload = bgzf_decompress(bytes).unwrap();
            let csi = Csi::decode(&payload).unwrap();
            assert_eq!(csi.encode_payload(), payload);
            assert_eq!(bgzf_decompress(&csi.encode()).unwrap(), payload);
        }
    }

    #[test]
    fn samtools_picks_depth_from_the_longest_reference() {
        let small = Csi::decode(&bgzf_decompress(SMALL_CSI).unwrap()).unwrap();
        assert_eq!(small.binning, Binning { min_shift: 14, depth: 0 });
        let build = Csi::decode(&bgzf_decompress(BUILD_CSI).unwrap()).unwrap();
        assert_eq!(build.binning, Binning { min_shift: 14, depth: 3 });
        assert_eq!(build.n_no_coor, Some(20));
    }

    #[test]
    fn encoded_files_end_with_the_bgzf_eof_block() {
        let csi = Csi::decode(&bgzf_decompress(SMALL_CSI).unwrap()).unwrap();
        assert!(csi.encode().ends_with(&EOF_BLOCK));
        assert!(SMALL_CSI.ends_with(&EOF_BLOCK));
        // This fixture's samtools deflated with libdeflate too: the framing matches it byte for byte.
        assert!(csi.encode() == SMALL_CSI);
    }

    #[test]
    fn large_payloads_split_into_0xff00_byte_blocks() {
        let payload: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let framed = bgzf_compress(&payload);
        assert_eq!(bgzf_decompress(&framed).unwrap(), payload);
        let block_sizes: Vec<u32> = {
            let mut sizes = Vec::new();
            let mut at = 0;
            while at < framed.len() {
                let bsize = u16::from_le_bytes([framed[at + 16], framed[at + 17]]) as usize + 1;
                sizes.push(u32::from_le_bytes(
                    framed[at + bsize - 4..at + bsize].try_into().unwrap(),
                ));
                at += bsize;
            }
            sizes
        };
        assert_eq!(block_sizes, vec![0xff00, 0xff00, 0xff00, 200_000 - 3 * 0xff00, 0]);
    }

    #[test]
    fn corrupt_gzip_and_bad_binning_are_one_line_errors() {
        let err = bgzf_decompress(&SMALL_CSI[..30]).unwrap_err();
        assert!(matches!(err, IndexError::Decompress(_)));
        assert!(!err.to_string().contains('\n'));
        let mut payload = bgzf_decompress(SMALL_CSI).unwrap();
        payload[8..12].copy_from_slice(&12i32.to_le_bytes());
        assert!(matches!(Csi::decode(&payload), Err(IndexError::BadBinning { depth: 12, .. })));
    }
}
