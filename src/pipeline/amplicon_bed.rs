//! The primer BED of `ampliconclip` (samtools 1.24 `load_bed_file_multi_ref`): columns read as
//! `sscanf("%s %ld %ld %s %s %c")` reads them, references in file order, each one's primers
//! sorted by their end.

use crate::error::Error;
use crate::ops::ampliconclip::{Primer, PrimerSites};

/// The name and score columns of a primer (`None`: absent), as the primer-count report prints
/// them.
pub type PrimerLabel = (Option<Vec<u8>>, Option<Vec<u8>>);

/// One reference's primers with what the primer-count report prints of them.
pub struct BedReference {
    pub name: Vec<u8>,
    pub sites: PrimerSites,
    /// Per primer, in `sites` order.
    pub labels: Vec<PrimerLabel>,
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

/// The columns of one line as `sscanf` fills them, and how many it filled (−1: none at all).
struct Columns<'a> {
    parsed: i32,
    reference: &'a [u8],
    left: i64,
    right: i64,
    name: &'a [u8],
    score: &'a [u8],
    strand: u8,
}

fn scan_line(line: &[u8]) -> Columns<'_> {
    let mut c =
        Columns { parsed: 0, reference: b"", left: 0, right: 0, name: b"", score: b"", strand: 0 };
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

/// Loads the BED sorted for `ampliconclip`; `strand` requires and reads the sixth column.
/// Errors carry samtools' lines.
pub fn load(path: &str, strand: bool) -> Result<Vec<BedReference>, Error> {
    let load_failed = "[ampliconclip] error: unable to load bed file.";
    let mut refs = read_primers(path, strand)
        .map_err(|f| Error::Bare(format!("{}\n{load_failed}", f.lines)))?;
    if refs.is_empty() {
        return Err(Error::Bare(load_failed.into()));
    }
    for r in refs.iter_mut() {
        let mut order: Vec<usize> = (0..r.sites.primers.len()).collect();
        order.sort_by_key(|&i| r.sites.primers[i].right);
        r.sites.primers = order.iter().map(|&i| r.sites.primers[i].clone()).collect();
        r.labels = order.iter().map(|&i| r.labels[i].clone()).collect();
    }
    Ok(refs)
}

/// Reads the BED's primers in file order (`load_bed_file_multi_ref` without sorting); an empty
/// BED gives no references.
pub fn read_primers(path: &str, strand: bool) -> Result<Vec<BedReference>, BedFailure> {
    let failure = |lines: String| BedFailure { lines, reason: None };
    let text = std::fs::read(path).map_err(|e| {
        let reason = crate::error::c_message(&e);
        BedFailure {
            lines: format!("samtools amplicon: unable to open file {path}.: {reason}"),
            reason: Some(reason),
        }
    })?;
    let mut refs: Vec<BedReference> = Vec::new();
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    if text.ends_with(b"\n") {
        lines.pop();
    }
    for (n, line) in lines.into_iter().enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty()
            || line[0] == b'#'
            || line.starts_with(b"track ")
            || line.starts_with(b"browser ")
        {
            continue;
        }
        let c = scan_line(line);
        let need = if strand { 6 } else { 3 };
        if c.parsed < need {
            return Err(failure(format!(
                "[amplicon] error: invalid bed file format in line {} of {path}.\nParsed {} columns, but need at least {need}\n(N.B. ref/chrom name limited to 1023 characters.)",
                n + 1,
                c.parsed
            )));
        }
        let rev = match (strand, c.strand) {
            (false, _) | (true, b'+') => false,
            (true, b'-') => true,
            (true, other) => {
                return Err(failure(format!(
                    "[amplicon] error: bad strand value in line {}, expecting '+' or '-', found '{}'.",
                    n + 1,
                    other as char
                )));
            }
        };
        let at = match refs.iter().position(|r| r.name == c.reference) {
            Some(at) => at,
            None => {
                refs.push(BedReference {
                    name: c.reference.to_vec(),
                    sites: PrimerSites::default(),
                    labels: Vec::new(),
                });
                refs.len() - 1
            }
        };
        let r = &mut refs[at];
        r.sites.primers.push(Primer { left: c.left, right: c.right, rev });
        r.labels.push((
            (c.parsed >= 4).then(|| c.name.to_vec()),
            (c.parsed >= 5).then(|| c.score.to_vec()),
        ));
        r.sites.longest = r.sites.longest.max(c.right - c.left);
    }
    Ok(refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_read_as_sscanf_reads_them() {
        let c = scan_line(b"chr1\t10\t30\tp1\t60\t-");
        assert_eq!((c.parsed, c.left, c.right, c.strand), (6, 10, 30, b'-'));
        assert_eq!(scan_line(b"chr1 10 x").parsed, 2);
        assert_eq!(scan_line(b"   ").parsed, -1);
    }
}
