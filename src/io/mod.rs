//! Bytes ⇄ records: BGZF, BAM, SAM, indexes, and opening inputs and outputs; and the side files
//! commands read (FASTA references, `.fai` lists, BED intervals, word lists).

pub mod background;
pub mod bam;
pub mod bed;
pub mod bgzf;
pub mod capped_write;
pub mod cram;
pub mod cram_header;
pub mod detect;
pub mod direct_read;
pub mod direct_write;
pub mod eof_check;
pub mod fasta;
pub mod fastq;
pub mod format;
pub mod index;
pub mod input;
pub mod input_spec;
pub mod lists;
#[allow(unsafe_code)] // a SIGBUS handler (sigaction, write, _exit)
pub mod mapped_fault;
pub mod open;
pub mod open_files;
pub mod output;
pub mod output_spec;
pub mod pool_wait;
pub mod recycle;
pub mod remote;
pub mod sam;
pub mod sink;
pub mod stats_targets;
pub mod stream;
pub mod temp_names;
pub mod tempfiles;
#[cfg(test)]
pub(crate) mod test_sink;
