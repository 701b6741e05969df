//! Cutting bases off one end of an alignment (samtools 1.24 `bam_trim_left`, `bam_trim_right`
//! in `bam_ampliconclip.c`), kept operation for operation, quirks included: a record trimmed
//! to nothing with hard clips loses its CIGAR, bases and qualities but keeps its position.

use crate::record::RecordRef;
use crate::record::cigar::{len, op};
use crate::record::layout::{self, FIXED_LEN};

const HARD_CLIP: u8 = 5;
const SOFT_CLIP: u8 = 4;

/// `bam_cigar_type`: bit 1 consumes the query, bit 2 the reference.
fn cigar_type(o: u8) -> u32 {
    (0x3C1A7u32 >> (2 * o as u32)) & 3
}

fn cigar_op(length: u32, o: u8) -> u32 {
    length << 4 | o as u32
}

/// Lays out a record like `r` with a new position, CIGAR and bases (`seq` packed, `qual`),
/// its read name and aux fields copied; `bin` and the other fixed fields kept.
pub fn assemble(
    r: &RecordRef<'_>,
    pos: i64,
    cigar: &[u32],
    seq: (&[u8], usize),
    qual: &[u8],
) -> Vec<u8> {
    let b = r.bytes();
    let name_end = FIXED_LEN + b[layout::L_READ_NAME] as usize;
    let aux = r.aux_bytes();
    let mut out =
        Vec::with_capacity(name_end + 4 * cigar.len() + seq.0.len() + qual.len() + aux.len());
    out.extend_from_slice(&b[..name_end]);
    for c in cigar {
        out.extend_from_slice(&c.to_le_bytes());
    }
    out.extend_from_slice(seq.0);
    out.extend_from_slice(qual);
    out.extend_from_slice(aux);
    // Trimming never adds operations, and a long count came with its name extension.
    let fits = crate::record::long_cigar::set_n_cigar(&mut out, cigar.len());
    debug_assert!(fits.is_ok());
    out[layout::L_SEQ..layout::L_SEQ + 4].copy_from_slice(&(seq.1 as i32).to_le_bytes());
    crate::record::edit::set_narrow(&mut out, layout::WIDE_POS, pos as i32);
    out
}

/// The packed bases `from..` of `r`, re-packed from the first nibble when `from` is odd.
fn bases_from(r: &RecordRef<'_>, from: usize) -> Vec<u8> {
    let packed = r.seq_packed();
    let l_seq = r.l_seq();
    let n = (l_seq - from).div_ceil(2);
    if from.is_multiple_of(2) {
        return packed[from / 2..from / 2 + n].to_vec();
    }
    let mut out = Vec::with_capacity(n);
    let mut at = from / 2;
    let mut i = from;
    while i + 1 < l_seq {
        out.push((packed[at] & 0x0f) << 4 | (packed[at + 1] & 0xf0) >> 4);
        at += 1;
        i += 2;
    }
    if i < l_seq {
        out.push((packed[at] & 0x0f) << 4);
    }
    out
}

/// What removing `bases` reference bases takes from one end of a CIGAR: the whole operations
/// passed (the walk stops at the first reference operation longer than what is left to remove).
struct EndWalk {
    whole_ops: usize,
    /// Reference bases still to remove inside the operation the walk stopped at.
    ref_left: u32,
    /// Reference bases of the whole operations passed.
    ref_removed: u32,
    query_removed: u32,
    hard_clipped: u32,
}

/// Walks `ops` from the clipped end, as samtools' `bam_trim_left` and `bam_trim_right` do.
fn walk_from_end(ops: impl Iterator<Item = u32>, bases: u32) -> EndWalk {
    let mut w = EndWalk {
        whole_ops: 0,
        ref_left: bases,
        ref_removed: 0,
        query_removed: 0,
        hard_clipped: 0,
    };
    for c in ops {
        let (o, l) = (op(c), len(c));
        if o == HARD_CLIP {
            w.hard_clipped += l;
        } else {
            let t = cigar_type(o);
            if t & 2 != 0 {
                if l > w.ref_left {
                    break;
                }
                w.ref_left -= l;
                w.ref_removed += l;
            }
            if t & 1 != 0 {
                w.query_removed += l;
            }
        }
        w.whole_ops += 1;
    }
    w
}

/// `bam_trim_left`: removes `bases` reference bases from the start.
pub fn trim_left(r: &RecordRef<'_>, bases: u32, hard: bool) -> Vec<u8> {
    let cigar: Vec<u32> = r.cigar().collect();
    let n = cigar.len();
    let walk = walk_from_end(cigar.iter().copied(), bases);
    let (ref_remove, mut qry_removed, hardclip) =
        (walk.ref_left, walk.query_removed, walk.hard_clipped);
    let mut new_pos = r.pos() + walk.ref_removed as i64;
    let i = walk.whole_ops;
    if i < n {
        let t = cigar_type(op(cigar[i]));
        if t & 2 != 0 {
            new_pos += ref_remove as i64;
        }
        if t & 1 != 0 {
            qry_removed += ref_remove;
        }
    } else {
        if hard {
            return assemble(r, r.pos(), &[], (&[], 0), &[]);
        }
        qry_removed = r.l_seq() as u32;
    }
    let mut new_cigar = Vec::with_capacity(n + 2);
    if hard && hardclip + qry_removed > 0 {
        new_cigar.push(cigar_op(hardclip + qry_removed, HARD_CLIP));
    }
    if !hard {
        if hardclip > 0 {
            new_cigar.push(cigar_op(hardclip, HARD_CLIP));
        }
        if qry_removed > 0 {
            new_cigar.push(cigar_op(qry_removed, SOFT_CLIP));
        }
    }
    if i < n && len(cigar[i]) > ref_remove {
        new_cigar.push(cigar_op(len(cigar[i]) - ref_remove, op(cigar[i])));
        new_cigar.extend_from_slice(&cigar[i + 1..]);
    }
    // A record without SEQ has nothing to remove (samtools reads past its end).
    let removed = if hard { (qry_removed as usize).min(r.l_seq()) } else { 0 };
    let l_seq = r.l_seq() - removed;
    let seq = bases_from(r, removed);
    assemble(r, new_pos, &new_cigar, (&seq, l_seq), &r.qual()[removed..])
}

/// `orig_cigar[i]` as samtools reads it, also at -1: a read without bases (`SEQ *`) whose
/// every operation is trimmed, after a hard clip, reads the word before its CIGAR, the end of
/// its name as htslib keeps it (NUL-terminated, padded with NULs to four bytes).
fn cigar_before(r: &RecordRef<'_>, cigar: &[u32], i: i64) -> u32 {
    if let Ok(i) = usize::try_from(i) {
        return cigar[i];
    }
    let mut name = r.read_name().to_vec();
    name.push(0);
    name.resize(name.len().next_multiple_of(4), 0);
    let tail = &name[name.len() - 4..];
    u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]])
}

/// `bam_trim_right`: removes `bases` reference bases from the end. The CIGAR is rebuilt from
/// its end backwards exactly as samtools does (an end that removes no query bases and has no
/// hard clip also drops the first operation, as there).
pub fn trim_right(r: &RecordRef<'_>, bases: u32, hard: bool) -> Vec<u8> {
    let cigar: Vec<u32> = r.cigar().collect();
    let n = cigar.len() as i64;
    let walk = walk_from_end(cigar.iter().rev().copied(), bases);
    let (ref_remove, mut qry_removed, hardclip) =
        (walk.ref_left, walk.query_removed, walk.hard_clipped);
    let mut i = n - 1 - walk.whole_ops as i64;
    let mut j: i64;
    if i >= 0 {
        if cigar_type(op(cigar[i as usize])) & 1 != 0 {
            qry_removed += ref_remove;
        }
        j = i;
        if qry_removed > 0 {
            j += 1;
        }
        if hardclip > 0 && (!hard || qry_removed == 0) {
            j += 1;
        }
    } else {
        if hard {
            return assemble(r, r.pos(), &[], (&[], 0), &[]);
        }
        qry_removed = r.l_seq() as u32;
        j = 0;
        if hardclip > 0 {
            j += 1;
        }
    }
    let mut new_cigar = vec![0u32; cigar.len() + 3];
    let mut count = 0;
    if hard && hardclip + qry_removed > 0 {
        new_cigar[j as usize] = cigar_op(hardclip + qry_removed, HARD_CLIP);
        count += 1;
    }
    if !hard {
        if hardclip > 0 {
            new_cigar[j as usize] = cigar_op(hardclip, HARD_CLIP);
            count += 1;
            if qry_removed > 0 {
                j -= 1;
            }
        }
        if qry_removed > 0 {
            new_cigar[j as usize] = cigar_op(qry_removed, SOFT_CLIP);
            count += 1;
        }
    }
    if j > 0 {
        j -= 1;
        let c = cigar_before(r, &cigar, i);
        new_cigar[j as usize] = cigar_op(len(c).wrapping_sub(ref_remove), op(c));
        count += 1;
    }
    while j > 0 {
        j -= 1;
        i -= 1;
        new_cigar[j as usize] = cigar[i as usize];
        count += 1;
    }
    new_cigar.truncate(count);
    // A record without SEQ has nothing to remove (samtools reads past its end).
    let removed = if hard { (qry_removed as usize).min(r.l_seq()) } else { 0 };
    let l_seq = r.l_seq() - removed;
    let seq = &r.seq_packed()[..l_seq.div_ceil(2)];
    assemble(r, r.pos(), &new_cigar, (seq, l_seq), &r.qual()[..l_seq])
}

/// Query bases aligned (`active_query_len`): query-consuming operations but soft clips.
pub fn active_query_len(r: &RecordRef<'_>) -> i64 {
    r.cigar()
        .filter(|&c| cigar_type(op(c)) & 1 != 0 && op(c) != SOFT_CLIP)
        .map(|c| len(c) as i64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    fn cigar_of(b: &[u8]) -> Vec<u32> {
        RecordRef::new(b).cigar().collect()
    }

    #[test]
    fn left_trims_move_the_start() {
        let rec = RecordBuilder::new(b"r")
            .pos(100)
            .cigar(&[cigar_op(10, 0)])
            .seq(b"ACGTACGTAC")
            .qual(&[30; 10])
            .build();
        let r = RecordRef::new(&rec);
        let soft = trim_left(&r, 3, false);
        assert_eq!(cigar_of(&soft), vec![cigar_op(3, SOFT_CLIP), cigar_op(7, 0)]);
        assert_eq!(RecordRef::new(&soft).pos(), 103);
        let hard = trim_left(&r, 3, true);
        let h = RecordRef::new(&hard);
        assert_eq!(cigar_of(&hard), vec![cigar_op(3, HARD_CLIP), cigar_op(7, 0)]);
        assert_eq!((h.l_seq(), h.base_code(0)), (7, 8));
        let right = trim_right(&r, 4, false);
        assert_eq!(cigar_of(&right), vec![cigar_op(6, 0), cigar_op(4, SOFT_CLIP)]);
        assert_eq!(active_query_len(&RecordRef::new(&right)), 6);
    }
}
