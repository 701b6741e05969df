//! FASTA references as 4-bit base codes: the sequences `sort -I ref.fa` indexes its minimisers
//! over.

use crate::record::layout::SEQ_NT16;

/// Reads the FASTA file at `path`: each sequence's bases as 4-bit codes, in file order.
pub fn read_sequence_codes(path: &str) -> std::io::Result<Vec<Vec<u8>>> {
    Ok(sequence_codes(&std::fs::read(path)?))
}

/// The sequences of FASTA `text` as 4-bit codes ([`SEQ_NT16`]): a `>` line starts a sequence,
/// whitespace (and a CR line end) is dropped, lines before the first `>` are ignored.
pub fn sequence_codes(text: &[u8]) -> Vec<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_split_at_headers_and_coded() {
        let text = b"ignored\n>chr1 first\nACgt\r\nN n\n>chr2\n\n=U*\n";
        assert_eq!(sequence_codes(text), [vec![1, 2, 4, 8, 15, 15], vec![0, 8, 15]]);
        assert!(sequence_codes(b"ACGT\n").is_empty());
    }
}
