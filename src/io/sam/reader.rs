//! SAM reading: header lines, then the body cut at newlines into ranges parsed in parallel.
//!
//! Algorithm per [`Reader::read_batches`]:
//! 1. Take the next piece of bytes (after the partial line carried from the last piece).
//! 2. Keep the complete lines; carry the tail.
//! 3. Split the lines into one range per task at newline boundaries and parse every range into
//!    its own [`Batch`] on the current rayon pool. Batches come back in input order.

use rayon::prelude::*;

use super::parse::{self, ParseError, Warning};
use crate::io::bgzf;
use crate::io::stream::ByteStream;
use crate::record::{Batch, Header};

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Stream(#[from] bgzf::reader::ReadError),
    #[error("invalid SAM header: {0}")]
    BadHeader(#[from] crate::record::header::HeaderError),
    #[error("parse error at line {line}: {source}")]
    Parse { line: u64, source: ParseError },
}

/// Record batches in input order, with the parse warnings met while reading them.
pub type BatchesWithWarnings = (Vec<Batch>, Vec<Warning>);

pub struct Reader {
    stream: ByteStream,
    carry: Vec<u8>,
    /// How many bytes at the start of `carry` are known to hold no newline: a line longer than
    /// a piece is searched only in the bytes each piece adds (searching the whole carry again
    /// every piece made one huge line quadratic).
    carry_scanned: usize,
    header: Header,
    /// Lines consumed before the current piece (1-based numbering follows).
    lines_before: u64,
    tasks: usize,
    done: bool,
    /// What htslib warns about while reading the header.
    header_warnings: Vec<String>,
}

impl Reader {
    /// Reads the header; `tasks` is how many ranges to parse in parallel per piece.
    pub fn new(mut stream: ByteStream, tasks: usize) -> Result<(Reader, Header), ReadError> {
        let mut data = Vec::new();
        let mut scanned = 0; // bytes of complete header lines in `data`
        let mut lines = 0;
        let mut eof = false;
        loop {
            while scanned < data.len() && data[scanned] == b'@' {
                match memchr::memchr(b'\n', &data[scanned..]) {
                    Some(n) => {
                        scanned += n + 1;
                        lines += 1;
                    }
                    None if eof => {
                        scanned = data.len();
                        lines += 1;
                    }
                    None => break,
                }
            }
            let header_done = eof || (scanned < data.len() && data[scanned] != b'@');
            if header_done {
                break;
            }
            let (d, ended) = stream.read_piece(data)?;
            data = d;
            eof = ended;
        }
        let mut text = data[..scanned.min(data.len())].to_vec();
        if !text.is_empty() && !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        let (text, header_warnings) = super::header::normalise(&text)?;
        let header = Header::from_sam_text(text)?;
        let carry = data.get(scanned..).map(<[u8]>::to_vec).unwrap_or_default();
        let reader = Reader {
            stream,
            carry,
            carry_scanned: 0,
            header: header.clone(),
            lines_before: lines,
            tasks: tasks.max(1),
            done: eof,
            header_warnings,
        };
        Ok((reader, header))
    }

    /// The warnings htslib prints while reading this header (duplicate `@RG` ids, ...).
    pub fn header_warnings(&self) -> &[String] {
        &self.header_warnings
    }

    /// The byte stream read from.
    pub fn stream(&self) -> &ByteStream {
        &self.stream
    }

    /// Uses `header` (e.g. with references added by `-t`) to resolve reference names.
    pub fn set_header(&mut self, header: Header) {
        self.header = header;
    }

    /// The next batches of records in input order, with warnings to print; `None` at the end.
    pub fn read_batches(&mut self) -> Result<Option<BatchesWithWarnings>, ReadError> {
        if let ByteStream::Plain(input, target) = &mut self.stream
            && !self.done
        {
            if self.carry.is_empty() {
                return self.read_in_place();
            }
            // Lines carried from the header's read: complete the last one from the input, so
            // that the next read starts at a line and can parse in place.
            let head = input.peek(*target).map_err(bgzf::reader::ReadError::Io)?;
            if let Some(n) = memchr::memchr(b'\n', head) {
                self.carry.extend_from_slice(&head[..=n]);
                input.consume(n + 1);
                let body = std::mem::take(&mut self.carry);
                let read = parse_body(&body, &self.header, self.tasks, &mut self.lines_before);
                crate::io::recycle::give(body);
                return read.map(Some);
            }
        }
        if self.done && self.carry.is_empty() {
            return Ok(None);
        }
        let carry = std::mem::take(&mut self.carry);
        let scanned = self.carry_scanned.min(carry.len());
        let (mut data, at_end) =
            if self.done { (carry, true) } else { self.stream.read_piece(carry)? };
        self.done |= at_end;
        if at_end && data.is_empty() {
            return Ok(None);
        }
        let complete = if at_end {
            if !data.ends_with(b"\n") {
                data.push(b'\n');
            }
            data.len()
        } else {
            match memchr::memrchr(b'\n', &data[scanned..]) {
                Some(n) => scanned + n + 1,
                None if line_is_doomed(&data) => return Err(self.fail_doomed_line(data)?),
                None => {
                    self.carry_scanned = data.len();
                    self.carry = data;
                    return Ok(Some((Vec::new(), Vec::new())));
                }
            }
        };
        self.carry = data[complete..].to_vec();
        self.carry_scanned = self.carry.len();
        if at_end {
            self.done = true;
        }
        let read = parse_body(&data[..complete], &self.header, self.tasks, &mut self.lines_before);
        crate::io::recycle::give(data);
        read.map(Some)
    }

    /// Plain text with no carried bytes: parses the complete lines of the next piece straight
    /// from the input's buffer (for a file, the mapping itself), without copying them. A piece
    /// without a newline (the last line, or a line longer than a piece) goes to the copying path.
    fn read_in_place(&mut self) -> Result<Option<BatchesWithWarnings>, ReadError> {
        let ByteStream::Plain(input, target) = &mut self.stream else {
            return Ok(None);
        };
        let target = *target;
        let avail = input.peek(target).map_err(bgzf::reader::ReadError::Io)?;
        let at_end = avail.len() < target;
        let complete = memchr::memrchr(b'\n', avail).map_or(0, |n| n + 1);
        if complete == 0 {
            if avail.is_empty() {
                self.done = true;
                return Ok(None);
            }
            self.carry = avail.to_vec();
            self.carry_scanned = self.carry.len();
            let n = avail.len();
            input.consume(n);
            self.done = at_end;
            return self.read_batches();
        }
        let read = parse_body(&avail[..complete], &self.header, self.tasks, &mut self.lines_before);
        if at_end && complete < avail.len() {
            // The last line has no newline: the copying path adds it.
            self.carry = avail[complete..].to_vec();
        }
        let n = if self.carry.is_empty() { complete } else { avail.len() };
        input.consume(n);
        self.done = at_end;
        read.map(Some)
    }
}

impl Reader {
    /// Reads past a line [`line_is_doomed`] picked out, counting its TABs and NULs instead of
    /// holding it, and returns the error parsing it would give: the same as for the whole line.
    fn fail_doomed_line(&mut self, mut piece: Vec<u8>) -> Result<ReadError, ReadError> {
        let (mut tabs, mut nul) = (0usize, false);
        loop {
            let end = memchr::memchr(b'\n', &piece);
            let part = &piece[..end.unwrap_or(piece.len())];
            tabs += memchr::memchr_iter(b'\t', part).count();
            nul |= memchr::memchr(0, part).is_some();
            if end.is_some() || self.done {
                break;
            }
            piece.clear();
            let (next, at_end) = self.stream.read_piece(piece)?;
            piece = next;
            self.done |= at_end;
        }
        crate::io::recycle::give(piece);
        // Nothing is read after a parse error.
        self.done = true;
        self.carry = Vec::new();
        let source = if nul {
            ParseError::NulByte
        } else if tabs < 10 {
            ParseError::TooFewFields
        } else {
            ParseError::LongName
        };
        Ok(ReadError::Parse { line: self.lines_before + 1, source })
    }
}

/// Whether `partial`, the start of a line not yet ended, already fails to parse whatever
/// follows: no TAB in its first 255 bytes means a QNAME over 254 characters or too few fields.
/// htslib reads the whole line before failing it; holding a multi-GiB line of that kind took
/// twice its size in memory, where counting its TABs takes a piece.
fn line_is_doomed(partial: &[u8]) -> bool {
    const LONGEST_QNAME: usize = 254;
    partial.len() > LONGEST_QNAME && memchr::memchr(b'\t', &partial[..=LONGEST_QNAME]).is_none()
}

/// Parses `body` (complete lines) as `tasks` ranges in parallel; errors name their line, counted
/// from `lines_before`, which advances past the body.
pub fn parse_body(
    body: &[u8],
    header: &Header,
    tasks: usize,
    lines_before: &mut u64,
) -> Result<BatchesWithWarnings, ReadError> {
    let ranges = split_at_lines(body, tasks);
    let results: Vec<_> =
        ranges.par_iter().map(|r| parse_range(&body[r.clone()], header)).collect();
    let mut batches = Vec::with_capacity(results.len());
    let mut warnings = Vec::new();
    for (batch, w, lines, err) in results {
        if let Some((before, source)) = err {
            return Err(ReadError::Parse { line: *lines_before + before + 1, source });
        }
        *lines_before += lines;
        batches.push(batch);
        warnings.extend(w);
    }
    Ok((batches, warnings))
}

/// Splits `body` (complete lines) into about `parts` ranges that end at newlines.
fn split_at_lines(body: &[u8], parts: usize) -> Vec<std::ops::Range<usize>> {
    let step = body.len().div_ceil(parts).max(1);
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    while start < body.len() {
        let guess = (start + step).min(body.len());
        let end = match memchr::memchr(b'\n', &body[guess - 1..]) {
            Some(n) => guess + n,
            None => body.len(),
        };
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// A range's records and warnings, its line count, and the first error with the number of lines
/// before it in the range.
type RangeResult = (Batch, Vec<Warning>, u64, Option<(u64, ParseError)>);

fn parse_range(text: &[u8], header: &Header) -> RangeResult {
    // Binary records are smaller than their text, so one allocation holds the whole range.
    let mut batch = Batch {
        data: crate::io::recycle::take(text.len()),
        starts: Vec::with_capacity(text.len() / 200),
    };
    let mut warnings = Vec::new();
    let mut parser = parse::LineParser::new(header);
    // htslib fails on a NUL anywhere in a line: one search over the range, not one a line.
    let first_nul = memchr::memchr(0, text).unwrap_or(usize::MAX);
    let mut at = 0;
    let mut lines = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |n| at + n);
        // htslib's line reader drops a '\r' before the '\n' (Windows line endings).
        let line = &text[at..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let parsed = if end > first_nul {
            Err(ParseError::NulByte)
        } else {
            parser.parse(line, &mut batch, &mut warnings)
        };
        if let Err(e) = parsed {
            return (batch, warnings, lines, Some((lines, e)));
        }
        lines += 1;
        at = end + 1;
    }
    (batch, warnings, lines, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::input::Input;

    fn reader(text: &str, piece: usize) -> (Reader, Header) {
        let input =
            Input::from_reader("t", Box::new(std::io::Cursor::new(text.as_bytes().to_vec())));
        Reader::new(ByteStream::Plain(input, piece), 3).unwrap()
    }

    #[test]
    fn reads_header_and_records_across_pieces() {
        let mut text = String::from("@HD\tVN:1.6\n@SQ\tSN:c\tLN:99\n");
        for i in 0..50 {
            text.push_str(&format!("r{i}\t0\tc\t{}\t9\t2M\t*\t0\t0\tAC\tII\n", i + 1));
        }
        let expected: Vec<String> = (0..50).map(|i| format!("r{i}")).collect();
        let without_final_newline = text[..text.len() - 1].to_string();
        for (text, piece) in [7, 64, 100, 1 << 20]
            .into_iter()
            .flat_map(|p| [(&text, p), (&without_final_newline, p)])
        {
            let (mut r, h) = reader(text, piece);
            assert_eq!(h.refs().len(), 1);
            let mut names = Vec::new();
            while let Some((batches, _)) = r.read_batches().unwrap() {
                for b in &batches {
                    names.extend(
                        b.iter().map(|x| String::from_utf8_lossy(x.read_name()).into_owned()),
                    );
                }
            }
            assert_eq!(names, expected, "piece {piece}");
        }
    }

    /// Line numbers in errors count across pieces, whichever path (in place or copied) read them.
    #[test]
    fn parse_error_line_counts_across_pieces() {
        let mut text = String::from("@SQ\tSN:c\tLN:99\n");
        for i in 0..40 {
            text.push_str(&format!("r{i}\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"));
        }
        text.push_str("bad line\n");
        for piece in [7, 64, 100, 1 << 20] {
            let (mut r, _) = reader(&text, piece);
            let e = loop {
                match r.read_batches() {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("no error with piece {piece}"),
                    Err(e) => break e,
                }
            };
            assert!(e.to_string().starts_with("parse error at line 42"), "piece {piece}: {e}");
        }
    }

    /// A line that cannot parse whatever its end holds is read past without being held, and
    /// fails as the whole line would: the same error whether it spans pieces or fits one.
    #[test]
    fn a_doomed_line_fails_as_the_whole_line_would() {
        let fields = "\t0\tc\t1\t9\t*\t*\t0\t0\t*\t*";
        let long = "A".repeat(3000);
        let cases = [
            (long.clone(), "too few fields"),
            (format!("{long}\t0\tc"), "too few fields"),
            (format!("{long}{fields}"), "query name is longer than 254"),
            (format!("{long}{fields}\tXX:Z:a\0b"), "NUL byte"),
            (format!("{}{fields}", "A".repeat(255)), "query name is longer than 254"),
        ];
        for (line, why) in cases {
            for ending in ["\n", "\nr\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n", ""] {
                let text =
                    format!("@SQ\tSN:c\tLN:99\nr\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n{line}{ending}");
                for piece in [7, 100, 300, 1 << 20] {
                    let (mut r, _) = reader(&text, piece);
                    let e = loop {
                        match r.read_batches() {
                            Ok(Some(_)) => {}
                            Ok(None) => panic!("no error with piece {piece}"),
                            Err(e) => break e.to_string(),
                        }
                    };
                    assert!(e.starts_with("parse error at line 3: "), "piece {piece}: {e}");
                    assert!(e.contains(why), "piece {piece}, {why}: {e}");
                }
            }
        }
    }

    #[test]
    fn parse_error_names_the_line() {
        let (mut r, _) =
            reader("@SQ\tSN:c\tLN:9\nr\t0\tc\t1\t0\t*\t*\t0\t0\t*\t*\nbad line\n", 1 << 20);
        let e = r.read_batches().err().unwrap();
        assert!(e.to_string().starts_with("parse error at line 3"), "{e}");
    }

    #[test]
    fn headerless_and_empty_inputs() {
        let (mut r, h) = reader("", 16);
        assert!(h.text().is_empty());
        assert!(r.read_batches().unwrap().is_none());
        let (mut r, _) = reader("r\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\n", 16);
        let (b, _) = r.read_batches().unwrap().unwrap();
        assert_eq!(b.iter().map(Batch::len).sum::<usize>(), 1);
    }
}
