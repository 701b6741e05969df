//! `checksum`: samtools 1.24's order-agnostic checksums of each input (or of `-m` reports
//! merged), one report each ([`crate::ops::checksum`]). A file that cannot be read gets samtools'
//! message and no report, and the others still do; the exit status is then 1. `-o` is written
//! under a temporary name and appears when every input has been read.

use crate::io::input_spec::InputSpec;
use std::io::Write;

use crate::error::{Error, c_message};
use crate::io::input::Input;
use crate::io::open;
use crate::ops::checksum::report::{self, Layout};
use crate::ops::checksum::{
    Groups, RecordHasher, Settings, TagSelection, crcs::Scratch, read_back,
};
use crate::ops::fixmate::sanitize;
use crate::record::view::RecordRef;

pub struct ChecksumOptions {
    pub inputs: Vec<String>,
    /// `-o`, `-` for stdout.
    pub output: String,
    pub excl_flags: u16,
    pub req_flags: u16,
    pub sanitize: u32,
    /// `-N`: stop after this many reads pass the filters (0: never).
    pub max_reads: i64,
    /// The `-t` entries (`None` for `*`); `None` when the list is malformed (no tags are then
    /// checksummed, as samtools goes on after saying so).
    pub tags: Option<Vec<Option<[u8; 2]>>>,
    pub hasher: RecordHasher,
    pub settings: Settings,
    pub layout: Layout,
    /// `-m`: the inputs are reports to merge.
    pub merge: bool,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
}

/// Reads `path` and sums its reads; `Err` with samtools' message when it cannot.
fn checksum_file(
    path: &str,
    opts: &ChecksumOptions,
    tags: &TagSelection,
) -> Result<Groups, String> {
    if let Err(e) = Input::open(path) {
        let why = c_message(&e);
        return Err(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {why}\nsamtools checksum: Cannot open input file \"{path}\": {why}"
        ));
    }
    let mut opened = open::open(path, InputSpec::new(opts.threads, opts.reference.as_deref()))
        .map_err(|e| format!("samtools checksum: {e}"))?;
    let hasher = RecordHasher { tags: tags.clone(), ..opts.hasher.clone() };
    let header = opened.header.clone();
    let ref_len = |tid: i32| header.refs().get(tid as usize).map_or(0, |r| r.len as i64);
    let (mut groups, mut scratch, mut left, mut record) =
        (Groups::default(), Scratch::default(), opts.max_reads, Vec::new());
    while let Some((batches, warnings)) =
        opened.reader.read_batches(path).map_err(|e| format!("samtools checksum: {e}"))?
    {
        for w in warnings {
            eprintln!("{w}");
        }
        for r in batches.iter().flat_map(|b| b.iter()) {
            let flag = r.flag();
            if flag & opts.excl_flags != 0 || flag & opts.req_flags != opts.req_flags {
                continue;
            }
            let r = if opts.sanitize != 0 {
                record.clear();
                record.extend_from_slice(r.bytes());
                sanitize::sanitize(&mut record, opts.sanitize, ref_len);
                RecordRef::new(&record)
            } else {
                r
            };
            let (crcs, group) = hasher.hash(&r, &mut scratch);
            let qc_fail = r.flag() & crate::record::layout::flags::QCFAIL != 0;
            groups.add_read(group, qc_fail, &crcs, &opts.settings);
            if left != 0 {
                left -= 1;
                if left == 0 {
                    return Ok(groups);
                }
            }
        }
    }
    Ok(groups)
}

/// The tags to checksum, or samtools' message for an illegal name.
fn tag_selection(opts: &ChecksumOptions) -> Result<TagSelection, String> {
    let entries = opts.tags.as_deref().unwrap_or(&[]);
    TagSelection::new(entries)
        .map_err(|t| format!("[checksum] Illegal tag ID '{}'", String::from_utf8_lossy(&t)))
}

/// Every input's report in turn; the flag says one failed.
fn checksum_inputs(opts: &ChecksumOptions, out: &mut String) -> bool {
    let tags = tag_selection(opts);
    let mut failed = false;
    for path in &opts.inputs {
        match tags.as_ref().map_err(Clone::clone).and_then(|t| checksum_file(path, opts, t)) {
            Ok(groups) => out.push_str(&report::report(path, &opts.layout, &groups)),
            Err(message) => {
                eprintln!("{message}");
                failed = true;
            }
        }
    }
    failed
}

/// `-m`: the reports' rows added up into one report, or samtools' message.
fn merge_reports(opts: &ChecksumOptions) -> Result<String, String> {
    let (mut groups, mut layout) = (Groups::default(), opts.layout.clone());
    let mut tags: Option<String> = None;
    for path in &opts.inputs {
        let failed = |why: String| {
            let why = if why.is_empty() { why } else { why + "\n" };
            format!("{why}Failed to parse checksum file '{path}'")
        };
        let bytes = std::fs::read(path)
            .map_err(|e| failed(format!("{path}: {}", crate::error::c_message(&e))))?;
        let parsed = read_back::parse(&String::from_utf8_lossy(&bytes)).map_err(failed)?;
        if let Some(t) = &parsed.tags {
            match &tags {
                Some(known) if known != t => {
                    return Err(failed(format!("Aux tag mismatch, {known} - {t}")));
                }
                _ => tags = Some(t.clone()),
            }
        }
        if let Some(f) = &parsed.flags {
            layout.flag_mask = crate::record::layout::flags::parse_names(f);
        }
        layout.check_pos |= parsed.has_pos;
        layout.check_cigar |= parsed.has_cigar;
        layout.check_mate |= parsed.has_mate;
        for row in &parsed.rows {
            groups.add_row(row.group.as_deref(), row.qc, &row.crcs, row.count);
        }
    }
    layout.tag_str = tags.unwrap_or_else(|| "(null)".into());
    Ok(report::report("merge", &layout, &groups))
}

pub fn run(opts: ChecksumOptions) -> Result<(), Error> {
    let (mut sink, guard) = crate::io::output::create(&opts.output)
        .map_err(|e| Error::Bare(format!("{}: {}", opts.output, c_message(&e))))?;
    if opts.tags.is_none() {
        eprintln!("Bad tag string.  Should be XX,YY,... syntax");
    }
    let mut text = String::new();
    let failed = if opts.merge {
        match merge_reports(&opts) {
            Ok(report) => {
                text = report;
                false
            }
            Err(message) => {
                eprintln!("{message}");
                true
            }
        }
    } else {
        checksum_inputs(&opts, &mut text)
    };
    sink.write_all(text.as_bytes())
        .and_then(|_| sink.flush())
        .map_err(|e| Error::io(opts.output.as_str(), e))?;
    drop(sink);
    // A report file appears only whole: samtools leaves the reports written before a failure.
    if let Some(file) = guard.filter(|_| !failed) {
        file.commit().map_err(|e| Error::io(opts.output.as_str(), e))?;
    }
    if failed {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        eprintln!("[checksum] Failed to process data");
        // A failed merge returns -1 from samtools' main, one input failing returns 1.
        return Err(Error::Status(if opts.merge { 255 } else { 1 }));
    }
    Ok(())
}
