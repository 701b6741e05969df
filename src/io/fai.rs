//! `.fai`-like reference lists (`view -t`, or `-T ref.fa` as `ref.fa.fai`): a reference name and
//! its length per line, the rest of the line ignored.

use crate::error::Error;
use crate::record::header::Reference;

/// [`read_fai`], except that a missing `X.fai` beside a FASTA `X` (what `-T X` names) is
/// replaced by the FASTA's own list of sequences, as htslib's `fai_path` indexes it first.
pub fn read_fai_or_fasta(path: &str) -> Result<Vec<Reference>, Error> {
    let fasta = path.strip_suffix(".fai").filter(|_| !std::path::Path::new(path).exists());
    match fasta {
        Some(fasta) if std::path::Path::new(fasta).is_file() => fasta_references(fasta),
        _ => read_fai(path),
    }
}

/// The sequences of a FASTA file (plain or gzip/BGZF) with their lengths, in file order.
fn fasta_references(path: &str) -> Result<Vec<Reference>, Error> {
    let raw = std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let mut text = Vec::new();
    if raw.starts_with(&[0x1f, 0x8b]) {
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut text)
            .map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    } else {
        text = raw;
    }
    let mut refs: Vec<Reference> = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        if let Some(name) = line.strip_prefix(b">") {
            let name = name.split(|b| b.is_ascii_whitespace()).next().unwrap_or_default();
            refs.push(Reference { name: name.to_vec(), len: 0 });
        } else if let Some(last) = refs.last_mut() {
            last.len += line.iter().filter(|b| b.is_ascii_graphic()).count() as u64;
        }
    }
    Ok(refs)
}

/// The references listed in the file at `path`, in file order.
pub fn read_fai(path: &str) -> Result<Vec<Reference>, Error> {
    let text =
        std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let mut refs = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut f = line.split(|&b| b == b'\t');
        let name = f.next().unwrap_or_default();
        let len = f
            .next()
            .and_then(|l| std::str::from_utf8(l).ok()?.trim().parse::<u64>().ok())
            .ok_or_else(|| Error::file(path, "bad line in reference list"))?;
        refs.push(Reference { name: name.to_vec(), len });
    }
    Ok(refs)
}
