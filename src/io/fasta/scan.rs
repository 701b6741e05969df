//! FASTA read front to back with no index: a reference list (`view -t`, or `-T ref.fa` as
//! `ref.fa.fai`), the 4-bit sequences `sort -I` indexes its minimisers over, and the bases of a
//! `REF_PATH`/`REF_CACHE` file.

use crate::error::Error;
use crate::record::header::Reference;
use crate::record::layout::SEQ_NT16;

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

/// The references listed in the file at `path` (a name and a length a line, the rest of the
/// line ignored), in file order.
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

/// Reads the FASTA file at `path`: each sequence's bases as 4-bit codes, in file order.
pub fn read_sequence_codes(path: &str) -> std::io::Result<Vec<Vec<u8>>> {
    Ok(sequence_codes(&std::fs::read(path)?))
}

/// The sequences of FASTA `text` as 4-bit codes ([`SEQ_NT16`]): a `>` line starts a sequence,
/// whitespace (and a CR line end) is dropped, lines before the first `>` are ignored.
fn sequence_codes(text: &[u8]) -> Vec<Vec<u8>> {
    let mut seqs: Vec<Vec<u8>> = Vec::new();
    for line in text.split(|&c| c == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.first() == Some(&b'>') {
            seqs.push(Vec::new());
        } else if let Some(s) = seqs.last_mut() {
            s.extend(
                line.iter().filter(|c| !c.is_ascii_whitespace()).map(|&c| SEQ_NT16[c as usize]),
            );
        }
    }
    seqs
}

/// A `REF_PATH`/`REF_CACHE` file: bare bases (as `seq_cache_populate.pl` and htslib write them),
/// or a FASTA whose first sequence is taken; whitespace is dropped either way.
pub fn bare_or_first_sequence(bytes: Vec<u8>) -> Vec<u8> {
    let body = if bytes.first() == Some(&b'>') {
        let start = memchr::memchr(b'\n', &bytes).map_or(bytes.len(), |i| i + 1);
        let end = memchr::memchr(b'>', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        &bytes[start..end]
    } else {
        &bytes[..]
    };
    if body.iter().any(|b| b.is_ascii_whitespace()) {
        body.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect()
    } else if body.len() == bytes.len() {
        bytes
    } else {
        body.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_split_at_headers_and_coded() {
        let text = b"ignored\n>chr1 first\nACgt\r\nN n\n>chr2\n\n=U*\n";
        assert_eq!(sequence_codes(text), [vec![1, 2, 4, 8, 15, 15], vec![0, 8, 15]]);
        assert!(sequence_codes(b"ACGT\n").is_empty());
    }

    #[test]
    fn reference_files_may_be_bare_bases_or_fasta() {
        assert_eq!(bare_or_first_sequence(b"ACGT".to_vec()), b"ACGT");
        assert_eq!(bare_or_first_sequence(b">x y\nAC\nGT\n>z\nTT\n".to_vec()), b"ACGT");
    }
}
