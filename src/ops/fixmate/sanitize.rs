//! samtools' `bam_sanitize` (1.17+, `fixmate -z`): make mapping fields consistent before mating.

use crate::record::cigar::{self, HARD_CLIP, SOFT_CLIP};
use crate::record::edit;
use crate::record::layout::{self, flags};
use crate::record::view::RecordRef;

pub const FIX_POS: u32 = 2;
pub const FIX_MQUAL: u32 = 4;
pub const FIX_UNMAP: u32 = 8;
pub const FIX_CIGAR: u32 = 16;
pub const FIX_AUX: u32 = 32;
pub const FIX_CIGDUP: u32 = 64;
pub const FIX_CIGARX: u32 = 128;
pub const FIX_ALL: u32 = 127;

/// Parses `-z` keywords as `bam_sanitize_options` (prefix matches, later words add or reset).
pub fn parse_options(s: &str) -> Result<u32, String> {
    let mut opt = 0;
    for word in s.split(',').filter(|w| !w.is_empty()) {
        let w = word.as_bytes();
        let starts = |p: &str| w.starts_with(p.as_bytes());
        if starts("all") || w[0] == b'*' {
            opt = FIX_ALL;
        } else if starts("none") || starts("off") {
            opt = 0;
        } else if starts("on") {
            opt = FIX_MQUAL | FIX_UNMAP | FIX_CIGAR | FIX_AUX;
        } else if starts("pos") {
            opt |= FIX_POS;
        } else if starts("mqual") {
            opt |= FIX_MQUAL;
        } else if starts("unmap") {
            opt |= FIX_UNMAP;
        } else if starts("cigdup") {
            opt |= FIX_CIGDUP;
        } else if starts("cigarx") {
            opt |= FIX_CIGARX | FIX_CIGDUP;
        } else if starts("cigar") {
            opt |= FIX_CIGAR;
        } else if starts("aux") {
            opt |= FIX_AUX;
        } else {
            return Err(format!("Unrecognised keyword {word}"));
        }
    }
    Ok(opt)
}

fn cigar_of(b: &[u8]) -> Vec<u32> {
    RecordRef::new(b).cigar().collect()
}

/// `bam_trim`: turn everything past reference position `end` into soft clips.
fn trim(b: &mut Vec<u8>, end: i64) {
    let mut cig = cigar_of(b);
    let n = cig.len();
    let mut pos = RecordRef::new(b).pos();
    let (mut op, mut oplen) = (0u8, 0i64);
    let mut i = 0;
    while i < n {
        op = cigar::op(cig[i]);
        oplen = cigar::len(cig[i]) as i64;
        if cigar::consumes_ref(op) {
            pos += oplen;
            if pos > end {
                break;
            }
        }
        i += 1;
    }
    if i == n {
        return;
    }
    let mut kept = i;
    let mut tail: Vec<u32> = Vec::new();
    if pos - oplen < end {
        cig[kept] = (((end - (pos - oplen)) as u32) << 4) | op as u32;
        kept += 1;
        tail.push((((pos - end) as u32) << 4) | SOFT_CLIP as u32);
    } else {
        // htslib's "junction" branch is unreachable: an op starting exactly at `end` takes this
        // one and the read becomes unmapped (its CIGAR is then cleared).
        let f = edit::flag(b);
        edit::set_flag(b, (f | flags::UNMAP) & !flags::PROPER_PAIR);
    }
    for &c in &cig[i + 1..] {
        if cigar::op(c) == HARD_CLIP {
            tail.push(c);
        } else if let Some(last) = tail.last_mut() {
            *last = ((cigar::len(*last) + cigar::len(c)) << 4) | SOFT_CLIP as u32;
        }
    }
    let mut new = cig[..kept].to_vec();
    new.extend_from_slice(&tail);
    // Never more operations than before: a long count already has its name extension.
    let fits = edit::set_cigar(b, &new);
    debug_assert!(fits.is_ok());
}

/// Whether the CIGAR has an empty operation or two of one kind in a row, which `cigdup`
/// rewrites. Almost no CIGAR has, and checking first saves two allocations a record.
fn has_cigar_dups(r: &RecordRef<'_>) -> bool {
    let mut last = u8::MAX;
    r.cigar().any(|c| {
        let dup = cigar::len(c) == 0 || cigar::op(c) == last;
        last = cigar::op(c);
        dup
    })
}

/// `bam_sanitize(h, b, flags)` with reference lengths `ref_len(tid)`.
pub fn sanitize(b: &mut Vec<u8>, opts: u32, ref_len: impl Fn(i32) -> i64) {
    let tid = edit::get_i32(b, layout::REF_ID);
    let mut f = edit::flag(b);
    if opts & FIX_POS != 0 && tid < 0 {
        let _ = edit::set_pos(b, -1); // -1 always fits: no extension needed
        if opts & FIX_UNMAP != 0 {
            f |= flags::UNMAP;
            edit::set_flag(b, f);
        }
    }
    if opts & FIX_CIGAR != 0 && f & flags::UNMAP == 0 {
        let pos = RecordRef::new(b).pos();
        if pos < 0 && opts & FIX_UNMAP != 0 {
            edit::set_flag(b, f | flags::UNMAP);
        } else {
            let rlen = ref_len(tid);
            if pos >= rlen && opts & FIX_UNMAP != 0 {
                edit::set_flag(b, f | flags::UNMAP);
                if opts & FIX_POS != 0 {
                    edit::set_i32(b, layout::REF_ID, -1);
                    let _ = edit::set_pos(b, -1);
                }
            } else if RecordRef::new(b).end_pos() > rlen {
                trim(b, rlen);
            }
        }
    }
    let f = edit::flag(b);
    if f & flags::UNMAP != 0 {
        if opts & FIX_CIGAR != 0 && RecordRef::new(b).n_cigar_op() > 0 {
            // Never more operations than before: a long count already has its name extension.
            let fits = edit::set_cigar(b, &[]);
            debug_assert!(fits.is_ok());
        }
        if opts & FIX_MQUAL != 0 {
            b[layout::MAPQ] = 0;
        }
        if opts & FIX_AUX != 0 {
            for t in [*b"NM", *b"MD", *b"CG", *b"SM"] {
                while edit::delete_tag(b, t) {}
            }
        }
    }
    if opts & FIX_CIGARX != 0 && f & flags::UNMAP == 0 {
        let cig: Vec<u32> = cigar_of(b)
            .into_iter()
            .map(|c| match cigar::op(c) {
                cigar::EQUAL | cigar::DIFF => c & !0xf,
                _ => c,
            })
            .collect();
        // Never more operations than before: a long count already has its name extension.
        let fits = edit::set_cigar(b, &cig);
        debug_assert!(fits.is_ok());
    }
    if opts & FIX_CIGDUP != 0 && f & flags::UNMAP == 0 && has_cigar_dups(&RecordRef::new(b)) {
        let cig = cigar_of(b);
        let mut out: Vec<u32> = Vec::with_capacity(cig.len());
        let (mut last_op, mut last_len) = (u32::MAX, 0u32);
        for &c in &cig {
            let op = c & 0xf;
            let mut len = c >> 4;
            if op == last_op {
                if last_len + len >= 1 << 28 {
                    let j = out.len();
                    out[j - 1] = (((1 << 28) - 1) << 4) | op;
                    len -= (1 << 28) - 1;
                    out.push((len << 4) | op);
                } else {
                    len += last_len;
                    let j = out.len();
                    out[j - 1] = (len << 4) | op;
                }
            } else if len > 0 {
                out.push(c);
            }
            if len > 0 {
                last_op = op;
                last_len = len;
            }
        }
        if out.len() != cig.len() {
            // Never more operations than before: a long count already has its name extension.
            let fits = edit::set_cigar(b, &out);
            debug_assert!(fits.is_ok());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(pos: i32, cig: &[u32], l_seq: usize) -> Vec<u8> {
        let r = crate::record::build::RecordBuilder::new(b"r").pos(pos).cigar(cig);
        r.seq_fill(0x11, l_seq).qual(&vec![30; l_seq]).build()
    }

    #[test]
    fn trims_past_end_to_soft_clip() {
        let mut b = rec(4950, &[100 << 4], 100);
        sanitize(&mut b, FIX_ALL, |_| 5000);
        assert_eq!(RecordRef::new(&b).cigar().collect::<Vec<_>>(), vec![50 << 4, (50 << 4) | 4]);
        let mut b = rec(4960, &[(10 << 4) | 4, 80 << 4, (10 << 4) | 4, (22 << 4) | 5], 100);
        sanitize(&mut b, FIX_ALL, |_| 5000);
        let c: Vec<_> = RecordRef::new(&b).cigar().collect();
        assert_eq!(c, vec![(10 << 4) | 4, 40 << 4, (50 << 4) | 4, (22 << 4) | 5]);
    }

    #[test]
    fn beyond_end_unmaps_and_merges_duplicates() {
        let mut b = rec(5000, &[100 << 4], 100);
        sanitize(&mut b, FIX_ALL, |_| 5000);
        let r = RecordRef::new(&b);
        assert_eq!((r.flag() & 4, r.ref_id(), r.pos(), r.n_cigar_op()), (4, -1, -1, 0));
        let mut b = rec(0, &[5 << 4, 5 << 4, 1, (3 << 4) | 1], 13);
        sanitize(&mut b, FIX_ALL, |_| 5000);
        assert_eq!(RecordRef::new(&b).cigar().collect::<Vec<_>>(), vec![10 << 4, (3 << 4) | 1]);
        assert_eq!(parse_options("off,pos,cigar").unwrap(), FIX_POS | FIX_CIGAR);
        assert!(parse_options("bogus").is_err());
    }
}
