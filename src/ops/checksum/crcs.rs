//! One read's CRC32s, as samtools 1.24's `checksum` computes them: bases as letters, reverse
//! complemented for reverse reads, qualities as ASCII (+33, wrapping as a byte), the flag's bits
//! under the mask as one byte, tags in a canonical binary form.

use super::crc32;
use crate::record::layout::{SEQ_CODES, flags};
use crate::record::view::RecordRef;

/// The complement of each 4-bit base code, as a letter.
const COMPLEMENT: &[u8; 16] = b"=TGKCYSBAWRDMHVN";

/// A read's CRCs; the position, CIGAR and mate ones are 0 unless asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Crcs {
    pub seq: u32,
    pub name: u32,
    pub qual: u32,
    pub aux: u32,
    pub pos: u32,
    pub cigar: u32,
    pub mate: u32,
}

/// Which tags go into the tag CRC (`-t`): the listed ones in list order, or with a leading `*`
/// every tag but the listed ones, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct TagSelection {
    pub all_but: bool,
    /// The listed tag names, without the `*`.
    pub listed: Vec<[u8; 2]>,
}

/// Whether htslib takes a tag name as legal here: both characters within `'0'..='z'`.
fn legal_name(tag: [u8; 2]) -> bool {
    tag.iter().all(|c| (b'0'..=b'z').contains(c))
}

impl TagSelection {
    /// The tag list as `-t` gives it, `Err` with the tag when a listed name is illegal
    /// (samtools' "Illegal tag ID"). `None` entries are the `*`.
    pub fn new(entries: &[Option<[u8; 2]>]) -> Result<TagSelection, [u8; 2]> {
        let mut selection = TagSelection::default();
        for entry in entries {
            match entry {
                None => {}
                Some(t) if !legal_name(*t) => return Err(*t),
                Some(t) => selection.listed.push(*t),
            }
        }
        // samtools' "*" negation is decided by the first entry only.
        selection.all_but = entries.first().is_some_and(Option::is_none);
        Ok(selection)
    }

    /// A listed tag's slot: its last place in the list, as samtools' lookup table keeps it.
    fn slot(&self, tag: [u8; 2]) -> Option<usize> {
        self.listed.iter().rposition(|t| *t == tag)
    }
}

/// What the record CRCs cover (samtools' `opts`).
#[derive(Clone, Debug)]
pub struct RecordHasher {
    pub flag_mask: i32,
    pub rev_comp: bool,
    pub check_pos: bool,
    pub check_cigar: bool,
    pub check_mate: bool,
    pub tags: TagSelection,
}

/// Reused buffers for one thread.
#[derive(Default)]
pub struct Scratch {
    seq: Vec<u8>,
    qual: Vec<u8>,
    aux: Vec<u8>,
    slots: Vec<Option<Vec<u8>>>,
}

impl RecordHasher {
    /// The read's CRCs and its read group (its last `RG:Z` value).
    pub fn hash<'a>(&self, r: &RecordRef<'a>, scratch: &mut Scratch) -> (Crcs, Option<&'a [u8]>) {
        self.fill_seq_qual(r, scratch);
        let flag = [(i32::from(r.flag()) & self.flag_mask) as u8];
        let mut c = Crcs { seq: crc32(crc32(0, &flag), &scratch.seq), ..Crcs::default() };
        let mut name = r.read_name().to_vec();
        name.push(0);
        c.name = crc32(crc32(crc32(0, &name), &flag), &scratch.seq);
        c.qual = crc32(c.seq, &scratch.qual);
        let group = self.select_tags(r, scratch);
        c.aux = crc32(c.seq, &scratch.aux);
        if self.check_pos {
            let mut bytes = (r.ref_id() as u32).to_le_bytes().to_vec();
            bytes.extend_from_slice(&(r.pos() as u64).to_le_bytes());
            c.pos = crc32(c.seq, &bytes);
        }
        if self.check_mate {
            let mut bytes = (r.next_ref_id() as u32).to_le_bytes().to_vec();
            bytes.extend_from_slice(&(r.next_pos() as u64).to_le_bytes());
            bytes.extend_from_slice(&(r.tlen() as u64).to_le_bytes());
            c.mate = crc32(c.seq, &bytes);
        }
        if self.check_cigar {
            c.cigar = crc32(crc32(c.seq, &u32::from(r.mapq()).to_le_bytes()), r.cigar_bytes());
        }
        (c, group)
    }

    /// Bases as letters and qualities + 33, reverse complemented for a reverse read.
    fn fill_seq_qual(&self, r: &RecordRef<'_>, scratch: &mut Scratch) {
        let n = r.l_seq();
        let qual = r.qual();
        scratch.seq.clear();
        scratch.qual.clear();
        if r.flag() & flags::REVERSE != 0 && self.rev_comp {
            scratch.seq.extend((0..n).rev().map(|i| COMPLEMENT[r.base_code(i) as usize]));
            scratch.qual.extend(qual.iter().rev().map(|q| q.wrapping_add(33)));
        } else {
            scratch.seq.extend((0..n).map(|i| SEQ_CODES[r.base_code(i) as usize]));
            scratch.qual.extend(qual.iter().map(|q| q.wrapping_add(33)));
        }
    }

    /// Puts the selected tags, canonical, into `scratch.aux`; returns the read group.
    fn select_tags<'a>(&self, r: &RecordRef<'a>, scratch: &mut Scratch) -> Option<&'a [u8]> {
        let mut group = None;
        scratch.aux.clear();
        scratch.slots.clear();
        scratch.slots.resize(self.tags.listed.len(), None);
        let mut others: Vec<([u8; 2], &'a [u8])> = Vec::new();
        for field in r.aux() {
            if field.tag == *b"RG" && field.ty == b'Z' {
                group = Some(field.value);
            }
            if !legal_name(field.tag) {
                continue;
            }
            match (self.tags.slot(field.tag), self.tags.all_but) {
                (Some(i), false) => scratch.slots[i] = Some(field.raw.to_vec()),
                (None, true) => others.push((field.tag, field.raw)),
                _ => {}
            }
        }
        if self.tags.all_but {
            // A stable sort by name keeps repeated tags in their order.
            others.sort_by_key(|(tag, _)| *tag);
            for (_, raw) in others {
                push_canonical(raw, &mut scratch.aux);
            }
        } else {
            for raw in scratch.slots.iter().flatten() {
                push_canonical(raw, &mut scratch.aux);
            }
        }
        group
    }
}

/// Appends a tag with an integer in its smallest encoding, unsigned when not negative
/// (samtools' `canonical_tag`); any other tag as it is.
fn push_canonical(raw: &[u8], out: &mut Vec<u8>) {
    let value = match raw[2] {
        b'c' => i64::from(raw[3] as i8),
        b'C' => i64::from(raw[3]),
        b's' => i64::from(i16::from_le_bytes([raw[3], raw[4]])),
        b'S' => i64::from(u16::from_le_bytes([raw[3], raw[4]])),
        b'i' => i64::from(i32::from_le_bytes([raw[3], raw[4], raw[5], raw[6]])),
        b'I' => i64::from(u32::from_le_bytes([raw[3], raw[4], raw[5], raw[6]])),
        _ => {
            out.extend_from_slice(raw);
            return;
        }
    };
    let code = match value {
        0..=255 => b'C',
        256..=65535 => b'S',
        v if v >= 0 => b'I',
        -128..=-1 => b'c',
        -32768..=-129 => b's',
        _ => b'i',
    };
    out.extend_from_slice(&raw[..2]);
    out.push(code);
    match code {
        b'C' | b'c' => out.push(value as u8),
        b'S' | b's' => out.extend_from_slice(&(value as u16).to_le_bytes()),
        _ => out.extend_from_slice(&(value as u32).to_le_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(raw: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        push_canonical(raw, &mut out);
        out
    }

    #[test]
    fn integers_take_their_smallest_encoding() {
        assert_eq!(canonical(b"XAs\x01\x00"), b"XAC\x01");
        assert_eq!(canonical(b"NMc\x00"), b"NMC\x00");
        assert_eq!(canonical(b"XBi\x00\x01\x00\x00"), b"XBS\x00\x01");
        assert_eq!(canonical(b"XCi\xff\xff\xff\xff"), b"XCc\xff");
        assert_eq!(canonical(b"XDI\x00\x00\x01\x00"), b"XDI\x00\x00\x01\x00");
        assert_eq!(canonical(b"XEZab\x00"), b"XEZab\x00");
    }

    #[test]
    fn star_negates_only_in_front() {
        let s = TagSelection::new(&[None, Some(*b"MD")]).unwrap();
        assert!(s.all_but && s.listed == [*b"MD"]);
        let s = TagSelection::new(&[Some(*b"BC"), Some(*b"QT"), Some(*b"BC")]).unwrap();
        assert!(!s.all_but);
        assert_eq!(s.slot(*b"BC"), Some(2));
        assert_eq!(TagSelection::new(&[Some(*b"a|")]).unwrap_err(), *b"a|");
    }
}
