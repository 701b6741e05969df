//! SAM records of a BGZF-compressed SAM file with the virtual offset of each line, for
//! `samtools index` on `.sam.gz` (htslib indexes such a file like a BAM, one CSI entry a line).
//!
//! Offsets follow htslib's `bgzf_tell` after `bgzf_getline`: once a block has been read to its
//! end, the position is `(next block, 0)`. Lines are read one piece (a run of whole blocks) at a
//! time; the unfinished line at a piece's end is carried, with the block spans it covers, into
//! the next piece, as the BAM reader carries a partial record.

use super::parse::{LineParser, ParseError};
use crate::io::bgzf::spans::Spans;
use crate::io::bgzf::{self, reader::ReadError as BgzfError};
use crate::io::input::Input;
use crate::record::header::Header;
use crate::record::store::Batch;

#[derive(Debug, thiserror::Error)]
pub enum LocatedError {
    #[error(transparent)]
    Bgzf(#[from] BgzfError),
    #[error("parse error at line {line}: {source}")]
    Parse { line: u64, source: ParseError },
}

pub struct LocatedReader {
    bgzf: bgzf::Reader,
    header: Header,
    carry: Vec<u8>,
    /// The blocks the carry came from.
    carry_spans: Spans,
    in_header: bool,
    lines: u64,
}

impl LocatedReader {
    /// Reads `input` (BGZF) from its start; header lines (`@…` before the first record) are
    /// skipped, records are parsed against `header`.
    pub fn new(input: Input, header: Header) -> LocatedReader {
        LocatedReader {
            bgzf: bgzf::Reader::new(input, 4 << 20),
            header,
            carry: Vec::new(),
            carry_spans: Spans::default(),
            in_header: true,
            lines: 0,
        }
    }

    /// Once every line was read: where the data ends ([`bgzf::Reader::data_end`]).
    pub fn data_end(&self) -> u64 {
        self.bgzf.data_end()
    }

    /// The next records with their start offsets and, last, the offset after the last one.
    pub fn read_batch_located(&mut self) -> Result<Option<(Batch, Vec<u64>)>, LocatedError> {
        loop {
            let carry = std::mem::take(&mut self.carry);
            let mut spans = std::mem::take(&mut self.carry_spans);
            let Some(piece) = self.bgzf.read_piece(carry)? else {
                return Ok(None);
            };
            spans.add(&piece.blocks);
            let at_end = piece.blocks.is_empty();
            let data = &piece.data;
            let mut batch = Batch::with_capacity(data.len(), data.len() / 200);
            let mut offsets = Vec::new();
            let mut parser = LineParser::new(&self.header);
            let mut warnings = Vec::new();
            let mut at = 0;
            while at < data.len() {
                let end = match memchr::memchr(b'\n', &data[at..]) {
                    Some(n) => at + n,
                    None if at_end => data.len(),
                    None => break,
                };
                let line = &data[at..end];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                self.lines += 1;
                self.in_header &= line.first() == Some(&b'@');
                if !self.in_header && !line.is_empty() {
                    let parsed = if memchr::memchr(0, line).is_some() {
                        Err(ParseError::NulByte)
                    } else {
                        parser.parse(line, &mut batch, &mut warnings)
                    };
                    parsed.map_err(|source| LocatedError::Parse { line: self.lines, source })?;
                    offsets.push(spans.voffset(at));
                }
                at = (end + 1).min(data.len());
            }
            let used = at;
            if !offsets.is_empty() {
                offsets.push(spans.voffset(used));
            }
            self.carry = data[used..].to_vec();
            self.carry_spans = spans.carried_past(used);
            if batch.is_empty() {
                if at_end && self.carry.is_empty() {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some((batch, offsets)));
        }
    }
}
