//! Where records go: SAM text, bgzipped SAM, BAM or CRAM, to a file (atomically) or stdout; the
//! writing twin of [`crate::io::open`].
//!
//! Records arrive already encoded as [`Encoded`] units (SAM lines or framed BAM records), made in
//! parallel by the command; the sink only frames them into BGZF blocks, whose deflate is itself
//! parallel, or copies text.

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::error::Error;
use crate::io::background::BackgroundWriter;
use crate::io::format::OutputFormat;
use crate::io::index::{Format as IndexFormat, IndexBuilder, IndexedRecord};
use crate::io::output_spec::OutputSpec;
use crate::io::sam::format::format_record;
use crate::io::{bam, bgzf, cram, output};
use crate::record::{Header, RecordRef};

/// A run of encoded units (SAM lines or framed BAM records) back to back.
#[derive(Default)]
pub struct Encoded {
    pub data: Vec<u8>,
    /// End offset of each unit in `data`.
    pub ends: Vec<u32>,
}

impl Encoded {
    /// An empty run with room for `records` records of `bytes` raw BAM bytes in `format`, in a
    /// recycled buffer (growing by doubling copied the whole output once more).
    pub fn sized_for(bytes: usize, records: usize, format: OutputFormat) -> Encoded {
        let room = if format.takes_bam_records() { bytes + 16 * records } else { 2 * bytes };
        let mut out = Encoded { data: crate::io::recycle::take(room), ends: Vec::new() };
        out.ends.reserve(records);
        out
    }

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

    /// Appends one record (raw BAM bytes) as `format` takes it: framed for BAM and CRAM, a SAM
    /// line otherwise.
    pub fn push_record(&mut self, bytes: &[u8], header: &Header, format: OutputFormat) {
        if format.takes_bam_records() {
            let at = self.begin_record();
            self.data.extend_from_slice(bytes);
            self.end_record(at);
        } else {
            format_record(&mut self.data, &RecordRef::new(bytes), header);
            self.end_unit();
        }
    }
}

enum Kind {
    Text(BackgroundWriter),
    Bgzf(bgzf::Writer),
    Bam(bam::Writer),
    Cram(cram::writer::Writer),
}

pub struct RecordSink {
    path: String,
    kind: Option<Kind>,
    file: Option<output::OutputFile>,
    format: OutputFormat,
    index: Option<PendingIndex>,
    /// `--write-index` of a CRAM output: the `.crai` is built from the finished file.
    crai: Option<String>,
    /// The threads it was made for: callers size their encoding groups by it.
    threads: usize,
}

/// `--write-index`: where the index goes and what it needs of each record written so far.
struct PendingIndex {
    path: String,
    format: IndexFormat,
    n_refs: usize,
    /// Per record: (tid, beg, end, mapped); offsets come from the BGZF writer at the end.
    records: Vec<(i32, i64, i64, bool)>,
}

/// An opened destination: its writer and, for a file renamed into place, the guard to commit.
type Opened = (Box<dyn Write + Send>, Option<output::OutputFile>);

/// Where a sink writes: the name shown in messages, whether a SAM header goes first, and the
/// opened destination.
struct Destination<'a> {
    path: &'a str,
    write_header: bool,
    opened: Opened,
}

/// Compression of temporary BAM files, as samtools writes its sort runs (`wbx1`).
pub const TEMPORARY_LEVEL: i32 = 1;

impl RecordSink {
    /// Opens the output and writes the header (`write_header` false: SAM without header).
    pub fn create(
        path: &str,
        spec: &OutputSpec,
        threads: usize,
        header: &Header,
        write_header: bool,
    ) -> Result<RecordSink, Error> {
        if path == "-" && std::io::stdout().is_terminal() {
            // Records on the screen: a progress bar would be drawn over them.
            crate::progress::disable();
        }
        Self::create_at(Path::new(path), spec, threads, header, write_header)
    }

    /// [`Self::create`] at a path that need not be UTF-8 (`split -f %!` names from record data).
    pub fn create_at(
        os_path: &Path,
        spec: &OutputSpec,
        threads: usize,
        header: &Header,
        write_header: bool,
    ) -> Result<RecordSink, Error> {
        let shown = os_path.to_string_lossy();
        let path = shown.as_ref();
        let opened = output::create_unbuffered(os_path).map_err(|e| Error::CannotCreate {
            path: path.to_string(),
            reason: crate::error::c_message(&e),
        })?;
        let to = Destination { path, write_header, opened };
        Self::create_with(to, spec, threads, header)
    }

    /// A temporary BAM (sort runs, markdup's `-S` records) at level 1, deflated with ISA-L
    /// whatever engine the output uses: only mdsam reads it back, so only speed matters. On a
    /// 64 KiB block ISA-L's level 1 takes 0.11 ms against libdeflate's 0.25 ms (issue 22).
    /// `file` is the temporary file at `path`, already created (`TempNamer::create_next`).
    pub fn create_temporary(
        path: &str,
        file: std::fs::File,
        threads: usize,
        header: &Header,
    ) -> Result<RecordSink, Error> {
        let spec = OutputSpec {
            engine: bgzf::codec::Engine::Isal,
            ..OutputSpec::new(OutputFormat::Bam, TEMPORARY_LEVEL)
        };
        // Read back by this command: its pages are worth keeping in the cache.
        let opened = (output::temporary_writer(file, output::PageCache::Keep), None);
        Self::create_with(Destination { path, write_header: true, opened }, &spec, threads, header)
    }

    /// A temporary BAM stored uncompressed and past the page cache (markdup-pipeline's sorted
    /// runs), read back with [`crate::io::open::open_streamed_direct`].
    pub fn create_uncompressed_temporary(
        path: &str,
        file: std::fs::File,
        threads: usize,
        header: &Header,
    ) -> Result<RecordSink, Error> {
        let spec = OutputSpec::new(OutputFormat::Bam, 0);
        let opened = (output::temporary_writer(file, output::PageCache::Bypass), None);
        Self::create_with(Destination { path, write_header: true, opened }, &spec, threads, header)
    }

    /// Opens `to` as `spec` says. BGZF output is written by the deflate stage's own thread, in
    /// whole blocks; text goes through a background writer that takes whole buffers
    /// (`write_owned`).
    fn create_with(
        to: Destination<'_>,
        spec: &OutputSpec,
        threads: usize,
        header: &Header,
    ) -> Result<RecordSink, Error> {
        let Destination { path, write_header, opened: (w, file) } = to;
        let io = |e| Error::io(path, e);
        let compression = (spec.level, spec.engine);
        let kind = match spec.format {
            OutputFormat::Bam => {
                Kind::Bam(bam::Writer::with_engine(w, header, compression, threads).map_err(io)?)
            }
            OutputFormat::SamGz => {
                let mut b = bgzf::Writer::with_engine(w, compression, threads).map_err(io)?;
                if write_header {
                    b.write_bytes(&header.sam_text()).map_err(io)?;
                }
                Kind::Bgzf(b)
            }
            OutputFormat::Cram => {
                let writer = cram::writer::Writer::new(w, header, path, &spec.cram, threads);
                Kind::Cram(writer.map_err(|e| {
                    Error::Message(format!("failed to write the CRAM header of \"{path}\": {e}"))
                })?)
            }
            OutputFormat::Sam => {
                let mut w = BackgroundWriter::new(w);
                if write_header {
                    w.write_all(&header.sam_text()).map_err(io)?;
                }
                Kind::Text(w)
            }
        };
        let path = path.to_string();
        let format = spec.format;
        Ok(RecordSink { path, kind: Some(kind), file, format, index: None, crai: None, threads })
    }

    /// Builds an index of the BAM output while writing (`--write-index`): BAI when `bai`, else CSI
    /// with samtools' `min_shift` 14. Call before writing records.
    pub fn write_index(
        &mut self,
        index_path: &str,
        bai: bool,
        header: &Header,
    ) -> Result<(), Error> {
        if let Some(Kind::Cram(_)) = self.kind {
            // htslib names a CRAM's index `.crai`, whatever `--write-index` would give BAM.
            let default = format!("{}.csi", self.path);
            let path = if index_path == default {
                format!("{}.crai", self.path)
            } else {
                index_path.to_string()
            };
            self.crai = Some(path);
            return Ok(());
        }
        let Some(Kind::Bam(w)) = self.kind.as_mut() else {
            return Err(Error::Message(format!(
                "failed to open index \"{index_path}\" for writing: indexes are built for BAM output only"
            )));
        };
        w.track_records();
        let longest = header.refs().iter().map(|r| r.len as i64).max().unwrap_or(0);
        let format = if bai {
            IndexFormat::Bai
        } else {
            IndexFormat::csi_for_longest_reference(14, longest)
        };
        self.index = Some(PendingIndex {
            path: index_path.to_string(),
            format,
            n_refs: header.refs().len(),
            records: Vec::new(),
        });
        Ok(())
    }

    pub fn format(&self) -> OutputFormat {
        self.format
    }

    /// The threads the sink was made for (at least 1).
    pub fn threads(&self) -> usize {
        self.threads.max(1)
    }

    pub fn write(&mut self, enc: &Encoded) -> Result<(), Error> {
        let path = &self.path;
        let io = |e| write_error(path, e);
        match self.kind.as_mut() {
            Some(Kind::Text(w)) => w.write_all(&enc.data).map_err(io),
            Some(Kind::Bgzf(b)) => b.write_units(&units_of(enc)).map_err(io),
            Some(Kind::Cram(c)) => c.write_framed(&units_of(enc)).map_err(io),
            Some(Kind::Bam(b)) => {
                if let Some(ix) = self.index.as_mut() {
                    let mut start = 0usize;
                    for &end in &enc.ends {
                        let r = RecordRef::new(&enc.data[start + 4..end as usize]);
                        let mapped = r.flag() & crate::record::layout::flags::UNMAP == 0;
                        ix.records.push((r.ref_id(), r.pos(), r.end_pos(), mapped));
                        start = end as usize;
                    }
                }
                b.write_framed_all(&units_of(enc)).map_err(io)
            }
            None => Ok(()),
        }
    }

    /// As [`RecordSink::write`], handing SAM text over without a copy; the buffer is recycled
    /// (see `io::recycle`) once written.
    pub fn write_owned(&mut self, enc: Encoded) -> Result<(), Error> {
        if let Some(Kind::Text(w)) = self.kind.as_mut() {
            return w.write_owned(enc.data).map_err(|e| Error::io(self.path.as_str(), e));
        }
        self.write(&enc)?;
        crate::io::recycle::give(enc.data);
        Ok(())
    }

    /// Writes framed BAM records (BAM output only; otherwise an error), assembling and
    /// deflating BGZF blocks in parallel.
    pub fn write_framed(&mut self, framed: &[&[u8]]) -> Result<(), Error> {
        let path = &self.path;
        if let Some(Kind::Cram(c)) = self.kind.as_mut() {
            return c.write_framed(framed).map_err(|e| write_error(path, e));
        }
        let Some(Kind::Bam(b)) = self.kind.as_mut() else {
            return Err(Error::Message("internal: framed records need BAM output".into()));
        };
        if let Some(ix) = self.index.as_mut() {
            use rayon::prelude::*;
            let located: Vec<(i32, i64, i64, bool)> =
                framed.par_iter().map(|f| locate(f)).collect();
            ix.records.extend(located);
        }
        b.write_framed_all(framed).map_err(|e| write_error(path, e))
    }

    /// Writes the framed BAM records of `units` of nonzero size (BAM output only; otherwise an
    /// error), planned from their sizes, then gathered and deflated by jobs of a few blocks that
    /// `spawner` runs; returns once they are queued. None may use the name extension (the
    /// caller checks [`crate::record::layout::uses_name_ext`]).
    pub fn write_planned_shared<'s, U: bgzf::gather::Units + Send + Sync + 's>(
        &mut self,
        units: std::sync::Arc<U>,
        spawner: &impl bgzf::stage::Spawner<'s>,
    ) -> Result<(), Error> {
        let path = &self.path;
        let Some(Kind::Bam(b)) = self.kind.as_mut() else {
            return Err(Error::Message("internal: planned records need BAM output".into()));
        };
        if let Some(ix) = self.index.as_mut() {
            ix.records.extend(locate_units(&*units));
        }
        b.write_units_shared(units, spawner).map_err(|e| write_error(path, e))
    }

    /// As [`RecordSink::write_framed`] for the framed records of `units` (of nonzero size) that
    /// the sink may hold on to: to BAM, this returns once their blocks are queued to be
    /// deflated by jobs `spawner` runs, and the caller goes on meanwhile.
    pub fn write_framed_shared<'s, U: bgzf::gather::Units + Send + Sync + 's>(
        &mut self,
        units: std::sync::Arc<U>,
        spawner: &impl bgzf::stage::Spawner<'s>,
    ) -> Result<(), Error> {
        let written = || (0..units.count()).filter(|&i| units.size(i) > 0).map(|i| units.unit(i));
        if !matches!(self.kind, Some(Kind::Bam(_)))
            || written().any(|f| crate::record::layout::uses_name_ext(&f[4..]))
        {
            // CRAM, or long CIGARs that change size on the way out: written before returning.
            return self.write_framed(&written().collect::<Vec<_>>());
        }
        self.write_planned_shared(units, spawner)
    }

    /// Flushes everything and moves the file into place.
    pub fn finish(mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let io = |e| Error::io(path.as_str(), e);
        let mut index_bytes = None;
        let mut w = match self.kind.take() {
            Some(Kind::Text(w)) => Box::new(w),
            Some(Kind::Bgzf(b)) => b.finish().map_err(io)?,
            Some(Kind::Cram(c)) => c.finish().map_err(io)?,
            Some(Kind::Bam(b)) => match self.index.take() {
                None => b.finish().map_err(io)?,
                Some(ix) => {
                    let (w, starts, end) = b.finish_tracked().map_err(io)?;
                    index_bytes = Some((ix.path.clone(), build_index(ix, &starts, end)?));
                    w
                }
            },
            None => return Ok(()),
        };
        w.flush().map_err(io)?;
        drop(w);
        if let Some(f) = self.file.take() {
            f.commit().map_err(io)?;
        }
        if let Some(crai) = self.crai.take() {
            let bytes = cram::index::build_crai(&path)
                .map_err(|e| Error::Message(format!("failed to build index \"{crai}\": {e}")))?;
            index_bytes = Some((crai, bytes));
        }
        if let Some((path, bytes)) = index_bytes {
            let (mut w, file) = output::create(&path).map_err(|e| {
                Error::Message(format!("failed to open index \"{path}\" for writing: {e}"))
            })?;
            w.write_all(&bytes).and_then(|_| w.flush()).map_err(|e| Error::io(path.as_str(), e))?;
            drop(w);
            if let Some(f) = file {
                f.commit().map_err(|e| Error::io(path.as_str(), e))?;
            }
        }
        Ok(())
    }
}

/// What the index needs of a framed record: (tid, beg, end, mapped).
fn locate(framed: &[u8]) -> (i32, i64, i64, bool) {
    let r = RecordRef::new(&framed[4..]);
    (r.ref_id(), r.pos(), r.end_pos(), r.flag() & crate::record::layout::flags::UNMAP == 0)
}

/// [`locate`] for each written unit of `units`, on the pool.
fn locate_units(units: &(impl bgzf::gather::Units + ?Sized)) -> Vec<(i32, i64, i64, bool)> {
    use rayon::prelude::*;
    (0..units.count())
        .into_par_iter()
        .filter(|&i| units.size(i) > 0)
        .map(|i| locate(units.unit(i)))
        .collect()
}

/// A failed record write on `path`; a record BAM cannot hold gets htslib's own message.
fn write_error(path: &str, e: std::io::Error) -> Error {
    if bam::PositionTooLarge::is(&e) {
        return Error::Bare(format!("[E::bam_write1] {}", bam::PositionTooLarge));
    }
    if let Some(span) = bam::writer::is_span_too_long(&e) {
        return Error::Bare(format!("[E::bam_write1] {span}"));
    }
    Error::io(path, e)
}

/// Feeds the records with their start offsets (each record ends where the next starts, the last
/// at `end`) to the index builder.
fn build_index(ix: PendingIndex, starts: &[u64], end: u64) -> Result<Vec<u8>, Error> {
    let mut builder = IndexBuilder::new(ix.n_refs, ix.format);
    for (i, &(tid, beg, rec_end, is_mapped)) in ix.records.iter().enumerate() {
        let voffset_start = starts[i];
        let voffset_end = starts.get(i + 1).copied().unwrap_or(end);
        builder
            .push(&IndexedRecord { tid, beg, end: rec_end, is_mapped, voffset_start, voffset_end })
            .map_err(|e| Error::Message(format!("failed to build index \"{}\": {e}", ix.path)))?;
    }
    Ok(builder.finish(end).encode())
}

/// The units of `enc`, for the BGZF writer's batched path: blocks are assembled from them in
/// parallel, where copying unit by unit into the open block ran on one thread (markdup and
/// fixmate `-u` write their whole output this way).
fn units_of(enc: &Encoded) -> Vec<&[u8]> {
    let mut start = 0usize;
    enc.ends
        .iter()
        .map(|&end| {
            let unit = &enc.data[start..end as usize];
            start = end as usize;
            unit
        })
        .collect()
}
