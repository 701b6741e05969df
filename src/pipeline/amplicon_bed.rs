//! The primers of `ampliconclip` and `ampliconstats` (samtools 1.24 `load_bed_file_multi_ref`)
//! from the BED lines [`crate::io::bed`] reads: references in file order, each one's primers
//! sorted by their end.

use crate::error::Error;
use crate::io::bed::{BedFailure, data_lines, read_bed_bytes, scan_primer_line};
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
    let text = read_bed_bytes(path).map_err(|reason| BedFailure {
        lines: format!("samtools amplicon: unable to open file {path}.: {reason}"),
        reason: Some(reason),
    })?;
    let mut refs: Vec<BedReference> = Vec::new();
    // samtools' primer reader skips `track ` and `browser ` with their blank.
    for (n, line) in data_lines(&text, &[b"#", b"track ", b"browser "]) {
        let c = scan_primer_line(line);
        let need = if strand { 6 } else { 3 };
        if c.parsed < need {
            return Err(failure(format!(
                "[amplicon] error: invalid bed file format in line {} of {path}.\nParsed {} columns, but need at least {need}\n(N.B. ref/chrom name limited to 1023 characters.)",
                n, c.parsed
            )));
        }
        let rev = match (strand, c.strand) {
            (false, _) | (true, b'+') => false,
            (true, b'-') => true,
            (true, other) => {
                return Err(failure(format!(
                    "[amplicon] error: bad strand value in line {}, expecting '+' or '-', found '{}'.",
                    n, other as char
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
