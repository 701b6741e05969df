//! Integration tests: one binary, one module per topic.

mod support;

/// The SAM simulator against the samtools 1.24 oracle.
mod simulate;

/// `sort`, `collate` and `index` against the samtools 1.24 oracle.
mod sort;
