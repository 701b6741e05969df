//! One index chunk of a BGZF-compressed SAM file (`.sam.gz` indexed by `samtools index`): the
//! lines starting at virtual offsets in `[start, end)`, parsed to records, for region queries.
//!
//! htslib indexes such a file one entry a line, so a chunk starts at a line; its last line may
//! run past the chunk's end block, and is read to its newline.

use super::parse::{LineParser, ParseError, Warning};
use crate::io::bgzf::spans::Spans;
use crate::io::bgzf::{self, reader::BlockSpan, reader::ReadError as BgzfError};
use crate::io::input::Input;
use crate::record::header::Header;
use crate::record::store::Batch;

#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    #[error(transparent)]
    Bgzf(#[from] BgzfError),
    #[error("parse error: {0}")]
    Parse(#[from] ParseError),
}

pub struct RangeReader {
    bgzf: bgzf::Reader,
    header: Header,
}

/// Inflated bytes read per step: region chunks are often a block or two.
const PIECE_TARGET: usize = 256 << 10;

impl RangeReader {
    /// Reads records of `input` (BGZF SAM) against `header`.
    pub fn new(input: Input, header: Header) -> RangeReader {
        RangeReader { bgzf: bgzf::Reader::new(input, PIECE_TARGET), header }
    }

    /// The records of the lines starting in `[start, end)`, with the parse warnings met.
    pub fn read_range(
        &mut self,
        start: u64,
        end: u64,
    ) -> Result<(Batch, Vec<Warning>), RangeError> {
        let (data, blocks) = self.inflate_chunk(start, end)?;
        let mut spans = Spans::default();
        spans.add(&blocks);
        let mut parser = LineParser::new(&self.header);
        let (mut batch, mut warnings) = (Batch::default(), Vec::new());
        let mut at = ((start & 0xffff) as usize).min(data.len());
        while at < data.len() && spans.voffset(at) < end {
            let stop = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |n| at + n);
            let line = &data[at..stop];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            // Header lines only meet a whole-file chunk; a QNAME never starts with '@'.
            if !line.is_empty() && line[0] != b'@' {
                if memchr::memchr(0, line).is_some() {
                    return Err(ParseError::NulByte.into());
                }
                parser.parse(line, &mut batch, &mut warnings)?;
            }
            at = stop + 1;
        }
        Ok((batch, warnings))
    }

    /// The inflated blocks from `start`'s block on, until every line starting before `end` is
    /// complete (or the file ends).
    fn inflate_chunk(
        &mut self,
        start: u64,
        end: u64,
    ) -> Result<(Vec<u8>, Vec<BlockSpan>), RangeError> {
        self.bgzf.seek(start >> 16, None).map_err(BgzfError::Io)?;
        let (mut data, mut blocks) = (Vec::new(), Vec::new());
        while let Some(piece) = self.bgzf.read_piece(Vec::new())? {
            let base = data.len();
            blocks.extend(
                piece.blocks.iter().map(|b| BlockSpan { data_start: b.data_start + base, ..*b }),
            );
            data.extend_from_slice(&piece.data);
            if lines_complete(&data, &blocks, end) {
                break;
            }
        }
        Ok((data, blocks))
    }
}

/// Whether `data` holds the end of every line that starts before virtual offset `end`: the
/// blocks reach `end`, and a newline follows the byte before it.
fn lines_complete(data: &[u8], blocks: &[BlockSpan], end: u64) -> bool {
    let (cend, uend) = (end >> 16, (end & 0xffff) as usize);
    let Some(b) = blocks.iter().find(|b| b.coffset >= cend) else {
        return false;
    };
    let end_at = if b.coffset == cend { b.data_start + uend } else { b.data_start };
    let from = end_at.saturating_sub(1).min(data.len());
    memchr::memchr(b'\n', &data[from..]).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_complete_needs_the_end_block_and_a_newline() {
        let blocks =
            [BlockSpan { coffset: 100, data_start: 0 }, BlockSpan { coffset: 200, data_start: 4 }];
        let data = b"ab\ncdef";
        assert!(!lines_complete(data, &blocks[..1], 200 << 16));
        assert!(lines_complete(data, &blocks, 100 << 16 | 2));
        assert!(!lines_complete(data, &blocks, 200 << 16 | 1));
        assert!(!lines_complete(data, &blocks, u64::MAX));
    }
}
