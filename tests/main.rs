//! Integration tests: one binary, one module per topic.

mod support;

/// The module layers of `src/` (record, ops, io, pipeline, cli) and what each may name.
mod layering;

/// The SAM simulator against the samtools 1.24 oracle.
mod simulate;

/// samtools' own test cases through the peer-suite runner.
mod peer_suite;

/// Run-time allocator selection and allocations per record.
mod allocator;
/// `view` against the samtools 1.24 oracle on simulated data.
mod differential_view;

/// SAM header and record text as htslib 1.24 reads it, case by case against the oracle.
mod sam_text;

/// Global options and getopt's messages against the oracle.
mod command_line;

/// `ampliconstats` and `bam2fq` against the oracle on simulated reads and a generated primer BED.
mod ampliconstats;
/// Every command on the bad-input corpus `fixtures/bad/`.
mod bad_input;
/// `fastq`, `fasta` and `import` against the oracle on simulated pairs, and round trips.
mod bam2fq;
/// `calmd -r`/`-A`/`-E` (BAQ) and `-C` against the oracle.
mod calmd_baq;
/// `cat` against the oracle: blocks copied as they are, headers merged, bad inputs.
mod cat;
/// `checksum` against the oracle: every report layout and option, merging, bad inputs.
mod checksum;
/// ISA-L beside libdeflate: same inflated bytes and errors; `deflate=isal` output and layout.
mod codecs;
/// CRAM input against the oracle: 3.0/3.1, embedded or external references, errors.
mod cram;
/// mdsam's CRAM block decoders against htscodecs and the oracle's CRAM blocks.
mod cram_codecs;
/// CRAM output with `embed_ref`/`no_ref`, reads past the reference end, refusals.
mod cram_embed;
/// CRAM output: decodes as samtools' own CRAM does, by option or name, `.crai`.
mod cram_output;
/// `depth`, `coverage` and `bedcov` against the oracle on a simulated sorted, indexed BAM.
mod depth;
/// `reset`, `addreplacerg`, `reheader` and `calmd` against the oracle on simulated data.
mod edit_commands;
/// `faidx`, `fqidx` and `dict` against the oracle on a generated reference and FASTQ.
mod faidx;
/// `fixmate` against the oracle.
mod fixmate;
/// `flagstat`'s three reports against the oracle, at several thread counts.
mod flagstat;
/// The inputs fuzzing found crashes with, through the library functions.
mod fuzz_regressions;
/// Positions above 2^31 (SAM only) against the oracle; BAM output refused.
mod large_positions;
/// `merge` against the oracle: orders, header merging, regions, lists, bad inputs.
mod merge;
/// `sort`, `collate` and `index` against the samtools 1.24 oracle.
mod sort;
/// `stats` against the oracle: every option and section, `-S` files, bad inputs.
mod stats;

/// `quickcheck`, `head` and `idxstats` against the oracle, damaged files included.
mod inspect;

/// `markdup` against the oracle.
mod markdup;

/// Commands mdsam lacks run the real samtools: argv, stdin and exit status pass through.
mod delegation;
/// mdsam installed as `samtools` runs a samtools shell script with identical results.
mod dropin;

/// Large outputs written past the page cache hold the same bytes as buffered ones.
mod direct_io;
/// A full filesystem: one clear error and no files left behind.
mod disk_full;

/// `markdup-pipeline` against the oracle's four-command recipe.
mod markdup_pipeline;
/// `--profile FILE` on every command.
mod profile;
/// Closed pipes end mdsam quietly.
mod signals;

/// `--help`, man pages and bash completion generated from one definition.
mod docs;
/// `--max-memory` as a bound on peak memory, and the 20 M-read soak (ignored by default).
mod memory_budget;
/// `--metrics` (Picard DuplicationMetrics) parsed by the real MultiQC.
mod metrics;
/// The progress bar on a real terminal (tmux) and nothing extra on a redirected stderr.
mod progress;
/// `workflow/Snakefile` under the real Snakemake, with mdsam and with samtools.
mod snakemake;

/// CRAM decoding by mdsam's own decoder against the oracle, and commands that need no reference.
mod cram_decoder;

/// CIGARs of more than 65,535 operations (BAM placeholder + CG tag) against the oracle.
mod long_cigar;
/// `split`, `depad` and `ampliconclip` against the oracle on simulated reads and a primer BED.
mod split_clip;

/// Spill files and outputs as samtools places, names, removes and opens them (issue 43).
mod temp_outputs;

/// Strict input and command-line details against the oracle (issue 43 items 15-18, 45 items 3, 5, 6).
mod strict_input;

/// CRAM shapes other writers produce (htsjdk, the spec's examples), patched from oracle CRAMs.
mod cram_foreign;

/// Numeric option values read with the C function samtools uses for each option.
mod c_numbers;

/// Memory bounded on long fixmate templates and many-run sorts, and `index` from a pipe or FIFO.
mod bounded_memory;

/// One output spec: format options reach every output of a command (issue 41).
mod output_spec;
/// Memory caps and hostile sizes: commands under `ulimit -v`, huge spans and records, truncated input.
mod resource_limits;

/// Random CIGARs through consensus, phase, targetcut, mpileup, depth and pad2unpad, against the oracle.
mod cigar_sweep;
/// The one command table: help lists exactly what dispatch runs, under samtools headings; usage cases.
mod command_table;
/// `consensus` natively (both modes, every output format and option) against the samtools oracle.
mod consensus;
/// consensus -r/--regions-file/-@, depth/coverage/bedcov regions on a CRAM via its .crai.
mod consensus_cram_index;
/// consensus -T with a FASTA lacking one of the header's references, at every -@, against the oracle.
mod consensus_missing_ref;
/// CRAM 3.1's rANS Nx16 and name tokeniser encoders against htscodecs and the oracle.
mod cram_nx16_encode;
/// `cram-size` natively (issue 42): reports on oracle- and mdsam-written CRAMs against the oracle.
mod cram_size;
/// One FASTA access layer: faidx, calmd, mpileup -f, CRAM -T and reference -@ against the oracle.
mod front_hall_fasta;
/// The CRAM reference carried by each command's options to its reader and writer (issue 41).
mod front_hall_reference;
/// `mpileup` against the oracle: simulated pairs, depth caps, hand-written indels, pads and skips.
mod mpileup;
/// mpileup's blocks on an indexed input against its serial walk and the oracle.
mod mpileup_blocks;
/// The parallel BAM write (issue 44): block layout as samtools' at every thread count and level, and `--write-index`.
mod parallel_write;
/// targetcut and phase, natively, against the oracle (issue 42).
mod phase_targetcut;
/// mpileup and consensus failure messages (bed_read, fai_load, regions) against the oracle.
mod pileup_memory;
/// Threaded consensus blocks and the mpileup column sweep against the oracle.
mod pileup_parallel;
/// http(s)://, s3:// and gs:// inputs against nginx, moto and a fault-injecting proxy (issue 40).
mod remote_inputs;
/// Reads without bases and columns of skips through consensus, phase, pad2unpad, ampliconclip.
mod seqless_reads;
/// Natively the small commands samtools has (flags, samples, ...), compared with the oracle.
mod small_commands;
/// Region queries on a BAM blocked as htsjdk blocks it (records cut across blocks).
mod straddled_blocks;
/// Files cut short on a block or container boundary: errors and warnings as htslib's.
mod truncated_inputs;
/// tview's text and HTML screens natively, byte for byte with samtools' tview.
mod tview;
