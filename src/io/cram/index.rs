//! The CRAM index (`.crai`, CRAM spec §12): gzip-compressed text, one line a slice —
//! reference id, alignment start, span, container offset, slice offset, slice size. A region
//! query reads the containers whose slices overlap it.

use std::io::Read;

use noodles_cram as cram;

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

/// The `.crai` of the CRAM at `path`, gzip-compressed: one line a slice, as samtools writes it.
/// noodles' indexer walks the containers; unplaced reads' start and span are htslib's (noodles
/// writes 0 and 0): an unplaced slice's header values, 0 and 1 in a multi-reference slice.
pub fn build_crai(path: &str) -> Result<Vec<u8>, String> {
    // mdsam's reader first: its errors say what is wrong as the other commands say it.
    let input = crate::io::input::Input::open(path).map_err(|e| e.to_string())?;
    let (mut reader, _) = super::Reader::new(input).map_err(|e| e.to_string())?;
    let unplaced = reader.unplaced_slice_spans().map_err(|e| e.to_string())?;
    let index = cram::fs::index(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    for r in &index {
        let key = (r.offset(), r.landmark());
        let (reference, start, span) = match r.reference_sequence_id() {
            Some(id) => (
                id as i64,
                r.alignment_start().map_or(0, usize::from) as i64,
                r.alignment_span() as i64,
            ),
            None => {
                let (start, span) = unplaced.get(&key).copied().unwrap_or((0, 0));
                (-1, start, span)
            }
        };
        text.push_str(&format!(
            "{reference}\t{start}\t{span}\t{}\t{}\t{}\n",
            r.offset(),
            r.landmark(),
            r.slice_length()
        ));
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).map_err(|e| e.to_string())?;
    gz.finish().map_err(|e| e.to_string())
}

/// Reads a `.crai` file (gzip-compressed or plain text).
pub fn read_crai(path: &str) -> Result<Vec<CraiEntry>, String> {
    let raw = std::fs::read(path).map_err(|e| crate::error::c_message(&e))?;
    let mut text = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut text)
            .map_err(|e| format!("bad .crai: {e}"))?;
    } else {
        text = raw;
    }
    parse_crai(&text)
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
