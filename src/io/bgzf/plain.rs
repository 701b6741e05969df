//! Plain bytes presented as BGZF: each run of up to [`block::BLOCK_DATA_MAX`] bytes becomes one
//! stored (level 0) block, and the stream ends with the EOF block.
//!
//! htslib reads a BAM compressed with plain gzip instead of BGZF; mdsam does the same by
//! gunzipping it and feeding the bytes, wrapped this way, to the one BGZF → BAM reader. Wrapping
//! costs a copy and a CRC32 per byte, nothing next to the sequential gunzip in front of it.

use std::io::Read;

use super::block::{self, Deflater};

pub struct PlainAsBgzf<R> {
    inner: R,
    deflater: Deflater,
    plain: Vec<u8>,
    blocks: Vec<u8>,
    /// Bytes of `blocks` already handed out.
    at: usize,
    finished: bool,
}

impl<R: Read> PlainAsBgzf<R> {
    pub fn new(inner: R) -> Self {
        PlainAsBgzf {
            inner,
            deflater: Deflater::new(0),
            plain: vec![0; block::BLOCK_DATA_MAX],
            blocks: Vec::with_capacity(block::BLOCK_MAX),
            at: 0,
            finished: false,
        }
    }

    /// Makes the next block (or the EOF block at the end); false when nothing is left.
    fn refill(&mut self) -> std::io::Result<bool> {
        if self.finished {
            return Ok(false);
        }
        let mut filled = 0;
        while filled < self.plain.len() {
            match self.inner.read(&mut self.plain[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.blocks.clear();
        self.at = 0;
        if filled == 0 {
            self.finished = true;
            self.blocks.extend_from_slice(&block::EOF_BLOCK);
        } else {
            self.deflater.deflate_into(&self.plain[..filled], &mut self.blocks);
        }
        Ok(true)
    }
}

impl<R: Read> Read for PlainAsBgzf<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.blocks.len() && !self.refill()? {
            return Ok(0);
        }
        let n = buf.len().min(self.blocks.len() - self.at);
        buf[..n].copy_from_slice(&self.blocks[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::bgzf::Reader;
    use crate::io::input::Input;

    #[test]
    fn wrapped_bytes_read_back_through_the_bgzf_reader() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let wrapped = PlainAsBgzf::new(std::io::Cursor::new(data.clone()));
        let mut reader = Reader::new(Input::from_reader("t", Box::new(wrapped)), 1 << 20);
        let mut back = Vec::new();
        while let Some(piece) = reader.read_piece(Vec::new()).unwrap() {
            back.extend_from_slice(&piece.data);
        }
        assert_eq!(back, data);

        let mut empty = Vec::new();
        PlainAsBgzf::new(std::io::empty()).read_to_end(&mut empty).unwrap();
        assert_eq!(empty, block::EOF_BLOCK);
    }
}
