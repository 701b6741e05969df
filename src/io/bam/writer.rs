//! BAM writing: the header in its own BGZF block(s), then records, through `bgzf::Writer`.

use std::io::Write;

use crate::io::bgzf;
use crate::record::{Batch, Header};

pub struct Writer {
    bgzf: bgzf::Writer,
}

impl Writer {
    /// Writes the header and returns a writer for records (`bam_hdr_write` then `bgzf_flush`).
    pub fn new(
        sink: Box<dyn Write + Send>,
        header: &Header,
        level: i32,
        threads: usize,
    ) -> std::io::Result<Self> {
        let mut bgzf = bgzf::Writer::new(sink, level, threads)?;
        bgzf.write_bytes(&header.encode_bam())?;
        bgzf.flush_block()?;
        Ok(Writer { bgzf })
    }

    /// Writes one record given with its `block_size` prefix.
    #[inline]
    pub fn write_framed(&mut self, framed: &[u8]) -> std::io::Result<()> {
        self.bgzf.write_unit(framed)
    }

    /// Writes many framed records; same bytes as one [`Writer::write_framed`] per record.
    pub fn write_framed_all(&mut self, framed: &[&[u8]]) -> std::io::Result<()> {
        self.bgzf.write_units(framed)
    }

    pub fn write_batch(&mut self, batch: &Batch) -> std::io::Result<()> {
        for i in 0..batch.len() {
            self.write_framed(batch.framed(i))?;
        }
        Ok(())
    }

    pub fn finish(self) -> std::io::Result<Box<dyn Write + Send>> {
        self.bgzf.finish()
    }

    /// Records each later record's start virtual offset (for `--write-index`).
    pub fn track_records(&mut self) {
        self.bgzf.track_units();
    }

    /// Finishes; returns each tracked record's start virtual offset and the data's end offset.
    pub fn finish_tracked(self) -> std::io::Result<(Box<dyn Write + Send>, Vec<u64>, u64)> {
        self.bgzf.finish_tracked()
    }
}
