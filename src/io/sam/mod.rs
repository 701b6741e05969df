//! SAM text ⇄ raw BAM record bytes, transcoded directly (no intermediate record type).

pub mod format;
pub mod header;
pub mod located;
pub mod parse;
pub mod range;
pub mod reader;

pub use reader::Reader;
