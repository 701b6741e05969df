//! Where `faidx` writes: standard output or a file, plain or BGZF (htslib's `bgzf_open` with
//! `"wu"` or `"wN"`), in 0xff00-byte pieces as htslib's BGZF layer hands them on, so messages on
//! stderr fall between the same pieces of output. For `--write-index` it lists the BGZF blocks
//! for the `.gzi` and counts the uncompressed bytes for the `.fai`.

use std::io::Write;

use crate::error::Error;
use crate::io::bgzf::block::{BLOCK_DATA_MAX, Deflater, EOF_BLOCK};
use crate::io::output::OutputFile;

pub struct FaidxOutput {
    writer: Box<dyn Write + Send>,
    file: Option<OutputFile>,
    deflater: Option<Deflater>,
    pending: Vec<u8>,
    compressed: Vec<u8>,
    /// Compressed bytes written so far (BGZF).
    written: u64,
    /// Uncompressed bytes flushed so far.
    flushed: u64,
    /// (compressed, uncompressed) start of each block written.
    pub blocks: Vec<(u64, u64)>,
}

impl FaidxOutput {
    /// Opens `path` (`-` is stdout); `level` is `Some` for BGZF output.
    pub fn create(path: &str, level: Option<i32>) -> std::io::Result<FaidxOutput> {
        let (writer, file) = crate::io::output::create(path)?;
        Ok(FaidxOutput {
            writer,
            file,
            deflater: level.map(Deflater::new),
            pending: Vec::with_capacity(BLOCK_DATA_MAX),
            compressed: Vec::new(),
            written: 0,
            flushed: 0,
            blocks: Vec::new(),
        })
    }

    pub fn write(&mut self, mut data: &[u8]) -> Result<(), Error> {
        while !data.is_empty() {
            let room = BLOCK_DATA_MAX - self.pending.len();
            let n = room.min(data.len());
            self.pending.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.pending.len() >= BLOCK_DATA_MAX {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Writes what is pending as one block (`bgzf_flush`).
    pub fn flush_block(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let result = match self.deflater.as_mut() {
            Some(d) => {
                self.compressed.clear();
                d.deflate_into(&self.pending, &mut self.compressed);
                self.blocks.push((self.written, self.flushed));
                self.written += self.compressed.len() as u64;
                self.writer.write_all(&self.compressed)
            }
            None => self.writer.write_all(&self.pending),
        };
        self.flushed += self.pending.len() as u64;
        self.pending.clear();
        result.and_then(|_| self.writer.flush()).map_err(write_error)
    }

    /// Ends the output (BGZF's end-of-file block) and, for a file, moves it into place when
    /// `keep` (else the file is removed; standard output keeps what was written, as samtools').
    pub fn finish(mut self, keep: bool) -> Result<(), Error> {
        if !keep && self.file.is_some() {
            return Ok(());
        }
        self.flush_block()?;
        if self.deflater.is_some() {
            self.writer.write_all(&EOF_BLOCK).map_err(write_error)?;
        }
        self.writer.flush().map_err(write_error)?;
        drop(self.writer);
        match self.file {
            Some(f) => f.commit().map_err(write_error),
            None => Ok(()),
        }
    }
}

fn write_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Error::BrokenPipe;
    }
    Error::Bare(format!("samtools faidx: failed to write output: {}", crate::error::c_message(&e)))
}
