//! Why a CRAM block could not be decompressed by mdsam's own codecs: a method they do not
//! implement (the caller falls back to noodles) or data that does not decode.

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("unsupported block compression method {0}")]
    Unsupported(u8),
    #[error("corrupt compressed block: {0}")]
    Corrupt(String),
}

impl CodecError {
    pub fn corrupt(what: impl Into<String>) -> CodecError {
        CodecError::Corrupt(what.into())
    }
}
