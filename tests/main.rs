//! Integration tests: one binary, one module per topic.

mod support;

/// The SAM simulator against the samtools 1.24 oracle.
mod simulate;

/// `fixmate` against the oracle.
mod fixmate;

/// `markdup` against the oracle.
mod markdup;
