//! BAM: header and `block_size`-framed records to and from BGZF.

pub mod raw;
pub mod reader;
pub mod writer;

pub use reader::Reader;
pub use writer::{PositionTooLarge, Writer};
