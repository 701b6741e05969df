//! Opening an alignment input: sniff BAM, SAM, bgzipped or gzipped SAM, or CRAM (refused), and
//! hand back one reader that yields record batches.

use libdeflater::Decompressor;

use crate::error::Error;
use crate::io::bgzf::{self, block};
use crate::io::input::Input;
use crate::io::sam::reader::Batches;
use crate::io::stream::ByteStream;
use crate::io::{bam, sam};
use crate::record::Header;

/// Inflated bytes per thread per piece: large enough to amortise task overhead, small enough to
/// keep memory bounded for streaming commands.
pub const PIECE_BYTES_PER_THREAD: usize = 4 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Bam,
    Sam,
}

pub enum RecordReader {
    Bam(bam::Reader),
    Sam(sam::Reader),
}

pub struct Opened {
    pub reader: RecordReader,
    pub header: Header,
    pub format: InputFormat,
    /// True for BGZF-compressed input (BAM or SAM.gz): only those can be region-queried.
    pub is_bgzf: bool,
}

/// What the first bytes say the input is.
enum Sniffed {
    Bgzf { bam: bool },
    Gzip,
    Cram,
    RawBam,
    Text,
}

fn sniff(input: &mut Input) -> std::io::Result<Sniffed> {
    let head = input.peek(block::BLOCK_MAX)?;
    if head.starts_with(b"CRAM") {
        return Ok(Sniffed::Cram);
    }
    if head.starts_with(b"BAM\x01") {
        return Ok(Sniffed::RawBam);
    }
    if !block::is_gzip(head) {
        return Ok(Sniffed::Text);
    }
    let Ok(size) = block::block_size(head) else {
        return Ok(Sniffed::Gzip);
    };
    if size > head.len() {
        // Truncated first block: let the BGZF reader report it.
        return Ok(Sniffed::Bgzf { bam: true });
    }
    let blk = &head[..size];
    let mut out = vec![0; block::inflated_size(blk).min(block::BLOCK_MAX)];
    let bam = match block::inflate(blk, &mut out, &mut Decompressor::new()) {
        Ok(()) => out.starts_with(b"BAM\x01") || out.is_empty(),
        Err(_) => true,
    };
    Ok(Sniffed::Bgzf { bam })
}

/// Opens `path` (or stdin for `-`) for reading records with `threads` parsing tasks.
pub fn open(path: &str, threads: usize) -> Result<Opened, Error> {
    let mut input =
        Input::open(path).map_err(|e| Error::file(path, format!("could not open: {e}")))?;
    let target = PIECE_BYTES_PER_THREAD * threads.max(1);
    let sniffed = sniff(&mut input).map_err(|e| Error::io(path, e))?;
    let tasks = threads.max(1) * 4;
    match sniffed {
        Sniffed::Cram => Err(Error::file(path, "CRAM is not supported by mdsam")),
        Sniffed::RawBam => {
            Err(Error::file(path, "uncompressed raw BAM (not BGZF) is not supported"))
        }
        Sniffed::Bgzf { bam: true } => {
            let reader = bgzf::Reader::new(input, target);
            if !reader.has_eof_marker() {
                eprintln!(
                    "[W::bam_hdr_read] EOF marker is absent. The input is probably truncated"
                );
            }
            let (reader, header) = bam::Reader::new(reader).map_err(|e| Error::file(path, e))?;
            Ok(Opened {
                reader: RecordReader::Bam(reader),
                header,
                format: InputFormat::Bam,
                is_bgzf: true,
            })
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

fn open_sam(path: &str, stream: ByteStream, tasks: usize, is_bgzf: bool) -> Result<Opened, Error> {
    let (reader, header) = sam::Reader::new(stream, tasks).map_err(|e| Error::file(path, e))?;
    Ok(Opened { reader: RecordReader::Sam(reader), header, format: InputFormat::Sam, is_bgzf })
}

impl RecordReader {
    /// The next batches in input order with any parse warnings; `None` at end of input.
    pub fn read_batches(&mut self, path: &str) -> Result<Option<Batches>, Error> {
        match self {
            RecordReader::Bam(r) => {
                Ok(r.read_batch().map_err(|e| Error::file(path, e))?.map(|b| (vec![b], Vec::new())))
            }
            RecordReader::Sam(r) => r.read_batches().map_err(|e| Error::file(path, e)),
        }
    }

    /// Uses `header` to resolve names in SAM input (after `-t` added references).
    pub fn set_header(&mut self, header: &Header) {
        if let RecordReader::Sam(r) = self {
            r.set_header(header.clone());
        }
    }
}
