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
    header: Header,
    /// Lines consumed before the current piece (1-based numbering follows).
    lines_before: u64,
    tasks: usize,
    done: bool,
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
        let header = Header::from_sam_text(text)?;
        let carry = data.get(scanned..).map(<[u8]>::to_vec).unwrap_or_default();
        let reader = Reader {
            stream,
            carry,
            header: header.clone(),
            lines_before: lines,
            tasks: tasks.max(1),
            done: eof,
        };
        Ok((reader, header))
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
        if self.done && self.carry.is_empty() {
            return Ok(None);
        }
        let carry = std::mem::take(&mut self.carry);
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
            match memchr::memrchr(b'\n', &data) {
                Some(n) => n + 1,
                None => {
                    self.carry = data;
                    return Ok(Some((Vec::new(), Vec::new())));
                }
            }
        };
        self.carry = data[complete..].to_vec();
        if at_end {
            self.done = true;
        }
        let body = &data[..complete];
        let ranges = split_at_lines(body, self.tasks);
        let header = &self.header;
        let results: Vec<_> =
            ranges.par_iter().map(|r| parse_range(&body[r.clone()], header)).collect();
        let mut batches = Vec::with_capacity(results.len());
        let mut warnings = Vec::new();
        for (r, (batch, w, err)) in ranges.iter().zip(results) {
            if let Some((offset, source)) = err {
                let line = self.lines_before
                    + memchr::memchr_iter(b'\n', &body[..r.start + offset]).count() as u64
                    + 1;
                return Err(ReadError::Parse { line, source });
            }
            batches.push(batch);
            warnings.extend(w);
        }
        self.lines_before += memchr::memchr_iter(b'\n', body).count() as u64;
        Ok(Some((batches, warnings)))
    }
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

type RangeResult = (Batch, Vec<Warning>, Option<(usize, ParseError)>);

fn parse_range(text: &[u8], header: &Header) -> RangeResult {
    // Binary records are smaller than their text, so one allocation holds the whole range.
    let mut batch = Batch::with_capacity(text.len(), text.len() / 200);
    let mut warnings = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |n| at + n);
        if let Err(e) = parse::parse_line(&text[at..end], header, &mut batch, &mut warnings) {
            return (batch, warnings, Some((at, e)));
        }
        at = end + 1;
    }
    (batch, warnings, None)
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
        text.pop(); // no final newline
        for piece in [7, 64, 1 << 20] {
            let (mut r, h) = reader(&text, piece);
            assert_eq!(h.refs().len(), 1);
            let mut names = Vec::new();
            while let Some((batches, _)) = r.read_batches().unwrap() {
                for b in &batches {
                    names.extend(
                        b.iter().map(|x| String::from_utf8_lossy(x.read_name()).into_owned()),
                    );
                }
            }
            assert_eq!(names.len(), 50, "piece {piece}");
            assert_eq!(names[49], "r49");
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
