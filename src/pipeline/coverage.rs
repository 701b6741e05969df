//! `samtools coverage` (samtools 1.24 `coverage.c`): inputs opened (and region-queried),
//! merged in coordinate order and counted by [`crate::ops::depth::coverage`]. Command line:
//! [`crate::cli::coverage`].
//!
//! Differences: a region needs a BAM.

use crate::io::input_spec::InputSpec;
use std::io::Write;

use crate::error::Error;
use crate::ops::depth::coverage::{Coverage, CoverageOptions, Report};
use crate::ops::depth::pileup_cap::PileupCap;
use crate::pipeline::checked_open::Wording;
use crate::pipeline::sorted_input::{
    InputMessages, SortedInputs, create_text_output, first_in_order, open_sorted_inputs,
};
use crate::record::RecordRef;
use crate::record::layout::flags;

#[derive(Clone, Debug, Default)]
pub struct CoverageRunOptions {
    pub inputs: Vec<String>,
    /// `-b`: a file naming the inputs, one a line.
    pub bam_list: Option<String>,
    pub output: Option<String>,
    pub region: Option<String>,
    pub min_len: i64,
    pub min_mapq: i32,
    pub min_base_quality: u32,
    pub fail_flags: u16,
    pub required_flags: u16,
    pub min_depth: u64,
    pub header: bool,
    /// `-m`, `-A`, `-D` or `-w` ask for histograms.
    pub histogram: bool,
    pub ascii: bool,
    pub plot_depth: bool,
    pub bins: i64,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// `-d`: htslib's pileup cap; `None`, no cap.
    pub pileup_cap: Option<i64>,
}

const MESSAGES: InputMessages = InputMessages {
    wording: Wording {
        cannot_open: "samtools coverage: Could not open",
        no_header: "samtools coverage: Could not read header for",
    },
    no_index: |path| {
        format!("samtools coverage: Failed to load index for \"{path}\": No such file or directory")
    },
    bad_region: |text, path| {
        format!(
            "samtools coverage: Failed to parse region \"{text}\". Check the region format or region name presence in the file \"{path}\""
        )
    },
};

pub fn run(options: &CoverageRunOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(options.threads);
    pool.install(|| coverage(options))
}

fn coverage(o: &CoverageRunOptions) -> Result<(), Error> {
    let listed;
    let o = match &o.bam_list {
        Some(list) => {
            let inputs = crate::pipeline::depth::read_file_list(list, "coverage")?;
            listed = CoverageRunOptions { inputs, ..o.clone() };
            &listed
        }
        None => o,
    };
    let out_path = o.output.as_deref().unwrap_or("-");
    let (mut out, file) = create_text_output(out_path, "coverage")?;
    let write_failed = |e: std::io::Error| Error::io(out_path, e);
    let SortedInputs { mut inputs, header, region } = open_sorted_inputs(
        &o.inputs,
        &InputSpec::new(o.threads, o.reference.as_deref()),
        (o.region.as_deref(), None),
        &MESSAGES,
    )?;
    let Some(header) = header else { return Ok(()) };
    let region = region.map(|r| {
        let len = header.refs().get(r.tid as usize).map_or(0, |x| x.len as i64);
        (
            r.tid,
            r.beg,
            if r.end == crate::io::index::Region::END_OF_REFERENCE { len } else { r.end },
        )
    });
    let report = if o.histogram {
        Report::Histogram { bins: o.bins, utf: !o.ascii, plot_depth: o.plot_depth }
    } else {
        Report::Table { header: o.header }
    };
    let options = CoverageOptions {
        report,
        min_base_quality: o.min_base_quality,
        min_depth: o.min_depth,
        region,
    };
    let mut cov = Coverage::new(options, &header);
    let mut caps: Vec<Option<PileupCap>> =
        inputs.iter().map(|_| o.pileup_cap.map(PileupCap::new)).collect();
    while let Some(i) = first_in_order(&mut inputs)? {
        let Some(r) = inputs[i].current()? else { break };
        let tid = r.ref_id();
        cov.count_read(tid);
        if selected(o, &r) {
            cov.select_read(tid, r.mapq());
            if tid >= 0
                && r.flag() & flags::UNMAP == 0
                && caps[i].as_mut().is_none_or(|c| c.admits_read(&r))
                && let Err(message) = cov.add(&r)
            {
                out.write_all(&cov.out).and_then(|_| out.flush()).map_err(write_failed)?;
                eprintln!("[E::bam_plp_push] {message}");
                return Err(Error::Failed);
            }
            if cov.out.len() >= 1 << 16 {
                out.write_all(&cov.out).map_err(write_failed)?;
                cov.out.clear();
            }
        }
        inputs[i].advance();
    }
    cov.finish();
    out.write_all(&cov.out).and_then(|_| out.flush()).map_err(write_failed)?;
    if cov.missing_qualities {
        eprintln!(
            "samtools coverage: Warning:  Missing quality values in alignments.  Mean base quality calculated only on available values."
        );
    }
    drop(out);
    file.map_or(Ok(()), |f| f.commit().map_err(write_failed))
}

/// `read_bam`'s filters.
fn selected(o: &CoverageRunOptions, r: &RecordRef<'_>) -> bool {
    let flag = r.flag();
    (o.fail_flags == 0 || flag & o.fail_flags == 0)
        && (o.required_flags == 0 || flag & o.required_flags != 0)
        && i32::from(r.mapq()) >= o.min_mapq
        && (o.min_len == 0 || crate::record::cigar::query_len(r.cigar()) >= o.min_len)
}
