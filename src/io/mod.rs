//! Bytes ⇄ records.
