//! One index chunk of a BGZF-compressed SAM file (`.sam.gz` indexed by `samtools index`): the
//! lines starting at virtual offsets in `[start, end)`, parsed to records, for region queries.
//!
//! htslib indexes such a file one entry a line, so a chunk starts at a line; its last line may
//! run past the chunk's end block, and is read to its newline.

use super::parse::ParseError;
use super::reader::{self, BatchesWithWarnings};
use crate::io::bgzf::{self, reader::BlockSpan, reader::ReadError as BgzfError};
use crate::io::input::Input;
use crate::record::header::Header;

#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    #[error(transparent)]
    Bgzf(#[from] BgzfError),
    #[error(transparent)]
    Sam(#[from] reader::ReadError),
    #[error("parse error: {0}")]
    Parse(#[from] ParseError),
}

pub struct RangeReader {
    bgzf: bgzf::Reader,
    header: Header,
    /// Parsing tasks a range's lines are split into.
    tasks: usize,
}

/// Most inflated bytes read at once: enough blocks to inflate in parallel.
const PIECE_TARGET: usize = 4 << 20;

impl RangeReader {
    /// Reads records of `input` (BGZF SAM) against `header`, each range parsed as `threads`
    /// tasks.
    pub fn new(input: Input, header: Header, threads: usize) -> RangeReader {
        let tasks = threads.max(1);
        RangeReader { bgzf: bgzf::Reader::new(input, PIECE_TARGET), header, tasks }
    }

    /// The records of the lines starting in `[start, end)`, parsed in parallel, with the parse
    /// warnings met.
    pub fn read_range(&mut self, start: u64, end: u64) -> Result<BatchesWithWarnings, RangeError> {
        let (data, blocks) = self.inflate_chunk(start, end)?;
        let mut from = ((start & 0xffff) as usize).min(data.len());
        // Header lines only meet a whole-file chunk; a QNAME never starts with '@'.
        while data.get(from) == Some(&b'@') {
            from = memchr::memchr(b'\n', &data[from..]).map_or(data.len(), |n| from + n + 1);
        }
        let cut = end_index(&blocks, end).and_then(|e| line_end(&data, e)).unwrap_or(data.len());
        let cut = cut.clamp(from, data.len());
        Ok(reader::parse_body(&data[from..cut], &self.header, self.tasks, &mut 0)?)
    }

    /// The inflated blocks from `start`'s block on, until every line starting before `end` is
    /// complete (or the file ends).
    fn inflate_chunk(
        &mut self,
        start: u64,
        end: u64,
    ) -> Result<(Vec<u8>, Vec<BlockSpan>), RangeError> {
        self.bgzf.seek(start >> 16, None).map_err(BgzfError::Io)?;
        // A chunk of a few blocks inflates only those: about 4 inflated bytes a compressed one.
        let compressed = (end >> 16).saturating_sub(start >> 16) as usize;
        let mut target = compressed.saturating_mul(4).saturating_add(64 << 10).min(PIECE_TARGET);
        let (mut data, mut blocks) = (Vec::new(), Vec::new());
        while let Some(piece) = self.bgzf.read_piece_of(Vec::new(), target)? {
            let base = data.len();
            blocks.extend(
                piece.blocks.iter().map(|b| BlockSpan { data_start: b.data_start + base, ..*b }),
            );
            if data.is_empty() {
                data = piece.data;
            } else {
                data.extend_from_slice(&piece.data);
            }
            if end_index(&blocks, end).and_then(|e| line_end(&data, e)).is_some() {
                break;
            }
            target = PIECE_TARGET;
        }
        Ok((data, blocks))
    }
}

/// Where virtual offset `end` falls in the data of `blocks`; `None` before the blocks reach it.
fn end_index(blocks: &[BlockSpan], end: u64) -> Option<usize> {
    let (cend, uend) = (end >> 16, (end & 0xffff) as usize);
    let b = blocks.iter().find(|b| b.coffset >= cend)?;
    Some(if b.coffset == cend { b.data_start + uend } else { b.data_start })
}

/// The index after the newline ending the line that holds byte `e - 1` (so after every line
/// starting before `e`); `None` while `data` holds no such newline.
fn line_end(data: &[u8], e: usize) -> Option<usize> {
    if e == 0 {
        return Some(0);
    }
    memchr::memchr(b'\n', data.get(e - 1..)?).map(|n| e + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_ends_after_the_line_holding_the_byte_before_end() {
        let blocks =
            [BlockSpan { coffset: 100, data_start: 0 }, BlockSpan { coffset: 200, data_start: 4 }];
        let data = b"ab\ncdef";
        assert_eq!(end_index(&blocks[..1], 200 << 16), None);
        assert_eq!(end_index(&blocks, 100 << 16 | 2), Some(2));
        assert_eq!(end_index(&blocks, 200 << 16 | 1), Some(5));
        assert_eq!(line_end(data, 2), Some(3), "the line ends inside the data");
        assert_eq!(line_end(data, 3), Some(3), "a line starting at `end` is left out");
        assert_eq!(line_end(data, 5), None, "no newline yet");
        assert_eq!(line_end(data, 9), None, "not reached yet");
        assert_eq!(line_end(data, 0), Some(0));
    }
}
