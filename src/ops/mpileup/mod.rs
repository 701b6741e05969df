//! `samtools mpileup`'s meaning: htslib's pileup of each input ([`pileup`]), the read-pair
//! overlap tweak ([`overlap`]) and the text line ([`format`]).

pub mod basemod;
pub mod format;
pub mod overlap;
pub mod pileup;
