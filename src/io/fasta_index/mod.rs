//! FASTA/FASTQ indexes as htslib's `faidx.c` keeps them: the `.fai` table, building it from the
//! sequence file ([`build`], [`load`]), reading it back ([`parse`]), and fetching a region's
//! bases or qualities through it ([`retrieve`]), from plain or BGZF files ([`source`]); and
//! [`kseq`], the front-to-back record reader `dict` uses. It serves `samtools faidx`, `fqidx`
//! ([`crate::pipeline::faidx`]) and `dict`; it reads files and knows no alignment records.
//! (`stats -r` and CRAM still read references through [`crate::io::faidx`], which loads the
//! whole file.)
//!
//! Layout of a `.fai` line (tab-separated, htslib's `fai_save`):
//!
//! | column | FASTA | FASTQ |
//! |--------|-------|-------|
//! | 1 | name (the header's first word) | name |
//! | 2 | bases | bases |
//! | 3 | offset of the first base (uncompressed) | offset of the first base |
//! | 4 | bases per line | bases per line |
//! | 5 | bytes per line (with its end) | bytes per line |
//! | 6 | | offset of the first quality |
//!
//! Compatibility: [`build`] is htslib 1.24's `fai_build_core` state machine (blank lines end a
//! FASTA sequence, a shorter line ends it too, a longer one is an error, empty sequences are
//! dropped, duplicate names keep the first), with its `[E::fai_build_core]` messages; [`parse`]
//! is `fai_read` (`sscanf` fields); [`clamp_region`] and [`retrieve`] are `fai_get_val` and
//! `fai_retrieve`. noodles-fasta's `Indexer` and `fai::Record` are not used: the Indexer refuses
//! what htslib accepts (empty sequences, a sequence line of blanks) and `fai::Record` has no
//! quality offset and no zero bases-per-line, both of which htslib writes.
//!
//! Performance: indexing a 48 MB FASTA took 0.05 s (samtools 1.24: 0.11 s), its BGZF copy
//! 0.13 s (0.30 s); fetch figures are in the commit that batched the line reads.

mod build;
pub mod kseq;
pub mod load;
pub mod source;

use std::collections::HashMap;

pub use build::build;
pub use source::Source;

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

/// Why a fetch failed: htslib's error line (`len` -1, never ignored by `--continue`).
pub type FetchError = String;

/// `fai_retrieve`: `end - beg` bytes of the sequence (or quality) that starts at `offset`,
/// with the line ends taken out by the index's layout, not by looking at the bytes.
///
/// The buffer grows with what is read (htslib allocates the whole region first), so a `.fai`
/// that claims more than the file holds fails at the end of the file, not in the allocator.
pub fn retrieve(
    source: &mut Source,
    entry: &Entry,
    offset: u64,
    beg: i64,
    end: i64,
) -> Result<Vec<u8>, FetchError> {
    if entry.line_bases == 0 || entry.line_width < entry.line_bases {
        // htslib checks only for 0; a line shorter than its bases would overrun its buffer.
        return Err(format!(
            "[E::fai_retrieve] Invalid line length in index: {}",
            entry.line_bases
        ));
    }
    let (blen, llen) = (u64::from(entry.line_bases), u64::from(entry.line_width));
    let beg = beg.max(0) as u64;
    let start = offset.wrapping_add(beg / blen * llen + beg % blen);
    if source.seek(start).is_err() {
        return Err("[E::fai_retrieve] Failed to retrieve block. (Seeking in a compressed, .gzi unindexed, file?)".into());
    }
    let total = (end.max(0) as u64).saturating_sub(beg);
    let mut out = Vec::with_capacity(total.min(1 << 26) as usize);
    let mut buf = Vec::new();
    let first_bases = blen - beg % blen;
    if total <= first_bases {
        // Inside one line.
        read_lines(source, &mut buf, &mut out, 1, total, total)?;
        return Ok(out);
    }
    // The first (partial) line with its end, the whole lines, then the rest of the last.
    read_lines(source, &mut buf, &mut out, 1, llen - beg % blen, first_bases)?;
    let mut whole_lines = (total - first_bases - 1) / blen;
    let last = total - first_bases - whole_lines * blen;
    // htslib reads a line a call; a batch of lines a call made whole-sequence fetches twice as
    // fast (the commit that made it says what was measured).
    let batch_lines = ((1 << 20) / llen).max(1);
    while whole_lines > 0 {
        let lines = whole_lines.min(batch_lines);
        read_lines(source, &mut buf, &mut out, lines, llen, blen)?;
        whole_lines -= lines;
    }
    read_lines(source, &mut buf, &mut out, 1, last, last)?;
    Ok(out)
}

/// Reads `lines` lines of `width` bytes and keeps the first `keep` bytes of each; a line cut
/// short is htslib's error (nothing of it read: the end of the file).
fn read_lines(
    source: &mut Source,
    buf: &mut Vec<u8>,
    out: &mut Vec<u8>,
    lines: u64,
    width: u64,
    keep: u64,
) -> Result<(), FetchError> {
    if width == 0 {
        return Ok(());
    }
    buf.resize((lines * width) as usize, 0);
    let want = buf.len();
    let got = source.read_small(buf, want) as u64;
    for line in buf[..(got / width * width) as usize].chunks_exact(width as usize) {
        out.extend_from_slice(&line[..keep as usize]);
    }
    if got < lines * width {
        let why =
            if got.is_multiple_of(width) { "unexpected end of file" } else { "error reading file" };
        return Err(format!("[E::fai_retrieve] Failed to retrieve block: {why}"));
    }
    Ok(())
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
    fn retrieve_follows_the_line_layout_and_fails_past_the_end() {
        let path = std::env::temp_dir().join(format!("mdsam-retrieve-{}.fa", std::process::id()));
        std::fs::write(&path, b">a\nACGTACGTAC\nGTac\n").unwrap();
        let mut source = Source::plain(std::fs::File::open(&path).unwrap());
        let entry = |len, line_bases, line_width| Entry {
            name: b"a".to_vec(),
            len,
            seq_offset: 3,
            line_bases,
            line_width,
            qual_offset: 0,
        };
        let e = entry(14, 10, 11);
        assert_eq!(retrieve(&mut source, &e, 3, 8, 13).unwrap(), b"ACGTa");
        assert_eq!(retrieve(&mut source, &e, 3, 0, 14).unwrap(), b"ACGTACGTACGTac");
        let too_long = entry(1 << 50, 10, 11);
        let err = retrieve(&mut source, &too_long, 3, 0, 1 << 50).unwrap_err();
        assert!(err.contains("Failed to retrieve block"), "{err}");
        let err = retrieve(&mut source, &entry(14, 10, 4), 3, 0, 14).unwrap_err();
        assert!(err.contains("Invalid line length"), "{err}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn scan_reads_like_sscanf() {
        assert_eq!(scan_u64(b"  12\t"), Some((12, 4)));
        assert_eq!(scan_u64(b"-1"), Some((u64::MAX, 2)));
        assert_eq!(scan_u64(b"x"), None);
    }
}
