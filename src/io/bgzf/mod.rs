//! BGZF (SAMv1 §4.1): blocks, a parallel reader and a parallel writer with htslib's block layout.

pub mod block;
pub mod plain;
pub mod reader;
pub mod stage;
pub mod writer;

pub use reader::Reader;
pub use writer::Writer;
