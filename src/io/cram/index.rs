//! The CRAM index (`.crai`, CRAM spec §12): gzip-compressed text, one line a slice —
//! reference id, alignment start, span, container offset, slice offset, slice size. A region
//! query reads the containers whose slices overlap it.

use crate::io::input_spec::InputSpec;
use std::io::Read;

/// One `.crai` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CraiEntry {
    /// `-1` for unplaced reads.
    pub reference_id: i32,
    /// 1-based; with `span`, the reference interval the slice covers.
    pub start: i64,
    pub span: i64,
    /// Byte offset of the slice's container in the CRAM file.
    pub container_offset: u64,
}

/// Whether the file at `path` starts with CRAM's magic.
pub fn is_cram(path: &str) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && &magic == b"CRAM"
}

/// The `.crai` of the CRAM at `path`, gzip-compressed: one line a slice, as samtools writes it
/// (`cram_index_container`), from the container and slice headers; a multi-reference slice is
/// decoded (without its reference) for one line per run of a reference, as htslib's
/// `cram_index_build_multiref` does.
pub fn build_crai(path: &str) -> Result<Vec<u8>, String> {
    let open = || -> Result<super::Reader, String> {
        let input = crate::io::input::Input::open(path).map_err(|e| e.to_string())?;
        let (mut reader, _) =
            super::Reader::new(input, InputSpec::from(1)).map_err(|e| e.to_string())?;
        reader.set_file_name(path);
        reader.without_bases();
        Ok(reader)
    };
    let slices = open()?.slices().map_err(|e| e.to_string())?;
    // Opened only when a multi-reference slice needs its records.
    let mut records_reader = None;
    let mut text = String::new();
    for slice in &slices {
        let place = format!("{}\t{}\t{}", slice.container_offset, slice.landmark, slice.size);
        let header = slice.reference;
        if header.reference_id != -2 {
            let (reference, start, span) =
                (header.reference_id, header.alignment_start, header.alignment_span);
            text.push_str(&format!("{reference}\t{start}\t{span}\t{place}\n"));
            continue;
        }
        if records_reader.is_none() {
            records_reader = Some(open()?);
        }
        let reader = records_reader.as_mut().expect("opened above");
        let batch = reader.read_container_at(slice.container_offset).map_err(|e| e.to_string())?;
        let batch = batch.unwrap_or_default();
        let count = usize::try_from(header.records).unwrap_or(0);
        let records = (slice.records_before..slice.records_before + count)
            .filter(|&i| i < batch.len())
            .map(|i| batch.get(i));
        for (reference, start, end) in reference_runs(records)? {
            text.push_str(&format!("{reference}\t{start}\t{}\t{place}\n", end - start + 1));
        }
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).map_err(|e| e.to_string())?;
    gz.finish().map_err(|e| e.to_string())
}

/// htslib's complaint (`cram_index_build_multiref`) when a multi-reference slice goes back.
pub const NOT_SORTED: &str = "CRAM file is not sorted by chromosome / position";

/// The runs of one reference in a multi-reference slice's records: reference, first start and
/// furthest end (1-based, htslib's `apos` and `aend`: an unmapped read ends where it starts).
fn reference_runs<'a>(
    records: impl Iterator<Item = crate::record::RecordRef<'a>>,
) -> Result<Vec<(i32, i64, i64)>, String> {
    let mut runs: Vec<(i32, i64, i64)> = Vec::new();
    let mut last_start = None;
    for r in records {
        let (reference, start) = (r.ref_id(), r.pos() + 1);
        let end = if r.flag() & 0x4 == 0 { start.max(r.pos() + r.ref_len()) } else { start };
        if last_start.is_some_and(|(t, s)| t == reference && start < s) {
            return Err(NOT_SORTED.into());
        }
        last_start = Some((reference, start));
        match runs.last_mut() {
            Some(run) if run.0 == reference => run.2 = run.2.max(end),
            _ => runs.push((reference, start, end)),
        }
    }
    Ok(runs)
}

/// Reads a `.crai` file (gzip-compressed or plain text); by URL, through its local copy
/// ([`crate::io::remote::index_copy`]).
pub fn read_crai(path: &str) -> Result<Vec<CraiEntry>, CraiError> {
    let raw = crate::io::remote::index_copy::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => CraiError::Missing,
        _ => CraiError::Bad(crate::error::c_message(&e)),
    })?;
    let mut text = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut text)
            .map_err(|e| CraiError::Bad(format!("bad .crai: {e}")))?;
    } else {
        text = raw;
    }
    parse_crai(&text).map_err(CraiError::Bad)
}

/// Why a `.crai` was not read: there is none at that name, or it could not be read or parsed.
#[derive(Debug)]
pub enum CraiError {
    Missing,
    Bad(String),
}

fn parse_crai(text: &[u8]) -> Result<Vec<CraiEntry>, String> {
    let mut entries = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate().filter(|(_, l)| !l.is_empty()) {
        let bad = || format!("bad .crai line {}", i + 1);
        let fields: Vec<i64> = std::str::from_utf8(line)
            .map_err(|_| bad())?
            .split('\t')
            .map(|f| f.trim().parse::<i64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [reference_id, start, span, offset, ..] = fields[..] else { return Err(bad()) };
        entries.push(CraiEntry {
            reference_id: i32::try_from(reference_id).map_err(|_| bad())?,
            start,
            span,
            container_offset: u64::try_from(offset).map_err(|_| bad())?,
        });
    }
    Ok(entries)
}

/// The offsets, in file order and each once, of the containers holding records that may overlap
/// `[beg, end)` (0-based) of `tid`; `tid` `-1` asks for the unplaced reads.
pub fn containers_for(entries: &[CraiEntry], tid: i32, beg: i64, end: i64) -> Vec<u64> {
    let mut offsets: Vec<u64> = entries
        .iter()
        .filter(|e| {
            e.reference_id == tid && (tid < 0 || (e.start - 1 < end && e.start - 1 + e.span > beg))
        })
        .map(|e| e.container_offset)
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_overlapping_a_region_once_each() {
        let text = b"0\t1\t100\t500\t10\t20\n0\t101\t100\t500\t40\t20\n0\t201\t50\t900\t10\t20\n-1\t0\t0\t1200\t10\t5\n";
        let entries = parse_crai(text).unwrap();
        assert_eq!(containers_for(&entries, 0, 50, 120), vec![500]);
        assert_eq!(containers_for(&entries, 0, 150, 260), vec![500, 900]);
        assert_eq!(containers_for(&entries, 0, 250, 300), Vec::<u64>::new());
        assert_eq!(containers_for(&entries, -1, 0, 0), vec![1200]);
        assert!(parse_crai(b"0\tx\n").is_err());
    }
}
