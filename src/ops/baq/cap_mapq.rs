//! htslib's `sam_cap_mapq` (`realn.c`), `samtools calmd -C`: a mapping quality cap from the
//! read's mismatches (their qualities and how many ways they could fall) and clipping.

use crate::record::cigar;
use crate::record::layout::SEQ_NT16;
use crate::record::view::RecordRef;

use super::ref_at;

/// The cap for record `b` against `reference` with threshold `thres` (40 when negative): -1
/// when the read needs none.
pub fn cap_mapq(b: &[u8], reference: &[u8], thres: i32) -> i32 {
    let thres = if thres < 0 { 40 } else { thres };
    let r = RecordRef::new(b);
    let qual_start = r.aux_offset() - r.l_seq();
    let seq_start = qual_start - r.l_seq().div_ceil(2);
    // htslib reads past a CIGAR longer than the read (a record without bases) into the bytes
    // that follow; past the record they count as 0 here.
    let base = |z: i64| {
        let byte = b.get(seq_start + (z / 2) as usize).copied().unwrap_or(0);
        if z % 2 == 0 { byte >> 4 } else { byte & 0xf }
    };
    let qual = |z: i64| i64::from(b.get(qual_start + z as usize).copied().unwrap_or(0));
    let (mut mm, mut q, mut len, mut clip_q) = (0i64, 0i64, 0i64, 0i64);
    let (mut x, mut y) = (r.pos(), 0i64);
    for op in r.cigar() {
        let l = i64::from(cigar::len(op));
        match cigar::op(op) {
            cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                let mut j = 0;
                while j < l {
                    let Some(rb) = ref_at(reference, x + j) else { break };
                    let z = y + j;
                    let (c1, c2) = (base(z), SEQ_NT16[rb as usize]);
                    if c2 != 15 && c1 != 15 && qual(z) >= 13 {
                        len += 1;
                        if c1 != 0 && c1 != c2 {
                            mm += 1;
                            q += qual(z).min(33);
                        }
                    }
                    j += 1;
                }
                if j < l {
                    break;
                }
                x += l;
                y += l;
                len += l;
            }
            cigar::DEL => {
                if (0..l).any(|j| ref_at(reference, x + j).is_none()) {
                    break;
                }
                x += l;
            }
            cigar::SOFT_CLIP => {
                clip_q += (0..l).map(|j| qual(y + j)).sum::<i64>();
                y += l;
            }
            cigar::HARD_CLIP => clip_q += 13 * l,
            cigar::INS => y += l,
            cigar::REF_SKIP => x += l,
            _ => {}
        }
    }
    let mut t = 1f64;
    for i in 0..mm {
        t *= len as f64 / (i + 1) as f64;
    }
    t = q as f64 - 4.343 * t.ln() + clip_q as f64 / 5.;
    if t > f64::from(thres) {
        return -1;
    }
    if t < 0. {
        t = 0.;
    }
    t = ((f64::from(thres) - t) / f64::from(thres)).sqrt() * f64::from(thres);
    super::probaln::c_int(t + 0.499)
}
