//! mdsam: a samtools-compatible SAM/BAM toolkit built around in-memory record lists.
//!
//! Data flows one way:
//! `bytes → io::bgzf → io::{bam,sam} → record::RecordStore → ops → io::{bam,sam} → io::bgzf → bytes`.
//!
//! - [`record`]: what a record is (layout, accessors, header, arena store). No I/O.
//! - [`io`]: bytes ⇄ records (BGZF, BAM, SAM, indexes, opening files atomically) and the side
//!   files commands read (FASTA, `.fai`, BED, name and value lists).
//! - [`ops`]: what the samtools commands mean, on records only.
//! - [`pipeline`]: wires io → ops → io and owns the threads.
//! - [`cli`]: samtools-compatible argument parsing into option structs; one file per command; it
//!   reads no files (`tests/layering.rs` checks the layers).
//! - [`progress`]: the progress bar on an interactive terminal (fed by the readers).
//! - [`simulate`]: a deterministic generator of realistic aligned SAM for tests and benchmarks; a
//!   test tool outside the data flow, using no other module.

pub mod alloc;
pub mod cli;
pub mod error;
pub mod io;
pub mod ops;
pub mod pipeline;
pub mod profile;
pub mod progress;
pub mod record;
pub mod simulate;
