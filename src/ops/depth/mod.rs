//! Per-position read depth over coordinate-sorted records: `samtools depth`'s sweep, and the
//! pileup counts `coverage` and `bedcov` take from htslib's pileup, computed without one.

pub mod bedcov;
pub mod coverage;
pub mod histogram;
pub mod pileup_cap;
pub mod positions;
pub mod printf_g;
pub mod sweep;

pub use positions::{BedMask, PositionRing};
