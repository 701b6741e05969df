//! FASTQ (or FASTA) entries → unmapped BAM records, as htslib's `fastq_parse1` reads them for
//! `samtools import`.
//!
//! - The name is the header's first word (`-N`: its second word); `/1`, `/2` (another digit:
//!   both) at its end set READ1/READ2, PAIRED and MUNMAP and are removed.
//! - `-U`: an Illumina name's eighth `:` field is the UMI, moved into a tag.
//! - `-i`: a CASAVA comment (`1:N:0:BARCODE`) sets the read number, QC fail and the barcode tag.
//! - `-T`: `TAG:TYPE:VALUE` words of the comment become tags, read as leniently as htslib.

use crate::io::fasta::kseq::{self, Records};
use crate::io::fastq::style::AuxChoice;
use crate::io::sam::parse::aux::encode_aux;
use crate::io::sam::parse::pack_seq;
use crate::record::layout::{self, flags};

/// htslib's FASTQ reader options.
#[derive(Clone, Debug, Default)]
pub struct FastqReading {
    /// `-N`: the second word of the header is the name (SRA).
    pub name2: bool,
    pub casava: bool,
    pub barcode_tag: Option<[u8; 2]>,
    /// `-U`: the tag for a UMI taken from the name.
    pub umi_tag: Option<[u8; 2]>,
    /// `-T`: the comment's tags to keep.
    pub aux: AuxChoice,
}

/// A FASTQ or FASTA file read entry by entry.
pub struct FastqReader {
    lines: Records,
    reading: FastqReading,
    /// FASTA (`>` headers, no qualities) rather than FASTQ.
    fasta: Option<bool>,
    /// FASTA: the next header, already read.
    pending: Option<Vec<u8>>,
    line: Vec<u8>,
}

/// A malformed entry (htslib's `-2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

impl FastqReader {
    pub fn open(path: &str, reading: FastqReading) -> std::io::Result<FastqReader> {
        let lines = kseq::open_text(path)?;
        Ok(FastqReader { lines, reading, fasta: None, pending: None, line: Vec::new() })
    }

    /// The next record; `Ok(None)` at the end.
    pub fn next_record(&mut self) -> Result<Option<Vec<u8>>, Malformed> {
        let mut header = match self.pending.take() {
            Some(h) => h,
            None => {
                let mut h = Vec::new();
                if !self.lines.next_line(&mut h) {
                    // htslib finds no format in an empty file: reading it fails.
                    return if self.fasta.is_none() { Err(Malformed) } else { Ok(None) };
                }
                h
            }
        };
        let fasta = *self.fasta.get_or_insert(header.first() == Some(&b'>'));
        let prefix = if fasta { b'>' } else { b'@' };
        if header.first() != Some(&prefix) {
            return Err(Malformed);
        }
        let mut seq = Vec::new();
        loop {
            if !self.lines.next_line(&mut self.line) {
                if fasta {
                    break;
                }
                return Err(Malformed);
            }
            let separator = if fasta { b'>' } else { b'+' };
            if self.line.first() == Some(&separator) {
                if fasta {
                    self.pending = Some(std::mem::take(&mut self.line));
                }
                break;
            }
            seq.extend_from_slice(&self.line);
        }
        let qual = if fasta { None } else { Some(self.read_qual(seq.len())?) };
        build(&mut header, &seq, qual.as_deref(), &self.reading).map(Some)
    }

    /// Quality lines until they cover the bases (one line at least).
    fn read_qual(&mut self, len: usize) -> Result<Vec<u8>, Malformed> {
        let mut qual = Vec::with_capacity(len);
        loop {
            if !self.lines.next_line(&mut self.line) || self.line.len() > len - qual.len() {
                return Err(Malformed);
            }
            qual.extend(self.line.iter().map(|c| c.wrapping_sub(b'!')));
            if qual.len() >= len {
                return Ok(qual);
            }
        }
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// The record of one entry; `line` is the header line (it is changed as htslib changes it).
fn build(
    line: &mut [u8],
    seq: &[u8],
    qual: Option<&[u8]>,
    reading: &FastqReading,
) -> Result<Vec<u8>, Malformed> {
    let mut name_start = 1;
    let mut i = 0;
    if reading.name2
        && let Some(sp) = line.iter().position(|&c| c == b' ' || c == b'\t')
    {
        let word = sp + line[sp..].iter().take_while(|&&c| c == b' ' || c == b'\t').count();
        // htslib writes a '@' before the second word and reads the name from there.
        line[word - 1] = b'@';
        i = word - 1;
        name_start = word;
    }
    while i < line.len() && !is_space(line[i]) {
        i += 1;
    }
    let mut name_end = i;
    let mut comment_start = (i + 1).min(line.len());
    while comment_start < line.len() && is_space(line[comment_start]) {
        comment_start += 1;
    }
    let mut comment: Vec<u8> = line[comment_start..].to_vec();
    let mut flag = flags::UNMAP;
    let pair = flags::MUNMAP | flags::PAIRED;
    if name_end > 2 && line[name_end - 2] == b'/' && line[name_end - 1].is_ascii_digit() {
        flag |= match line[name_end - 1] {
            b'1' => flags::READ1 | pair,
            b'2' => flags::READ2 | pair,
            _ => flags::READ1 | flags::READ2 | pair,
        };
        name_end -= 2;
    }
    let mut name = line[..name_end].to_vec();
    let umi = match reading.umi_tag {
        Some(_) => take_umi(&mut name)?,
        None => None,
    };
    let name = name.get(name_start.min(name.len())..).unwrap_or_default();
    let mut b = unmapped_record(name, flag, seq, qual)?;
    if let (Some(tag), Some(umi)) = (reading.umi_tag, umi) {
        crate::record::edit::append_str(&mut b, tag, &umi);
    }
    let mut barcode_len = 0;
    if reading.casava
        && let Some((read_flags, barcode)) = casava(&mut comment)
    {
        let f = crate::record::edit::flag(&b) | read_flags;
        crate::record::edit::set_flag(&mut b, f);
        if let Some(bc) = barcode {
            barcode_len = bc.1 + 1;
            let tag = reading.barcode_tag.unwrap_or(*b"BC");
            crate::record::edit::append_str(&mut b, tag, &comment[bc.0..bc.0 + bc.1]);
        }
    }
    let list = match &reading.aux {
        AuxChoice::None => None,
        AuxChoice::All => Some(None),
        AuxChoice::Only(tags) => Some(Some(tags.as_slice())),
    };
    if let Some(list) = list {
        parse_comment_tags(&comment[barcode_len.min(comment.len())..], list, &mut b);
    }
    Ok(b)
}

/// `bam_set1` of an unmapped read without CIGAR (an empty name becomes `*`).
fn unmapped_record(
    name: &[u8],
    flag: u16,
    seq: &[u8],
    qual: Option<&[u8]>,
) -> Result<Vec<u8>, Malformed> {
    let name = if name.is_empty() { b"*" } else { name };
    if name.len() > 254 {
        return Err(Malformed);
    }
    let mut b = vec![0u8; layout::FIXED_LEN];
    b[layout::REF_ID..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b[layout::POS..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b[layout::L_READ_NAME] = name.len() as u8 + 1;
    // htslib's bin for an unplaced read: reg2bin(-1, 0).
    b[layout::BIN..][..2].copy_from_slice(&4680u16.to_le_bytes());
    b[layout::FLAG..][..2].copy_from_slice(&flag.to_le_bytes());
    b[layout::L_SEQ..][..4].copy_from_slice(&(seq.len() as i32).to_le_bytes());
    b[layout::NEXT_REF_ID..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b[layout::NEXT_POS..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b.extend_from_slice(name);
    b.push(0);
    pack_seq(seq, &mut b);
    match qual {
        Some(q) => b.extend_from_slice(q),
        None => b.extend(std::iter::repeat_n(0xff, seq.len())),
    }
    Ok(b)
}

/// htslib's default UMI pattern `^[^:]+:` ×7 then `([^:#/]+)`: the UMI (non-letters as `-`) is
/// cut out of `name` with the `:` before it; what follows it (`#0`) stays.
fn take_umi(name: &mut Vec<u8>) -> Result<Option<Vec<u8>>, Malformed> {
    let mut at = 0;
    for _ in 0..7 {
        let field = name[at..].iter().take_while(|&&c| c != b':').count();
        if field == 0 || at + field >= name.len() {
            return Ok(None);
        }
        at += field + 1;
    }
    let len = name[at..].iter().take_while(|&&c| !matches!(c, b':' | b'#' | b'/')).count();
    if len == 0 {
        return Ok(None);
    }
    if len > 255 {
        return Err(Malformed);
    }
    let umi: Vec<u8> = name[at..at + len]
        .iter()
        .map(|&c| if c.is_ascii_alphabetic() { c } else { b'-' })
        .collect();
    let rest = name[at + len..].to_vec();
    name.truncate(at - 1);
    name.extend_from_slice(&rest);
    Ok(Some(umi))
}

/// A CASAVA comment `N:[YN]:NUM:BARCODE`: the flags it sets and where its barcode is (start,
/// length), when it has one that is not a number. The barcode's end is cut with a NUL, as
/// htslib does.
#[allow(clippy::type_complexity)]
fn casava(c: &mut [u8]) -> Option<(u16, Option<(usize, usize)>)> {
    if c.len() <= 6 || (c[1] | c[3]) != b':' || !c[0].is_ascii_digit() {
        return None;
    }
    // strtol at offset 4: white space, a sign, digits; at least one digit, then ':'.
    let mut p = 4;
    while p < c.len() && is_space(c[p]) {
        p += 1;
    }
    let negative = c.get(p) == Some(&b'-');
    if matches!(c.get(p), Some(b'-' | b'+')) {
        p += 1;
    }
    let digits = c[p.min(c.len())..].iter().take_while(|d| d.is_ascii_digit()).count();
    let all_zero = c[p..p + digits].iter().all(|&d| d == b'0');
    if digits == 0 || (negative && !all_zero) || c.get(p + digits) != Some(&b':') {
        return None;
    }
    let end = p + digits;
    let pair = flags::MUNMAP | flags::PAIRED;
    let mut f = match c[0] {
        b'1' => flags::READ1 | pair,
        b'2' => flags::READ2 | pair,
        _ => flags::READ1 | flags::READ2 | pair,
    };
    if c[2] == b'Y' {
        f |= flags::QCFAIL;
    }
    if c.get(end + 1).is_some_and(u8::is_ascii_digit) {
        return Some((f, None));
    }
    let start = end + 1;
    let len = c[start.min(c.len())..].iter().take_while(|&&x| !is_space(x)).count();
    if start + len < c.len() {
        c[start + len] = 0;
    }
    Some((f, Some((start, len))))
}

/// htslib's lenient `aux_parse` of a comment: words that are not `TAG:TYPE:VALUE` are skipped;
/// a tag not in `list` skips to the next tab.
fn parse_comment_tags(c: &[u8], list: Option<&[[u8; 2]]>, b: &mut Vec<u8>) {
    let skip_word = |mut q: usize| {
        while q < c.len() && !is_space(c[q]) {
            q += 1;
        }
        while q < c.len() && is_space(c[q]) {
            q += 1;
        }
        q
    };
    let mut q = 0;
    while q < c.len() {
        if c.len() - q < 5 {
            break;
        }
        // Signed chars: bytes from 0x80 are below '!'.
        if !(b'!'..0x80).contains(&c[q]) || !(b'!'..0x80).contains(&c[q + 1]) {
            q = skip_word(q);
            continue;
        }
        if (c[q + 2] | c[q + 4]) != b':' {
            q = skip_word(q);
            continue;
        }
        if let Some(list) = list
            && !list.contains(&[c[q], c[q + 1]])
        {
            while q < c.len() && c[q] != b'\t' {
                q += 1;
            }
            continue;
        }
        let ty = c[q + 3];
        let value = q + 5;
        let end = if matches!(ty, b'Z' | b'H') {
            value + c[value..].iter().take_while(|&&x| x != b'\t' && x != 0).count()
        } else {
            value + c[value..].iter().take_while(|&&x| x > b'\t').count()
        };
        let mut field = c[q..end].to_vec();
        if matches!(field[3], b'a' | b'c' | b'C') {
            field[3] = b'A';
        }
        let checkpoint = b.len();
        let empty = !matches!(ty, b'Z' | b'H') && c.get(value).is_none_or(|&x| x <= b'\t');
        if empty || encode_aux(&field, b).is_err() {
            b.truncate(checkpoint);
            q = skip_word(value);
            continue;
        }
        q = end + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordRef;

    #[test]
    fn names_lose_the_read_number_and_umi() {
        let mut line = b"@A:B:C:D:E:F:G:ACGT+TT#0/1 1:Y:0:GATT".to_vec();
        let reading = FastqReading { umi_tag: Some(*b"RX"), casava: true, ..Default::default() };
        let b = build(&mut line, b"AC", Some(&[1, 2]), &reading).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!(r.read_name(), b"A:B:C:D:E:F:G#0");
        assert_eq!(r.flag(), 0x4 | 0x8 | 0x1 | 0x40 | 0x200);
        assert_eq!(r.aux_get(*b"RX").unwrap().value, b"ACGT-TT");
        assert_eq!(r.aux_get(*b"BC").unwrap().value, b"GATT");
    }

    #[test]
    fn comment_tags_are_read_leniently() {
        let mut b = Vec::new();
        parse_comment_tags(b"foo\tXX:i:10\tAB:Z:a b\tFF:f:1e20", None, &mut b);
        assert_eq!(&b[..4], b"XXC\x0a");
        assert!(b.windows(8).any(|w| w == b"ABZa b\0F"));
        let mut b = Vec::new();
        parse_comment_tags(b"XX:i:1\tYY:i:2", Some(&[*b"YY"]), &mut b);
        assert_eq!(b, b"YYC\x02");
    }
}
