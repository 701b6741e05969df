//! How `fastq` and `fasta` name their entries and which tags they add (htslib's FASTQ writer
//! options `FASTQ_OPT_RNUM`, `CASAVA`, `BARCODE`, `UMI` and `AUX`), and htslib's reading of the
//! tag lists those options take.

/// Which aux tags follow the name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AuxChoice {
    #[default]
    None,
    All,
    /// These tags, in the record's order (possibly none).
    Only(Vec<[u8; 2]>),
}

impl AuxChoice {
    /// htslib's `FASTQ_OPT_AUX` list: two-letter tags separated by commas; the first badly
    /// formed entry ends the list (with htslib's warning).
    pub fn from_list(list: &str) -> AuxChoice {
        let b = list.as_bytes();
        let mut tags = Vec::new();
        let mut i = 0;
        while i + 3 <= b.len() + 1 {
            let sep = b.get(i + 2).copied().unwrap_or(0);
            if b[i] == b',' || b[i + 1] == b',' || !(sep == b',' || sep == 0) {
                let end = (i + 3).min(b.len());
                eprintln!(
                    "[W::fastq_state_set] Bad tag format '{}'; skipping option",
                    String::from_utf8_lossy(&b[i..end])
                );
                break;
            }
            tags.push([b[i], b[i + 1]]);
            i += 3;
        }
        AuxChoice::Only(tags)
    }

    pub fn wants(&self, tag: [u8; 2]) -> bool {
        match self {
            AuxChoice::None => false,
            AuxChoice::All => true,
            AuxChoice::Only(tags) => tags.contains(&tag),
        }
    }
}

/// The options htslib's FASTQ writer state holds.
#[derive(Clone, Debug)]
pub struct FastqStyle {
    /// `>` entries without qualities instead of `@` ones.
    pub fasta: bool,
    /// Append `/1` or `/2` to paired reads.
    pub rnum: bool,
    /// Append the Illumina CASAVA comment (`1:N:0:BARCODE`).
    pub casava: bool,
    /// The barcode tag the CASAVA comment reads.
    pub barcode_tag: [u8; 2],
    /// Tags searched in order for a UMI to add to the name; empty: none.
    pub umi_tags: Vec<[u8; 2]>,
    pub aux: AuxChoice,
}

impl Default for FastqStyle {
    fn default() -> Self {
        FastqStyle {
            fasta: false,
            rnum: false,
            casava: false,
            barcode_tag: *b"BC",
            umi_tags: Vec::new(),
            aux: AuxChoice::None,
        }
    }
}

/// htslib's `FASTQ_OPT_UMI` list: up to five tags, each a letter and a letter or digit,
/// separated by commas; a bad entry ends the list with htslib's warning.
pub fn parse_umi_tags(list: &str) -> Vec<[u8; 2]> {
    const MAX_TAGS: usize = 5;
    let b = list.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while i < b.len() && tags.len() < MAX_TAGS {
        let second = b.get(i + 1).copied().unwrap_or(0);
        let after = b.get(i + 2).copied();
        if !b[i].is_ascii_alphabetic()
            || !second.is_ascii_alphanumeric()
            || after.is_some_and(|c| c != b',')
        {
            eprintln!("[W::fastq_state_set] Bad UMI tag list '{list}'");
            break;
        }
        tags.push([b[i], second]);
        i += 3;
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_lists_stop_at_the_first_bad_entry() {
        assert_eq!(AuxChoice::from_list("MD,ia"), AuxChoice::Only(vec![*b"MD", *b"ia"]));
        assert_eq!(AuxChoice::from_list("MD,i"), AuxChoice::Only(vec![*b"MD"]));
        assert_eq!(AuxChoice::from_list("M"), AuxChoice::Only(vec![]));
        assert_eq!(parse_umi_tags("RX,OX"), vec![*b"RX", *b"OX"]);
        assert_eq!(parse_umi_tags("RX,1X"), vec![*b"RX"]);
    }
}
