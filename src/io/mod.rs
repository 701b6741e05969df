//! Bytes ⇄ records.

pub mod index;
