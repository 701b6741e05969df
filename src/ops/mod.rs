//! What the samtools commands mean, on records only.
