//! What a record *is*: the BAM byte layout, zero-copy accessors, aux fields, CIGAR, the header and
//! the arena store. Uses nothing else in mdsam; no I/O, no threads.

pub mod aux;
#[cfg(test)]
pub mod build;
pub mod cigar;
pub mod edit;
pub mod find;
pub mod header;
pub mod header_checks;
pub mod layout;
pub mod long_cigar;
pub mod prefetch;
pub mod store;
pub mod view;

pub use header::Header;
pub use store::{Batch, RecordIdx, RecordStore, Verdict};
pub use view::RecordRef;
