//! A FASTA read whole into memory (a gzip-compressed one inflated), indexed through the `.fai`
//! beside it when that one reads, else by an index built in memory and not written: what
//! `mpileup -f`, `consensus`, `tview`, `targetcut`, `depad`, `stats -r` and CRAM references
//! have always read. Unlike [`super::load`] it refuses no layout (the line length is the first
//! sequence line's, later lines may differ) and writes no file.

use super::index::{Entry, FastaIndex};

/// The file's bytes (inflated) and its index; the error is htslib's and samtools' lines.
pub fn read(path: &str) -> Result<(Vec<u8>, FastaIndex), String> {
    let failed = |why: String| {
        format!(
            "[E::fai_build3_core] Failed to open the file {path} : {why}\nCould not load faidx: {path}"
        )
    };
    let raw = std::fs::read(path).map_err(|e| failed(crate::error::c_message(&e)))?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut plain)
            .map_err(|e| failed(e.to_string()))?;
        plain
    } else {
        raw
    };
    let fai = std::fs::read(format!("{path}.fai")).ok().and_then(|t| parse_lenient(&t));
    let index = fai.unwrap_or_else(|| build_lenient(&bytes));
    Ok((bytes, index))
}

/// The `.fai` text's entries, the first of a name kept; `None` when a line is malformed (the
/// index is then built from the file).
fn parse_lenient(text: &[u8]) -> Option<FastaIndex> {
    let mut index = FastaIndex::default();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let f: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let num =
            |i: usize| -> Option<u64> { std::str::from_utf8(f.get(i)?).ok()?.trim().parse().ok() };
        let entry = Entry {
            name: f[0].to_vec(),
            len: num(1)?,
            seq_offset: num(2)?,
            line_bases: u32::try_from(num(3)?).ok()?,
            line_width: u32::try_from(num(4)?).ok()?,
            qual_offset: 0,
        };
        // A duplicate keeps the first, silently.
        let _ = index.insert(entry);
    }
    Some(index)
}

/// Indexes FASTA `text` leniently: a name is the header's first word, the line layout is the
/// first sequence line's, every graphic byte up to the next header is a base.
fn build_lenient(text: &[u8]) -> FastaIndex {
    let mut index = FastaIndex::default();
    let mut current: Option<Entry> = None;
    let mut at = 0usize;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let start = at;
        at += line.len();
        if line.first() == Some(&b'>') {
            if let Some(e) = current.take() {
                let _ = index.insert(e);
            }
            let name: Vec<u8> =
                line[1..].iter().take_while(|b| !b.is_ascii_whitespace()).copied().collect();
            current = Some(Entry {
                name,
                len: 0,
                seq_offset: at as u64,
                line_bases: 0,
                line_width: 0,
                qual_offset: 0,
            });
            continue;
        }
        let Some(e) = current.as_mut() else { continue };
        let bases = line.iter().filter(|b| b.is_ascii_graphic()).count() as u64;
        if e.line_bases == 0 && bases > 0 {
            e.line_bases = bases as u32;
            e.line_width = line.len() as u32;
            e.seq_offset = start as u64;
        }
        e.len += bases;
    }
    if let Some(e) = current {
        let _ = index.insert(e);
    }
    index
}

/// `beg..=end` (0-based) clamped to a sequence of `len` bases as htslib's
/// `faidx_adjust_position` clamps it, as `[beg, end)`.
pub fn adjust_position(len: u64, beg: i64, end: i64) -> (i64, i64) {
    let len = len as i64;
    let mut beg = beg;
    let mut end = end;
    if end < beg {
        beg = end;
    }
    beg = if beg < 0 { 0 } else { beg.min(len) };
    end = if end < 0 {
        0
    } else if end >= len {
        len - 1
    } else {
        end
    };
    (beg, end + 1)
}

/// The bases `[beg, end)` of `e` in `text` ([`adjust_position`]ed): from the layout's first
/// byte, the graphic bytes on.
pub fn fetch(text: &[u8], e: &Entry, beg: i64, end: i64) -> Vec<u8> {
    let want = (end - beg).max(0) as usize;
    let mut out = Vec::with_capacity(want);
    if want == 0 || e.line_bases == 0 {
        return out;
    }
    let (b, line_bases, line_width) =
        (beg as u64, u64::from(e.line_bases), u64::from(e.line_width));
    let mut at = (e.seq_offset + b / line_bases * line_width + b % line_bases) as usize;
    while out.len() < want && at < text.len() {
        let c = text[at];
        if c.is_ascii_graphic() {
            out.push(c);
        }
        at += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_index_htslib_would_and_fetches_clamped() {
        let text = b">chr1 desc\nACGT\nAC\n>chr2\nGG\n";
        let index = build_lenient(text);
        let chr1 = index.get(b"chr1").unwrap();
        assert_eq!((chr1.len, chr1.seq_offset, chr1.line_bases, chr1.line_width), (6, 11, 4, 5));
        assert_eq!(index.get(b"chr2").unwrap().len, 2);
        let fetch_at = |beg, end| {
            let (beg, end) = adjust_position(chr1.len, beg, end);
            fetch(text, chr1, beg, end)
        };
        assert_eq!(fetch_at(2, 4), b"GTA");
        assert_eq!(fetch_at(3, 100), b"TAC");
        assert_eq!(fetch_at(50, 100), b"");
    }

    #[test]
    fn a_malformed_fai_is_not_used() {
        assert!(parse_lenient(b"a\t1\t2\t3\n").is_none());
        let index = parse_lenient(b"a\t6\t3\t4\t5\na\t1\t2\t3\t4\n").unwrap();
        assert_eq!(index.entries.len(), 1);
        assert_eq!(index.get(b"a").unwrap().len, 6);
    }
}
