//! FASTQ and FASTA as htslib writes and reads them for `samtools fastq`, `fasta` and `import`.

pub mod format;
pub mod parse;
pub mod style;
