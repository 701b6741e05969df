//! Opening an alignment input: sniff BAM, SAM, bgzipped or gzipped SAM or BAM, or CRAM, and hand
//! back one reader that yields record batches.
//!
//! Like htslib, an empty input has no header and binary data that is neither BAM nor CRAM is not
//! an alignment file; both are refused here rather than parsed as SAM lines.

use crate::io::bgzf::codec::Inflater;

use crate::error::Error;
use crate::io::bgzf::{self, block};
use crate::io::input::Input;
use crate::io::input_spec::InputSpec;
use crate::io::sam::reader::BatchesWithWarnings;
use crate::io::stream::ByteStream;
use crate::io::{bam, cram, sam};
use crate::profile::{self, Counter, Phase};
use crate::record::{Batch, Header};

/// Inflated bytes per thread per piece: large enough to amortise task overhead, small enough to
/// keep memory bounded for streaming commands. 1 MiB instead of 4: on 0.5 M reads (alternating
/// runs) fixmate's peak RSS went from 101 to 57 MB, view BAM→SAM's from 105 to 74 MB and
/// markdup-pipeline `-u`'s from 460 to 272 MB, with the same user CPU; first-touch faults halved.
pub const PIECE_BYTES_PER_THREAD: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Bam,
    Sam,
    Cram,
}

pub enum RecordReader {
    Bam(bam::Reader),
    Sam(sam::Reader),
    Cram(Box<cram::Reader>),
}

pub struct Opened {
    pub reader: RecordReader,
    pub header: Header,
    pub format: InputFormat,
    /// True for BGZF-compressed input (BAM or SAM.gz): only those can be region-queried.
    pub is_bgzf: bool,
}

/// What the first bytes say the input is.
pub enum Sniffed {
    Bgzf {
        bam: bool,
    },
    /// BAM compressed with plain gzip rather than BGZF (htslib reads it).
    GzipBam,
    Gzip,
    Cram,
    RawBam,
    Text,
    Empty,
    Binary,
}

/// Whether decompressed bytes are binary rather than SAM text: SAM holds no control characters
/// but tab, newline and carriage return.
fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(4096).any(|&b| b < 0x09 || (0x0e..0x20).contains(&b))
}

/// What `input` holds, from its first block (nothing is consumed).
pub fn sniff(input: &mut Input) -> std::io::Result<Sniffed> {
    let head = input.peek(block::BLOCK_MAX)?;
    if head.is_empty() {
        return Ok(Sniffed::Empty);
    }
    if head.starts_with(b"CRAM") {
        return Ok(Sniffed::Cram);
    }
    if head.starts_with(b"BAM\x01") {
        return Ok(Sniffed::RawBam);
    }
    if !block::is_gzip(head) {
        return Ok(if looks_binary(head) { Sniffed::Binary } else { Sniffed::Text });
    }
    let Ok(size) = block::block_size(head) else {
        let mut magic = [0; 4];
        let gzip_bam =
            std::io::Read::read_exact(&mut flate2::read::GzDecoder::new(head), &mut magic).is_ok()
                && &magic == b"BAM\x01";
        return Ok(if gzip_bam { Sniffed::GzipBam } else { Sniffed::Gzip });
    };
    if size > head.len() {
        // Truncated first block: let the BGZF reader report it.
        return Ok(Sniffed::Bgzf { bam: true });
    }
    let mut out = vec![0; block::BLOCK_MAX];
    Ok(match block::inflate_unsized(&head[..size], &mut out, &mut Inflater::new()) {
        Ok(n) if n > 0 && !out.starts_with(b"BAM\x01") && looks_binary(&out[..n]) => {
            Sniffed::Binary
        }
        Ok(n) => Sniffed::Bgzf { bam: n == 0 || out.starts_with(b"BAM\x01") },
        // A bad first block: let the BGZF reader report it.
        Err(_) => Sniffed::Bgzf { bam: true },
    })
}

/// Opens `path` (or stdin for `-`) for reading records as `spec` says: a thread count alone
/// (`open(path, 1)`), or an [`InputSpec`] with the CRAM reference (`open(path, &spec)`).
pub fn open(path: &str, spec: impl Into<InputSpec>) -> Result<Opened, Error> {
    let spec = spec.into();
    let target = PIECE_BYTES_PER_THREAD * spec.threads.max(1);
    open_with_piece(path, spec, target)
}

/// [`open`] inflating about `target` bytes per piece (small for the many readers of a merge).
pub fn open_with_piece(
    path: &str,
    spec: impl Into<InputSpec>,
    target: usize,
) -> Result<Opened, Error> {
    let input = Input::open(path).map_err(|e| Error::file(path, format!("could not open: {e}")))?;
    open_input(path, input, spec, target)
}

/// [`open_with_piece`] reading the file through a small buffer instead of mapping it, so that
/// the pages read do not stay resident (the runs of a merge, read side by side).
pub fn open_streamed(
    path: &str,
    spec: impl Into<InputSpec>,
    target: usize,
) -> Result<Opened, Error> {
    let file =
        std::fs::File::open(path).map_err(|e| Error::file(path, format!("could not open: {e}")))?;
    // Read a piece at a time (up to the usual MiB): a merge holds one such buffer per run.
    let input = Input::from_reader_in_reads_of(path, Box::new(file), target.min(1 << 20));
    open_input(path, input, spec, target)
}

/// As [`open_streamed`], for a temporary file written past the page cache
/// ([`crate::io::output::PageCache::Bypass`]): read past it too, `target` bytes a read.
pub fn open_streamed_direct(
    path: &str,
    spec: impl Into<InputSpec>,
    target: usize,
) -> Result<Opened, Error> {
    let file = crate::io::direct_read::DirectReader::open(std::path::Path::new(path), target)
        .map_err(|e| Error::file(path, format!("could not open: {e}")))?;
    open_input(path, Input::from_reader(path, Box::new(file)), spec, target)
}

/// Reads the header of an input already opened (for commands that report opening and reading
/// the header as two failures, as samtools does).
pub fn open_input(
    path: &str,
    mut input: Input,
    spec: impl Into<InputSpec>,
    target: usize,
) -> Result<Opened, Error> {
    let spec = spec.into();
    let sniffed = sniff(&mut input).map_err(|e| Error::io(path, e))?;
    let tasks = spec.threads.max(1) * 4;
    match sniffed {
        Sniffed::Empty => Err(Error::file(path, "failed to read the header: the file is empty")),
        Sniffed::Binary => Err(Error::file(path, "unknown file format: not SAM, BAM or CRAM")),
        Sniffed::Cram => open_cram(path, input, spec),
        Sniffed::RawBam => {
            Err(Error::file(path, "uncompressed raw BAM (not BGZF) is not supported"))
        }
        Sniffed::Bgzf { bam: true } => {
            let mut reader = bgzf::Reader::new(input, target);
            if !reader.has_eof_marker() {
                eprintln!("{EOF_MARKER_ABSENT}");
                reader.missing_eof_reported();
            }
            open_bam(path, reader, true)
        }
        Sniffed::GzipBam => {
            // A gzip file never ends with the BGZF EOF block; htslib warns about it likewise.
            eprintln!("{EOF_MARKER_ABSENT}");
            let plain = flate2::read::MultiGzDecoder::new(input);
            let blocks = Input::from_reader(path, Box::new(bgzf::plain::PlainAsBgzf::new(plain)));
            let mut reader = bgzf::Reader::new(blocks, target);
            reader.missing_eof_reported();
            open_bam(path, reader, false)
        }
        Sniffed::Bgzf { bam: false } => {
            let stream = ByteStream::Bgzf(bgzf::Reader::new(input, target));
            open_sam(path, stream, tasks, true)
        }
        Sniffed::Gzip => {
            let decoder = flate2::read::MultiGzDecoder::new(input);
            open_sam(path, ByteStream::Gzip(Box::new(decoder), target), tasks, false)
        }
        Sniffed::Text => open_sam(path, ByteStream::Plain(input, target), tasks, false),
    }
}

const EOF_MARKER_ABSENT: &str =
    "[W::bam_hdr_read] EOF marker is absent. The input is probably truncated";

fn open_bam(path: &str, reader: bgzf::Reader, is_bgzf: bool) -> Result<Opened, Error> {
    let (reader, header) = bam::Reader::new(reader).map_err(|e| Error::file(path, e))?;
    Ok(Opened { reader: RecordReader::Bam(reader), header, format: InputFormat::Bam, is_bgzf })
}

fn open_cram(path: &str, input: Input, spec: InputSpec) -> Result<Opened, Error> {
    let (mut reader, header) = cram::Reader::new(input, spec).map_err(|e| Error::file(path, e))?;
    reader.set_file_name(path);
    let reader = RecordReader::Cram(Box::new(reader));
    Ok(Opened { reader, header, format: InputFormat::Cram, is_bgzf: false })
}

fn open_sam(path: &str, stream: ByteStream, tasks: usize, is_bgzf: bool) -> Result<Opened, Error> {
    let (reader, header) = sam::Reader::new(stream, tasks).map_err(|e| Error::file(path, e))?;
    for w in reader.header_warnings() {
        eprintln!("{w}");
    }
    Ok(Opened { reader: RecordReader::Sam(reader), header, format: InputFormat::Sam, is_bgzf })
}

impl RecordReader {
    /// For commands that never look at bases, qualities or the tags made from them (MD, NM):
    /// a CRAM then decodes without its reference, as htslib's required fields let samtools.
    pub fn without_bases(&mut self) {
        if let RecordReader::Cram(r) = self {
            r.without_bases();
        }
    }

    /// For commands that look only at flags, reference, mapping quality and mate reference.
    pub fn flags_only(&mut self) {
        if let RecordReader::Cram(r) = self {
            r.flags_only();
        }
    }

    /// `"bam"`, `"sam"` or `"cram"`, as a profile names the input format.
    pub fn format_name(&self) -> &'static str {
        match self {
            RecordReader::Bam(_) => "bam",
            RecordReader::Sam(_) => "sam",
            RecordReader::Cram(_) => "cram",
        }
    }

    /// The next batches in input order with any parse warnings; `None` at end of input.
    /// Reports progress ([`crate::progress`]) and profile counters ([`crate::profile`]).
    pub fn read_batches(&mut self, path: &str) -> Result<Option<BatchesWithWarnings>, Error> {
        let _phase = profile::phase(Phase::Read);
        let read = match self {
            RecordReader::Bam(r) => r
                .read_batch()
                .map(|b| b.map(|b| (vec![b], Vec::new())))
                .map_err(|e| Error::file(path, e)),
            RecordReader::Sam(r) => r.read_batches().map_err(|e| Error::file(path, e)),
            RecordReader::Cram(r) => r
                .read_batches()
                .map(|b| b.map(|b| (b, Vec::new())))
                .map_err(|e| Error::file(path, e)),
        };
        match &read {
            Ok(Some((batches, warnings))) if warnings.is_empty() => {
                let records = batches.iter().map(|b| b.len() as u64).sum();
                crate::progress::advance(path, records, self.input_position());
            }
            Ok(None) => crate::progress::reached_end(path),
            // The caller prints these next: the bar stops so it cannot draw over them.
            Ok(Some(_)) | Err(_) => crate::progress::finish(),
        }
        if profile::on()
            && let Ok(Some((batches, _))) = &read
        {
            let phase = profile::current_or(Phase::Read);
            let records: usize = batches.iter().map(Batch::len).sum();
            profile::add(phase, Counter::Records, records as u64);
            if matches!(self, RecordReader::Bam(_)) {
                let bytes: usize = batches.iter().map(|b| b.data.len()).sum();
                profile::add(phase, Counter::BytesInflated, bytes as u64);
            }
        }
        read
    }

    /// Bytes of the underlying file or stream consumed so far (compressed bytes for BGZF/gzip).
    pub fn input_position(&self) -> Option<u64> {
        match self {
            RecordReader::Bam(r) => Some(r.bgzf().input().position()),
            RecordReader::Sam(r) => Some(r.stream().input_position()),
            RecordReader::Cram(r) => Some(r.position()),
        }
    }

    /// Uses `header` to resolve names in SAM input (after `-t` added references).
    pub fn set_header(&mut self, header: &Header) {
        if let RecordReader::Sam(r) = self {
            r.set_header(header.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn sniff_bytes(bytes: &[u8]) -> Sniffed {
        sniff(&mut Input::from_reader("t", Box::new(std::io::Cursor::new(bytes.to_vec())))).unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// As htslib: empty input and binary non-BAM data are refused, a gzip (not BGZF) BAM is BAM.
    #[test]
    fn sniffs_what_htslib_detects() {
        assert!(matches!(sniff_bytes(b""), Sniffed::Empty));
        assert!(matches!(sniff_bytes(b"r\t4\t*\t0\t0\t*\t*\t0\t0\tA\tI\r\n"), Sniffed::Text));
        assert!(matches!(sniff_bytes(&[0x42, 0x00, 0x13, 0x99]), Sniffed::Binary));
        assert!(matches!(sniff_bytes(&gzip(b"BAM\x01\0\0\0\0")), Sniffed::GzipBam));
        assert!(matches!(sniff_bytes(&gzip(b"@HD\tVN:1.6\n")), Sniffed::Gzip));
        let mut bgzf = Vec::new();
        block::Deflater::new(1).deflate_into(b"BAM\x02\x00\x01\x02", &mut bgzf);
        assert!(matches!(sniff_bytes(&bgzf), Sniffed::Binary));
    }
}
