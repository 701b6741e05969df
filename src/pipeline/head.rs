//! `samtools head` (samtools 1.24 `main_head` in `sam_view.c`): the first header lines and the
//! first records of one input, as SAM text.

use crate::io::input_spec::InputSpec;
use std::io::Write;

use crate::error::Error;
use crate::io::detect::{self, Compression};
use crate::io::input::Input;
use crate::io::open::{self, InputFormat, Opened, PIECE_BYTES_PER_THREAD};
use crate::io::sam::format::format_record;
use crate::pipeline::input_filter::{InputFilter, passes};

pub struct HeadOptions {
    /// A path, or `-` for stdin.
    pub input: String,
    /// `-h N`: header lines to print; `None` prints them all.
    pub header_lines: Option<u64>,
    /// `-n N`: records to print.
    pub records: u64,
    /// Worker threads (samtools' `-@` plus one).
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// `--input-fmt-option filter=EXPR`: only the records it keeps are read.
    pub filter: Option<String>,
}

pub fn run(options: &HeadOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(options.threads).install(|| head(options))
}

fn head(options: &HeadOptions) -> Result<(), Error> {
    let path = options.input.as_str();
    let mut input = Input::open(path).map_err(|e| open_failure(path, &e))?;
    let head = input.peek(detect::PEEK_COMPRESSED).map_err(|_| header_failure(path))?;
    let detected = detect::detect(head, path);
    if !detected.is_sequence_data() {
        return Err(header_failure(path));
    }
    // BGZF one block at a time, as htslib reads: `head -n 3` of a file damaged further on
    // succeeds. Text is read in large pieces.
    let piece = match detected.compression {
        Compression::Bgzf => 1,
        _ => PIECE_BYTES_PER_THREAD * options.threads.max(1),
    };
    let mut opened = open::open_input(
        path,
        input,
        InputSpec::new(options.threads, options.reference.as_deref()),
        piece,
    )
    .map_err(|_| header_failure(path))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let text = opened.header.sam_text();
    out.write_all(shown_lines(&text, options.header_lines)).map_err(|e| Error::io("stdout", e))?;
    let written = write_records(&mut out, &mut opened, options);
    // What was written stays written, before any message about the rest.
    out.flush().map_err(|e| Error::io("stdout", e))?;
    written
}

/// samtools' message for an input whose header does not read.
fn header_failure(path: &str) -> Error {
    Error::Bare(if path == "-" {
        "samtools head: failed to read the header".to_string()
    } else {
        format!("samtools head: failed to read the header from \"{path}\"")
    })
}

/// The first `-n` records that pass the filter, as SAM lines.
fn write_records(
    out: &mut impl Write,
    opened: &mut Opened,
    options: &HeadOptions,
) -> Result<(), Error> {
    let path = options.input.as_str();
    let truncated = || Error::Bare(format!("samtools head: \"{path}\" is truncated"));
    let filter = InputFilter::new(options.filter.as_deref());
    let mut left = options.records;
    let mut line = Vec::new();
    while left > 0 {
        let batches = match opened.reader.read_batches(path) {
            Ok(Some((batches, warnings))) => {
                warnings.iter().for_each(|w| eprintln!("{w}"));
                batches
            }
            Ok(None) => break,
            // A CRAM's reason (a missing reference, say) is worth more than "truncated".
            Err(e) if opened.format == InputFormat::Cram => return Err(e),
            Err(_) => return Err(truncated()),
        };
        for record in batches.iter().flat_map(|b| b.iter()) {
            if left == 0 {
                break;
            }
            match passes(filter.as_ref(), &record, &opened.header) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(lines) => {
                    eprintln!("{lines}");
                    return Err(truncated());
                }
            }
            line.clear();
            format_record(&mut line, &record, &opened.header);
            out.write_all(&line).map_err(|e| Error::io("stdout", e))?;
            left -= 1;
        }
    }
    Ok(())
}

/// `-h N`'s lines of the header text, or all of it.
fn shown_lines(text: &[u8], lines: Option<u64>) -> &[u8] {
    match lines {
        None => text,
        Some(n) => first_lines(text, n),
    }
}

/// The first `n` lines of `text` (all of it when it has fewer).
fn first_lines(text: &[u8], n: u64) -> &[u8] {
    let mut end = 0;
    for _ in 0..n {
        match memchr::memchr(b'\n', &text[end..]) {
            Some(at) => end += at + 1,
            None => return text,
        }
    }
    &text[..end]
}

/// htslib's and samtools' lines for an input that does not open.
fn open_failure(path: &str, e: &std::io::Error) -> Error {
    let reason = crate::error::c_message(e);
    let mut lines = String::new();
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        lines.push_str(&format!("[E::hts_hopen] Failed to open file {path}\n"));
        lines
            .push_str(&format!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n"));
    } else if path != "-" {
        lines
            .push_str(&format!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n"));
    }
    if path == "-" {
        lines.push_str(&format!(
            "samtools head: failed to open standard input for reading: {reason}"
        ));
    } else {
        lines.push_str(&format!("samtools head: failed to open \"{path}\" for reading: {reason}"));
    }
    Error::Bare(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_stop_at_the_nth_newline() {
        assert_eq!(first_lines(b"a\nb\nc\n", 2), b"a\nb\n");
        assert_eq!(first_lines(b"a\nb\n", 5), b"a\nb\n");
        assert_eq!(first_lines(b"a\nb\n", 0), b"");
    }
}
