//! CRAM 3.1's name tokeniser decoder (block method 8).

use super::codec_error::CodecError;

pub fn decode(_src: &[u8], _raw_size: usize) -> Result<Vec<u8>, CodecError> {
    Err(CodecError::Unsupported(8))
}
