//! `samtools quickcheck` (samtools 1.24 `bam_quickcheck.c`): for each file, can it be opened,
//! is it sequence data, does its header read (with targets, unless `-u`), does it end with its
//! EOF marker. The exit status ORs every file's failure bits; `-v` lists failed files on stdout.

use std::io::Write;

use crate::error::Error;
use crate::io::detect::{self, Compression, Detected, Format};
use crate::io::eof_check::{self, EofCheck};
use crate::io::input::Input;
use crate::io::stream::ByteStream;
use crate::io::{bam, bgzf, cram_header, sam};

pub struct QuickcheckOptions {
    pub inputs: Vec<String>,
    /// How many `-v`.
    pub verbose: u32,
    /// `-q`: no warnings unless `-vv`.
    pub quiet: bool,
    /// `-u`: a header without targets is fine.
    pub unmapped: bool,
}

// samtools' failure bits.
const FAIL_OPEN: i32 = 2;
const NOT_SEQUENCE: i32 = 4;
const BAD_HEADER: i32 = 8;
const NO_EOF_BLOCK: i32 = 16;
const FAIL_CLOSE: i32 = 32;

/// Small pieces: only the header is read (the BAM reader stops at the header's last block).
const HEADER_PIECE_BYTES: usize = 64 << 10;

pub fn run(options: &QuickcheckOptions) -> Result<(), Error> {
    if options.verbose >= 2 {
        eprintln!("verbosity set to {}", options.verbose);
    }
    let mut status = 0;
    // samtools' stdout is block-buffered into a pipe or file: the list comes after the warnings.
    let mut failed = String::new();
    for path in &options.inputs {
        let state = check_file(path, options);
        if state > 0 && options.verbose >= 1 {
            failed.push_str(path);
            failed.push('\n');
        }
        status |= state;
    }
    let mut out = std::io::stdout().lock();
    out.write_all(failed.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("stdout", e))?;
    if status == 0 { Ok(()) } else { Err(Error::Status(status)) }
}

/// One file's messages and failure bits.
struct Report<'a> {
    path: &'a str,
    options: &'a QuickcheckOptions,
    state: i32,
}

impl Report<'_> {
    /// samtools' `QC_ERR`: the bit, and the warning unless `-q` (which `-vv` overrides).
    fn fail(&mut self, bit: i32, what: &str) {
        self.state |= bit;
        if !self.options.quiet || self.options.verbose >= 2 {
            eprintln!("{} {what}", self.path);
        }
    }

    /// A `-vvv` progress line.
    fn note(&self, what: &str) {
        if self.options.verbose >= 3 {
            eprintln!("{} {what}", self.path);
        }
    }
}

fn check_file(path: &str, options: &QuickcheckOptions) -> i32 {
    let mut report = Report { path, options, state: 0 };
    if options.verbose >= 3 {
        eprintln!("checking {path}");
    }
    let Some((input, detected, cram_refs)) = open(path) else {
        if options.verbose >= 4 {
            log_open_failure(path);
        }
        report.fail(FAIL_OPEN, "could not be opened for reading.");
        return report.state;
    };
    if options.verbose >= 3 {
        eprintln!("opened {path}");
    }
    let mut stream_broken = false;
    if !detected.is_sequence_data() {
        report.fail(NOT_SEQUENCE, "was not identified as sequence data.");
    } else {
        report.note("is sequence data");
        if options.verbose >= 4 && detected.format == Format::Bam {
            warn_if_truncated(path);
        }
        let targets = match cram_refs {
            Some(n) => Ok(n),
            None => header_targets(input, &detected),
        };
        stream_broken = targets == Err(HeaderFailure::Stream);
        check_targets(&mut report, targets);
    }
    check_eof(&mut report, &detected);
    if stream_broken {
        // htslib's BGZF reader keeps the decompression error, and closing reports it.
        report.fail(FAIL_CLOSE, "did not close cleanly.");
    }
    report.state
}

fn check_targets(report: &mut Report<'_>, targets: Result<usize, HeaderFailure>) {
    match targets {
        Err(_) => report.fail(BAD_HEADER, "caused an error whilst reading its header."),
        Ok(0) if !report.options.unmapped => report.fail(BAD_HEADER, "had no targets in header."),
        Ok(n) => report.note(&format!("has {n} targets in header.")),
    }
}

fn check_eof(report: &mut Report<'_>, detected: &Detected) {
    match eof_check::check(report.path, detected) {
        EofCheck::Error => {
            report.fail(NO_EOF_BLOCK, "caused an error whilst checking for EOF block.")
        }
        EofCheck::Missing => {
            report.fail(NO_EOF_BLOCK, "was missing EOF block when one should be present.")
        }
        EofCheck::Present => report.note("has good EOF block."),
        EofCheck::NotSeekable => {
            report.note("cannot be checked for EOF block as it is not seekable.")
        }
        EofCheck::NoMarkerInFormat => report
            .note("cannot be checked for EOF block because its filetype does not contain one."),
    }
}

/// `-vvvv` turns htslib's log on: its line for a file that does not open.
fn log_open_failure(path: &str) {
    let (reason, hopen_failed) = match Input::open(path) {
        Err(e) => (crate::error::c_message(&e), std::fs::metadata(path).is_ok_and(|m| m.is_dir())),
        // It reads but is not a format htslib opens (EFTYPE, "Exec format error" on Linux).
        Ok(_) => ("Exec format error".to_string(), true),
    };
    if hopen_failed {
        eprintln!("[E::hts_hopen] Failed to open file {path}");
    }
    eprintln!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}");
}

/// `-vvvv`: `bam_hdr_read`'s warning when the BGZF EOF block is missing.
fn warn_if_truncated(path: &str) {
    let as_bgzf = Detected { format: Format::Bam, compression: Compression::Bgzf };
    if eof_check::check(path, &as_bgzf) == EofCheck::Missing {
        eprintln!("[W::bam_hdr_read] EOF marker is absent. The input is probably truncated");
    }
}

/// `hts_open`: the input and its format, or `None` where htslib fails to open it. CRAM's header
/// is read here, as `cram_dopen` does (its target count comes back).
fn open(path: &str) -> Option<(Input, Detected, Option<usize>)> {
    let mut input = Input::open(path).ok()?;
    let detected = detect::detect(input.peek(detect::PEEK_COMPRESSED).ok()?, path);
    if !detected.opens() {
        return None;
    }
    let cram_refs = match detected.format {
        Format::Cram { .. } => Some(cram_header::read_input(&mut input).ok()?.1.refs().len()),
        _ => None,
    };
    Some((input, detected, cram_refs))
}

/// Why a header did not read.
#[derive(Debug, PartialEq, Eq)]
enum HeaderFailure {
    /// The bytes decompressed, the header in them is bad or cut short.
    Content,
    /// Decompression failed (a truncated or corrupt block).
    Stream,
}

/// `sam_hdr_read` and `sam_hdr_nref`: the header's target count.
fn header_targets(input: Input, detected: &Detected) -> Result<usize, HeaderFailure> {
    match (detected.format, detected.compression) {
        (Format::Fasta | Format::Fastq, _) => Ok(0),
        (Format::Bam, Compression::None) => raw_bam_targets(input),
        (Format::Bam, compression) => {
            let blocks = if compression == Compression::Gzip {
                // htslib reads a plain-gzip BAM too.
                let plain = flate2::read::MultiGzDecoder::new(input);
                Input::from_reader("gzip", Box::new(bgzf::plain::PlainAsBgzf::new(plain)))
            } else {
                input
            };
            let mut blocks = bgzf::Reader::new(blocks, HEADER_PIECE_BYTES);
            // The EOF marker is quickcheck's own check (htslib's header read reports it once).
            blocks.missing_eof_reported();
            match bam::Reader::new(blocks) {
                Ok((_, header)) => Ok(header.refs().len()),
                Err(bam::reader::ReadError::Bgzf(_)) => Err(HeaderFailure::Stream),
                Err(_) => Err(HeaderFailure::Content),
            }
        }
        (Format::Sam, compression) => {
            let stream = match compression {
                Compression::Bgzf => ByteStream::Bgzf(bgzf::Reader::new(input, HEADER_PIECE_BYTES)),
                Compression::Gzip => ByteStream::Gzip(
                    Box::new(flate2::read::MultiGzDecoder::new(input)),
                    HEADER_PIECE_BYTES,
                ),
                _ => ByteStream::Plain(input, HEADER_PIECE_BYTES),
            };
            match sam::Reader::new(stream, 1) {
                Ok((_, header)) => Ok(header.refs().len()),
                Err(sam::reader::ReadError::Stream(_)) => Err(HeaderFailure::Stream),
                Err(_) => Err(HeaderFailure::Content),
            }
        }
        _ => Err(HeaderFailure::Content),
    }
}

/// An uncompressed BAM (no BGZF framing), which htslib reads as it is.
fn raw_bam_targets(mut input: Input) -> Result<usize, HeaderFailure> {
    let mut want = HEADER_PIECE_BYTES;
    loop {
        let bytes = input.peek(want).map_err(|_| HeaderFailure::Stream)?;
        match bam::reader::decode_header(bytes) {
            Ok(Some((header, _))) => return Ok(header.refs().len()),
            Ok(None) if bytes.len() == want => want *= 4,
            Ok(None) | Err(_) => return Err(HeaderFailure::Content),
        }
    }
}
