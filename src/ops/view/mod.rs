//! `view`: the record filter, subsampling, expressions and the edits made to written records.

pub mod edit;
pub mod expr;
pub mod filter;
pub mod subsample;
