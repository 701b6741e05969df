//! Integration tests: one binary, one module per topic.

mod support;

/// The SAM simulator against the samtools 1.24 oracle.
mod simulate;

/// samtools' own test cases through the peer-suite runner.
mod peer_suite;

/// Run-time allocator selection and allocations per record.
mod allocator;
