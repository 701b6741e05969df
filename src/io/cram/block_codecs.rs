//! CRAM block decompression by method (spec §8.1 `compression method`): mdsam's own decoders
//! for the rANS codecs, the arithmetic coder and the name tokeniser, the compression crates for
//! gzip, bzip2 and xz. fqzcomp (7) is left to noodles ([`CodecError::Unsupported`]).

use std::io::Read;

use super::codec_error::CodecError;
use super::{arith_dynamic, rans_nx16, rans4x8_decode, tok3};

/// `src`, a block's data compressed with `method`, decompressed to exactly `raw_size` bytes.
pub fn decompress(method: u8, src: &[u8], raw_size: usize) -> Result<Vec<u8>, CodecError> {
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
