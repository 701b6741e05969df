//! The reference a slice embeds when none is given (`embed_ref=2`, htslib's
//! `cram_generate_reference`): where a read's `MD` tells the reference bases they are taken as
//! they are; elsewhere each position takes the base most reads have there (`N` where none
//! covers it). Any reference decodes the same records, since the encoder stores the differences
//! from it: the closer it is to the true one, the fewer differences are stored.

use crate::record::RecordRef;
use crate::record::aux::RawFields;

const UNMAPPED: u16 = 0x4;
const NT16: &[u8; 16] = b"=ACMGRSVTWYHKDBN";
/// An nt16 base code as an index of `ACGTN`.
const NT16_TO_ACGTN: [usize; 16] = [4, 0, 1, 4, 2, 4, 4, 4, 3, 4, 4, 4, 4, 4, 4, 4];

/// A generated reference: `bases[0]` is at 1-based position `start`.
pub struct Consensus {
    pub start: i64,
    pub bases: Vec<u8>,
}

/// The consensus of a slice's records (raw BAM records of one reference), or `None` where
/// htslib builds none: unsorted records, or a first record without a position.
pub fn build(records: &[&[u8]]) -> Option<Consensus> {
    let first = RecordRef::new(records.first()?).pos();
    if first < 0 {
        return None;
    }
    let mut known: Vec<u8> = Vec::new();
    let mut counts: Vec<[u32; 5]> = Vec::new();
    let mut last_pos = first;
    let mut from_md = Vec::new();
    for raw in records {
        let r = RecordRef::new(raw);
        if r.pos() < last_pos {
            return None;
        }
        last_pos = r.pos();
        if r.flag() & UNMAPPED != 0 || r.n_cigar_op() == 0 {
            continue;
        }
        let end = usize::try_from(r.pos() + r.ref_len() - first).ok()?;
        if known.len() < end {
            known.resize(end, 0);
            counts.resize(end, [0; 5]);
        }
        from_md.clear();
        if let Some(md) = md_tag(&r)
            && reference_from_md(&r, md, &mut from_md)
        {
            for &(pos, base) in &from_md {
                known[(pos - first) as usize] = base;
            }
        } else if r.l_seq() > 0 {
            count_aligned_bases(&r, first, &mut counts);
        }
    }
    let bases =
        known.iter().zip(&counts).map(|(&k, c)| if k != 0 { k } else { majority(c) }).collect();
    Some(Consensus { start: first + 1, bases })
}

/// `record` with htslib's `cF:C` tag appended to `out` (bit 1: it has no `MD`, bit 2: no
/// `NM`, so the decoder generates neither from a reference that may not be the true one);
/// false, and nothing appended, when it has both.
pub fn with_cram_flags(record: &[u8], out: &mut Vec<u8>) -> bool {
    let r = RecordRef::new(record);
    let has = |tag: &[u8]| RawFields::new(r.aux_bytes()).any(|f| f.starts_with(tag));
    let flags = u8::from(!has(b"MDZ")) | (2 * u8::from(!has(b"NM")));
    if flags == 0 {
        return false;
    }
    out.clear();
    out.extend_from_slice(record);
    out.extend_from_slice(&[b'c', b'F', b'C', flags]);
    true
}

/// The base most reads have (the first of a tie, in `ACGT` order), `N` where none has one.
fn majority(counts: &[u32; 5]) -> u8 {
    let mut best = (0, 4);
    for (j, &n) in counts[..4].iter().enumerate() {
        if n > best.0 {
            best = (n, j);
        }
    }
    b"ACGTN"[best.1]
}

/// The value of the record's `MD:Z` tag.
fn md_tag<'r>(r: &RecordRef<'r>) -> Option<&'r [u8]> {
    RawFields::new(r.aux_bytes())
        .find(|f| f.starts_with(b"MDZ"))
        .map(|f| f.get(3..f.len().saturating_sub(1)).unwrap_or_default())
}

/// Adds each aligned base of the read to the counts of its reference position.
fn count_aligned_bases(r: &RecordRef<'_>, first: i64, counts: &mut [[u32; 5]]) {
    let (mut read_pos, mut ref_pos) = (0usize, (r.pos() - first) as usize);
    for op in r.cigar() {
        let len = (op >> 4) as usize;
        match op & 0xf {
            0 | 7 | 8 => {
                for k in 0..len.min(r.l_seq().saturating_sub(read_pos)) {
                    counts[ref_pos + k][NT16_TO_ACGTN[r.base_code(read_pos + k) as usize]] += 1;
                }
                read_pos += len;
                ref_pos += len;
            }
            1 | 4 => read_pos += len,
            2 | 3 => ref_pos += len,
            _ => {}
        }
    }
}

/// The reference bases the read's `MD` and CIGAR give, as 0-based positions; false (and
/// nothing to trust) when the two disagree.
fn reference_from_md(r: &RecordRef<'_>, md: &[u8], out: &mut Vec<(i64, u8)>) -> bool {
    let mut md = MdTokens { text: md };
    let mut matches = 0u64;
    let (mut read_pos, mut ref_pos) = (0usize, r.pos());
    for op in r.cigar() {
        let len = (op >> 4) as usize;
        match op & 0xf {
            0 | 7 | 8 => {
                for _ in 0..len {
                    while matches == 0 {
                        match md.next() {
                            Some(Token::Matches(n)) => matches = n,
                            Some(Token::Mismatch(base)) => {
                                out.push((ref_pos, base));
                                break;
                            }
                            _ => return false,
                        }
                    }
                    if matches > 0 {
                        if read_pos >= r.l_seq() {
                            return false;
                        }
                        out.push((ref_pos, NT16[r.base_code(read_pos) as usize]));
                        matches -= 1;
                    }
                    read_pos += 1;
                    ref_pos += 1;
                }
            }
            2 => {
                let deleted = loop {
                    match md.next() {
                        Some(Token::Matches(0)) if matches == 0 => continue,
                        Some(Token::Deletion(bases)) if matches == 0 => break bases,
                        _ => return false,
                    }
                };
                if deleted.len() != len {
                    return false;
                }
                for &base in deleted {
                    out.push((ref_pos, base.to_ascii_uppercase()));
                    ref_pos += 1;
                }
            }
            3 => ref_pos += len as i64,
            1 | 4 => read_pos += len,
            _ => {}
        }
    }
    true
}

/// One element of an `MD` string.
enum Token<'a> {
    Matches(u64),
    Mismatch(u8),
    Deletion(&'a [u8]),
}

struct MdTokens<'a> {
    text: &'a [u8],
}

impl<'a> Iterator for MdTokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let (&first, rest) = self.text.split_first()?;
        if first.is_ascii_digit() {
            let end = self.text.iter().position(|b| !b.is_ascii_digit()).unwrap_or(self.text.len());
            let n = std::str::from_utf8(&self.text[..end]).ok()?.parse().ok()?;
            self.text = &self.text[end..];
            Some(Token::Matches(n))
        } else if first == b'^' {
            let end = rest.iter().position(|b| !b.is_ascii_alphabetic()).unwrap_or(rest.len());
            self.text = &rest[end..];
            Some(Token::Deletion(&rest[..end]))
        } else if first.is_ascii_alphabetic() {
            self.text = rest;
            Some(Token::Mismatch(first.to_ascii_uppercase()))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_tokens_split_matches_mismatches_and_deletions() {
        let tokens: Vec<String> = MdTokens { text: b"10A0^GT5c" }
            .map(|t| match t {
                Token::Matches(n) => n.to_string(),
                Token::Mismatch(b) => (b as char).to_string(),
                Token::Deletion(d) => format!("^{}", String::from_utf8_lossy(d)),
            })
            .collect();
        assert_eq!(tokens, ["10", "A", "0", "^GT", "5", "C"]);
    }

    #[test]
    fn majority_prefers_the_first_of_a_tie_and_n_without_coverage() {
        assert_eq!(majority(&[0, 2, 2, 1, 9]), b'C');
        assert_eq!(majority(&[0; 5]), b'N');
    }
}
