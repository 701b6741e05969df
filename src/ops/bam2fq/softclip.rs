//! `--no-sc`: a record without its soft-clipped bases (samtools' `removesoftclips`). The CIGAR
//! loses its `S` operations (neighbours of one kind merge); with a backup tag the removed part
//! is kept as `CIGAR:BASES:QUALS`, in the read's own orientation (a reverse read's CIGAR
//! reversed, its clipped bases reverse-complemented, its qualities reversed).

use crate::record::RecordRef;
use crate::record::cigar;
use crate::record::edit;
use crate::record::layout::{self, SEQ_CODES, flags};

use crate::record::cigar::SOFT_CLIP;
const COMPLEMENT_CODES: &[u8; 16] = b"!TGKCYSBAWRDMHVN";

/// The record without its soft clips, or `None` when it has none. `backup`: the tag that keeps
/// the removed part; `None`: nothing is kept.
pub fn remove(bytes: &[u8], backup: Option<[u8; 2]>) -> Option<Vec<u8>> {
    let r = RecordRef::new(bytes);
    let ops: Vec<u32> = r.cigar().collect();
    if !ops.iter().any(|&c| cigar::op(c) == SOFT_CLIP) {
        return None;
    }
    let reverse = r.flag() & flags::REVERSE != 0;
    let (mut kept_codes, mut kept_qual) = (Vec::new(), Vec::new());
    let (mut clip_codes, mut clip_qual) = (Vec::new(), Vec::new());
    let qual = r.qual();
    let mut at = 0usize;
    for &c in &ops {
        let (op, len) = (cigar::op(c), cigar::len(c) as usize);
        if !cigar::consumes_query(op) {
            continue;
        }
        let (codes, quals) = if op == SOFT_CLIP {
            (&mut clip_codes, &mut clip_qual)
        } else {
            (&mut kept_codes, &mut kept_qual)
        };
        codes.extend((at..at + len).map(|i| r.base_code(i)));
        quals.extend_from_slice(&qual[at..at + len]);
        at += len;
    }
    let merged = merge_without_clips(&ops);
    let mut out = Vec::with_capacity(bytes.len());
    // The whole name region: its padding or extension is counted in `l_read_name`.
    out.extend_from_slice(&bytes[..layout::FIXED_LEN + bytes[layout::L_READ_NAME] as usize]);
    for c in &merged {
        out.extend_from_slice(&c.to_le_bytes());
    }
    for pair in kept_codes.chunks(2) {
        out.push(pair[0] << 4 | pair.get(1).copied().unwrap_or(0));
    }
    out.extend_from_slice(&kept_qual);
    out.extend_from_slice(r.aux_bytes());
    // Dropping clips never adds operations; a long count gets an extension back (the name
    // had room for one).
    let fits = crate::record::long_cigar::set_n_cigar(&mut out, merged.len());
    debug_assert!(fits.is_ok());
    out[layout::L_SEQ..layout::L_SEQ + 4].copy_from_slice(&(kept_codes.len() as i32).to_le_bytes());
    if let Some(tag) = backup {
        edit::delete_tag(&mut out, tag);
        let value = backup_value(&ops, &clip_codes, &clip_qual, reverse);
        edit::append_str(&mut out, tag, &value);
    }
    Some(out)
}

/// The CIGAR without `S`, runs of one operation merged.
fn merge_without_clips(ops: &[u32]) -> Vec<u32> {
    let mut merged: Vec<u32> = Vec::with_capacity(ops.len());
    for &c in ops.iter().filter(|&&c| cigar::op(c) != SOFT_CLIP) {
        match merged.last_mut() {
            Some(last) if cigar::op(*last) == cigar::op(c) => {
                *last = (cigar::len(*last) + cigar::len(c)) << 4 | cigar::op(c) as u32;
            }
            _ => merged.push(c),
        }
    }
    merged
}

/// `CIGAR:BASES:QUALS` of the removed part, in the read's orientation.
fn backup_value(ops: &[u32], codes: &[u8], quals: &[u8], reverse: bool) -> Vec<u8> {
    let mut v = Vec::new();
    let mut push_op = |c: u32| {
        v.extend_from_slice(cigar::len(c).to_string().as_bytes());
        v.push(cigar::op_char(cigar::op(c)));
    };
    if reverse {
        ops.iter().rev().for_each(|&c| push_op(c));
    } else {
        ops.iter().for_each(|&c| push_op(c));
    }
    v.push(b':');
    if reverse {
        v.extend(codes.iter().rev().map(|&c| COMPLEMENT_CODES[c as usize]));
        v.push(b':');
        v.extend(quals.iter().rev().map(|q| q.wrapping_add(33)));
    } else {
        v.extend(codes.iter().map(|&c| SEQ_CODES[c as usize]));
        v.push(b':');
        v.extend(quals.iter().map(|q| q.wrapping_add(33)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    #[test]
    fn clips_go_and_are_kept_in_the_tag() {
        let b = RecordBuilder::new(b"r")
            .cigar(&[2 << 4 | 4, 3 << 4, 1 << 4 | 4])
            .seq(b"ACGTAC")
            .qual(&[0, 1, 2, 3, 4, 5])
            .build();
        let out = remove(&b, Some(*b"s0")).unwrap();
        let r = RecordRef::new(&out);
        assert_eq!((r.l_seq(), r.qual()), (3, &[2u8, 3, 4][..]));
        assert_eq!(r.aux_get(*b"s0").unwrap().value, b"2S3M1S:ACC:!\"&");
        assert!(remove(&out, None).is_none());
    }
}
