//! CRAM block decompression by method (spec §8.1 `compression method`): mdsam's own decoders
//! for the rANS codecs, the arithmetic coder and the name tokeniser, the compression crates for
//! gzip, bzip2 and xz. fqzcomp (7) is left to noodles ([`CodecError::Unsupported`]).

use std::io::Read;

use super::codec_error::CodecError;
use super::{arith_dynamic, rans_nx16, rans4x8_decode, tok3};

/// `src`, a block's data compressed with `method`, decompressed to exactly `raw_size` bytes.
pub fn decompress(method: u8, src: &[u8], raw_size: usize) -> Result<Vec<u8>, CodecError> {
    // An empty block is empty whatever its method says (htslib's `cram_uncompress_block`):
    // htsjdk writes rANS blocks of zero bytes, which hold no codec header to read.
    if raw_size == 0 && (1..=MAX_METHOD).contains(&method) {
        return Ok(Vec::new());
    }
    let out = match method {
        0 => src.to_vec(),
        1 => read_all(flate2::read::MultiGzDecoder::new(src), raw_size, "gzip")?,
        2 => read_all(bzip2::read::MultiBzDecoder::new(src), raw_size, "bzip2")?,
        3 => read_all(lzma_rust2::XzReader::new(src, true), raw_size, "xz")?,
        4 => rans4x8_decode::decode(src, raw_size)?,
        5 => rans_nx16::decode(src, raw_size)?,
        6 => arith_dynamic::decode(src, raw_size)?,
        8 => tok3::decode(src, raw_size)?,
        other => return Err(CodecError::Unsupported(other)),
    };
    if out.len() != raw_size {
        return Err(CodecError::corrupt(format!(
            "method {method}: {} bytes decompressed, {raw_size} expected",
            out.len()
        )));
    }
    Ok(out)
}

/// The last method htslib knows (8, the name tokeniser); a block with a later one is refused
/// even when empty.
const MAX_METHOD: u8 = 8;

/// A stream read to its end, refusing to read more than one byte past `raw_size` (so that a
/// damaged length cannot make it inflate without bound).
fn read_all(reader: impl Read, raw_size: usize, what: &str) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(raw_size);
    reader
        .take(raw_size as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| CodecError::corrupt(format!("{what}: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_blocks_must_have_their_size() {
        assert_eq!(decompress(0, b"abc", 3).unwrap(), b"abc");
        assert!(matches!(decompress(0, b"abc", 4), Err(CodecError::Corrupt(_))));
        assert!(matches!(decompress(7, b"x", 1), Err(CodecError::Unsupported(7))));
        assert!(matches!(decompress(9, b"", 0), Err(CodecError::Unsupported(9))));
    }

    #[test]
    fn empty_blocks_are_empty_whatever_the_method() {
        for method in 0..=8 {
            assert_eq!(decompress(method, b"", 0).unwrap(), b"", "method {method}");
        }
        // A raw block's sizes must still agree.
        assert!(decompress(0, b"ab", 0).is_err());
    }

    #[test]
    fn gzip_bzip2_and_xz_blocks_decompress() {
        use std::io::Write;
        let text = b"CRAM block CRAM block CRAM block".repeat(50);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decompress(1, &gz, text.len()).unwrap(), text);
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        bz.write_all(&text).unwrap();
        let bz = bz.finish().unwrap();
        assert_eq!(decompress(2, &bz, text.len()).unwrap(), text);
        let mut xz =
            lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(6)).unwrap();
        xz.write_all(&text).unwrap();
        let xz = xz.finish().unwrap();
        assert_eq!(decompress(3, &xz, text.len()).unwrap(), text);
        // A stream longer than the block says is refused without inflating all of it.
        assert!(decompress(1, &gz, 10).is_err());
        assert!(decompress(1, &gz[..gz.len() / 2], text.len()).is_err());
    }

    #[test]
    fn random_bytes_never_panic_or_hang() {
        let mut seed = 0xdead_beef_u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..20_000 {
            let len = next() % 120;
            let src: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let raw_size = next() % 600;
            for method in [4, 5, 6, 8] {
                let _ = decompress(method, &src, raw_size);
            }
        }
    }
}
