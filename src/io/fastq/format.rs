//! One BAM record → one FASTQ or FASTA entry, byte for byte as htslib's `fastq_format1` (what
//! `samtools fastq` and `fasta` write through `sam_write1`).
//!
//! - The name gets the UMI (`-U`), then `/1` or `/2` (`rnum`, paired reads only), then the
//!   CASAVA comment (`-i`), then the chosen aux tags as SAM text, each after a tab.
//! - A reverse-strand read is reverse-complemented (`=` becomes `!`, as htslib's table has it)
//!   and its qualities reversed; missing qualities (0xff) print as `B`.

use crate::io::sam::format::push_aux_field;
use crate::record::RecordRef;
use crate::record::layout::{SEQ_CODES, flags};

/// htslib's complement of each 4-bit base code.
const COMPLEMENT_CODES: &[u8; 16] = b"!TGKCYSBAWRDMHVN";

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

    fn wants(&self, tag: [u8; 2]) -> bool {
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

/// Appends the entry for `r` (its last line ended).
pub fn format_entry(out: &mut Vec<u8>, r: &RecordRef<'_>, style: &FastqStyle) {
    let flag = r.flag();
    let len = r.l_seq();
    out.reserve(2 * len + r.read_name().len() + 16);
    out.push(if style.fasta { b'>' } else { b'@' });
    let name_start = out.len();
    out.extend_from_slice(r.read_name());
    if !style.umi_tags.is_empty() {
        push_umi(out, name_start, r, &style.umi_tags);
    }
    if style.rnum && flag & flags::PAIRED != 0 {
        match flag & (flags::READ1 | flags::READ2) {
            flags::READ1 => out.extend_from_slice(b"/1"),
            flags::READ2 => out.extend_from_slice(b"/2"),
            _ => {}
        }
    }
    if style.casava {
        push_casava(out, r, style.barcode_tag);
    }
    if style.aux != AuxChoice::None {
        for f in r.aux().filter(|f| style.aux.wants(f.tag)) {
            out.push(b'\t');
            push_aux_field(out, &f);
        }
    }
    out.push(b'\n');
    let reverse = flag & flags::REVERSE != 0;
    if reverse {
        out.extend((0..len).rev().map(|i| COMPLEMENT_CODES[r.base_code(i) as usize]));
    } else {
        out.extend((0..len).map(|i| SEQ_CODES[r.base_code(i) as usize]));
    }
    if !style.fasta {
        out.extend_from_slice(b"\n+\n");
        let qual = r.qual();
        if qual.first() == Some(&0xff) {
            out.extend(std::iter::repeat_n(b'B', len));
        } else if reverse {
            out.extend(qual.iter().rev().map(|q| q.wrapping_add(33)));
        } else {
            out.extend(qual.iter().map(|q| q.wrapping_add(33)));
        }
    }
    out.push(b'\n');
}

/// `:UMI` after the name, before any `#index` that ends it; the UMI upper-cased, with `+` for
/// anything but letters.
fn push_umi(out: &mut Vec<u8>, name_start: usize, r: &RecordRef<'_>, tags: &[[u8; 2]]) {
    const MAX_PLEX: usize = 255;
    // The last `:` or `#` of the name: a `#` starts the multiplex suffix kept after the UMI.
    let plex_at = out[name_start..]
        .iter()
        .rposition(|&c| c == b':' || c == b'#')
        .map(|i| name_start + i)
        .filter(|&at| out[at] == b'#' && out.len() - at < MAX_PLEX);
    let plex = plex_at.map(|at| out.split_off(at));
    let umi = tags.iter().find_map(|&t| r.aux_get(t));
    if let Some(f) = umi.filter(|f| f.ty == b'Z') {
        out.push(b':');
        out.extend(f.value.iter().map(|&c| if c.is_ascii_alphabetic() { c.to_ascii_uppercase() } else { b'+' }));
    }
    if let Some(plex) = plex {
        out.extend_from_slice(&plex);
    }
}

/// ` READ:FILTERED:0:BARCODE`; a barcode that does not start with a letter is `0`.
fn push_casava(out: &mut Vec<u8>, r: &RecordRef<'_>, barcode_tag: [u8; 2]) {
    let flag = r.flag();
    let rnum = if flag & flags::READ1 != 0 {
        b'1'
    } else if flag & flags::READ2 != 0 {
        b'2'
    } else {
        b'0'
    };
    let filtered = if flag & flags::QCFAIL != 0 { b'Y' } else { b'N' };
    out.extend_from_slice(&[b' ', rnum, b':', filtered, b':', b'0', b':']);
    match r.aux_get(barcode_tag) {
        Some(f) if f.ty == b'Z' && f.value.first().is_some_and(u8::is_ascii_alphabetic) => out
            .extend(f.value.iter().map(|&c| if c.is_ascii_alphabetic() { c.to_ascii_uppercase() } else { b'+' })),
        Some(_) => {
            eprintln!("[W::fastq_format1] BC tag starts with non-sequence base; using '0'");
            out.push(b'0');
        }
        None => out.push(b'0'),
    }
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
