//! Where records go: SAM text, bgzipped SAM or BAM, to a file (atomically) or stdout.
//!
//! Records arrive already encoded as [`Encoded`] units (SAM lines or framed BAM records), made in
//! parallel by the command; the sink only frames them into BGZF blocks, whose deflate is itself
//! parallel, or copies text.

use std::io::Write;

use crate::error::Error;
use crate::io::{bam, bgzf, output};
use crate::record::Header;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Sam,
    /// BGZF-compressed SAM (`.sam.gz`).
    SamGz,
    Bam,
}

impl OutputFormat {
    /// The format a file name implies, as htslib's extension mapping (`None` when unknown).
    pub fn from_path(path: &str) -> Option<OutputFormat> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".bam") {
            Some(OutputFormat::Bam)
        } else if lower.ends_with(".sam.gz") {
            Some(OutputFormat::SamGz)
        } else if lower.ends_with(".sam") {
            Some(OutputFormat::Sam)
        } else {
            None
        }
    }
}

/// A run of encoded units (SAM lines or framed BAM records) back to back.
#[derive(Default)]
pub struct Encoded {
    pub data: Vec<u8>,
    /// End offset of each unit in `data`.
    pub ends: Vec<u32>,
}

impl Encoded {
    pub fn end_unit(&mut self) {
        self.ends.push(self.data.len() as u32);
    }

    /// Starts a BAM record: reserves its `block_size`; returns where it starts.
    pub fn begin_record(&mut self) -> usize {
        let at = self.data.len();
        self.data.extend_from_slice(&[0; 4]);
        at
    }

    /// Fills in the `block_size` of the record begun at `at`.
    pub fn end_record(&mut self, at: usize) {
        let size = (self.data.len() - at - 4) as u32;
        self.data[at..at + 4].copy_from_slice(&size.to_le_bytes());
        self.end_unit();
    }
}

enum Kind {
    Text(Box<dyn Write + Send>),
    Bgzf(bgzf::Writer),
    Bam(bam::Writer),
}

pub struct RecordSink {
    path: String,
    kind: Option<Kind>,
    file: Option<output::OutputFile>,
    format: OutputFormat,
}

impl RecordSink {
    /// Opens the output and writes the header (`write_header` false: SAM without header).
    pub fn create(
        path: &str,
        format: OutputFormat,
        level: i32,
        threads: usize,
        header: &Header,
        write_header: bool,
    ) -> Result<RecordSink, Error> {
        let (w, file) = output::create(path)
            .map_err(|e| Error::file(path, format!("could not open for writing: {e}")))?;
        let io = |e| Error::io(path, e);
        let kind = match format {
            OutputFormat::Bam => {
                Kind::Bam(bam::Writer::new(w, header, level, threads).map_err(io)?)
            }
            OutputFormat::SamGz => {
                let mut b = bgzf::Writer::new(w, level, threads);
                if write_header {
                    b.write_bytes(&header.sam_text()).map_err(io)?;
                }
                Kind::Bgzf(b)
            }
            OutputFormat::Sam => {
                let mut w = w;
                if write_header {
                    w.write_all(&header.sam_text()).map_err(io)?;
                }
                Kind::Text(w)
            }
        };
        Ok(RecordSink { path: path.to_string(), kind: Some(kind), file, format })
    }

    pub fn format(&self) -> OutputFormat {
        self.format
    }

    pub fn write(&mut self, enc: &Encoded) -> Result<(), Error> {
        let path = &self.path;
        let io = |e| Error::io(path.as_str(), e);
        match self.kind.as_mut() {
            Some(Kind::Text(w)) => w.write_all(&enc.data).map_err(io),
            Some(Kind::Bgzf(b)) => write_units(enc, |u| b.write_unit(u)).map_err(io),
            Some(Kind::Bam(b)) => write_units(enc, |u| b.write_framed(u)).map_err(io),
            None => Ok(()),
        }
    }

    /// Flushes everything and moves the file into place.
    pub fn finish(mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let io = |e| Error::io(path.as_str(), e);
        let mut w = match self.kind.take() {
            Some(Kind::Text(w)) => w,
            Some(Kind::Bgzf(b)) => b.finish().map_err(io)?,
            Some(Kind::Bam(b)) => b.finish().map_err(io)?,
            None => return Ok(()),
        };
        w.flush().map_err(io)?;
        drop(w);
        if let Some(f) = self.file.take() {
            f.commit().map_err(io)?;
        }
        Ok(())
    }
}

fn write_units(
    enc: &Encoded,
    mut f: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut start = 0usize;
    for &end in &enc.ends {
        f(&enc.data[start..end as usize])?;
        start = end as usize;
    }
    Ok(())
}
