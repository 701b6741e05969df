//! `index`: build a BAI (default) or CSI index of a coordinate-sorted BAM, byte-identical to
//! `samtools index` (the builder is [`crate::io::index::IndexBuilder`]; the BAM reader reports
//! each record's virtual offset as htslib's `bgzf_tell` would).

use super::getopt::LongOpt;
use super::global;
use super::global::{Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::io::index::{Format, IndexBuilder, IndexedRecord};
use crate::io::open::{self, Opened, RecordReader};
use crate::record::layout::flags;

pub const USAGE: &str = include_str!("usage/index.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "index",
    short: "bcm:Mo:@:",
    long: &[
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "bai", has_arg: false, key: "b" },
        LongOpt { name: "csi", has_arg: false, key: "c" },
        LongOpt { name: "min-shift", has_arg: true, key: "m" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', '-', '-', '-', '-', '@'); index refuses the other two too
    globals: Some(Globals {
        input_fmt: Take::Refused,
        input_fmt_option: Take::Refused,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        reference: Take::Refused,
        threads: Take::Short("@"),
        write_index: Take::Refused,
        verbosity: Take::Refused,
    }),
    unlisted: &[],
};

pub struct IndexOptions {
    pub inputs: Vec<String>,
    pub output: Option<String>,
    /// `None` for BAI, else CSI with this `min_shift`.
    pub csi_min_shift: Option<u32>,
    pub threads: usize,
}

/// htslib's `nonexistent_or_index`: the second positional names an index when it does not exist
/// or has an index extension.
fn nonexistent_or_index(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".bai", ".csi", ".crai", ".tbi"].iter().any(|e| lower.ends_with(e))
        || std::fs::metadata(path).is_err()
}

pub fn parse(args: &[String]) -> Result<IndexOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let (mut csi, mut min_shift, mut multiple, mut output, mut threads) =
        (false, 14i64, false, None, 0usize);
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "b" => csi = false,
            "c" => csi = true,
            "m" => {
                csi = true;
                min_shift = super::flags::parse_c_int(v.trim())
                    .ok_or_else(|| Error::Usage("invalid min_shift".into()))?;
            }
            "M" => multiple = true,
            "o" => output = Some(v.to_string()),
            "@" => threads = global::parse_threads(v)?,
            _ => {}
        }
    }
    let mut inputs = positionals;
    if inputs.is_empty() {
        return Err(Error::Help);
    }
    if inputs.len() == 2 && output.is_none() && nonexistent_or_index(&inputs[1]) {
        output = inputs.pop();
    }
    if inputs.len() > 1 && !multiple {
        return Err(Error::Message(
            "use -M to enable indexing more than one alignment file".into(),
        ));
    }
    if output.is_some() && inputs.len() > 1 {
        return Err(Error::Message("can't use -o with multiple input alignment files".into()));
    }
    Ok(IndexOptions {
        inputs,
        output,
        csi_min_shift: csi.then_some(min_shift.clamp(0, 31) as u32),
        threads: threads + 1,
    })
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
    let RecordReader::Bam(mut reader) = reader else {
        return Err(Error::Message(format!(
            "\"{path}\" is in a format that cannot be usefully indexed"
        )));
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
    while let Some((batch, offsets)) = reader.read_batch_located().map_err(|e| failed(&e))? {
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
    }
    // After the last record htslib's position is the start of the block after the data: the EOF
    // marker block, i.e. the file size less its 28 bytes.
    let end = data_end(path).map_err(|e| Error::io(path, e))?;
    Ok(builder.finish(end << 16).encode())
}

/// The compressed size of a BGZF file without its trailing EOF marker block.
fn data_end(path: &str) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let eof = &crate::io::bgzf::block::EOF_BLOCK;
    let mut f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    if size < eof.len() as u64 {
        return Ok(size);
    }
    f.seek(SeekFrom::End(-(eof.len() as i64)))?;
    let mut tail = vec![0u8; eof.len()];
    f.read_exact(&mut tail)?;
    Ok(if tail == eof[..] { size - eof.len() as u64 } else { size })
}

pub fn run(opts: IndexOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(opts.threads).install(|| {
        for input in &opts.inputs {
            let bytes = build(input, opts.csi_min_shift, opts.threads)?;
            let out = opts.output.clone().unwrap_or_else(|| {
                format!(
                    "{input}.{}",
                    if matches!(opts.csi_min_shift, None | Some(0)) { "bai" } else { "csi" }
                )
            });
            let fail = || Error::Message(format!("failed to create or write index \"{out}\""));
            let (mut w, file) = crate::io::output::create(&out).map_err(|_| fail())?;
            w.write_all(&bytes).and_then(|_| w.flush()).map_err(|_| fail())?;
            drop(w);
            if let Some(f) = file {
                f.commit().map_err(|_| fail())?;
            }
        }
        Ok(())
    })
}

use std::io::Write;
