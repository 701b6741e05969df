//! A BAM file as its header and the BGZF blocks after it, for `cat`, which copies blocks without
//! inflating them (samtools' `bam_cat`): only the block the header ends in is inflated, so the
//! records after the header in it can be compressed again on their own.
//!
//! samtools copies every byte after that block but the last 28, and keeps those only when they
//! are not an end-of-file block ([`Ending`]). The bytes copied here must also frame whole BGZF
//! blocks: a file cut inside a block is refused, where samtools would copy the torn block into
//! an output no reader can read.

use std::io::Write;

use crate::io::bgzf::codec::Inflater;

use super::reader::{ReadError, decode_header};
use crate::io::bgzf::block::{self, BlockError};
use crate::io::bgzf::reader::ReadError as BgzfError;
use crate::io::input::Input;
use crate::record::Header;

/// The bytes samtools holds back at the end of each file: an end-of-file block's length.
pub const TAIL_LEN: usize = block::EOF_BLOCK.len();

/// Blocks copied per write: small enough that the buffer read into stays in the CPU's cache
/// (with `cat` reading instead of mapping its inputs, see `pipeline::cat`).
const COPY_RUN_BYTES: usize = 256 << 10;

pub struct RawBam {
    pub header: Header,
    /// The inflated bytes after the header in the block it ends in (records), often none.
    pub leftover: Vec<u8>,
    input: Input,
}

/// Why copying the blocks stopped.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// Fewer bytes than an end-of-file block after the header (samtools' "truncated file?").
    #[error("fewer than {TAIL_LEN} bytes after the header")]
    TooShort,
    #[error(transparent)]
    Read(#[from] BgzfError),
    #[error("write failed: {0}")]
    Write(std::io::Error),
}

/// How a file's last 28 bytes looked (samtools checks the gzip magic and a zero ISIZE).
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// An empty block, left out of the output.
    EofBlock,
    /// Anything else, copied too (samtools warns of possible corruption).
    Unexpected,
}

impl RawBam {
    /// Reads the header, inflating blocks only until it is complete.
    pub fn read_header(mut input: Input) -> Result<RawBam, ReadError> {
        let mut data = Vec::new();
        let mut scratch = vec![0; block::BLOCK_MAX];
        let mut inflater = Inflater::new();
        loop {
            let offset = input.position();
            let block = next_block(&mut input)?.ok_or(ReadError::TruncatedHeader)?;
            let n = block::inflate_unsized(block, &mut scratch, &mut inflater)
                .map_err(|source| BgzfError::Block { source, offset })?;
            let size = block.len();
            input.consume(size);
            data.extend_from_slice(&scratch[..n]);
            if let Some((header, used)) = decode_header(&data)? {
                let leftover = data[used..].to_vec();
                return Ok(RawBam { header, leftover, input });
            }
        }
    }

    /// Copies the blocks after the header's to `out`, all but the last [`TAIL_LEN`] bytes, which
    /// are copied only when they are not an end-of-file block. `last_tail` carries those bytes
    /// from file to file: samtools checks the previous file's again when a file has no blocks
    /// after its header (a `None` there, its uninitialised buffer, is never copied).
    pub fn copy_blocks(
        &mut self,
        out: &mut dyn Write,
        last_tail: &mut Option<Vec<u8>>,
    ) -> Result<Ending, CopyError> {
        let available = self.input.peek(TAIL_LEN).map_err(BgzfError::from)?.len();
        if available > 0 && available < TAIL_LEN {
            return Err(CopyError::TooShort);
        }
        let mut held = HeldTail::default();
        loop {
            let run = self.next_run()?;
            if run == 0 {
                break;
            }
            let bytes = self.input.peek(run).map_err(BgzfError::from)?;
            held.push(bytes, out).map_err(CopyError::Write)?;
            self.input.consume(run);
        }
        if available > 0 {
            *last_tail = Some(held.bytes);
        }
        match last_tail.as_deref() {
            Some(tail) if is_eof_like(tail) => Ok(Ending::EofBlock),
            Some(tail) => {
                out.write_all(tail).map_err(CopyError::Write)?;
                Ok(Ending::Unexpected)
            }
            None => Ok(Ending::Unexpected),
        }
    }

    /// The length of the next run of whole blocks (0 at the end), checked by their headers only.
    fn next_run(&mut self) -> Result<usize, BgzfError> {
        let mut run = 0;
        while run < COPY_RUN_BYTES {
            let offset = self.input.position() + run as u64;
            let head = self.input.peek(run + 18)?;
            if head.len() == run {
                break;
            }
            let size = block::block_size(&head[run..])
                .map_err(|source| BgzfError::Block { source, offset })?;
            if self.input.peek(run + size)?.len() < run + size {
                return Err(BgzfError::Block { source: BlockError::Truncated, offset });
            }
            run += size;
        }
        Ok(run)
    }
}

/// The next whole block at the input's position, not consumed; `None` at end of input.
fn next_block(input: &mut Input) -> Result<Option<&[u8]>, BgzfError> {
    let offset = input.position();
    let head = input.peek(18)?;
    if head.is_empty() {
        return Ok(None);
    }
    let size = block::block_size(head).map_err(|source| BgzfError::Block { source, offset })?;
    let whole = input.peek(size)?;
    if whole.len() < size {
        return Err(BgzfError::Block { source: BlockError::Truncated, offset });
    }
    Ok(Some(whole))
}

/// samtools' test of a file's last 28 bytes: a gzip magic and an ISIZE of 0.
fn is_eof_like(tail: &[u8]) -> bool {
    tail.len() == TAIL_LEN && block::is_gzip(tail) && tail[TAIL_LEN - 4..] == [0, 0, 0, 0]
}

/// Passes bytes on, always holding back the last [`TAIL_LEN`] seen.
#[derive(Default)]
struct HeldTail {
    bytes: Vec<u8>,
}

impl HeldTail {
    fn push(&mut self, data: &[u8], out: &mut dyn Write) -> std::io::Result<()> {
        let release = (self.bytes.len() + data.len()).saturating_sub(TAIL_LEN);
        let from_held = release.min(self.bytes.len());
        out.write_all(&self.bytes[..from_held])?;
        self.bytes.drain(..from_held);
        let from_data = release - from_held;
        out.write_all(&data[..from_data])?;
        self.bytes.extend_from_slice(&data[from_data..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::bgzf::block::{Deflater, EOF_BLOCK};

    fn input(bytes: Vec<u8>) -> Input {
        Input::from_reader("t", Box::new(std::io::Cursor::new(bytes)))
    }

    /// A BAM whose header and first record share the first block, then `blocks` more blocks.
    fn bam(blocks: &[&[u8]], eof: bool) -> Vec<u8> {
        let header = Header::from_sam_text(b"@SQ\tSN:c\tLN:9\n".to_vec()).unwrap();
        let mut first = header.encode_bam();
        first.extend_from_slice(b"record");
        let mut file = Vec::new();
        let mut d = Deflater::new(1);
        d.deflate_into(&first, &mut file);
        for b in blocks {
            d.deflate_into(b, &mut file);
        }
        if eof {
            file.extend_from_slice(&EOF_BLOCK);
        }
        file
    }

    fn copy(file: Vec<u8>, last: &mut Option<Vec<u8>>) -> (Vec<u8>, Result<Ending, CopyError>) {
        let mut raw = RawBam::read_header(input(file)).unwrap();
        assert_eq!(raw.leftover, b"record");
        let mut out = Vec::new();
        let ending = raw.copy_blocks(&mut out, last);
        (out, ending)
    }

    #[test]
    fn copies_blocks_and_drops_the_eof_block() {
        let file = bam(&[b"one", b"two"], true);
        let first = block::block_size(&file).unwrap();
        let (out, ending) = copy(file.clone(), &mut None);
        assert_eq!(ending.unwrap(), Ending::EofBlock);
        assert_eq!(out, file[first..file.len() - TAIL_LEN]);
    }

    #[test]
    fn a_missing_eof_block_keeps_the_last_bytes() {
        let file = bam(&[b"one"], false);
        let first = block::block_size(&file).unwrap();
        let (out, ending) = copy(file.clone(), &mut None);
        assert_eq!(ending.unwrap(), Ending::Unexpected);
        assert_eq!(out, file[first..]);
    }

    #[test]
    fn nothing_after_the_header_block_checks_the_previous_tail() {
        let (out, ending) = copy(bam(&[], false), &mut Some(EOF_BLOCK.to_vec()));
        assert_eq!((out.len(), ending.unwrap()), (0, Ending::EofBlock));
        let (out, ending) = copy(bam(&[], false), &mut None);
        assert_eq!((out.len(), ending.unwrap()), (0, Ending::Unexpected));
    }

    #[test]
    fn torn_and_short_files_are_refused() {
        let file = bam(&[b"one two three"], true);
        let (_, ending) = copy(file[..file.len() - TAIL_LEN - 5].to_vec(), &mut None);
        assert!(matches!(ending, Err(CopyError::Read(_))), "{ending:?}");
        let first = block::block_size(&file).unwrap();
        let (_, ending) = copy(file[..first + 10].to_vec(), &mut None);
        assert!(matches!(ending, Err(CopyError::TooShort)), "{ending:?}");
    }

    #[test]
    fn a_truncated_header_is_an_error() {
        let file = bam(&[], true);
        let cut = file[..block::block_size(&file).unwrap()].to_vec();
        let mut d = Deflater::new(1);
        let mut short = Vec::new();
        d.deflate_into(b"BAM\x01\x10\0\0\0@SQ", &mut short);
        assert!(RawBam::read_header(input(cut)).is_ok());
        assert!(matches!(RawBam::read_header(input(short)), Err(ReadError::TruncatedHeader)));
    }

    #[test]
    fn held_tail_releases_all_but_the_last_bytes() {
        let mut held = HeldTail::default();
        let mut out = Vec::new();
        for chunk in [&[1u8; 10][..], &[2; 30], &[3; 5]] {
            held.push(chunk, &mut out).unwrap();
        }
        assert_eq!(out.len(), 45 - TAIL_LEN);
        assert_eq!(held.bytes.len(), TAIL_LEN);
        assert_eq!(&held.bytes[TAIL_LEN - 5..], &[3; 5]);
    }
}
