//! BGZF (SAMv1 §4.1): blocks, a parallel reader and a parallel writer with htslib's block layout.

pub mod block;
pub mod codec;
pub mod gather;
#[allow(unsafe_code)]
mod isal_ffi;
pub mod plain;
pub mod reader;
pub mod spans;
pub mod stage;
pub mod writer;

pub use reader::Reader;
pub use writer::Writer;

/// The compressed size of the BGZF file at `path` without its trailing EOF marker block (all of
/// it when it has none): where htslib's `bgzf_tell` stands after the last record.
pub fn data_end(path: &str) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let eof = &block::EOF_BLOCK;
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    if size < eof.len() as u64 {
        return Ok(size);
    }
    f.seek(SeekFrom::End(-(eof.len() as i64)))?;
    let mut tail = vec![0u8; eof.len()];
    f.read_exact(&mut tail)?;
    Ok(if tail == eof[..] { size - eof.len() as u64 } else { size })
}
