//! What the samtools commands mean, on records only.

pub mod fixmate;
pub mod markdup;
pub mod view;
