//! samtools-compatible argument parsing.
