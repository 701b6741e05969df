//! `samtools bedcov` (samtools 1.24 `bedcov.c`): for each BED line, every input queried through
//! its index and counted by [`crate::ops::depth::bedcov`]; the line is printed back with the
//! counts appended. Command line: [`crate::cli::bedcov`].
//!
//! Differences: inputs must be BAM.

use crate::io::input_spec::InputSpec;
use std::io::Write;

use crate::error::Error;
use crate::io::index::Region;
use crate::ops::depth::bedcov::{BedcovOptions, IntervalCounts, IntervalSweep};
use crate::ops::depth::pileup_cap::PileupCap;
use crate::pipeline::sorted_input::{RegionIndex, SortedInput, first_in_order, log_open_failure};
use crate::record::Header;
use crate::record::layout::flags;

#[derive(Clone, Debug, Default)]
pub struct BedcovRunOptions {
    pub bed: String,
    pub inputs: Vec<String>,
    pub index_files: Option<Vec<String>>,
    pub min_mapq: i32,
    pub excl_flags: u16,
    pub skip_deletions: bool,
    pub min_depth: Option<i64>,
    /// `--max-depth` (or a larger `-d`): htslib's pileup cap; `None`, no cap.
    pub pileup_cap: Option<i64>,
    pub read_counts: bool,
    pub header: bool,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
}

pub fn run(o: &BedcovRunOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(1);
    pool.install(|| bedcov(o))
}

/// A message and exit status 2, as samtools' `return 2`.
fn fail(message: String) -> Error {
    eprintln!("{message}");
    Error::Status(2)
}

fn open(o: &BedcovRunOptions, i: usize) -> Result<(SortedInput, RegionIndex, Header), Error> {
    let path = &o.inputs[i];
    let failed = || fail(format!("ERROR: fail to open index BAM file '{path}'"));
    let opened =
        crate::io::open::open(path, InputSpec::new(1, o.reference.as_deref())).map_err(|_| {
            log_open_failure(path);
            failed()
        })?;
    let explicit = o.index_files.as_ref().map(|x| x[i].as_str());
    let index = RegionIndex::load_logged(path, explicit, &opened).ok_or_else(failed)?;
    let header = opened.header.clone();
    let empty = Region { tid: -1, beg: 0, end: 0 };
    let records = index.query(path, opened, empty).ok_or_else(failed)?;
    Ok((records, index, header))
}

fn bedcov(o: &BedcovRunOptions) -> Result<(), Error> {
    let (mut inputs, mut indexes) = (Vec::new(), Vec::new());
    let mut header = None;
    for i in 0..o.inputs.len() {
        let (input, index, h) = open(o, i)?;
        inputs.push(input);
        indexes.push(index);
        header.get_or_insert(h);
    }
    let header = header.unwrap_or_default();
    let text = read_text(&o.bed).map_err(|e| {
        fail(format!(
            "samtools bedcov: can't open BED file '{}': {}",
            o.bed,
            crate::error::c_message(&e)
        ))
    })?;
    let mut out = std::io::stdout().lock();
    let write_failed = |e: std::io::Error| Error::io("stdout", e);
    let mut header_done = !o.header;
    let mut status = 0;
    let options = BedcovOptions { skip_deletions: o.skip_deletions, min_depth: o.min_depth };
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if line[0] == b'#' {
            if !header_done && line.starts_with(b"#chrom\t") {
                out.write_all(&column_header(o, Some(line), 0)).map_err(write_failed)?;
                header_done = true;
            }
            continue;
        }
        if line.starts_with(b"track ") || line.starts_with(b"browser ") {
            continue;
        }
        if !header_done {
            let fields = line.iter().filter(|&&b| b == b'\t').count() + 1;
            out.write_all(&column_header(o, None, fields)).map_err(write_failed)?;
            header_done = true;
        }
        let Some((tid, beg, end)) = parse_line(line, &header) else {
            // samtools reports the line and goes on, exiting with 2 at the end.
            out.flush().map_err(write_failed)?;
            eprintln!("Errors in BED line '{}'", String::from_utf8_lossy(line));
            status = 2;
            continue;
        };
        let interval = Region { tid, beg, end };
        let Some(counts) = count_interval(&mut inputs, &indexes, interval, o, options)? else {
            out.flush().map_err(write_failed)?;
            eprintln!("samtools bedcov: error reading from input file");
            status = 2;
            break;
        };
        let mut text = line.to_vec();
        for c in &counts {
            push_count(&mut text, c.bases);
        }
        if o.min_depth.is_some() {
            for c in &counts {
                push_count(&mut text, c.positions_at_depth);
            }
        }
        if o.read_counts {
            for c in &counts {
                push_count(&mut text, c.reads);
            }
        }
        text.push(b'\n');
        out.write_all(&text).map_err(write_failed)?;
    }
    out.flush().map_err(write_failed)?;
    if status != 0 { Err(Error::Status(status)) } else { Ok(()) }
}

fn push_count(text: &mut Vec<u8>, n: i64) {
    text.push(b'\t');
    text.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn read_text(path: &str) -> std::io::Result<Vec<u8>> {
    let raw = std::fs::read(path)?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut text)?;
        Ok(text)
    } else {
        Ok(raw)
    }
}

/// `output_header`: the BED file's own `#chrom` line, or BED column names for `fields` columns;
/// then a column name per input and count.
fn column_header(o: &BedcovRunOptions, own: Option<&[u8]>, fields: usize) -> Vec<u8> {
    const BED_COLUMNS: [&str; 12] = [
        "chrom",
        "chromStart",
        "chromEnd",
        "name",
        "score",
        "strand",
        "thickStart",
        "thickEnd",
        "itemRgb",
        "blockCount",
        "blockSizes",
        "blockStarts",
    ];
    let mut h = Vec::new();
    match own {
        Some(line) => h.extend_from_slice(line),
        None => {
            for i in 0..fields {
                h.push(if i > 0 { b'\t' } else { b'#' });
                h.extend_from_slice(BED_COLUMNS.get(i).unwrap_or(&".").as_bytes());
            }
        }
    }
    let mut suffixes = vec!["_cov"];
    if o.min_depth.is_some() {
        suffixes.push("_depth");
    }
    if o.read_counts {
        suffixes.push("_count");
    }
    for suffix in suffixes {
        for name in &o.inputs {
            h.push(b'\t');
            h.extend_from_slice(name.as_bytes());
            h.extend_from_slice(suffix.as_bytes());
        }
    }
    h.push(b'\n');
    h
}

/// The reference (first whitespace-delimited word) and two integers after it, as samtools'
/// `sscanf("%ld %ld")`; `None` for a line samtools calls an error.
fn parse_line(line: &[u8], header: &Header) -> Option<(i32, i64, i64)> {
    let name_end = line.iter().position(|b| b.is_ascii_whitespace())?;
    let tid = header.tid(&line[..name_end])?;
    let mut rest = &line[name_end + 1..];
    let beg = scan_long(&mut rest)?;
    let end = scan_long(&mut rest)?;
    (end >= beg).then_some((tid, beg, end))
}

/// `%ld`: blanks skipped, an optional sign, digits.
fn scan_long(text: &mut &[u8]) -> Option<i64> {
    let start = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    let t = &text[start..];
    let sign_len = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let digits = t[sign_len..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let value = std::str::from_utf8(&t[..sign_len + digits]).ok()?.parse::<i64>().ok();
    *text = &t[sign_len + digits..];
    value.or(Some(i64::MAX))
}

fn count_interval(
    inputs: &mut [SortedInput],
    indexes: &[RegionIndex],
    interval: Region,
    o: &BedcovRunOptions,
    options: BedcovOptions,
) -> Result<Option<Vec<IntervalCounts>>, Error> {
    for (input, index) in inputs.iter_mut().zip(indexes) {
        index.requery(input, interval);
    }
    let mut sweep = IntervalSweep::new(interval.beg, interval.end, inputs.len(), options);
    // A new pileup for every interval, as `bam_mplp_init` there.
    let mut caps: Vec<Option<PileupCap>> =
        inputs.iter().map(|_| o.pileup_cap.map(PileupCap::new)).collect();
    while let Some(i) = first_in_order(inputs)? {
        let Some(r) = inputs[i].current()? else { break };
        let flag = r.flag();
        if flag & o.excl_flags == 0
            && i32::from(r.mapq()) >= o.min_mapq
            && flag & flags::UNMAP == 0
            && r.ref_id() >= 0
            && caps[i].as_mut().is_none_or(|c| c.admits_read(&r))
            && let Err(message) = sweep.add(i, &r)
        {
            eprintln!("[E::bam_plp_push] {message}");
            return Ok(None);
        }
        inputs[i].advance();
    }
    Ok(Some(sweep.finish()))
}
