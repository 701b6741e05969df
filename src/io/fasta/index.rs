//! The `.fai` table as htslib's `faidx.c` keeps it: entries in file order with a name lookup,
//! read from `.fai` text as `fai_read` reads it ([`parse`]), written as `fai_save` writes it
//! ([`FastaIndex::to_fai`]), and a region clamped to an entry as `fai_get_val` clamps it.

use std::collections::HashMap;

/// FASTA or FASTQ: which `.fai` layout, and which header character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Fasta,
    Fastq,
}

impl Format {
    /// htslib's `file_type` word in its messages.
    pub fn word(self) -> &'static str {
        match self {
            Format::Fasta => "FASTA",
            Format::Fastq => "FASTQ",
        }
    }
}

/// One `.fai` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: Vec<u8>,
    pub len: u64,
    pub seq_offset: u64,
    /// Bases per line (htslib's `line_blen`).
    pub line_bases: u32,
    /// Bytes per line, line end included (htslib's `line_len`).
    pub line_width: u32,
    pub qual_offset: u64,
}

/// A loaded index: the entries in file order and a name lookup.
#[derive(Debug, Default)]
pub struct FastaIndex {
    pub entries: Vec<Entry>,
    by_name: HashMap<Vec<u8>, usize>,
}

impl FastaIndex {
    /// Adds `entry` unless its name is taken: htslib's `fai_insert_index`, which warns and
    /// keeps the first. Returns the warning line, if any.
    pub fn insert(&mut self, entry: Entry) -> Option<String> {
        if self.by_name.contains_key(&entry.name) {
            return Some(format!(
                "[W::fai_insert_index] Ignoring duplicate sequence \"{}\" at byte offset {}",
                String::from_utf8_lossy(&entry.name),
                entry.seq_offset
            ));
        }
        self.by_name.insert(entry.name.clone(), self.entries.len());
        self.entries.push(entry);
        None
    }

    /// The entry called `name`.
    pub fn get(&self, name: &[u8]) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The id of `name`, for region parsing.
    pub fn id(&self, name: &[u8]) -> Option<i32> {
        self.by_name.get(name).map(|&i| i as i32)
    }

    /// The `.fai` text (htslib's `fai_save`).
    pub fn to_fai(&self, format: Format) -> Vec<u8> {
        let mut out = Vec::new();
        for e in &self.entries {
            out.extend_from_slice(&e.name);
            let line = match format {
                Format::Fasta => {
                    format!("\t{}\t{}\t{}\t{}\n", e.len, e.seq_offset, e.line_bases, e.line_width)
                }
                Format::Fastq => format!(
                    "\t{}\t{}\t{}\t{}\t{}\n",
                    e.len, e.seq_offset, e.line_bases, e.line_width, e.qual_offset
                ),
            };
            out.extend_from_slice(line.as_bytes());
        }
        out
    }
}

/// Reads `.fai` text as htslib's `fai_read` does for `format`; the error is htslib's lines.
pub fn parse(text: &[u8], fai_path: &str, format: Format) -> Result<FastaIndex, String> {
    let mut index = FastaIndex::default();
    for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        let name_end = line.iter().position(|b| b.is_ascii_whitespace()).unwrap_or(line.len());
        let mut rest = line.get(name_end + 1..).unwrap_or_default();
        let mut numbers = [0u64; 5];
        let wanted = if format == Format::Fasta { 4 } else { 5 };
        let mut found = 0;
        while found < wanted {
            let Some((value, used)) = scan_u64(rest) else { break };
            numbers[found] = value;
            found += 1;
            rest = &rest[used..];
        }
        if found != wanted {
            let lnum = i + 1;
            return Err(if format == Format::Fastq && found == 4 {
                format!(
                    "[E::fai_read] Possibly this is a FASTA index, try using faidx.  Problem in {fai_path} line {lnum}"
                )
            } else {
                format!(
                    "[E::fai_read] Could not understand {} index {fai_path} line {lnum}",
                    format.word()
                )
            });
        }
        let entry = Entry {
            name: line[..name_end].to_vec(),
            len: numbers[0],
            seq_offset: numbers[1],
            line_bases: numbers[2] as u32,
            line_width: numbers[3] as u32,
            qual_offset: numbers[4],
        };
        if let Some(warning) = index.insert(entry) {
            eprintln!("{warning}");
        }
    }
    Ok(index)
}

/// `sscanf("%lu")` on the front of `text`: leading white space, an optional sign, decimal
/// digits (a minus wraps, as strtoull). Returns the value and the bytes used.
fn scan_u64(text: &[u8]) -> Option<(u64, usize)> {
    let mut i = text.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let negative = text.get(i) == Some(&b'-');
    if matches!(text.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits = text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let value = text[i..i + digits]
        .iter()
        .fold(0u64, |v, &d| v.wrapping_mul(10).wrapping_add(u64::from(d - b'0')));
    Some((if negative { value.wrapping_neg() } else { value }, i + digits))
}

/// A region resolved against an index as `fai_get_val` leaves it: `[beg, end)` clamped to the
/// sequence (htslib compares the signed start with the unsigned length, so a start of -1,
/// `chr:0-5`, becomes the length, and the region comes out empty).
pub fn clamp_region(entry: &Entry, beg: i64, end: i64) -> (i64, i64) {
    let len = entry.len as i64;
    let mut beg = if beg as u64 >= entry.len { len } else { beg };
    let end = if end as u64 >= entry.len { len } else { end };
    if beg > end {
        beg = end;
    }
    (beg, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fai_lines_round_trip_and_duplicates_keep_the_first() {
        let text = b"a\t14\t8\t10\t11\nb\t4\t27\t4\t5\n";
        let index = parse(text, "t.fa.fai", Format::Fasta).unwrap();
        assert_eq!(index.to_fai(Format::Fasta), text);
        assert_eq!(index.get(b"b").unwrap().seq_offset, 27);
        let e = parse(b"a\t1\t2\t3\n", "x.fai", Format::Fasta).unwrap_err();
        assert_eq!(e, "[E::fai_read] Could not understand FASTA index x.fai line 1");
        let e = parse(b"a\t1\t2\t3\t4\n", "x.fai", Format::Fastq).unwrap_err();
        assert!(e.contains("Possibly this is a FASTA index"), "{e}");
        let mut index = FastaIndex::default();
        let entry = index.entries.first().cloned();
        assert!(entry.is_none());
        let e = Entry {
            name: b"x".to_vec(),
            len: 1,
            seq_offset: 3,
            line_bases: 1,
            line_width: 2,
            qual_offset: 0,
        };
        assert!(index.insert(e.clone()).is_none());
        assert!(index.insert(e).unwrap().contains("Ignoring duplicate sequence \"x\""));
    }

    #[test]
    fn a_start_of_minus_one_clamps_to_the_length() {
        let e = Entry {
            name: b"a".to_vec(),
            len: 14,
            seq_offset: 0,
            line_bases: 10,
            line_width: 11,
            qual_offset: 0,
        };
        assert_eq!(clamp_region(&e, -1, 5), (5, 5));
        assert_eq!(clamp_region(&e, 13, 20), (13, 14));
        assert_eq!(clamp_region(&e, 20, 30), (14, 14));
    }

    #[test]
    fn scan_reads_like_sscanf() {
        assert_eq!(scan_u64(b"  12\t"), Some((12, 4)));
        assert_eq!(scan_u64(b"-1"), Some((u64::MAX, 2)));
        assert_eq!(scan_u64(b"x"), None);
    }
}
