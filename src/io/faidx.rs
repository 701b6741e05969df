//! Indexed FASTA references (htslib's `faidx`): bases fetched by name and position, through the
//! `.fai` beside the file when there is one, else an index built in memory as htslib would
//! build it. The file is read into memory (a gzip-compressed one inflated).

use std::collections::HashMap;

/// One `.fai` line: where a sequence's bases lie in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    len: i64,
    offset: u64,
    line_bases: u64,
    line_width: u64,
}

pub struct IndexedFasta {
    /// The whole (inflated) file.
    bytes: Vec<u8>,
    entries: HashMap<Vec<u8>, Entry>,
}

/// The `.fai` text's entries; `None` when a line is malformed.
fn parse_fai(text: &[u8]) -> Option<HashMap<Vec<u8>, Entry>> {
    let mut entries = HashMap::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let f: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
        let num =
            |i: usize| -> Option<u64> { std::str::from_utf8(f.get(i)?).ok()?.trim().parse().ok() };
        let entry = Entry {
            len: num(1)? as i64,
            offset: num(2)?,
            line_bases: num(3)?,
            line_width: num(4)?,
        };
        entries.entry(f[0].to_vec()).or_insert(entry);
    }
    Some(entries)
}

/// Indexes FASTA `text` as htslib's `fai_build` does: a name is the header's first word, the
/// line length is the first sequence line's.
fn build_index(text: &[u8]) -> HashMap<Vec<u8>, Entry> {
    let mut entries = HashMap::new();
    let mut current: Option<(Vec<u8>, Entry)> = None;
    let mut at = 0usize;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let start = at;
        at += line.len();
        if line.first() == Some(&b'>') {
            if let Some((name, e)) = current.take() {
                entries.entry(name).or_insert(e);
            }
            let name: Vec<u8> =
                line[1..].iter().take_while(|b| !b.is_ascii_whitespace()).copied().collect();
            let entry = Entry { len: 0, offset: at as u64, line_bases: 0, line_width: 0 };
            current = Some((name, entry));
            continue;
        }
        let Some((_, e)) = current.as_mut() else { continue };
        let bases = line.iter().filter(|b| b.is_ascii_graphic()).count() as u64;
        if e.line_bases == 0 && bases > 0 {
            e.line_bases = bases;
            e.line_width = line.len() as u64;
            e.offset = start as u64;
        }
        e.len += bases as i64;
    }
    if let Some((name, e)) = current {
        entries.entry(name).or_insert(e);
    }
    entries
}

impl IndexedFasta {
    /// Loads `path` and its index; the error is htslib's and samtools' lines.
    pub fn open(path: &str) -> Result<IndexedFasta, String> {
        let failed = |why: String| {
            format!(
                "[E::fai_build3_core] Failed to open the file {path} : {why}\nCould not load faidx: {path}"
            )
        };
        let raw = std::fs::read(path).map_err(|e| failed(crate::error::c_message(&e)))?;
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut plain = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::MultiGzDecoder::new(&raw[..]),
                &mut plain,
            )
            .map_err(|e| failed(e.to_string()))?;
            plain
        } else {
            raw
        };
        let fai = std::fs::read(format!("{path}.fai")).ok().and_then(|t| parse_fai(&t));
        let entries = fai.unwrap_or_else(|| build_index(&bytes));
        Ok(IndexedFasta { bytes, entries })
    }

    fn text(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the file has a sequence `name` (`faidx_has_seq`).
    pub fn has(&self, name: &[u8]) -> bool {
        self.entries.contains_key(name)
    }

    /// The whole sequence `name` (as stored: case kept), or `None` when the file has no such name.
    pub fn sequence(&self, name: &[u8]) -> Option<Vec<u8>> {
        let e = self.entries.get(name)?;
        if e.len <= 0 {
            return Some(Vec::new());
        }
        self.fetch(name, 0, e.len - 1)
    }
}

impl IndexedFasta {
    /// The bases `beg..=end` (0-based) of sequence `name`, clamped to the sequence as htslib
    /// clamps them (`faidx_fetch_seq64`); `None`, with htslib's message, when there is none.
    pub fn fetch(&self, name: &[u8], beg: i64, end: i64) -> Option<Vec<u8>> {
        let Some(e) = self.entries.get(name) else {
            eprintln!(
                "[E::faidx_adjust_position] The sequence \"{}\" was not found",
                String::from_utf8_lossy(name)
            );
            return None;
        };
        // htslib's faidx_adjust_position, then [beg, end] inclusive.
        let mut beg = beg;
        let mut end = end;
        if end < beg {
            beg = end;
        }
        beg = if beg < 0 { 0 } else { beg.min(e.len) };
        end = if end < 0 {
            0
        } else if end >= e.len {
            e.len - 1
        } else {
            end
        };
        let want = (end + 1 - beg).max(0) as usize;
        let text = self.text();
        let mut out = Vec::with_capacity(want);
        if want == 0 || e.line_bases == 0 {
            return Some(out);
        }
        let b = beg as u64;
        let mut at = (e.offset + b / e.line_bases * e.line_width + b % e.line_bases) as usize;
        while out.len() < want && at < text.len() {
            let c = text[at];
            if c.is_ascii_graphic() {
                out.push(c);
            }
            at += 1;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_index_htslib_would() {
        let text = b">chr1 desc\nACGT\nAC\n>chr2\nGG\n";
        let idx = build_index(text);
        assert_eq!(
            idx[&b"chr1".to_vec()],
            Entry { len: 6, offset: 11, line_bases: 4, line_width: 5 }
        );
        assert_eq!(idx[&b"chr2".to_vec()].len, 2);
        let fasta = IndexedFasta { bytes: text.to_vec(), entries: idx };
        assert_eq!(fasta.fetch(b"chr1", 2, 4).unwrap(), b"GTA");
        assert_eq!(fasta.fetch(b"chr1", 3, 100).unwrap(), b"TAC");
        assert_eq!(fasta.fetch(b"chr1", 50, 100).unwrap(), b"");
        assert!(fasta.fetch(b"chr3", 0, 1).is_none());
    }
}
