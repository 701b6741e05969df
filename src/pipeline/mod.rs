//! Wires io → ops → io and owns the threads: one rayon pool per command, passed down by
//! running the command inside it.

pub mod bam2fq;
pub mod bam2fq_outputs;
pub mod cat;
pub mod cat_cram;
pub mod checked_open;
pub mod checksum;
pub mod collate;
pub mod cram_region;
pub mod dict;
pub mod faidx;
pub mod fixmate;
pub mod flagstat;
pub mod head;
pub mod idxstats;
pub mod import;
pub mod index;
pub mod input_filter;
pub mod load;
pub mod markdup;
pub mod markdup_pipeline;
pub mod memory_limit;
pub mod merge;
pub mod prefetch;
pub mod quickcheck;
pub mod region;
pub mod simulate;
pub mod sink;
pub mod sort;
pub mod stats;
pub mod stats_reports;
pub mod threads;
pub mod view;
