//! `samtools depth` (samtools 1.24 `bam2depth.c`): inputs opened (and region-queried through
//! their index), merged in coordinate order, filtered, and fed to
//! [`crate::ops::depth::sweep`]. Command line: [`crate::cli::depth`].
//!
//! Differences: with `-o` the file appears only when the command succeeds; a region needs a
//! BAM input.

use crate::io::input_spec::InputSpec;
use std::collections::HashMap;
use std::io::Write;

use crate::error::Error;
use crate::io::index::Region;
use crate::ops::depth::BedMask;
use crate::ops::depth::sweep::{self, DepthSweep, SweepError, SweepOptions};
use crate::pipeline::checked_open::Wording;
use crate::pipeline::sorted_input::{
    InputMessages, SortedInputs, create_text_output, first_in_order, open_sorted_inputs,
};
use crate::record::{Header, RecordRef};

#[derive(Clone, Debug, Default)]
pub struct DepthOptions {
    pub inputs: Vec<String>,
    /// `-X`: one index per input.
    pub index_files: Option<Vec<String>>,
    /// The names the `-H` line gives the columns (samtools takes the last arguments).
    pub column_names: Vec<String>,
    /// `-f`: a file naming the inputs, one a line.
    pub file_list: Option<String>,
    pub output: Option<String>,
    pub region: Option<String>,
    pub bed: Option<String>,
    pub all_positions: u8,
    pub count_deletions: bool,
    pub min_base_quality: i32,
    pub min_mapq: i32,
    pub min_len: i64,
    pub excl_flags: u16,
    pub incl_flags: u16,
    pub req_flags: u16,
    pub header: bool,
    pub remove_overlaps: bool,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
}

const MESSAGES: InputMessages = InputMessages {
    wording: Wording {
        cannot_open: "samtools depth: Cannot open input file",
        no_header: "Failed to read header for",
    },
    no_index: |path| format!("samtools depth: cannot load index for \"{path}\""),
    bad_region: |text, _| format!("samtools depth: cannot parse region \"{text}\""),
};

pub fn run(options: &DepthOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(options.threads);
    pool.install(|| depth(options))
}

/// `-b`: the BED file's intervals on the header's references.
fn read_bed_mask(path: &str, header: &Header, command: &str) -> Result<BedMask, Error> {
    let intervals = crate::io::bed::read_bed(path).map_err(|e| {
        e.report(&format!("samtools {command}: Could not read file \"{path}\""), true)
    })?;
    let tids = intervals.into_iter().filter_map(|(name, b, e)| Some((header.tid(&name)?, b, e)));
    Ok(BedMask::new(header.refs().len(), tids))
}

/// `read_file_list`: the non-empty lines of `path`.
pub fn read_file_list(path: &str, command: &str) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Bare(format!(
            "samtools {command}: Cannot open file list \"{path}\".: {}",
            crate::error::c_message(&e)
        ))
    })?;
    Ok(text.lines().map(str::trim_end).filter(|l| !l.is_empty()).map(String::from).collect())
}

fn depth(options: &DepthOptions) -> Result<(), Error> {
    let listed;
    let options = match &options.file_list {
        Some(list) => {
            let inputs = read_file_list(list, "depth")?;
            listed = DepthOptions { column_names: inputs.clone(), inputs, ..options.clone() };
            &listed
        }
        None => options,
    };
    let out_path = options.output.as_deref().unwrap_or("-");
    let (mut out, file) = create_text_output(out_path, "depth")?;
    let write_failed = |e: std::io::Error| Error::io(out_path, e);
    let SortedInputs { mut inputs, header, region } = open_sorted_inputs(
        &options.inputs,
        &InputSpec::new(options.threads, options.reference.as_deref()),
        (options.region.as_deref(), options.index_files.as_deref()),
        &MESSAGES,
    )?;
    let Some(header) = header else { return Ok(()) };
    let bed = options.bed.as_deref().map(|p| read_bed_mask(p, &header, "depth")).transpose()?;
    let sweep_options = SweepOptions {
        all_positions: options.all_positions,
        count_deletions: options.count_deletions,
        min_base_quality: options.min_base_quality,
        region: region.map(|r: Region| (r.tid, r.beg, r.end)),
        bed,
    };
    let mut sweep = DepthSweep::new(sweep_options, &header, inputs.len());
    if options.header {
        sweep.out.extend_from_slice(b"#CHROM\tPOS");
        for name in &options.column_names {
            sweep.out.push(b'\t');
            sweep.out.extend_from_slice(name.as_bytes());
        }
        sweep.out.push(b'\n');
    }
    let mut mates: Vec<HashMap<Vec<u8>, i64>> = vec![HashMap::new(); inputs.len()];
    while let Some(i) = first_in_order(&mut inputs)? {
        let Some(r) = inputs[i].current()? else { break };
        if counts(options, &r) {
            let clip = if options.remove_overlaps { overlap_clip(&mut mates[i], &r) } else { 0 };
            if let Err(e) = sweep.add(&r, clip, i) {
                out.write_all(&sweep.out).and_then(|_| out.flush()).map_err(write_failed)?;
                return Err(sweep_failure(&e));
            }
            if sweep.out.len() >= 1 << 16 {
                out.write_all(&sweep.out).map_err(write_failed)?;
                sweep.out.clear();
            }
        }
        inputs[i].advance();
    }
    sweep.finish();
    out.write_all(&sweep.out).and_then(|_| out.flush()).map_err(write_failed)?;
    drop(out);
    file.map_or(Ok(()), |f| f.commit().map_err(write_failed))
}

fn sweep_failure(e: &SweepError) -> Error {
    Error::Bare(match e {
        SweepError::NotSorted => "samtools depth: Data is not position sorted".to_string(),
        SweepError::UnsupportedCigarOp(op) => {
            format!("samtools depth: Unsupported cigar op '{op}'")
        }
    })
}

/// The read filters of `fastdepth_core`.
fn counts(o: &DepthOptions, r: &RecordRef<'_>) -> bool {
    let flag = r.flag();
    r.ref_id() >= 0
        && flag & o.excl_flags == 0
        && (o.incl_flags == 0 || flag & o.incl_flags != 0)
        && flag & o.req_flags == o.req_flags
        && i32::from(r.mapq()) >= o.min_mapq
        && (o.min_len == 0 || sweep::used_query_len(r) >= o.min_len)
}

/// `-s`: the first read of a pair that may overlap its mate is remembered by name with its end;
/// the second is clipped to start there.
fn overlap_clip(seen: &mut HashMap<Vec<u8>, i64>, r: &RecordRef<'_>) -> i64 {
    if !sweep::has_mapped_mate(r) {
        return 0;
    }
    if let Some(end) = seen.remove(r.read_name()) {
        return end;
    }
    if sweep::mate_may_overlap(r) {
        seen.insert(r.read_name().to_vec(), r.end_pos());
    }
    0
}
