//! Bytes ⇄ records: BGZF, BAM, SAM, indexes, and opening inputs and outputs.

pub mod background;
pub mod bam;
pub mod bgzf;
pub mod fasta;
pub mod format;
pub mod index;
pub mod input;
pub mod open;
pub mod output;
pub mod recycle;
pub mod sam;
pub mod stream;
pub mod tempfiles;
#[cfg(test)]
pub(crate) mod test_sink;
