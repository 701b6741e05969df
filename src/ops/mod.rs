//! What the samtools commands mean, on records only.

pub mod ampliconclip;
pub mod ampliconstats;
pub mod bam2fq;
pub mod baq;
pub mod calmd;
pub mod cat;
pub mod checksum;
pub mod collate;
pub mod consensus;
pub mod cram_size;
pub mod depad;
pub mod depth;
pub mod fixmate;
pub mod flagstat;
pub mod idxstats;
pub mod markdup;
pub mod merge;
pub mod mpileup;
pub mod posix_regex;
pub mod read_group;
pub mod reference;
pub mod reset;
pub mod rmdup;
pub mod sort;
pub mod stats;
pub mod view;
