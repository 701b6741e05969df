//! Reading CRAM 2.1/3.0/3.1 records into raw BAM batches: containers are read one after another from
//! the input, then decoded side by side on the rayon pool (a container's slices depend on nothing
//! but the container and the reference), each into its own [`Batch`], kept in file order.
//!
//! Decoding runs ahead of the caller: a window of containers is in flight, and each one handed
//! over is replaced by the next, so no thread waits for the slowest container of a group while
//! the caller formats what came before. (Decoded in groups of one container a thread, a 3.0
//! file's 6 M reads kept 1.77 of 2 cores busy, samtools 1.89.)

use crate::io::input_spec::InputSpec;
use std::collections::{HashSet, VecDeque};
use std::io::{self, Read};
use std::sync::Arc;

use noodles_cram as cram;
use noodles_cram::io::reader::Container;
use noodles_fasta as fasta;
use noodles_sam as sam;

use super::container_in;
use super::convert::{RecordEncoder, decoding_header};
use super::decode;
use super::htslib_fields::{ReferenceWindow, append_as_htslib};
use super::layout;
use super::reference::{MissingReference, ReferenceFinder, repository};
use crate::io::cram_header;
use crate::io::input::Input;
use crate::io::pool_wait::next_helping_pool;
use crate::io::sam::parse::Warning::CigarFromCgTag;
use crate::record::header::line_field;
use crate::record::{Batch, Header, RecordRef, long_cigar};

/// Why a CRAM could not be read; the caller puts the file name in front.
#[derive(Debug, thiserror::Error)]
pub enum CramError {
    #[error("CRAM {0}.{1} records are not supported by mdsam (2.1, 3.0 and 3.1 are)")]
    Version(u8, u8),
    #[error("invalid CRAM header: {0}")]
    Header(String),
    #[error("truncated CRAM file: container {container} is incomplete")]
    Truncated { container: u64 },
    #[error("invalid CRAM container {container}: {reason}")]
    Container { container: u64, reason: String },
    #[error("{0}")]
    Reference(String),
    /// A CIGAR from a `CG` tag needs the name extension, for which the name leaves no room.
    #[error("{0}")]
    LongCigar(#[from] long_cigar::NameTooLongForCigar),
}

/// The input as a `Read` for noodles' header reader (containers are read by
/// [`container_in`]).
struct InputRead {
    input: Input,
}

impl Read for InputRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let bytes = self.input.peek(buf.len())?;
        let n = bytes.len();
        buf[..n].copy_from_slice(bytes);
        self.input.consume(n);
        Ok(n)
    }
}

impl InputRead {
    fn at_end(&mut self) -> io::Result<bool> {
        Ok(self.input.peek(1)?.is_empty())
    }
}

/// A container as read, with its number in the file.
struct ReadContainer {
    number: u64,
    raw: container_in::RawContainer,
}

impl ReadContainer {
    /// Its bytes after the container header.
    fn body(&self) -> &[u8] {
        &self.raw.bytes[self.raw.body_start..]
    }

    /// noodles' view of it, for the containers mdsam's decoder leaves to noodles.
    fn noodles(&self) -> io::Result<Container> {
        let mut container = Container::default();
        cram::io::Reader::new(&self.raw.bytes[..]).read_container(&mut container)?;
        Ok(container)
    }
}

/// A CRAM file being read: the header is read on opening; then [`Reader::read_batches`].
pub struct Reader {
    /// noodles' reader: the header of a 3.x file, and the input the containers are read from.
    inner: Option<cram::io::Reader<InputRead>>,
    /// What every container's decoding needs, shared with the decoding tasks.
    shared: Arc<Shared>,
    /// Containers being decoded, in file order.
    in_flight: VecDeque<Pending>,
    /// Containers in flight at most: two a thread.
    window: usize,
    containers_read: u64,
    done: bool,
    /// Whether the missing EOF container was reported (once a file, as htslib's `hts_close`).
    eof_warned: bool,
}

/// A container handed to the pool, or the error that ended reading there.
enum Pending {
    Decoding(std::sync::mpsc::Receiver<Result<Batch, CramError>>),
    Failed(CramError),
}

/// The file's facts every container's decoding reads.
#[derive(Clone)]
struct Shared {
    /// The file's CRAM major version (2 or 3).
    major_version: u8,
    decoding_header: Arc<sam::Header>,
    repository: fasta::Repository,
    /// The `@RG` IDs of the header (a trailing `RG` tag with one of them came from the
    /// read-group series).
    read_groups: HashSet<Vec<u8>>,
    /// `@SQ` names and lengths, and `@RG` IDs, in header order (for mdsam's own decoder).
    references: Vec<(Vec<u8>, i64)>,
    read_group_ids: Vec<Vec<u8>>,
    /// htslib's prefix for generated read names: the file's base name.
    name_prefix: Vec<u8>,
    needs: decode::Needs,
}

/// One slice as the `.crai` places it: its container's offset, its landmark and size, and
/// its header's reference fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceEntry {
    pub container_offset: u64,
    pub landmark: u64,
    pub size: u64,
    pub reference: layout::SliceReference,
    /// Records in the container's slices before this one.
    pub records_before: usize,
}

/// A container's records with any CIGAR held in a `CG` tag put back in place, with htslib's
/// warning for each (`cram_readrec` calls `bam_tag2cigar`). CRAM stores real CIGARs, so only a
/// file written from unconverted records holds such a tag.
fn with_cg_cigars(batch: Batch) -> Result<Batch, CramError> {
    if !long_cigar::batch_may_hold_cg_cigars(&batch) {
        return Ok(batch);
    }
    let warn = |r: RecordRef<'_>| {
        // The same words as SAM input's warning.
        let warning = CigarFromCgTag(r.read_name().to_vec(), r.n_cigar_op());
        eprintln!("{warning}");
    };
    long_cigar::convert_batch(batch, warn).map_err(|(_, e)| CramError::LongCigar(e))
}

/// The warning htslib gives for a CRAM read to an end without its end-of-file container: once,
/// from `hts_close`, and only when reading reached that end (not after a region before it).
pub const EOF_MARKER_ABSENT: &str =
    "[W::hts_close] EOF marker is absent. The input is probably truncated";

impl Reader {
    /// Reads the file definition and the header container of `input`; its bases are decoded
    /// against `spec`'s reference when given (else `REF_CACHE`, `REF_PATH`, `UR`), twice
    /// `spec`'s threads of containers at a time.
    pub fn new(mut input: Input, spec: InputSpec) -> Result<(Reader, Header), CramError> {
        let (inner, header, major_version) =
            if input.peek(6).is_ok_and(|b| b.len() == 6 && b[4] == 2) {
                // noodles reads 3.x only: a 2.x file's header is read here, its containers by
                // `container_in` and mdsam's decoder as a 3.x file's are.
                let ((major, _), header, end) = cram_header::read_input_with_end(&mut input)
                    .map_err(|e| CramError::Header(e.to_string()))?;
                input.consume(end);
                (cram::io::Reader::new(InputRead { input }), header, major)
            } else {
                // Where htslib starts reading data containers: after the header container's
                // blocks when its stated length falls short of them (see `cram_header`); noodles
                // goes by the length.
                let blocks_end = cram_header::read_input_with_end(&mut input).ok().map(|r| r.2);
                let mut inner = cram::io::Reader::new(InputRead { input });
                let text = read_header_text(&mut inner)?;
                let at = inner.get_ref().input.position();
                if let Some(end) = blocks_end.map(|end| end as u64).filter(|&end| end > at) {
                    let input = &mut inner.get_mut().input;
                    let skip = (end - at) as usize;
                    if input.peek(skip).is_ok_and(|b| b.len() == skip) {
                        input.consume(skip);
                    }
                }
                let header =
                    Header::from_sam_text(text).map_err(|e| CramError::Header(e.to_string()))?;
                (inner, header, 3)
            };
        let finder = Arc::new(ReferenceFinder::new(&header, spec.reference));
        let repository = repository(finder);
        let decoding = decoding_header(&header);
        let read_groups = decoding.read_groups().keys().map(|id| id.to_vec()).collect();
        let references = header.refs().iter().map(|r| (r.name.clone(), r.len as i64)).collect();
        let read_group_ids = header
            .lines()
            .filter(|l| l.starts_with(b"@RG\t"))
            .filter_map(|l| line_field(l, b"ID").map(<[u8]>::to_vec))
            .collect();
        let shared = Shared {
            references,
            read_group_ids,
            name_prefix: b"-".to_vec(),
            needs: decode::Needs::Everything,
            major_version,
            decoding_header: Arc::new(decoding),
            repository,
            read_groups,
        };
        let reader = Reader {
            inner: Some(inner),
            shared: Arc::new(shared),
            in_flight: VecDeque::new(),
            window: 2 * spec.threads.max(1),
            containers_read: 0,
            done: false,
            eof_warned: false,
        };
        Ok((reader, header))
    }

    /// Names the file, for the names htslib generates for reads stored without one.
    pub fn set_file_name(&mut self, path: &str) {
        let base = path.rsplit('/').next().unwrap_or(path);
        Arc::make_mut(&mut self.shared).name_prefix = base.as_bytes().to_vec();
    }

    /// Tells the reader that no command will look at bases or qualities (htslib's required
    /// fields without `SAM_SEQ`): slices decode without fetching their reference.
    pub fn without_bases(&mut self) {
        Arc::make_mut(&mut self.shared).needs = decode::Needs::NoBases;
    }

    /// Tells the reader that commands will look only at flags, reference, mapping quality and
    /// mate reference (htslib's `SAM_FLAG | SAM_RNAME | SAM_MAPQ | SAM_RNEXT`).
    pub fn flags_only(&mut self) {
        Arc::make_mut(&mut self.shared).needs = decode::Needs::FlagsOnly;
    }

    /// Bytes of the file consumed so far.
    pub fn position(&self) -> u64 {
        self.inner.as_ref().map_or(0, |r| r.get_ref().input.position())
    }

    /// Every slice of the file, read from container and slice headers without decoding
    /// records.
    pub fn slices(&mut self) -> Result<Vec<SliceEntry>, CramError> {
        let mut slices = Vec::new();
        let Some(inner) = self.inner.as_mut() else { return Ok(slices) };
        loop {
            let number = self.containers_read;
            if inner.get_mut().at_end().map_err(|e| container_error(number, &e))? {
                return Ok(slices);
            }
            let offset = inner.get_ref().input.position();
            let raw =
                match container_in::read(&mut inner.get_mut().input, self.shared.major_version) {
                    Ok(None) => return Ok(slices),
                    Ok(Some(raw)) => raw,
                    Err(e) => return Err(read_error(number, e)),
                };
            self.containers_read += 1;
            let body = &raw.bytes[raw.body_start..];
            let mut records_before = 0;
            for (i, range) in raw.slices.iter().enumerate() {
                // As htslib's `cram_index_container`: the index holds landmarks, so they must be
                // where the slices are.
                if raw.landmarks.get(i).is_none_or(|&l| l as i64 != range.start as i64) {
                    return Err(CramError::Container {
                        container: number,
                        reason: format!(
                            "CRAM slice offset {} does not match landmark {i} in container header ({})",
                            range.start,
                            raw.landmarks.get(i).copied().unwrap_or(-1)
                        ),
                    });
                }
                let reference =
                    layout::slice_reference(&body[range.clone()], self.shared.major_version)
                        .map_err(|reason| CramError::Container { container: number, reason })?;
                slices.push(SliceEntry {
                    container_offset: offset,
                    landmark: range.start as u64,
                    size: range.len() as u64,
                    reference,
                    records_before,
                });
                records_before += usize::try_from(reference.records).unwrap_or(0);
            }
            crate::io::recycle::give(raw.bytes);
        }
    }

    /// The records of the one container at byte `offset` (from a `.crai`); `None` when the file
    /// ends there.
    pub fn read_container_at(&mut self, offset: u64) -> Result<Option<Batch>, CramError> {
        let Some(inner) = self.inner.as_mut() else { return Ok(None) };
        let number = self.containers_read;
        // What was read ahead from the old position is dropped (its tasks finish unheard).
        self.in_flight.clear();
        inner.get_mut().input.seek(offset).map_err(|e| container_error(number, &e))?;
        self.done = false;
        let window = std::mem::replace(&mut self.window, 1);
        let read = self.read_batches();
        self.window = window;
        self.in_flight.clear();
        Ok(read?.and_then(|mut batches| batches.pop()))
    }

    /// The next containers' records, one batch a container, in file order: at least one, and
    /// every one after it that is already decoded; `None` at the end.
    pub fn read_batches(&mut self) -> Result<Option<Vec<Batch>>, CramError> {
        self.fill_window();
        let Some(first) = self.in_flight.pop_front() else { return Ok(None) };
        let mut batches = vec![with_cg_cigars(first.wait()?)?];
        while let Some(Pending::Decoding(rx)) = self.in_flight.front() {
            match rx.try_recv() {
                Ok(batch) => {
                    self.in_flight.pop_front();
                    batches.push(with_cg_cigars(batch?)?);
                }
                Err(_) => break,
            }
        }
        // Decoding goes on while the caller works on these; not for one container at an
        // index's offset (`read_container_at`), where the next one would be decoded for nothing.
        if self.window > 1 {
            self.fill_window();
        }
        Ok(Some(batches))
    }

    /// Reads containers and hands them to the pool until the window is full or the file ends;
    /// a read error takes its place in the queue, after the containers before it.
    fn fill_window(&mut self) {
        let Some(inner) = self.inner.as_mut() else { return };
        while !self.done && self.in_flight.len() < self.window {
            let number = self.containers_read;
            let read = inner.get_mut().at_end().map_err(|e| container_error(number, &e));
            let read = read.and_then(|at_end| {
                if at_end {
                    // A CRAM cut at a container boundary still reads.
                    if !std::mem::replace(&mut self.eof_warned, true) {
                        eprintln!("{EOF_MARKER_ABSENT}");
                    }
                    return Ok(None);
                }
                container_in::read(&mut inner.get_mut().input, self.shared.major_version)
                    .map_err(|e| read_error(number, e))
            });
            match read {
                Ok(None) => self.done = true,
                Ok(Some(raw)) => {
                    self.containers_read += 1;
                    let (tx, rx) = std::sync::mpsc::sync_channel(1);
                    let shared = Arc::clone(&self.shared);
                    rayon::spawn(move || {
                        let container = ReadContainer { number, raw };
                        // A panic in a spawned task would abort the process: it becomes this
                        // container's error (noodles' are caught quietly in `decode_guarded`).
                        let decoded =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                decode_guarded(&container, &shared.context())
                            }));
                        let decoded = decoded.unwrap_or_else(|_| {
                            let reason = "its decoding failed".into();
                            Err(CramError::Container { container: number, reason })
                        });
                        // A failed send: the reader moved on (a seek) or was dropped.
                        let _ = tx.send(decoded);
                        crate::io::recycle::give(container.raw.bytes);
                    });
                    self.in_flight.push_back(Pending::Decoding(rx));
                }
                Err(e) => {
                    self.done = true;
                    self.in_flight.push_back(Pending::Failed(e));
                }
            }
        }
    }
}

impl Pending {
    /// The container's records once decoded.
    fn wait(self) -> Result<Batch, CramError> {
        match self {
            // On a pool worker, running the pool's jobs meanwhile: with one thread, the
            // decode waited for is queued behind this very wait.
            Pending::Decoding(rx) => next_helping_pool(&rx).unwrap_or_else(|| {
                Err(CramError::Container { container: 0, reason: "its decoding failed".into() })
            }),
            Pending::Failed(e) => Err(e),
        }
    }
}

impl Shared {
    fn context(&self) -> DecodeContext<'_> {
        DecodeContext {
            header: &self.decoding_header,
            repository: &self.repository,
            read_groups: &self.read_groups,
            own: (!noodles_only() || self.major_version < 3).then(|| decode::FileContext {
                references: &self.references,
                read_groups: &self.read_group_ids,
                repository: &self.repository,
                name_prefix: &self.name_prefix,
                needs: self.needs,
                major_version: self.major_version,
            }),
            major_version: self.major_version,
        }
    }
}

fn read_error(container: u64, e: container_in::ReadError) -> CramError {
    match e {
        container_in::ReadError::Truncated => CramError::Truncated { container },
        container_in::ReadError::Invalid(reason) => CramError::Container { container, reason },
        container_in::ReadError::Io(e) => container_error(container, &e),
    }
}

fn container_error(container: u64, e: &io::Error) -> CramError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        CramError::Truncated { container }
    } else {
        CramError::Container { container, reason: e.to_string() }
    }
}

/// The header text from the file definition and the header container (NUL padding dropped).
fn read_header_text(inner: &mut cram::io::Reader<InputRead>) -> Result<Vec<u8>, CramError> {
    let bad = |e: io::Error| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            CramError::Header("truncated".into())
        } else {
            CramError::Header(e.to_string())
        }
    };
    let mut header_reader = inner.header_reader();
    header_reader.read_magic_number().map_err(bad)?;
    let version = header_reader.read_format_version().map_err(bad)?;
    if version.major() != 3 {
        return Err(CramError::Version(version.major(), version.minor()));
    }
    header_reader.read_file_id().map_err(bad)?;
    let mut container = header_reader.container_reader().map_err(bad)?;
    let mut text = Vec::new();
    {
        let mut raw = container.raw_sam_header_reader().map_err(bad)?;
        raw.read_to_end(&mut text).map_err(bad)?;
        raw.discard_to_end().map_err(bad)?;
    }
    container.discard_to_end().map_err(bad)?;
    if let Some(end) = memchr::memchr(0, &text) {
        text.truncate(end);
    }
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    Ok(text)
}

/// What every container's decoding shares.
struct DecodeContext<'a> {
    header: &'a sam::Header,
    repository: &'a fasta::Repository,
    read_groups: &'a HashSet<Vec<u8>>,
    /// mdsam's own decoder, unless `MDSAM_CRAM_DECODER=noodles`.
    own: Option<decode::FileContext<'a>>,
    major_version: u8,
}

/// `MDSAM_CRAM_DECODER=noodles`: every container through noodles; `=own`: none (what mdsam's
/// decoder does not read is an error). For comparing the decoders.
fn noodles_only() -> bool {
    std::env::var_os("MDSAM_CRAM_DECODER").is_some_and(|v| v == "noodles")
}

fn own_only() -> bool {
    std::env::var_os("MDSAM_CRAM_DECODER").is_some_and(|v| v == "own")
}

/// A container through mdsam's own decoder, or noodles' where that one does not apply; noodles'
/// panics on malformed input turned into errors.
fn decode_guarded(read: &ReadContainer, context: &DecodeContext<'_>) -> Result<Batch, CramError> {
    if let Some(own) = &context.own {
        match decode::decode_container(read.body(), &read.raw.slices, read.raw.records, own) {
            Ok(batch) => return Ok(batch),
            // noodles reads no CRAM 2.x container.
            Err(decode::DecodeError::Unsupported(what))
                if own_only() || context.major_version < 3 =>
            {
                let reason = format!("{what} is not supported by mdsam's decoder");
                return Err(CramError::Container { container: read.number, reason });
            }
            Err(decode::DecodeError::Unsupported(_)) => {}
            Err(decode::DecodeError::Corrupt(reason)) => {
                return Err(CramError::Container { container: read.number, reason });
            }
            Err(decode::DecodeError::Reference(why)) => return Err(CramError::Reference(why)),
        }
    }
    super::guard::quietly(|| decode_container(read, context)).unwrap_or_else(|| {
        Err(CramError::Container { container: read.number, reason: "malformed slice data".into() })
    })
}

/// The reference htslib decodes a slice against (`s->ref`): the embedded one if the slice has
/// one, else the external one unless the container says none is needed (`RR` false).
enum SliceBases<'a> {
    None,
    Embedded(ReferenceWindow<'a>),
    /// External, looked up per record (a multi-reference slice spans several).
    External,
}

/// Decodes every slice of a container into one batch of raw BAM records.
fn decode_container(read: &ReadContainer, context: &DecodeContext<'_>) -> Result<Batch, CramError> {
    let number = read.number;
    let fail = |e: io::Error| match e.get_ref().and_then(|r| r.downcast_ref::<MissingReference>()) {
        Some(missing) => CramError::Reference(missing.0.clone()),
        None => CramError::Container { container: number, reason: e.to_string() },
    };
    let container = &read.noodles().map_err(fail)?;
    let header = context.header;
    let compression_header = container.compression_header().map_err(fail)?;
    let landmarks = container.header().landmarks();
    let body = read.body();
    let reference_required = layout::reference_required(
        &body[..landmarks.first().copied().unwrap_or(0).min(body.len())],
    );
    // The count as far as the container's bytes could hold (see `decode::decode_container`).
    let records = container.header().record_count().min(body.len());
    let mut batch = Batch::with_capacity(records * 400, records);
    let mut encoder = RecordEncoder::default();
    let mut external: Option<(usize, Arc<fasta::record::Sequence>)> = None;
    for (i, slice) in container.slices().enumerate() {
        let slice = slice.map_err(fail)?;
        let (core, blocks) = slice.decode_blocks().map_err(fail)?;
        let slice_bytes = landmarks.get(i).and_then(|&start| {
            body.get(start..landmarks.get(i + 1).copied().unwrap_or(body.len()))
        });
        let slice_reference = slice_bytes.and_then(|slice| layout::slice_reference(slice, 3).ok());
        let bases = match slice_reference {
            Some(r) if r.reference_id != -1 && r.embedded_block >= 0 => blocks
                .iter()
                .find(|(id, _)| *id == r.embedded_block)
                .map_or(SliceBases::None, |(_, b)| {
                    SliceBases::Embedded(ReferenceWindow { bases: b, start: r.alignment_start })
                }),
            Some(r) if r.reference_id != -1 && reference_required => SliceBases::External,
            _ => SliceBases::None,
        };
        let decoded = slice
            .records(context.repository.clone(), header, &compression_header, &core, &blocks)
            .map_err(fail)?;
        for record in &decoded {
            let bytes = encoder.encode(header, record).map_err(fail)?;
            let tid = crate::record::RecordRef::new(bytes).ref_id();
            let window = match &bases {
                SliceBases::None => None,
                SliceBases::Embedded(w) => Some(*w),
                SliceBases::External => {
                    let tid = usize::try_from(tid).ok();
                    if let Some(tid) = tid
                        && external.as_ref().is_none_or(|(t, _)| *t != tid)
                        && let Some((name, _)) = header.reference_sequences().get_index(tid)
                        && let Some(found) = context.repository.get(name)
                    {
                        external = Some((tid, found.map_err(fail)?));
                    }
                    external
                        .as_ref()
                        .filter(|(t, _)| Some(*t) == tid)
                        .map(|(_, s)| ReferenceWindow { bases: (**s).as_ref(), start: 1 })
                }
            };
            let at = batch.begin_record();
            append_as_htslib(bytes, window, |rg| context.read_groups.contains(rg), &mut batch.data);
            batch.end_record(at);
        }
    }
    Ok(batch)
}
