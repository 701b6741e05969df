//! Opening an input the way samtools' reporting commands (flagstat, idxstats) do:
//! `sam_open_format` then `sam_hdr_read`, each failure reported with htslib's and samtools' lines.

use crate::error::Error;
use crate::io::detect;
use crate::io::input::Input;
use crate::io::input_spec::InputSpec;
use crate::io::open::{self, Opened, PIECE_BYTES_PER_THREAD};

/// The command's own wording of its two failures, each followed by ` "PATH"`.
pub struct Wording {
    /// e.g. `samtools flagstat: Cannot open input file` (then `: REASON`).
    pub cannot_open: &'static str,
    /// e.g. `Failed to read header for`.
    pub no_header: &'static str,
}

/// Opens `path` and reads its header (SAM, BAM or CRAM).
pub fn open_sequence_input(
    path: &str,
    spec: impl Into<InputSpec>,
    wording: &Wording,
) -> Result<Opened, Error> {
    let no_header = format!("{} \"{path}\"", wording.no_header);
    open_sequence_worded(path, spec, |e| open_failure(path, e, wording), &no_header)
}

/// The piece a reader with a small working set inflates at a time (mpileup, consensus): a MiB
/// a read, with the one read ahead and the batch in hand, was a third of mpileup's memory.
pub const LEAN_PIECE: usize = 256 << 10;

/// [`open_sequence_input`] inflating about `piece` bytes a read instead of a MiB per thread:
/// for the many small readers one command has open at once (consensus' blocks).
///
/// `streamed`: a BAM or SAM file read front to back only (never queried) is read with `read`
/// instead of mapped: the mapped pages it had read stayed resident (2 to 3 MB at a time),
/// a read buffer is one piece.
pub fn open_sequence_input_in_pieces(
    path: &str,
    spec: impl Into<InputSpec>,
    wording: &Wording,
    piece: usize,
    streamed: bool,
) -> Result<Opened, Error> {
    let no_header = format!("{} \"{path}\"", wording.no_header);
    let lean = Some((piece, streamed));
    open_worded(path, spec.into(), |e| open_failure(path, e, wording), &no_header, lean)
}

/// [`open_sequence_input`] for commands that word both failures their own way: `cannot_open`
/// given the open error, `no_header` the whole line.
pub fn open_sequence_worded(
    path: &str,
    spec: impl Into<InputSpec>,
    cannot_open: impl FnOnce(&std::io::Error) -> Error,
    no_header: &str,
) -> Result<Opened, Error> {
    open_worded(path, spec.into(), cannot_open, no_header, None)
}

fn open_worded(
    path: &str,
    spec: InputSpec,
    cannot_open: impl FnOnce(&std::io::Error) -> Error,
    no_header: &str,
    lean: Option<(usize, bool)>,
) -> Result<Opened, Error> {
    let header_failure = || Error::Bare(no_header.to_string());
    let mut input = Input::open(path).map_err(|e| cannot_open(&e))?;
    let head = input.peek(detect::PEEK_COMPRESSED).map_err(|_| header_failure())?;
    let detected = detect::detect(head, path);
    if !detected.is_sequence_data() {
        return Err(header_failure());
    }
    let (piece, streamed) = match lean {
        Some((piece, streamed)) => (piece, streamed),
        None => (PIECE_BYTES_PER_THREAD * spec.threads.max(1), false),
    };
    // A mapped file is opened again to be read (a pipe or URL is a stream already; should the
    // second open fail, the map is read).
    if streamed
        && input.mapped().is_some()
        && matches!(detected.format, detect::Format::Sam | detect::Format::Bam)
        && let Ok(unmapped) = Input::open_unmapped_in_reads_of(path, piece)
    {
        input = unmapped;
    }
    open::open_input(path, input, spec, piece).map_err(|_| header_failure())
}

/// How [`open_reporting`] failed: opening (htslib's line and the command's are in it), or
/// reading the header (the reader's reason).
pub enum OpenFailure {
    Open(Error),
    Header(Error),
}

impl OpenFailure {
    /// The error, with a header failure told in the command's own `line`.
    pub fn or_line(self, line: &str) -> Error {
        match self {
            OpenFailure::Open(e) => e,
            OpenFailure::Header(_) => Error::Bare(line.to_string()),
        }
    }
}

/// Opens `path` as `sam_open_format` then `sam_hdr_read` do for commands that report an open
/// failure as htslib's line then `cannot_open(reason)`.
pub fn open_reporting(
    path: &str,
    spec: impl Into<InputSpec>,
    cannot_open: impl FnOnce(&str) -> String,
) -> Result<Opened, OpenFailure> {
    let spec = spec.into();
    let input = Input::open(path).map_err(|e| {
        let reason = crate::error::c_message(&e);
        OpenFailure::Open(Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n{}",
            cannot_open(&reason)
        )))
    })?;
    let piece = PIECE_BYTES_PER_THREAD * spec.threads.max(1);
    open::open_input(path, input, spec, piece).map_err(OpenFailure::Header)
}

fn open_failure(path: &str, e: &std::io::Error, wording: &Wording) -> Error {
    let reason = crate::error::c_message(e);
    let mut lines = String::new();
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        lines.push_str(&format!("[E::hts_hopen] Failed to open file {path}\n"));
    }
    lines.push_str(&format!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n"));
    lines.push_str(&format!("{} \"{path}\": {reason}", wording.cannot_open));
    Error::Bare(lines)
}
