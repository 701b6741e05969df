//! `index`: build a BAI (default) or CSI index of a coordinate-sorted BAM, byte-identical to
//! `samtools index` (the builder is [`crate::io::index::IndexBuilder`]; the BAM reader reports
//! each record's virtual offset as htslib's `bgzf_tell` would).

use crate::error::Error;
use crate::io::index::{Format, IndexBuilder, IndexedRecord};
use crate::io::input::Input;
use crate::io::open::{self, Opened, RecordReader};
use crate::io::sam::located::LocatedReader;
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
    // Every error is one line naming the file and the problem.
    let failed = |why: &dyn std::fmt::Display| {
        Error::Message(format!("failed to create index for \"{path}\": {why}"))
    };
    let Opened { reader, header, is_bgzf, .. } =
        open::open(path, threads).map_err(|e| match e {
            Error::File { what, .. } => failed(&what),
            other => failed(&other),
        })?;
    let bam = match reader {
        RecordReader::Bam(reader) => Some(reader),
        // htslib indexes BGZF-compressed SAM too (CSI only: a SAM's BAI is refused below).
        RecordReader::Sam(_) if is_bgzf => None,
        _ => {
            return Err(Error::Message(format!(
                "\"{path}\" is in a format that cannot be usefully indexed"
            )));
        }
    };
    // Virtual offsets only mean something in BGZF; a plain-gzip BAM reads but cannot be indexed
    // (samtools: "not BGZF compressed").
    if !is_bgzf {
        return Err(failed(&"not BGZF compressed"));
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
            builder.push(&rec).map_err(|e| failed(&e))?;
        }
        Ok(())
    };
    match bam {
        Some(mut reader) => {
            while let Some((batch, offsets)) =
                reader.read_batch_located().map_err(|e| failed(&e))?
            {
                push_batch(&batch, &offsets)?;
            }
        }
        None => {
            let input = Input::open(path).map_err(|e| Error::io(path, e))?;
            let mut reader = LocatedReader::new(input, header.clone());
            while let Some((batch, offsets)) =
                reader.read_batch_located().map_err(|e| failed(&e))?
            {
                push_batch(&batch, &offsets)?;
            }
        }
    }
    // After the last record htslib's position is the start of the block after the data: the EOF
    // marker block, i.e. the file size less its 28 bytes.
    let end = crate::io::bgzf::data_end(path).map_err(|e| Error::io(path, e))?;
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
            if crate::io::cram::index::is_cram(input) {
                let bytes = crate::io::cram::index::build_crai(input).map_err(|why| {
                    if why == crate::io::cram::index::NOT_SORTED {
                        // htslib logs why; samtools adds its line without a reason.
                        return Error::Bare(format!(
                            "[E::cram_index_build_multiref] {why}\nsamtools index: failed to create index for \"{input}\""
                        ));
                    }
                    Error::Message(format!("failed to create index for \"{input}\": {why}"))
                })?;
                let out = opts.output.clone().unwrap_or_else(|| format!("{input}.crai"));
                crate::io::output::write_file(&out, &bytes).map_err(|_| {
                    Error::Message(format!("failed to create or write index \"{out}\""))
                })?;
                continue;
            }
            let bytes = build(input, opts.csi_min_shift, opts.threads)?;
            let out = opts.output.clone().unwrap_or_else(|| {
                format!(
                    "{input}.{}",
                    if matches!(opts.csi_min_shift, None | Some(0)) { "bai" } else { "csi" }
                )
            });
            crate::io::output::write_file(&out, &bytes).map_err(|_| {
                Error::Message(format!("failed to create or write index \"{out}\""))
            })?;
        }
        Ok(())
    })
}
