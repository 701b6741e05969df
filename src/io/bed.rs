//! BED files, plain or gzipped, the one reader of them: the intervals `view -L`, `depth -b` and
//! `merge -L` take (htslib's `bed_read`), and the primer lines `ampliconclip` and
//! `ampliconstats` take (samtools' `sscanf` columns), from the same file reading and line
//! skipping.

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

/// The intervals of the BED file at `path`, in file order, as htslib's `bed_read` reads them
/// (`view -L`, `depth -b`, `merge -L`, `mpileup -l`, `consensus --regions-file`): blank and
/// `#` lines skipped, `%lu %lu` after the name (one number: the one base there, counted from
/// 1), a `browser` or `track` line skipped only where it does not parse. The error holds
/// `bed_read`'s own line, or the C reason when the file does not open.
pub fn read_bed(path: &str) -> Result<Vec<BedInterval>, BedFailure> {
    let text = read_bed_text(path)
        .map_err(|reason| BedFailure { lines: String::new(), reason: Some(reason) })?;
    let mut t = Vec::new();
    // bed_read counts the lines ks_getuntil returns non-empty, blank ones after a `\r` too.
    let mut counted = 0u32;
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        counted += 1;
        let line = line.trim_ascii_start();
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let name_len = line.iter().position(|b| b.is_ascii_whitespace()).unwrap_or(line.len());
        let name = &line[..name_len];
        let (num, beg, end) = match line.get(name_len + 1..) {
            None => (0, 0, 0),
            Some(rest) => scan_two_u64(rest),
        };
        // `end = beg--`: a VCF-style position (wraps below 0 as the C unsigned does).
        let (beg, end) = if num == 1 { (beg.wrapping_sub(1), beg) } else { (beg, end) };
        if num < 1 || end < beg {
            if name == b"browser" || name == b"track" {
                continue;
            }
            let lines = if num < 1 {
                format!("[bed_read] Parse error reading \"{path}\" at line {counted}")
            } else {
                format!(
                    "[bed_read] Parse error reading \"{path}\" at line {counted} : end ({end}) \
                     must not be less than start ({beg})"
                )
            };
            return Err(BedFailure { lines, reason: None });
        }
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        t.push((name.to_vec(), clamp(beg), clamp(end)));
    }
    Ok(t)
}

/// `sscanf(s, "%lu %lu")`: how many numbers it filled, and them.
fn scan_two_u64(s: &[u8]) -> (u8, u64, u64) {
    let Some((beg, rest)) = scan_u64(s) else { return (0, 0, 0) };
    match scan_u64(rest) {
        Some((end, _)) => (2, beg, end),
        None => (1, beg, 0),
    }
}

/// `%lu` (`strtoull`): blanks, a sign, digits; a minus wraps, an overflow saturates.
fn scan_u64(s: &[u8]) -> Option<(u64, &[u8])> {
    let t = s.trim_ascii_start();
    let sign_len = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let digits = t[sign_len..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let mut v: u64 = 0;
    for &d in &t[sign_len..sign_len + digits] {
        v = match v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d - b'0'))) {
            Some(v) => v,
            None => {
                v = u64::MAX;
                break;
            }
        };
    }
    if t[0] == b'-' && v != u64::MAX {
        v = v.wrapping_neg();
    }
    Some((v, &t[sign_len + digits..]))
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

impl BedFailure {
    /// samtools' report of a failed `bed_read`: its own line when it printed one, then
    /// `what`, with `: REASON` where samtools prints `errno` (`print_error_errno`) and the file
    /// did not open.
    pub fn report(&self, what: &str, with_errno: bool) -> crate::error::Error {
        let mut text = String::new();
        if !self.lines.is_empty() {
            text.push_str(&self.lines);
            text.push('\n');
        }
        text.push_str(what);
        if let (true, Some(reason)) = (with_errno, &self.reason) {
            text.push_str(": ");
            text.push_str(reason);
        }
        crate::error::Error::Bare(text)
    }
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
