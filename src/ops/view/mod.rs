//! `samtools view`: record filters used by the view command.
pub mod expr;
