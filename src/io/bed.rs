//! BED files, plain or gzipped, the one reader of them: the intervals `view -L`, `depth -b` and
//! `merge -L` take (htslib's `bed_read`), and the primer lines `ampliconclip` and
//! `ampliconstats` take (samtools' `sscanf` columns), from the same file reading and line
//! skipping.

use crate::error::Error;

/// One BED interval: reference name, 0-based start, end (exclusive).
pub type BedInterval = (Vec<u8>, i64, i64);

/// The bytes of the BED file at `path` as they are (samtools' primer reader opens it with
/// `hopen`, which decompresses nothing); `Err` with the C reason.
pub fn read_bed_bytes(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| crate::error::c_message(&e))
}

/// The bytes of the BED file at `path`, gunzipped when gzipped (htslib's `bed_read` reads
/// through `hts_open`); `Err` with the C reason.
pub fn read_bed_text(path: &str) -> Result<Vec<u8>, String> {
    let raw = read_bed_bytes(path)?;
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return Ok(raw);
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The lines of BED `text` that hold data, each with its number (from 1): without a `\r`
/// ending, empty lines and lines starting with one of `headers` skipped (the two samtools
/// readers spell `track` and `browser` differently).
pub fn data_lines<'a>(
    text: &'a [u8],
    headers: &'a [&'a [u8]],
) -> impl Iterator<Item = (usize, &'a [u8])> + 'a {
    text.split(|&b| b == b'\n')
        .enumerate()
        .map(|(n, line)| (n + 1, line.strip_suffix(b"\r").unwrap_or(line)))
        .filter(|(_, line)| !line.is_empty() && !headers.iter().any(|h| line.starts_with(h)))
}

/// The intervals of the BED file at `path`, in file order (htslib's `bed_read`, for `view -L`,
/// `depth -b`, `merge -L`). `#`, `track` and `browser` lines are skipped; a line with only a
/// name and a position is the one base there.
pub fn read_bed(path: &str) -> Result<Vec<BedInterval>, Error> {
    let text =
        read_bed_text(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let mut t = Vec::new();
    for (n, line) in data_lines(&text, &[b"#", b"track", b"browser"]) {
        let f: Vec<&[u8]> =
            line.split(|b| *b == b'\t' || *b == b' ').filter(|x| !x.is_empty()).collect();
        let num = |s: &[u8]| std::str::from_utf8(s).ok().and_then(|s| s.parse::<i64>().ok());
        let bad = || Error::file(path, format!("could not parse BED line {n}"));
        let (beg, end) = match f.len() {
            0 => continue,
            1 => return Err(bad()),
            2 => {
                let p = num(f[1]).ok_or_else(bad)?;
                (p - 1, p)
            }
            _ => (num(f[1]).ok_or_else(bad)?, num(f[2]).ok_or_else(bad)?),
        };
        if end < beg {
            return Err(bad());
        }
        t.push((f[0].to_vec(), beg, end));
    }
    Ok(t)
}

/// `sscanf`'s `%ld`: optional blanks, sign and digits at the start of `s`; the rest.
fn scan_int(s: &[u8]) -> Option<(i64, &[u8])> {
    let t = s.trim_ascii_start();
    let sign_len = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let digits = t[sign_len..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&t[..sign_len + digits]).ok()?;
    let v = text.parse::<i64>().unwrap_or(if t[0] == b'-' { i64::MIN } else { i64::MAX });
    Some((v, &t[sign_len + digits..]))
}

/// `sscanf`'s `%s`: a run of non-blanks after blanks.
fn scan_word(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let t = s.trim_ascii_start();
    let n = t.iter().take_while(|b| !b.is_ascii_whitespace()).count();
    (n > 0).then(|| (&t[..n], &t[n..]))
}

/// The columns of one primer BED line as samtools' `load_bed_file_multi_ref` reads them
/// (`sscanf("%s %ld %ld %s %s %c")`), and how many it filled (−1: none at all).
pub struct PrimerLine<'a> {
    pub parsed: i32,
    pub reference: &'a [u8],
    pub left: i64,
    pub right: i64,
    pub name: &'a [u8],
    pub score: &'a [u8],
    pub strand: u8,
}

pub fn scan_primer_line(line: &[u8]) -> PrimerLine<'_> {
    let mut c = PrimerLine {
        parsed: 0,
        reference: b"",
        left: 0,
        right: 0,
        name: b"",
        score: b"",
        strand: 0,
    };
    let Some((reference, rest)) = scan_word(line) else {
        c.parsed = -1;
        return c;
    };
    c.reference = &reference[..reference.len().min(1023)];
    c.parsed = 1;
    let Some((left, rest)) = scan_int(rest) else { return c };
    c.left = left;
    c.parsed = 2;
    let Some((right, rest)) = scan_int(rest) else { return c };
    c.right = right;
    c.parsed = 3;
    let Some((name, rest)) = scan_word(rest) else { return c };
    c.name = name;
    c.parsed = 4;
    let Some((score, rest)) = scan_word(rest) else { return c };
    c.score = score;
    c.parsed = 5;
    if let Some(&strand) = rest.trim_ascii_start().first() {
        c.strand = strand;
        c.parsed = 6;
    }
    c
}

/// Why the BED could not be read: samtools' lines, and the C reason (`errno`) when the file
/// did not open.
pub struct BedFailure {
    pub lines: String,
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_read_as_sscanf_reads_them() {
        let c = scan_primer_line(b"chr1\t10\t30\tp1\t60\t-");
        assert_eq!((c.parsed, c.left, c.right, c.strand), (6, 10, 30, b'-'));
        assert_eq!(scan_primer_line(b"chr1 10 x").parsed, 2);
        assert_eq!(scan_primer_line(b"   ").parsed, -1);
    }
}
