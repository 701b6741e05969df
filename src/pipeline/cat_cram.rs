//! `cat` of CRAM files (samtools 1.24's `cram_cat`). samtools copies the containers as they are
//! (renumbering a lone read group in place); mdsam decodes each input and writes its records
//! again with its own CRAM encoder, which gives the same records and renumbers any read group
//! through the records' `RG` tags. The container selections are samtools': `-r REGION`
//! (records overlapping it; `-f` keeps whole overlapping containers), `-r '#:A-B'` (containers
//! A to B), `-p N/M` (the Nth of M runs of containers, of the file or of the region), `-q`
//! (counts of indexed containers).

use crate::error::Error;
use crate::io::cram::index::{CraiEntry, containers_for};
use crate::io::format::OutputFormat;
use crate::io::index::region::{Region, parse_region};
use crate::io::open::{self, Opened, RecordReader};
use crate::io::output_spec::OutputSpec;
use crate::io::sink::RecordSink;
use crate::pipeline::cat::CramOnly;
use crate::pipeline::cram_region::load_crai;
use crate::pipeline::region::overlaps;
use crate::record::{Batch, Header};

/// Whether the file at `path` is a CRAM (its first bytes), for choosing `cat`'s way.
pub fn is_cram(path: &str) -> bool {
    crate::io::cram::index::is_cram(path)
}

/// The CRAM version of the file at `path` (bytes 4 and 5).
fn version_of(path: &str) -> Option<(u8, u8)> {
    let mut start = [0u8; 6];
    let mut file = std::fs::File::open(path).ok()?;
    std::io::Read::read_exact(&mut file, &mut start).ok()?;
    (&start[..4] == b"CRAM").then_some((start[4], start[5]))
}

/// Concatenates the CRAM `inputs` into `output`, under `given` (`-h`) or the first input's
/// header, with the `@RG` lines of every input it lacks and `pg`'s `@PG`.
pub fn run(
    inputs: &[String],
    given: Option<Header>,
    output: &str,
    select: &CramOnly,
    pg: Option<&[(String, String)]>,
) -> Result<(), Error> {
    let mut opened = Vec::with_capacity(inputs.len());
    let mut version = None;
    let mut merged = given;
    for path in inputs {
        let input = open::open(path, 1)?;
        if !matches!(input.reader, RecordReader::Cram(_)) {
            return Err(Error::Message(format!("File {path} is of different format!")));
        }
        let v = version_of(path);
        if version.is_some_and(|known| Some(known) != v) {
            return Err(Error::Bare(
                "[cat_check_merge_hdr] ERROR: input files have differing version numbers.".into(),
            ));
        }
        version = v;
        let header = merged.get_or_insert_with(|| input.header.clone());
        crate::ops::cat::merge_read_groups(header, &input.header);
        opened.push(input);
    }
    let mut header = merged.unwrap_or_default();
    if select.query_containers {
        return query_containers(inputs, &opened, select);
    }
    if let Some(pg) = pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.rebuild_text();
        header.add_pg("samtools", &fields);
    }
    let mut spec = OutputSpec::new(OutputFormat::Cram, 1);
    if let Some(version) = version {
        spec.cram.version = version;
    }
    let mut sink = RecordSink::create(output, &spec, 1, &header, true)?;
    for (input, path) in opened.iter_mut().zip(inputs) {
        if !copy_input(input, path, select, &mut sink)? {
            break;
        }
    }
    sink.finish()
}

/// Writes the selected records of one input; false when a `-p` part is empty, where samtools
/// stops (and closes the output with what it has).
fn copy_input(
    input: &mut Opened,
    path: &str,
    select: &CramOnly,
    sink: &mut RecordSink,
) -> Result<bool, Error> {
    let RecordReader::Cram(reader) = &mut input.reader else { unreachable!("checked CRAM") };
    let mut write = |batch: &Batch, region: Option<&Region>| {
        let framed: Vec<&[u8]> = (0..batch.len())
            .filter(|&i| region.is_none_or(|r| overlaps(&batch.get(i), r)))
            .map(|i| batch.framed(i))
            .collect();
        sink.write_framed(&framed)
    };
    if select.region.is_none() && select.part.is_none() {
        while let Some(batches) = reader.read_batches().map_err(|e| Error::file(path, e))? {
            for batch in &batches {
                write(batch, None)?;
            }
        }
        return Ok(true);
    }
    let crai = load_crai(path, None).map_err(|_| index_missing())?;
    let offsets = container_offsets(&crai);
    let (range, region) = selected_containers(&offsets, &crai, &input.header, select)?;
    let Some(range) = range else { return Ok(false) };
    let filter = region.filter(|_| !select.fast);
    for &offset in &offsets[range] {
        if let Some(batch) = reader.read_container_at(offset).map_err(|e| Error::file(path, e))? {
            write(&batch, filter.as_ref())?;
        }
    }
    Ok(true)
}

fn index_missing() -> Error {
    Error::Bare("samtools cat: failed to load index".into())
}

/// The byte offsets of the indexed containers, in file order (a container's number is its
/// place here, as htslib numbers them).
fn container_offsets(crai: &[CraiEntry]) -> Vec<u64> {
    let mut offsets: Vec<u64> = crai.iter().map(|e| e.container_offset).collect();
    offsets.sort_unstable();
    offsets.dedup();
    offsets
}

/// The containers `-r` and `-p` select (by number), `None` for an empty part; and the region
/// whose records are kept (`chr:beg-end` regions only).
fn selected_containers(
    offsets: &[u64],
    crai: &[CraiEntry],
    header: &Header,
    select: &CramOnly,
) -> Result<(Option<std::ops::Range<usize>>, Option<Region>), Error> {
    let count = offsets.len();
    let number = |offset: u64| offsets.binary_search(&offset).unwrap_or(0);
    let (mut first, mut last, mut region) = (0, count.saturating_sub(1), None);
    if let Some(text) = &select.region {
        if let Some(numbers) = text.strip_prefix("#:") {
            let (a, b) = numbers.split_once('-').unwrap_or((numbers, numbers));
            let parse = |s: &str| s.trim().parse::<usize>().ok();
            let (Some(a), Some(b)) = (parse(a), parse(b)) else {
                return Err(Error::Bare(format!("samtools cat: ERROR: Malformed region: {text}")));
            };
            if b >= count {
                return Err(Error::Bare(format!(
                    "samtools cat: Too many containers.  The end range should be < {count}"
                )));
            }
            (first, last) = (a, b);
        } else {
            let r = parse_region(text, header.refs()).ok_or_else(|| {
                Error::Bare(format!("samtools cat: Unable to parse region {text}"))
            })?;
            let overlapping: Vec<usize> = if r.tid == Region::WHOLE_FILE_TID {
                (0..count).collect()
            } else {
                let tid = if r.tid == Region::UNPLACED_TID { -1 } else { r.tid };
                containers_for(crai, tid, r.beg, r.end).into_iter().map(number).collect()
            };
            let (Some(&lo), Some(&hi)) = (overlapping.iter().min(), overlapping.iter().max())
            else {
                return Ok((Some(0..0), Some(r)));
            };
            (first, last, region) = (lo, hi, Some(r));
        }
    }
    if let Some(part) = &select.part {
        let Some((a, b)) = part
            .split_once('/')
            .and_then(|(a, b)| Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)))
        else {
            return Err(Error::Bare(format!(
                "samtools cat: malformed region {part}. Should be e.g. '1/10'"
            )));
        };
        let n = (last + 1).saturating_sub(first) as i64;
        let b = b.min(n);
        let start = ((a - 1) as f64 * n as f64 / b as f64) as i64;
        let end = (a as f64 * n as f64 / b as f64) as i64 - 1;
        if start < 0 || end >= n || b <= 0 {
            return Ok((None, region));
        }
        (first, last) = (first + start as usize, first + end as usize);
    }
    Ok((Some(first..(last + 1).min(count)), region))
}

/// `-q`: each input's name, the number of its indexed containers (in the region, if given), and
/// the first and last of their numbers.
fn query_containers(inputs: &[String], opened: &[Opened], select: &CramOnly) -> Result<(), Error> {
    for (path, input) in inputs.iter().zip(opened) {
        let crai = load_crai(path, None)
            .map_err(|_| Error::Bare("samtools cat: No index found".into()))?;
        let offsets = container_offsets(&crai);
        let whole = CramOnly { region: select.region.clone(), ..CramOnly::default() };
        let (range, _) = selected_containers(&offsets, &crai, &input.header, &whole)?;
        let range = range.unwrap_or(0..0);
        let (first, last) =
            if range.is_empty() { (-1, -1) } else { (range.start as i64, range.end as i64 - 1) };
        println!("{path}\t{}\t{first}\t{last}", range.len());
    }
    Ok(())
}
