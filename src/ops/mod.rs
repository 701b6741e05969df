//! What the samtools commands mean, on records only.

pub mod view;
