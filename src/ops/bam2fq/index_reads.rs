//! `--i1`/`--i2`: index reads cut out of a record's barcode tag (and its quality tag) as
//! `--index-format` says (samtools' `output_index` and `write_index_rec`).
//!
//! The format is pairs of a code (`i` keep, `n` skip) and a length or `*` (up to the next
//! non-letter, which is skipped). As samtools, a `*` part steps over the tag's end into the
//! bytes that follow it in the record; past the record's end counts as the end of the tag.

use crate::record::RecordRef;
use crate::record::layout::{self, SEQ_NT16, flags};

/// How index reads are made.
#[derive(Clone, Debug)]
pub struct IndexFormat {
    /// `--index-format` (`i*i*` when not given).
    pub format: Vec<u8>,
    pub barcode_tag: [u8; 2],
    pub quality_tag: [u8; 2],
    /// `-v`: the quality of index bases without a quality tag.
    pub default_quality: u8,
}

/// An `--index-format` code other than `i` or `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownCode;

/// The bytes of a tag value from its start to the end of the record; reading past them gives 0.
struct Cursor<'a> {
    data: &'a [u8],
}

impl Cursor<'_> {
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    fn c_len(&self) -> usize {
        (0..).find(|&i| self.at(i) == 0).unwrap_or(0)
    }
}

/// The value of `tag` (a `Z` or any other type, as samtools takes it) and the record bytes after it.
fn tag_cursor<'a>(bytes: &'a [u8], tag: [u8; 2]) -> Option<Cursor<'a>> {
    let r = RecordRef::new(bytes);
    let f = r.aux_get(tag)?;
    let start = f.raw.as_ptr() as usize - bytes.as_ptr() as usize + 3;
    Some(Cursor { data: &bytes[start..] })
}

/// Index reads 1 and 2 of `b1` (else `b2`); `None` for an index read not made or empty.
pub fn index_reads(
    b1: Option<&[u8]>,
    b2: Option<&[u8]>,
    spec: &IndexFormat,
) -> Result<[Option<Vec<u8>>; 2], UnknownCode> {
    let mut reads = [None, None];
    let Some(base) = b1.or(b2) else { return Ok(reads) };
    let find =
        |tag| b1.and_then(|b| tag_cursor(b, tag)).or_else(|| b2.and_then(|b| tag_cursor(b, tag)));
    let Some(bc) = find(spec.barcode_tag) else { return Ok(reads) };
    // The quality tag counts only with as many characters as the barcode.
    let qt = find(spec.quality_tag).filter(|q| q.c_len() == bc.c_len());
    let fmt = &spec.format;
    let (mut fi, mut at, mut inum) = (0usize, 0usize, 0usize);
    while inum < 2 {
        let code = fmt.get(fi).copied().unwrap_or(0);
        fi += 1;
        if code == 0 {
            break;
        }
        let digits = fmt[fi.min(fmt.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
        let len = if digits > 0 {
            let n = std::str::from_utf8(&fmt[fi..fi + digits]).ok().and_then(|s| s.parse().ok());
            fi += digits;
            n.unwrap_or(usize::MAX)
        } else {
            fi += 1;
            0
        };
        let mut end = at;
        if len > 0 {
            while bc.at(end) != 0 && end - at < len {
                end += 1;
            }
        } else {
            while bc.at(end).is_ascii_alphabetic() {
                end += 1;
            }
        }
        match code {
            b'n' => {}
            b'i' => {
                if end > at {
                    let seq: Vec<u8> = (at..end).map(|i| bc.at(i)).collect();
                    let qual: Vec<u8> = match &qt {
                        Some(q) => (at..end).map(|i| q.at(i).wrapping_sub(b'!')).collect(),
                        None => vec![spec.default_quality; seq.len()],
                    };
                    reads[inum] = Some(index_record(base, &seq, &qual));
                }
                inum += 1;
            }
            _ => return Err(UnknownCode),
        }
        at = end + usize::from(len == 0);
    }
    Ok(reads)
}

/// An unmapped forward record with `base`'s name, flags and tags and these bases.
fn index_record(base: &[u8], seq: &[u8], qual: &[u8]) -> Vec<u8> {
    let r = RecordRef::new(base);
    let flag = (r.flag() | flags::UNMAP) & !flags::REVERSE;
    let mut b = vec![0u8; layout::FIXED_LEN];
    b[layout::REF_ID..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b[layout::POS..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b[layout::L_READ_NAME] = r.read_name().len() as u8 + 1;
    // htslib's bin for an unplaced read: reg2bin(-1, 0).
    b[layout::BIN..][..2].copy_from_slice(&4680u16.to_le_bytes());
    b[layout::FLAG..][..2].copy_from_slice(&flag.to_le_bytes());
    b[layout::L_SEQ..][..4].copy_from_slice(&(seq.len() as i32).to_le_bytes());
    b[layout::NEXT_REF_ID..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b[layout::NEXT_POS..][..4].copy_from_slice(&(-1i32).to_le_bytes());
    b.extend_from_slice(r.read_name());
    b.push(0);
    for pair in seq.chunks(2) {
        let low = pair.get(1).map_or(0, |&c| SEQ_NT16[c as usize]);
        b.push(SEQ_NT16[pair[0] as usize] << 4 | low);
    }
    b.extend_from_slice(qual);
    b.extend_from_slice(r.aux_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    fn spec(format: &str) -> IndexFormat {
        IndexFormat {
            format: format.as_bytes().to_vec(),
            barcode_tag: *b"BC",
            quality_tag: *b"QT",
            default_quality: 1,
        }
    }

    #[test]
    fn barcodes_split_at_the_separator_or_by_length() {
        let b =
            RecordBuilder::new(b"r").seq(b"A").qual(&[1]).aux(b"BCZACG-TT\0QTZ!!!!!!\0").build();
        let [i1, i2] = index_reads(Some(&b), None, &spec("i*i*")).unwrap();
        let i1 = i1.unwrap();
        let r1 = RecordRef::new(&i1);
        assert_eq!((r1.l_seq(), r1.qual()), (3, &[0u8, 0, 0][..]));
        assert_eq!(RecordRef::new(i2.as_ref().unwrap()).l_seq(), 2);
        let [i1, i2] = index_reads(Some(&b), None, &spec("n2i2")).unwrap();
        assert_eq!(RecordRef::new(i1.as_ref().unwrap()).l_seq(), 2);
        assert!(i2.is_none());
        assert_eq!(index_reads(Some(&b), None, &spec("x1")), Err(UnknownCode));
    }
}
