//! `depad`'s record arithmetic (samtools 1.24 `padding.c`): a padded alignment's bases laid
//! along the padded reference, the unpadded CIGAR they make, and padded → unpadded positions.
//!
//! Sequences here are 4-bit base codes with 0 for a gap (a pad in the reference, a deletion in
//! a read), as samtools keeps them.

use crate::record::RecordRef;
use crate::record::cigar::{self, op, op_char};

const MATCH: u8 = 0;
const INS: u8 = 1;
const DEL: u8 = 2;
const SKIP: u8 = 3;
const SOFT_CLIP: u8 = 4;
const HARD_CLIP: u8 = 5;
const PAD: u8 = 6;
const EQUAL: u8 = 7;
const DIFF: u8 = 8;

fn cigar_op(len: u32, op: u8) -> u32 {
    len << 4 | op as u32
}

/// What [`unpad_seq`] found wrong.
#[derive(Debug, PartialEq, Eq)]
pub enum UnpadError {
    /// An `I` or `P` (or unknown) operation, as its CIGAR letter.
    UnexpectedOp(u8),
}

/// The record's bases along the padded reference (`unpad_seq`): `M`/`=`/`X` bases, a 0 for each
/// `D` or `N` base; soft and hard clips left out. Returns whether an `N` was met (samtools warns).
pub fn unpad_seq(r: &RecordRef<'_>, out: &mut Vec<u8>) -> Result<bool, UnpadError> {
    out.clear();
    let mut saw_skip = false;
    let mut j = 0usize;
    for c in r.cigar() {
        let (o, n) = (op(c), cigar::len(c) as usize);
        match o {
            MATCH | EQUAL | DIFF => {
                for _ in 0..n {
                    out.push(base_or_after(r, j));
                    j += 1;
                }
            }
            SOFT_CLIP => j += n,
            HARD_CLIP => {}
            DEL => out.resize(out.len() + n, 0),
            SKIP => {
                out.resize(out.len() + n, 0);
                saw_skip = true;
            }
            other => return Err(UnpadError::UnexpectedOp(op_char(other))),
        }
    }
    Ok(saw_skip)
}

/// Base `j` as samtools' `bam_seqi` reads it: past the read's bases (`SEQ *`) it reads on
/// through the record's qualities and aux fields, where a 0 nibble reads as a deletion; past the
/// record it reads stale memory, taken as 0 (mdsam once indexed past the bases and panicked).
fn base_or_after(r: &RecordRef<'_>, j: usize) -> u8 {
    if j < r.l_seq() {
        return r.base_code(j);
    }
    r.bytes()
        .get(r.seq_start() + j / 2)
        .map_or(0, |b| if j.is_multiple_of(2) { b >> 4 } else { b & 0xf })
}

/// Unpadded position of each padded reference position (`update_posmap`).
pub fn position_map(reference: &[u8]) -> Vec<i64> {
    let mut k = 0i64;
    reference
        .iter()
        .map(|&b| {
            let at = k;
            if b != 0 {
                k += 1;
            }
            at
        })
        .collect()
}

/// The unpadded CIGAR of a read at padded position `pos` whose bases along the padded reference
/// are `read` (from [`unpad_seq`]), against the padded reference `reference`; `None` when the
/// read runs past the reference's end. Clips of the original `cigar` are kept.
pub fn unpadded_cigar(
    cigar: &[u32],
    pos: usize,
    read: &[u8],
    reference: &[u8],
) -> Option<Vec<u32>> {
    let mut out = Vec::with_capacity(cigar.len() + 4);
    let n = cigar.len();
    match cigar.first().map(|&c| op(c)) {
        Some(SOFT_CLIP) => out.push(cigar[0]),
        Some(HARD_CLIP) => {
            out.push(cigar[0]);
            if n > 2 && op(cigar[1]) == SOFT_CLIP {
                out.push(cigar[1]);
            }
        }
        _ => {}
    }
    // Each base's operation: a read base on a reference base is M, on a pad I; a read gap on
    // a reference base is D, on a pad P.
    let mut ops = Vec::with_capacity(read.len());
    for (i, &b) in read.iter().enumerate() {
        let on_base = *reference.get(pos + i)? != 0;
        ops.push(match (b != 0, on_base) {
            (true, true) => MATCH,
            (true, false) => INS,
            (false, true) => DEL,
            (false, false) => PAD,
        });
    }
    // A start on an insertion or a pad takes in the pads just before the read.
    let pads_before = || {
        let mut k = 0;
        while k + 1 < pos && reference[pos - k - 1] == 0 {
            k += 1;
        }
        k as u32
    };
    let first = ops.first().copied().unwrap_or(MATCH);
    let mut k = match first {
        INS => {
            let pads = pads_before();
            if pads > 0 {
                out.push(cigar_op(pads, PAD));
            }
            0
        }
        PAD => pads_before(),
        _ => 0,
    };
    k += 1;
    let mut current = first;
    for &o in ops.iter().skip(1) {
        if o != current {
            out.push(cigar_op(k, current));
            current = o;
            k = 1;
        } else {
            k += 1;
        }
    }
    out.push(cigar_op(k, current));
    match cigar.last().map(|&c| op(c)) {
        Some(SOFT_CLIP) => out.push(cigar[n - 1]),
        Some(HARD_CLIP) => {
            if n > 2 && op(cigar[n - 2]) == SOFT_CLIP {
                out.push(cigar[n - 2]);
            }
            out.push(cigar[n - 1]);
        }
        _ => {}
    }
    drop_redundant_pads(&mut out);
    Some(out)
}

/// `5M2P10M` → `15M`: a pad between M/D operations says nothing once the reference is unpadded.
fn drop_redundant_pads(c: &mut Vec<u32>) {
    for i in 2..c.len() {
        if op(c[i - 1]) != PAD {
            continue;
        }
        let (pre, post) = (op(c[i - 2]), op(c[i]));
        if matches!(pre, MATCH | DEL) && matches!(post, MATCH | DEL) {
            c[i - 1] = 0;
            if pre == post {
                c[i] = cigar_op(cigar::len(c[i - 2]) + cigar::len(c[i]), post);
                c[i - 2] = 0;
            }
        }
    }
    c.retain(|&x| x != 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_between_matches_merge() {
        let mut c = vec![cigar_op(5, MATCH), cigar_op(2, PAD), cigar_op(10, MATCH)];
        drop_redundant_pads(&mut c);
        assert_eq!(c, vec![cigar_op(15, MATCH)]);
    }

    #[test]
    fn reads_over_pads_become_insertions() {
        // Reference A C - - G T, read A C G G G T from 0: the bases over pads are inserted.
        let reference = [1, 2, 0, 0, 4, 8];
        let read = [1, 2, 4, 4, 4, 8];
        let c = unpadded_cigar(&[cigar_op(6, MATCH)], 0, &read, &reference).unwrap();
        assert_eq!(c, vec![cigar_op(2, MATCH), cigar_op(2, INS), cigar_op(2, MATCH)]);
        assert_eq!(position_map(&reference), vec![0, 1, 2, 2, 2, 3]);
        assert!(unpadded_cigar(&[cigar_op(6, MATCH)], 1, &read, &reference).is_none());
    }
}
