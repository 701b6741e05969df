//! `index`: build a BAI (default) or CSI index of a coordinate-sorted BAM, byte-identical to
//! `samtools index` (the builder is [`crate::io::index::IndexBuilder`]; the BAM reader reports
//! each record's virtual offset as htslib's `bgzf_tell` would).

use crate::error::Error;
use crate::io::index::{Format, IndexBuilder, IndexedRecord};
use crate::io::input::Input;
use crate::io::open::{self, Opened, RecordReader};
use crate::io::sam::located::LocatedReader;
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::record::layout::flags;
use crate::record::store::Batch;

pub struct IndexOptions {
    pub inputs: Vec<String>,
    pub output: Option<String>,
    /// `None` for BAI, else CSI with this `min_shift`.
    pub csi_min_shift: Option<u32>,
    pub threads: usize,
}

/// Builds the index of one BAM file and returns its bytes.
pub fn build(path: &str, csi_min_shift: Option<u32>, threads: usize) -> Result<Vec<u8>, Error> {
    let input = Input::open(path).map_err(|e| failed(path, &format!("could not open: {e}")))?;
    build_from(path, path, input, csi_min_shift, threads)
}

/// samtools' one line for any failure to index `name`.
fn failed(name: &str, why: &dyn std::fmt::Display) -> Error {
    Error::Message(format!("failed to create index for \"{name}\": {why}"))
}

/// Builds the index of the BAM or BGZF SAM `input` in one pass. `path` reopens it (a BGZF SAM's
/// header is read apart from its records); `name` is what messages call it.
fn build_from(
    name: &str,
    path: &str,
    input: Input,
    csi_min_shift: Option<u32>,
    threads: usize,
) -> Result<Vec<u8>, Error> {
    let target = open::PIECE_BYTES_PER_THREAD * threads.max(1);
    let Opened { reader, header, is_bgzf, .. } = open::open_input(name, input, threads, target)
        .map_err(|e| match e {
            Error::File { what, .. } => failed(name, &what),
            other => failed(name, &other),
        })?;
    let bam = match reader {
        RecordReader::Bam(reader) => Some(reader),
        // htslib indexes BGZF-compressed SAM too (CSI only: a SAM's BAI is refused below).
        RecordReader::Sam(_) if is_bgzf => None,
        _ => {
            return Err(Error::Message(format!(
                "\"{name}\" is in a format that cannot be usefully indexed"
            )));
        }
    };
    // Virtual offsets only mean something in BGZF; a plain-gzip BAM reads but cannot be indexed
    // (samtools: "not BGZF compressed").
    if !is_bgzf {
        return Err(failed(name, &"not BGZF compressed"));
    }
    let longest = header.refs().iter().map(|r| r.len as i64).max().unwrap_or(0);
    let format = match csi_min_shift {
        None | Some(0) => Format::Bai,
        Some(m) => Format::csi_for_longest_reference(m, longest),
    };
    let mut builder = IndexBuilder::new(header.refs().len(), format);
    let mut push_batch = |batch: &Batch, offsets: &[u64]| -> Result<(), Error> {
        for (i, r) in batch.iter().enumerate() {
            let rec = IndexedRecord {
                tid: r.ref_id(),
                beg: r.pos(),
                end: r.end_pos(),
                is_mapped: r.flag() & flags::UNMAP == 0,
                voffset_start: offsets[i],
                voffset_end: offsets[i + 1],
            };
            builder.push(&rec).map_err(|e| failed(name, &e))?;
        }
        Ok(())
    };
    // After the last record htslib's position is the start of the block after the data: the EOF
    // marker block, i.e. the input's size less its 28 bytes (known once it was all read).
    let end = match bam {
        Some(mut reader) => {
            while let Some((batch, offsets)) =
                reader.read_batch_located().map_err(|e| failed(name, &e))?
            {
                push_batch(&batch, &offsets)?;
            }
            reader.bgzf().data_end()
        }
        None => {
            let input = Input::open(path).map_err(|e| Error::io(name, e))?;
            let mut reader = LocatedReader::new(input, header.clone());
            while let Some((batch, offsets)) =
                reader.read_batch_located().map_err(|e| failed(name, &e))?
            {
                push_batch(&batch, &offsets)?;
            }
            reader.data_end()
        }
    };
    Ok(builder.finish(end << 16).encode())
}

/// Whether `index IN PATH` names the index to write (samtools' `nonexistent_or_index`): `PATH`
/// does not exist, or its content is an index.
pub fn names_an_index(path: &str) -> bool {
    crate::io::detect::nonexistent_or_index(path)
}

pub fn run(opts: IndexOptions) -> Result<(), Error> {
    super::threads::pool(opts.threads).install(|| {
        for input in &opts.inputs {
            let (bytes, extension) = index_one(input, &opts)?;
            let out = opts.output.clone().unwrap_or_else(|| format!("{input}.{extension}"));
            crate::io::output::write_file(&out, &bytes).map_err(|_| {
                Error::Message(format!("failed to create or write index \"{out}\""))
            })?;
        }
        Ok(())
    })
}

/// Whether `name` is standard input or a pipe, FIFO or device: readable once, front to back.
fn is_stream(name: &str) -> bool {
    name == "-" || std::fs::metadata(name).is_ok_and(|m| !m.is_file())
}

/// The index of `name` and its default extension. A stream is read once: a BAM is indexed as it
/// goes by (BAI and CSI need one pass); anything else (a CRAM's multi-reference slices and a
/// BGZF SAM's header are read again) is first copied to a temporary file. Offsets count the
/// stream's bytes, so the index is the one of the same bytes in a file.
fn index_one(name: &str, opts: &IndexOptions) -> Result<(Vec<u8>, &'static str), Error> {
    if !is_stream(name) {
        return index_file(name, name, opts);
    }
    let mut input = Input::open(name).map_err(|e| failed(name, &format!("could not open: {e}")))?;
    if matches!(open::sniff(&mut input), Ok(open::Sniffed::Bgzf { bam: true })) {
        let bytes = build_from(name, name, input, opts.csi_min_shift, opts.threads)?;
        return Ok((bytes, index_extension(opts)));
    }
    let copy = spool(name, input)?;
    index_file(name, &copy.path_str(), opts)
}

fn index_extension(opts: &IndexOptions) -> &'static str {
    if matches!(opts.csi_min_shift, None | Some(0)) { "bai" } else { "csi" }
}

/// Indexes the regular file `path` (called `name` in messages).
fn index_file(
    name: &str,
    path: &str,
    opts: &IndexOptions,
) -> Result<(Vec<u8>, &'static str), Error> {
    if crate::io::cram::index::is_cram(path) {
        let bytes = crate::io::cram::index::build_crai(path).map_err(|why| {
            if why == crate::io::cram::index::NOT_SORTED {
                // htslib logs why; samtools adds its line without a reason.
                return Error::Bare(format!(
                    "[E::cram_index_build_multiref] {why}\nsamtools index: failed to create index for \"{name}\""
                ));
            }
            failed(name, &why)
        })?;
        return Ok((bytes, "crai"));
    }
    let input = Input::open(path).map_err(|e| failed(name, &format!("could not open: {e}")))?;
    Ok((build_from(name, path, input, opts.csi_min_shift, opts.threads)?, index_extension(opts)))
}

/// Copies the rest of the stream `input` to a temporary file (removed when dropped).
fn spool(name: &str, mut input: Input) -> Result<TempFile, Error> {
    use std::io::Write;
    let (copy, file) = TempNamer::in_tmpdir("index")
        .create_next()
        .map_err(|e| failed(name, &format!("could not create a temporary file: {e}")))?;
    let mut out = std::io::BufWriter::new(file);
    let written = |e: std::io::Error| Error::io(copy.path_str(), e);
    loop {
        let chunk = input.peek(1 << 20).map_err(|e| Error::io(name, e))?;
        if chunk.is_empty() {
            break;
        }
        out.write_all(chunk).map_err(written)?;
        let n = chunk.len();
        input.consume(n);
    }
    out.flush().map_err(written)?;
    Ok(copy)
}
