//! `merge`: what samtools 1.24's `bam_merge_core2` does to headers and records, on records only.
//!
//! - [`header`]: the output header built input by input, with each input's translation of
//!   reference ids and `@RG`/`@PG` IDs (`trans_tbl_init`);
//! - [`translate`]: a record rewritten through its input's translation (`bam_translate`);
//! - [`order`]: which of the inputs' current records comes next (`heap_lt`);
//!
//! Clashing IDs get suffixes from the seeded `lrand48` stream of [`crate::ops::drand48`].

pub mod header;
pub mod order;
pub mod translate;
