//! Integration tests: one binary, one module per topic.

mod support;

/// The SAM simulator against the samtools 1.24 oracle.
mod simulate;

/// samtools' own test cases through the peer-suite runner.
mod peer_suite;

/// Run-time allocator selection and allocations per record.
mod allocator;
/// `view` against the samtools 1.24 oracle on simulated data.
mod differential_view;

/// `view` on the bad-input corpus `fixtures/bad/`.
mod bad_input;
/// `fixmate` against the oracle.
mod fixmate;
/// `sort`, `collate` and `index` against the samtools 1.24 oracle.
mod sort;

/// `markdup` against the oracle.
mod markdup;

/// mdsam installed as `samtools` runs a samtools shell script with identical results.
mod dropin;

/// A full filesystem: one clear error and no files left behind.
mod disk_full;

/// `markdup-pipeline` against the oracle's four-command recipe.
mod markdup_pipeline;
/// `--profile FILE` on every command.
mod profile;
/// Closed pipes end mdsam quietly.
mod signals;
