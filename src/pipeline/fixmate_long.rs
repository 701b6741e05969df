//! `fixmate` on a template too long to hold (a million records of one name took 1.2 GB): its
//! records are fixed as they arrive ([`StreamedTemplate`]) and kept in a temporary file, then
//! read back in order, given their final fixes and written. Memory stays at a few buffers
//! whatever the template's length; the output is the in-memory path's.

use crate::error::Error;
use crate::io::sink::{Encoded, RecordSink};
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::ops::fixmate::streamed::StreamedTemplate;
use crate::ops::fixmate::{is_kept, sanitize};
use crate::pipeline::fixmate::FixmateOptions;
use crate::record::{Header, RecordRef};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};

/// Bytes of one template held in memory before it goes to a temporary file instead.
pub const HELD_TEMPLATE_BYTES: usize = 4 << 20;

/// Buffer of the temporary file, and the output written a piece at a time.
const IO_BYTES: usize = 1 << 20;

pub struct LongTemplate {
    name: Vec<u8>,
    fixer: StreamedTemplate,
    file: TempFile,
    out: BufWriter<File>,
    /// One record's buffer, reused.
    record: Vec<u8>,
}

impl LongTemplate {
    /// Starts the template of the records named `name`.
    pub fn new(name: &[u8], opts: &FixmateOptions) -> Result<Self, Error> {
        let mut namer = TempNamer::in_tmpdir("fixmate");
        let (file, out) = namer.create_next().map_err(|e| Error::io(namer.last_path(), e))?;
        Ok(LongTemplate {
            name: name.to_vec(),
            fixer: StreamedTemplate::new(opts.fix),
            file,
            out: BufWriter::with_capacity(IO_BYTES, out),
            record: Vec::new(),
        })
    }

    /// Whether `r` belongs to this template.
    pub fn takes(&self, r: &RecordRef<'_>) -> bool {
        r.read_name() == self.name
    }

    /// Adds the template's next record.
    pub fn push(
        &mut self,
        r: &RecordRef<'_>,
        header: &Header,
        opts: &FixmateOptions,
    ) -> Result<(), Error> {
        let b = &mut self.record;
        b.clear();
        b.extend_from_slice(r.bytes());
        sanitize::sanitize(b, opts.fix.sanitize, |tid| reference_length(header, tid));
        self.fixer.push(b);
        let failed = |e| Error::io(self.file.path_str(), e);
        self.out.write_all(&(b.len() as u32).to_le_bytes()).map_err(failed)?;
        self.out.write_all(b).map_err(failed)
    }

    /// Reads the records back in order, finishes and writes them; removes the file.
    pub fn finish(
        mut self,
        header: &Header,
        opts: &FixmateOptions,
        sink: &mut RecordSink,
    ) -> Result<(), Error> {
        self.fixer.finish();
        let path = self.file.path_str();
        let failed = |e| Error::io(&path, e);
        self.out.flush().map_err(failed)?;
        drop(self.out);
        // Opened again to read: the temporary file was created write-only.
        let file = File::open(&path).map_err(failed)?;
        let mut input = BufReader::with_capacity(IO_BYTES, file);
        // Output buffers come from the recycler the writer gives them back to (new ones each
        // time piled up there: 160 MB for a million records).
        let buffer =
            || Encoded { data: crate::io::recycle::take(2 * IO_BYTES), ..Default::default() };
        let mut out = buffer();
        let mut len = [0u8; 4];
        let b = &mut self.record;
        for at in 0.. {
            match input.read_exact(&mut len) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(failed(e)),
            }
            b.resize(u32::from_le_bytes(len) as usize, 0);
            input.read_exact(b).map_err(failed)?;
            self.fixer.finish_record(at, b);
            if is_kept(b, &opts.fix) {
                out.push_record(b, header, opts.spec.format);
            }
            if out.data.len() >= IO_BYTES {
                sink.write_owned(std::mem::replace(&mut out, buffer()))?;
            }
        }
        sink.write_owned(out)
    }
}

/// A reference's length (0 for none), for the sanitiser.
pub fn reference_length(header: &Header, tid: i32) -> i64 {
    if tid < 0 { 0 } else { header.refs().get(tid as usize).map_or(0, |r| r.len as i64) }
}
