//! htslib's format detection (`hts_detect_format2` in `hts.c`), as far as a command needs it
//! to answer like samtools: which compression the first bytes show, and what the (decompressed)
//! start of the file is. `quickcheck` reports from it; htslib opens some formats it detects and
//! refuses others (indexes, unknown binary data), and only some are sequence data.

use std::io::Read;

/// Compressed bytes htslib peeks at to decompress the start of a gzip file.
pub const PEEK_COMPRESSED: usize = 2048;
/// Decompressed (or plain) bytes htslib classifies.
const PEEK_PLAIN: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bgzf,
    /// bzip2, xz, zstd, RAZF: detected, never read by mdsam.
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Sam,
    Bam,
    Cram {
        major: u8,
        minor: u8,
    },
    Fasta,
    Fastq,
    /// VCF, BCF, BED, plain text and empty input: htslib opens them, they hold no alignments.
    OtherOpenable,
    /// BAI, CSI, TBI, GZI, CRAI, FAI and FQI: htslib's `index_file` category, not opened as data.
    Index,
    /// Unknown binary data and the formats htslib cannot open without a plugin.
    Unopenable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detected {
    pub format: Format,
    pub compression: Compression,
}

impl Detected {
    /// htslib's `sequence_data` category.
    pub fn is_sequence_data(&self) -> bool {
        matches!(
            self.format,
            Format::Sam | Format::Bam | Format::Cram { .. } | Format::Fasta | Format::Fastq
        )
    }

    /// Whether `hts_open` succeeds for this format (CRAM: before its header is read).
    pub fn opens(&self) -> bool {
        !matches!(self.format, Format::Unopenable | Format::Index)
    }
}

/// Classifies a file from its first [`PEEK_COMPRESSED`] bytes (fewer if it is shorter); `path`
/// matters only for the index formats htslib knows by extension.
pub fn detect(head: &[u8], path: &str) -> Detected {
    let mut compression = Compression::None;
    let plain: Vec<u8> = if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
        compression = Compression::Gzip;
        if head.len() >= 18 && head[3] & 4 != 0 {
            if &head[12..16] == b"BC\x02\x00" {
                compression = Compression::Bgzf;
            } else if &head[12..16] == b"RAZF" {
                compression = Compression::Other;
            }
        }
        inflate_start(head)
    } else if is_other_compression(head) {
        return Detected { format: Format::Unopenable, compression: Compression::Other };
    } else {
        head[..head.len().min(PEEK_PLAIN)].to_vec()
    };
    let format = classify(&plain, &extension(path), compression == Compression::Gzip);
    Detected { format, compression }
}

/// samtools index's `nonexistent_or_index`: whether `path` cannot be opened, or opens and is
/// an index by htslib's detection (so `index in.bam out` takes `out` as the index's name).
pub fn nonexistent_or_index(path: &str) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return true };
    let mut head = Vec::with_capacity(PEEK_COMPRESSED);
    if file.take(PEEK_COMPRESSED as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    detect(&head, path).format == Format::Index
}

/// bzip2, xz and zstd: htslib recognises them but reads none of their content.
fn is_other_compression(s: &[u8]) -> bool {
    s.starts_with(b"BZh") || s.starts_with(b"\xfd7zXZ\0") || s.starts_with(b"\x28\xb5\x2f\xfd")
}

/// htslib's `decompress_peek_gz`: up to 1024 bytes inflated from the peeked gzip members,
/// stopping quietly at the first error or at the end of the peeked bytes.
fn inflate_start(head: &[u8]) -> Vec<u8> {
    let mut decoder =
        flate2::bufread::MultiGzDecoder::new(&head[..head.len().min(PEEK_COMPRESSED)]);
    let mut out = vec![0; PEEK_PLAIN];
    let mut filled = 0;
    while filled < out.len() {
        match decoder.read(&mut out[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    out.truncate(filled);
    out
}

/// htslib's `find_file_extension`, lower-cased: the last extension, the one before it for
/// `.gz`/`.bgz`.
fn extension(path: &str) -> String {
    let path = path.split("##idx##").next().unwrap_or(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut parts: Vec<&str> = name.split('.').skip(1).collect();
    if parts.len() >= 2 && matches!(parts.last(), Some(&"gz") | Some(&"bgz")) {
        parts.pop();
    }
    parts.last().map(|e| e.to_ascii_lowercase()).unwrap_or_default()
}

fn classify(s: &[u8], extension: &str, gzip: bool) -> Format {
    if s.is_empty() {
        return Format::OtherOpenable;
    }
    if s.len() >= 6 && s.starts_with(b"CRAM") && (1..=7).contains(&s[4]) && s[5] <= 7 {
        return Format::Cram { major: s[4], minor: s[5] };
    }
    if s.len() >= 4 && s[3] <= 4 {
        if s.starts_with(b"BAM\x01") {
            return Format::Bam;
        }
        if s.starts_with(b"BCF\x04") || s.starts_with(b"BCF\x02") {
            return Format::OtherOpenable;
        }
        if [&b"BAI\x01"[..], b"CSI\x01", b"TBI\x01"].iter().any(|m| s.starts_with(m))
            || extension == "gzi"
        {
            return Format::Index;
        }
    } else if s.starts_with(b"##fileformat=VCF") {
        return Format::OtherOpenable;
    } else if [&b"@HD\t"[..], b"@SQ\t", b"@RG\t", b"@PG\t", b"@CO\t"]
        .iter()
        .any(|m| s.starts_with(m))
    {
        return Format::Sam;
    } else if (s.len() >= 8 && s.starts_with(b"d4\xdd\xdd")) || is_htsget_or_crypt4gh(s) {
        // D4 htslib does not open; htsget and crypt4gh need a network or a plugin.
        return Format::Unopenable;
    } else if s[0] == b'>' && is_fastaq(s) {
        return Format::Fasta;
    } else if s[0] == b'@' && is_fastaq(s) {
        return Format::Fastq;
    } else if let Some(found) = classify_tabbed(s, extension, gzip) {
        return found;
    }
    if is_text_only(s) { Format::OtherOpenable } else { Format::Unopenable }
}

fn is_htsget_or_crypt4gh(s: &[u8]) -> bool {
    let nonblank: Vec<u8> = s.iter().copied().filter(|c| !c.is_ascii_whitespace()).collect();
    nonblank.starts_with(b"{\"htsget\":") || (s.len() > 8 && s.starts_with(b"crypt4gh"))
}

fn is_text_only(s: &[u8]) -> bool {
    s.iter().all(|&c| c >= b' ' || matches!(c, b'\t' | b'\r' | b'\n'))
}

/// htslib's `is_fastaq`: a text first line, then a line of base letters (never `=`).
fn is_fastaq(s: &[u8]) -> bool {
    let Some(eol) = memchr::memchr(b'\n', s) else { return is_text_only(s) };
    if !is_text_only(&s[..eol]) {
        return false;
    }
    let second = &s[eol + 1..];
    let letters = second.iter().take_while(|c| is_base_letter(**c)).count();
    matches!(second.get(letters), None | Some(b'\r') | Some(b'\n'))
}

/// The letters of `seq_nt16_table` but `=` (which ends the scan as not FASTA/Q).
fn is_base_letter(c: u8) -> bool {
    b"ACMGRSVTWYHKDBN".contains(&c.to_ascii_uppercase())
}

/// htslib's `parse_tabbed_text` + `colmatch`: SAM records without a header, CRAM indexes,
/// FASTA/FASTQ indexes (by extension) and BED.
fn classify_tabbed(s: &[u8], extension: &str, gzip: bool) -> Option<Format> {
    let (columns, complete) = tabbed_columns(s)?;
    if columns.is_empty() {
        return None;
    }
    let sam_needs = 9 + 2 * usize::from(complete);
    if column_match(&columns, b"ZiZiiCZiiZZOOOOOOOOOOOOOOOOOOOO+") >= sam_needs {
        Some(Format::Sam)
    } else if (gzip && column_match(&columns, b"iiiiii") == 6)
        || (extension.contains("fqi") && column_match(&columns, b"Ziiiii") == 6)
        || (extension.contains("fai") && column_match(&columns, b"Ziiii") == 5)
    {
        // A CRAM index, a FASTQ or FASTA index: htslib does not open indexes as data.
        Some(Format::Index)
    } else if column_match(&columns, b"Zii+") >= 3 {
        Some(Format::OtherOpenable)
    } else {
        None
    }
}

/// Column types of the first line (`i` integer, `C` CIGAR, `s` strand, `O` optional field,
/// `Z` other) and whether the line (or 23 columns) ended; `None` on a control character.
fn tabbed_columns(s: &[u8]) -> Option<(Vec<u8>, bool)> {
    const DIGIT: u8 = 1;
    const SIGN: u8 = 2;
    const CIGAR_OP: u8 = 4;
    const OTHER: u8 = 8;
    let mut columns = Vec::new();
    let (mut start, mut seen) = (0, 0u8);
    for (i, &c) in s.iter().enumerate() {
        if c >= b' ' {
            seen |= if c.is_ascii_digit() {
                DIGIT
            } else if (c == b'+' || c == b'-') && i == start {
                SIGN
            } else if b"MIDNSHP=XB".contains(&c) && i > start && s[i - 1].is_ascii_digit() {
                CIGAR_OP
            } else {
                OTHER
            };
            continue;
        }
        if !matches!(c, b'\t' | b'\r' | b'\n') {
            return None;
        }
        let field = &s[start..i];
        columns.push(column_type(field, seen));
        if c != b'\t' || columns.len() >= 23 {
            return Some((columns, true));
        }
        (start, seen) = (i + 1, 0);
    }
    Some((columns, false))
}

fn column_type(field: &[u8], seen: u8) -> u8 {
    match seen {
        1 | 3 => b'i',
        5 => b'C',
        _ if field.len() == 1 => match field[0] {
            b'*' => b'C',
            b'+' | b'-' | b'.' => b's',
            _ => b'Z',
        },
        _ if field.len() >= 5 && field[2] == b':' && field[4] == b':' => b'O',
        _ => b'Z',
    }
}

/// htslib's `colmatch`: how many leading columns match `pattern` (`Z` matches any, `+` ends
/// the match successfully), or 0 on a mismatch.
fn column_match(columns: &[u8], pattern: &[u8]) -> usize {
    for (i, &c) in columns.iter().enumerate() {
        match pattern.get(i) {
            Some(b'+') => return i,
            Some(&p) if p == c || p == b'Z' => {}
            _ => return 0,
        }
    }
    columns.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(bytes: &[u8], path: &str) -> Format {
        detect(bytes, path).format
    }

    #[test]
    fn sequence_formats_are_told_apart_as_htslib_does() {
        assert_eq!(format(b"@SQ\tSN:c\tLN:5\n", "x"), Format::Sam);
        assert_eq!(format(b"r\t4\t*\t0\t0\t*\t*\t0\t0\tA\tI\n", "x"), Format::Sam);
        assert_eq!(format(b"@r1\nACGTN\n+\nIIIII\n", "x"), Format::Fastq);
        assert_eq!(format(b">c1\nACGT\n", "x"), Format::Fasta);
        assert_eq!(format(b">c1\nAC=T\n", "x"), Format::OtherOpenable);
        assert_eq!(format(b"CRAM\x03\x00rest", "x"), Format::Cram { major: 3, minor: 0 });
        assert_eq!(format(b"chr1\t10\t20\n", "x"), Format::OtherOpenable);
        assert_eq!(format(b"chr1\t10\t20\t30\t40\n", "x.fai"), Format::Index);
        assert_eq!(format(b"BAI\x01\0\0\0\0", "x"), Format::Index);
        assert_eq!(format(b"CSI\x01\0\0\0\0", "x"), Format::Index);
        assert!(!detect(b"BAI\x01\0\0\0\0", "x").opens(), "htslib opens no index as data");
        assert_eq!(format(b"\x01\x02\x03\x04\x05", "x"), Format::Unopenable);
        assert_eq!(format(b"", "x"), Format::OtherOpenable);
    }

    #[test]
    fn gzip_members_are_inflated_and_bgzf_is_recognised() {
        let mut bgzf = Vec::new();
        crate::io::bgzf::block::Deflater::new(1).deflate_into(b"BAM\x01\0\0\0\0", &mut bgzf);
        assert_eq!(
            detect(&bgzf, "x"),
            Detected { format: Format::Bam, compression: Compression::Bgzf }
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, b"@HD\tVN:1.6\n").unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(
            detect(&gz, "x"),
            Detected { format: Format::Sam, compression: Compression::Gzip }
        );
        assert_eq!(extension("a/b.sam.gz"), "sam");
        assert_eq!(extension("a.b/c"), "");
    }
}
