//! FASTA/FASTQ records read front to back as htslib's `kseq.h` (`kseq_read`) reads them, for
//! `samtools dict`: a name (the header up to its first white space) and the sequence lines'
//! bytes as they are (line ends out, anything else kept). Input is plain or gzip (any number of
//! members, so BGZF too), as zlib's `gzopen` reads it.

use std::io::{BufRead, BufReader, Read};

/// One record.
pub struct SeqRecord {
    pub name: Vec<u8>,
    pub seq: Vec<u8>,
}

/// `kseq_t` over a byte stream.
pub struct Records {
    input: Box<dyn BufRead + Send>,
    /// The header character already read (`kseq`'s `last_char`), if any.
    at_header: bool,
}

/// Opens `path` (`-`: stdin), inflating gzip as `gzopen` would.
pub fn open(path: &str) -> std::io::Result<Records> {
    let raw: Box<dyn Read + Send> =
        if path == "-" { Box::new(std::io::stdin()) } else { Box::new(std::fs::File::open(path)?) };
    let mut buffered = BufReader::with_capacity(256 * 1024, raw);
    let gzip = buffered.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let input: Box<dyn BufRead + Send> = if gzip {
        Box::new(BufReader::with_capacity(
            256 * 1024,
            flate2::bufread::MultiGzDecoder::new(buffered),
        ))
    } else {
        Box::new(buffered)
    };
    Ok(Records { input, at_header: false })
}

/// Opens a text file (plain or gzip) to be read line by line ([`Records::next_line`]).
pub fn open_text(path: &str) -> std::io::Result<Records> {
    open(path)
}

impl Records {
    /// The next line, without its end, into `line`; false at the end of the input.
    pub fn next_line(&mut self, line: &mut Vec<u8>) -> bool {
        line.clear();
        self.read_line_into(line)
    }

    fn getc(&mut self) -> Option<u8> {
        let buf = self.input.fill_buf().ok()?;
        let c = *buf.first()?;
        self.input.consume(1);
        Some(c)
    }

    /// Appends bytes up to the next `\n` (dropped, with a `\r` before it) to `out`; false at
    /// the end of the input with nothing read.
    fn read_line_into(&mut self, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let got = self.input.read_until(b'\n', out).unwrap_or(0);
        if out.last() == Some(&b'\n') {
            out.pop();
            if out.len() > start && out.last() == Some(&b'\r') {
                out.pop();
            }
        }
        got > 0
    }

    /// The next record; `None` at the end, or where `kseq_read` returns an error (a FASTQ
    /// record whose quality is missing or of another length), as `dict` stops there too.
    pub fn next_record(&mut self) -> Option<SeqRecord> {
        if !self.at_header {
            loop {
                match self.getc()? {
                    b'>' | b'@' => break,
                    _ => {}
                }
            }
        }
        self.at_header = false;
        // The name: up to the first white space (`KS_SEP_SPACE`), the rest of the line dropped.
        let mut header = Vec::new();
        if !self.read_line_into(&mut header) {
            return None;
        }
        let name_end = header
            .iter()
            .position(|&c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
            .unwrap_or(header.len());
        header.truncate(name_end);
        let mut seq = Vec::new();
        let mut last = None;
        while let Some(c) = self.getc() {
            if matches!(c, b'>' | b'+' | b'@') {
                last = Some(c);
                break;
            }
            if c == b'\n' {
                continue;
            }
            seq.push(c);
            self.read_line_into(&mut seq);
        }
        match last {
            Some(b'>' | b'@') => self.at_header = true,
            Some(b'+') => {
                // FASTQ: skip the `+` line, then quality lines until as long as the sequence.
                let mut rest = Vec::new();
                if !self.read_line_into(&mut rest) {
                    return None;
                }
                let mut qual = Vec::new();
                while qual.len() < seq.len() && self.read_line_into(&mut qual) {}
                if qual.len() != seq.len() {
                    return None;
                }
            }
            _ => {}
        }
        Some(SeqRecord { name: header, seq })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &'static [u8]) -> Vec<(String, String)> {
        let mut r = Records { input: Box::new(text), at_header: false };
        std::iter::from_fn(|| r.next_record())
            .map(|s| (String::from_utf8(s.name).unwrap(), String::from_utf8(s.seq).unwrap()))
            .collect()
    }

    #[test]
    fn fasta_and_fastq_records_as_kseq_reads_them() {
        let got = records(b"junk\n>a x\nAC GT\r\n\nNN\n>b\n>c\nA");
        assert_eq!(
            got,
            [("a".into(), "AC GTNN".into()), ("b".into(), "".into()), ("c".into(), "A".into())]
        );
        let got = records(b"@r\nACGT\n+\nIIII\n@s\nA\n+\n");
        assert_eq!(got, [("r".to_string(), "ACGT".to_string())]);
    }
}
