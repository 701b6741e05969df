//! Decompressed bytes of an input in large pieces, whatever its compression: BGZF (parallel
//! inflate), plain gzip (one stream, sequential) or none.

use std::io::Read;

use crate::io::bgzf;
use crate::io::input::Input;

pub enum ByteStream {
    Bgzf(bgzf::Reader),
    Gzip(Box<flate2::read::MultiGzDecoder<Input>>, usize),
    Plain(Input, usize),
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.peek(buf.len())?.len();
        buf[..n].copy_from_slice(&self.peek(n)?[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl ByteStream {
    /// Bytes of the input consumed so far (before decompression).
    pub fn input_position(&self) -> u64 {
        match self {
            ByteStream::Bgzf(r) => r.input().position(),
            ByteStream::Gzip(decoder, _) => decoder.get_ref().position(),
            ByteStream::Plain(input, _) => input.position(),
        }
    }

    /// The next piece of bytes after `prefix`, and whether input ended (then the piece may be
    /// just the prefix, possibly empty).
    pub fn read_piece(
        &mut self,
        mut prefix: Vec<u8>,
    ) -> Result<(Vec<u8>, bool), bgzf::reader::ReadError> {
        match self {
            ByteStream::Bgzf(r) => Ok(match r.read_piece(prefix)? {
                Some(p) => {
                    let ended = p.blocks.is_empty();
                    (p.data, ended)
                }
                None => (Vec::new(), true),
            }),
            ByteStream::Plain(input, target) => {
                let chunk = input.peek(*target)?;
                let n = chunk.len();
                prefix.extend_from_slice(chunk);
                input.consume(n);
                Ok((prefix, n == 0))
            }
            ByteStream::Gzip(decoder, target) => {
                let start = prefix.len();
                prefix.resize(start + *target, 0);
                let mut filled = start;
                while filled < prefix.len() {
                    match decoder.read(&mut prefix[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                prefix.truncate(filled);
                Ok((prefix, filled == start))
            }
        }
    }
}
