//! `samtools reference`'s I/O (samtools 1.24 `reference.c`): the records of the input (or of
//! a `-r` region, through its index) rebuild each reference from their MD:Z tags
//! ([`crate::ops::reference`]); with `-e`, the reference blocks a CRAM embeds are copied
//! instead. One FASTA record per reference met, written as soon as the next one starts.

use std::io::Write;

use crate::error::Error;
use crate::io::cram::container_in::{self, ReadError};
use crate::io::cram::decode::slice::{Wanted, read_slice};
use crate::io::index::{Region, parse_region};
use crate::io::input::Input;
use crate::io::open::{InputFormat, RecordReader};
use crate::ops::reference::{BuildError, Dump, INCOMPATIBLE_MESSAGE, build_ref};
use crate::pipeline::checked_open::open_reporting;
use crate::pipeline::threads::Threads;
use crate::pipeline::{cram_region, region};
use crate::record::{Batch, Header};

#[derive(Debug, Default)]
pub struct ReferenceOptions {
    pub input: String,
    pub output: Option<String>,
    pub region: Option<String>,
    /// `-e`: the CRAM's embedded reference blocks instead of MD:Z.
    pub embedded: bool,
    /// Not `-q`: a coverage line per reference on stderr.
    pub verbose: bool,
    /// `-@`: threads parsing a SAM.gz region's lines (samtools' decoding threads).
    pub threads: Threads,
}

/// samtools returns −1 from main for these failures: exit status 255.
const FAILED: Error = Error::Status(255);

/// The reference being filled and where it goes.
struct Builder<'a> {
    header: &'a Header,
    /// The region, its end cut to the first reference's length once printed (samtools
    /// changes its iterator's end in place).
    region: Option<Region>,
    verbose: bool,
    out: Box<dyn Write>,
    current: Option<i32>,
    bases: Vec<u8>,
}

impl Builder<'_> {
    fn reference_len(&self, tid: i32) -> usize {
        usize::try_from(tid)
            .ok()
            .and_then(|t| self.header.refs().get(t))
            .map_or(0, |r| r.len as usize)
    }

    /// Starts reference `tid` after printing the one before: all N (an unknown or unmapped
    /// `tid` keeps the old bases with length 0, as samtools' buffer).
    fn start(&mut self, tid: i32) -> Result<(), Error> {
        if let Some(previous) = self.current.filter(|&t| t >= 0) {
            self.dump(previous)?;
        }
        let len = self.reference_len(tid);
        self.bases.clear();
        self.bases.resize(len, b'N');
        self.current = Some(tid);
        Ok(())
    }

    fn dump(&mut self, tid: i32) -> Result<(), Error> {
        let len = self.bases.len() as i64;
        let region = self.region.as_mut().map(|r| {
            if r.end >= Region::END_OF_REFERENCE {
                r.end = len;
            }
            (r.beg, r.end)
        });
        let name = self.header.ref_name(tid).unwrap_or_default();
        let (text, note) = Dump { name, ref_id: tid, bases: &self.bases, region }.render();
        self.out.write_all(&text).map_err(|e| Error::io("-", e))?;
        if self.verbose {
            self.out.flush().map_err(|e| Error::io("-", e))?;
            eprintln!("{note}");
        }
        Ok(())
    }

    /// The end: the last reference, or a region with no data as all N.
    fn finish(mut self) -> Result<(), Error> {
        match (self.current, self.region) {
            (Some(tid), _) if tid >= 0 => self.dump(tid)?,
            (None, Some(r)) => {
                let len = (r.end.min(self.reference_len(r.tid) as i64)).max(0) as usize;
                self.bases = vec![b'N'; len];
                self.dump(r.tid)?;
            }
            _ => {}
        }
        self.out.flush().map_err(|e| Error::io("-", e))
    }
}

pub fn run(options: &ReferenceOptions) -> Result<(), Error> {
    let out: Box<dyn Write> = match &options.output {
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Box::new(std::io::BufWriter::new(file)),
            Err(e) => return Err(Error::Bare(format!("{path}: {}", crate::error::c_message(&e)))),
        },
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let path = options.input.as_str();
    let mut opened = open_reporting(path, 1, |reason| {
        format!("samtools reference: failed to open file '{path}': {reason}")
    })
    .map_err(|f| {
        f.or_line(&format!("samtools reference: failed to read the header of '{path}'"))
    })?;
    let header = opened.header.clone();
    let mut builder = Builder {
        header: &header,
        region: None,
        verbose: options.verbose,
        out,
        current: None,
        bases: Vec::new(),
    };
    let index_missing = || {
        Error::Bare(format!(
            "[E::idx_find_and_load] Could not retrieve index file for '{path}'\nsamtools reference: Failed to load the index: No such file or directory"
        ))
    };
    let region = match &options.region {
        None => None,
        Some(text) => {
            let indexed = match opened.format {
                InputFormat::Cram => cram_region::load_crai(path, None).is_ok(),
                _ => opened.is_bgzf && region::load_index(path, None).is_ok(),
            };
            if !indexed {
                return Err(index_missing());
            }
            let Some(r) = parse_region(text, header.refs()).filter(|r| r.tid >= 0) else {
                eprintln!("samtools reference: failed to parse region '{text}'");
                return Err(FAILED);
            };
            Some(r)
        }
    };
    builder.region = region;
    if options.embedded {
        if opened.format != InputFormat::Cram {
            return Err(Error::Bare(format!(
                "samtools reference: -e needs a CRAM input; '{path}' is not CRAM"
            )));
        }
        copy_embedded(path, &mut builder)?;
        return builder.finish();
    }
    let mut handle = |batch: &Batch| -> Result<(), Error> {
        for record in batch.iter() {
            if builder.current != Some(record.ref_id()) {
                builder.start(record.ref_id())?;
            }
            match build_ref(&record, &mut builder.bases) {
                Ok(_) => {}
                Err(BuildError::Incompatible) => {
                    eprintln!("{INCOMPATIBLE_MESSAGE}");
                    return Err(FAILED);
                }
                Err(BuildError::CigarExhausted) => return Err(FAILED),
            }
        }
        Ok(())
    };
    match (region, &mut opened.reader) {
        (None, reader) => {
            while let Some((batches, warnings)) = reader.read_batches(path)? {
                for w in warnings {
                    eprintln!("{w}");
                }
                batches.iter().try_for_each(&mut handle)?;
            }
        }
        (Some(r), RecordReader::Cram(cram)) => {
            let crai = cram_region::load_crai(path, None)?;
            cram_region::for_each_region_batch(cram, &crai, path, &[r], false, &mut handle)?;
        }
        (Some(r), RecordReader::Bam(bam)) => {
            let index = region::load_index(path, None)?;
            region::for_each_region_batch(bam, &index, path, &[r], false, &mut handle)?;
        }
        (Some(r), RecordReader::Sam(_)) => {
            let index = region::load_index(path, None)?;
            let input = Input::open(path).map_err(|e| Error::io(path, e))?;
            // -@ changes no output: it is how many parse the lines, as samtools' decoders.
            let tasks = options.threads.total();
            let mut sam_gz = crate::io::sam::range::RangeReader::new(input, header.clone(), tasks);
            region::for_each_region_batch(&mut sam_gz, &index, path, &[r], false, &mut handle)?;
        }
    }
    builder.finish()
}

/// `-e`: each slice's embedded reference block copied into place, slice by slice (samtools'
/// `cram2ref`). With a region, slices before it are passed over and the first slice past it,
/// or on another reference, ends the copy.
fn copy_embedded(path: &str, builder: &mut Builder<'_>) -> Result<(), Error> {
    let bad = |what: String| Error::file(path, what);
    let mut input = Input::open(path).map_err(|e| Error::io(path, e))?;
    let ((major, _), _, end) =
        crate::io::cram_header::read_input_with_end(&mut input).map_err(|e| bad(e.to_string()))?;
    input.consume(end);
    let mut reached = false;
    loop {
        let container = match container_in::read(&mut input, major) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(()),
            Err(ReadError::Truncated) => return Err(bad("truncated container".into())),
            Err(ReadError::Invalid(why)) => return Err(bad(why)),
            Err(ReadError::Io(e)) => return Err(Error::io(path, e)),
        };
        let body = &container.bytes[container.body_start..];
        for range in &container.slices {
            let (slice, blocks) = read_slice(&body[range.clone()], Wanted::All, major)
                .map_err(|e| bad(format!("{e:?}")))?;
            let (ref_id, start) = (slice.reference_id, slice.alignment_start);
            if let Some(r) = builder.region {
                let before = ref_id != r.tid || start + slice.alignment_span <= r.beg;
                if !reached && before {
                    continue;
                }
                reached = true;
                if ref_id != r.tid || start > r.end {
                    return Ok(());
                }
            }
            if slice.embedded_reference < 0 && ref_id != -1 {
                eprintln!("CRAM file has slice without embedded reference");
                return Err(FAILED);
            }
            if builder.current != Some(ref_id) {
                builder.start(ref_id)?;
            }
            let Some((_, data)) =
                blocks.external.iter().find(|(id, _)| *id == slice.embedded_reference)
            else {
                continue;
            };
            let len = builder.bases.len() as i64;
            let copy_end = (start + data.len() as i64).min(len + 1);
            if copy_end > start && start >= 1 {
                let from = (start - 1) as usize;
                let n = (copy_end - start) as usize;
                builder.bases[from..from + n].copy_from_slice(&data[..n]);
            }
        }
    }
}
