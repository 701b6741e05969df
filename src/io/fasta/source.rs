//! The bytes of a FASTA/FASTQ file, plain or BGZF-compressed, as htslib's BGZF layer gives them
//! to `faidx.c`: read front to back while an index is built ([`Stream`], which also lists the
//! blocks for the `.gzi`), or at an uncompressed offset through that `.gzi` ([`Source`]).
//!
//! Random access into BGZF uses noodles-bgzf's `IndexedReader` with its `.gzi` reader: it is
//! exactly htslib's `bgzf_useek` (the last listed block at or before the offset, then skip
//! inside it). The front-to-back read inflates with mdsam's own block code (ISA-L/libdeflate,
//! [`crate::io::bgzf::block`]), because the `.gzi` needs each block's compressed address, which
//! it has at hand.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use noodles_bgzf as bgzf;

use crate::io::bgzf::block;
use crate::io::bgzf::codec::Inflater;

use super::retrieve::Seekable;

/// How a file is compressed (htslib's `bgzf_compression`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bgzf,
}

/// Looks at the first bytes of `path` (htslib's `bgzf_compression`).
pub fn compression_of(path: &str) -> std::io::Result<Compression> {
    let mut head = [0u8; 18];
    let mut file = File::open(path)?;
    let mut n = 0;
    while n < head.len() {
        let got = file.read(&mut head[n..])?;
        if got == 0 {
            break;
        }
        n += got;
    }
    // htslib's bgzf_read_init: compressed only with all 18 header bytes; BGZF when FEXTRA is set
    // and the first subfield is `BC`.
    Ok(if n < head.len() || !block::is_gzip(&head) {
        Compression::None
    } else if head[3] & 4 != 0 && &head[12..14] == b"BC" {
        Compression::Bgzf
    } else {
        Compression::Gzip
    })
}

/// An opened sequence file for fetches at uncompressed offsets.
pub enum Source {
    Plain(PlainReader),
    Bgzf(Box<bgzf::io::IndexedReader<File>>),
}

impl Source {
    /// A plain file.
    pub fn plain(file: File) -> Source {
        Source::Plain(PlainReader { file, buf: Vec::new(), buf_start: 0, pos: 0, chunk: CHUNK_MIN })
    }

    /// A BGZF file with its `.gzi` pairs.
    pub fn bgzf(file: File, gzi: bgzf::gzi::Index) -> Source {
        Source::Bgzf(Box::new(bgzf::io::IndexedReader::new(file, gzi)))
    }
}

impl Seekable for Source {
    /// `bgzf_useek`.
    fn seek(&mut self, offset: u64) -> std::io::Result<()> {
        match self {
            Source::Plain(r) => {
                r.pos = offset;
                Ok(())
            }
            Source::Bgzf(r) => r.seek(SeekFrom::Start(offset)).map(|_| ()),
        }
    }

    /// `bgzf_read_small`: up to `n` bytes into `out`; fewer only at the end or on an error.
    fn read_small(&mut self, out: &mut [u8], n: usize) -> usize {
        let mut got = 0;
        while got < n {
            let r = match self {
                Source::Plain(r) => r.read(&mut out[got..n]),
                Source::Bgzf(r) => r.read(&mut out[got..n]),
            };
            match r {
                Ok(0) | Err(_) => break,
                Ok(k) => got += k,
            }
        }
        got
    }
}

/// The first read after a jump: a 64 KiB buffer cost more in copying than in system calls when
/// `faidx -r` fetched 20,000 regions of 100 bases (0.48 s against samtools' 0.25 s).
const CHUNK_MIN: usize = 16 * 1024;
/// Reads that follow on from the last double up to this.
const CHUNK_MAX: usize = 1 << 20;

/// A plain file read at offsets (`pread`), keeping the last piece read: a seek inside it costs
/// nothing, and sequential reads grow the pieces.
pub struct PlainReader {
    file: File,
    buf: Vec<u8>,
    buf_start: u64,
    pos: u64,
    chunk: usize,
}

impl Read for PlainReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let buf_end = self.buf_start + self.buf.len() as u64;
        if self.pos < self.buf_start || self.pos >= buf_end {
            self.chunk =
                if self.pos == buf_end { (self.chunk * 2).min(CHUNK_MAX) } else { CHUNK_MIN };
            self.buf.resize(self.chunk.max(out.len()), 0);
            let n = loop {
                match self.file.read_at(&mut self.buf, self.pos) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other?,
                }
            };
            self.buf.truncate(n);
            self.buf_start = self.pos;
            if n == 0 {
                return Ok(0);
            }
        }
        let at = (self.pos - self.buf_start) as usize;
        let n = out.len().min(self.buf.len() - at);
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

/// Reads `path.gzi`-style files: htslib's `bgzf_index_load`.
pub fn read_gzi(path: &str) -> std::io::Result<bgzf::gzi::Index> {
    bgzf::gzi::fs::read(path)
}

/// The `.gzi` bytes for `blocks` (compressed, uncompressed) offsets of every block but the
/// first, as htslib's `bgzf_index_dump` writes them.
pub fn encode_gzi(blocks: &[(u64, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 16 * blocks.len());
    out.extend_from_slice(&(blocks.len() as u64).to_le_bytes());
    for &(c, u) in blocks {
        out.extend_from_slice(&c.to_le_bytes());
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}

/// A file read front to back one byte at a time (htslib's `bgzf_getc`), with the uncompressed
/// offset (`bgzf_utell`) and, for BGZF, the non-empty blocks met (`bgzf_index_add_block`).
pub struct Stream {
    file: File,
    compression: Compression,
    buf: Vec<u8>,
    pos: usize,
    /// Uncompressed bytes before `buf`.
    before: u64,
    /// Compressed offset of the next block.
    next_block: u64,
    /// (compressed, uncompressed) start of each non-empty block read, the first included.
    pub blocks: Vec<(u64, u64)>,
    inflater: Option<Inflater>,
    /// The stream ended; after a damaged block it stays ended, as htslib's reader does.
    ended: bool,
    /// The last block read was empty (the end-of-file marker, as htslib's `last_block_eof`).
    last_block_empty: bool,
    /// A read failed (its htslib message was printed when it happened); the stream ended there
    /// as at the end of the file, and htslib's close then fails.
    pub failed: bool,
}

impl Stream {
    pub fn open(path: &str) -> std::io::Result<Stream> {
        let compression = compression_of(path)?;
        Ok(Stream {
            file: File::open(path)?,
            compression,
            buf: Vec::new(),
            pos: 0,
            before: 0,
            next_block: 0,
            blocks: Vec::new(),
            inflater: None,
            ended: false,
            last_block_empty: false,
            failed: false,
        })
    }

    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The next byte, `None` at the end (or, as in htslib, after an error).
    #[inline]
    pub fn getc(&mut self) -> Option<u8> {
        if self.pos < self.buf.len() {
            let c = self.buf[self.pos];
            self.pos += 1;
            return Some(c);
        }
        if !self.refill() {
            return None;
        }
        self.getc()
    }

    /// Skips to just past the next `\n` (or the end); returns (bytes passed including the
    /// `\n`, of which graphic), and whether a `\n` ended it.
    pub fn take_line(&mut self) -> (u64, u64, bool) {
        let (mut all, mut graphic) = (0u64, 0u64);
        loop {
            if self.pos >= self.buf.len() && !self.refill() {
                return (all, graphic, false);
            }
            let rest = &self.buf[self.pos..];
            let (line, found) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            all += line.len() as u64;
            graphic += line.iter().filter(|&&c| c > b' ' && c <= b'~').count() as u64;
            self.pos += line.len();
            if found {
                self.pos += 1;
                return (all + 1, graphic, true);
            }
        }
    }

    /// `bgzf_utell`.
    pub fn utell(&self) -> u64 {
        self.before + self.pos as u64
    }

    fn refill(&mut self) -> bool {
        if self.ended {
            return false;
        }
        let more = self.read_more();
        self.ended = !more;
        more
    }

    /// Prints htslib's message for a failed read and marks the stream failed.
    fn fail(&mut self, line: String) -> bool {
        eprintln!("{line}");
        self.failed = true;
        false
    }

    fn read_more(&mut self) -> bool {
        self.before += self.buf.len() as u64;
        self.pos = 0;
        self.buf.clear();
        match self.compression {
            Compression::None => {
                self.buf.resize(64 * 1024, 0);
                let n = loop {
                    match self.file.read(&mut self.buf) {
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Ok(n) => break n,
                        Err(e) => {
                            let at = self.before;
                            return self.fail(format!(
                                "[E::bgzf_read_block] Failed to read uncompressed data at offset {at}: {}",
                                crate::error::c_message(&e)
                            ));
                        }
                    }
                };
                self.buf.truncate(n);
                n > 0
            }
            // htslib's reader refuses to index a gzip stream: its first read already fails.
            Compression::Gzip => false,
            Compression::Bgzf => self.next_bgzf_block(),
        }
    }

    /// Reads blocks until one holds data; false at the end or on a damaged block.
    fn next_bgzf_block(&mut self) -> bool {
        loop {
            let at = self.next_block;
            let mut header = [0u8; 18];
            let n = read_full(&mut self.file, &mut header);
            if n == 0 {
                if !self.last_block_empty {
                    eprintln!(
                        "[W::bgzf_read_block] EOF marker is absent. The input may be truncated"
                    );
                }
                return false;
            }
            let size = match block::block_size(&header[..n]) {
                Ok(size) if n == 18 => size,
                _ => {
                    let what = if n == 18 { "Invalid" } else { "Failed to read" };
                    return self
                        .fail(format!("[E::bgzf_read_block] {what} BGZF header at offset {at}"));
                }
            };
            let mut whole = vec![0u8; size];
            whole[..18].copy_from_slice(&header);
            let got = read_full(&mut self.file, &mut whole[18..]);
            if got != size - 18 {
                return self.fail(format!(
                    "[E::bgzf_read_block] Failed to read BGZF block data at offset {at} expected {} bytes; hread returned {got}",
                    size - 18
                ));
            }
            self.next_block += size as u64;
            self.buf.resize(block::BLOCK_MAX, 0);
            let inflater = self.inflater.get_or_insert_with(Inflater::new);
            match block::inflate_unsized(&whole, &mut self.buf, inflater) {
                Ok(0) => {
                    self.buf.clear();
                    self.last_block_empty = true;
                    continue;
                }
                Ok(got) => {
                    self.buf.truncate(got);
                    self.last_block_empty = false;
                    self.blocks.push((at, self.before));
                    return true;
                }
                Err(e) => {
                    self.buf.clear();
                    let line = match e {
                        block::BlockError::CrcMismatch { .. } => "CRC32 checksum mismatch".into(),
                        e => format!("Inflate operation failed: {e}"),
                    };
                    return self.fail(format!("[E::bgzf_uncompress] {line}"));
                }
            }
        }
    }
}

/// Reads until `buf` is full or the end; returns the bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzi_bytes_are_a_count_and_pairs() {
        let bytes = encode_gzi(&[(100, 65280)]);
        assert_eq!(bytes.len(), 24);
        assert_eq!(&bytes[..8], &1u64.to_le_bytes());
        assert_eq!(&bytes[8..16], &100u64.to_le_bytes());
    }
}
