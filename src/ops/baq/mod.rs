//! BAQ, base alignment quality (htslib's `sam_prob_realn` in `realn.c`, as `samtools calmd -r`
//! calls it): each read is realigned to its reference window by [`probaln`]; a base whose most
//! probable placement is not where the CIGAR puts it gets BAQ 0, others the posterior phred of
//! their placement. The difference to the base quality is stored as `BQ` (offset by 64), or with
//! `apply` taken off the qualities and stored as `ZQ`. An existing `BQ` or `ZQ` is used instead
//! of realigning.

pub mod cap_mapq;
pub mod probaln;

use crate::record::cigar;
use crate::record::edit;
use crate::record::layout::{SEQ_NT16, flags};
use crate::record::view::RecordRef;

/// The `sam_prob_realn` flags calmd passes: `-A` (apply) and `-E` (extend).
#[derive(Clone, Copy, Debug, Default)]
pub struct BaqFlags {
    /// `BAQ_APPLY`: qualities capped by BAQ, the difference kept as `ZQ`.
    pub apply: bool,
    /// `BAQ_EXTEND`: extended BAQ (higher sensitivity).
    pub extend: bool,
}

/// `sam_prob_realn` failed (its -4): a bad `ZQ` tag or impossible lengths. The reason, if any, is
/// already in the warnings.
#[derive(Debug, PartialEq, Eq)]
pub struct BaqFailed;

/// `seq_nt16_int`: 4-bit base code to 0..=3 for A, C, G, T and 4 for anything else.
const NT16_INT: [u8; 16] = [4, 0, 1, 4, 2, 4, 4, 4, 3, 4, 4, 4, 4, 4, 4, 4];

/// The reference byte at `pos`, `None` past either end or at a NUL (where htslib stops).
fn ref_at(reference: &[u8], pos: i64) -> Option<u8> {
    usize::try_from(pos).ok().and_then(|p| reference.get(p)).copied().filter(|&c| c != 0)
}

/// `realn_check_tag`: a `Z` tag as long as the read, else a logged line (`W` or `E`).
fn check_tag(b: &[u8], at: usize, level: char, warnings: &mut Vec<String>) -> bool {
    let r = RecordRef::new(b);
    let name = String::from_utf8_lossy(r.read_name());
    let tag = String::from_utf8_lossy(&b[at..at + 2]);
    let ty = b[at + 2];
    if ty != b'Z' {
        warnings.push(format!(
            "[{level}::realn_check_tag] Incorrect {tag} tag type ({}) for read {name}",
            ty as char
        ));
        return false;
    }
    let value = &b[at + 3..];
    let len = value.iter().position(|&c| c == 0).unwrap_or(value.len());
    if len != r.l_seq() {
        warnings.push(format!("[{level}::realn_check_tag] Read {name} {tag} tag is wrong length"));
        return false;
    }
    true
}

/// Offset of the qualities in record bytes.
fn qual_at(b: &[u8]) -> usize {
    let r = RecordRef::new(b);
    r.aux_offset() - r.l_seq()
}

/// `sam_prob_realn(b, reference, len, flags)` on record bytes `b`, edited in place. Warnings
/// (htslib's log lines) go to `warnings`.
pub fn prob_realn(
    b: &mut Vec<u8>,
    reference: &[u8],
    baq: BaqFlags,
    warnings: &mut Vec<String>,
) -> Result<(), BaqFailed> {
    let r = RecordRef::new(b);
    if r.flag() & flags::UNMAP != 0 || r.l_seq() == 0 || r.qual()[0] == 0xff {
        return Ok(());
    }
    let mut bq = edit::find_tag(b, *b"BQ").map(|(at, _)| at);
    let fix_bq = bq.is_some_and(|at| !check_tag(b, at, 'W', warnings));
    let mut zq = edit::find_tag(b, *b"ZQ").map(|(at, _)| at);
    if let Some(at) = zq
        && !check_tag(b, at, 'E', warnings)
    {
        return Err(BaqFailed);
    }
    if bq.is_some() && zq.is_some() {
        edit::delete_tag(b, *b"ZQ");
        zq = None;
        bq = edit::find_tag(b, *b"BQ").map(|(at, _)| at);
    }
    if zq.is_none() && fix_bq {
        edit::delete_tag(b, *b"BQ");
        bq = None;
    }
    match (bq, zq) {
        (None, None) => realign(b, reference, baq),
        (Some(_), _) if !baq.apply => Ok(()),
        (_, Some(_)) if baq.apply => Ok(()),
        (Some(at), _) => {
            // BQ to ZQ: the qualities lose what BQ says.
            let q_at = qual_at(b);
            for i in 0..RecordRef::new(b).l_seq() {
                let (q, d) = (b[q_at + i], b[at + 3 + i]);
                b[q_at + i] = if i32::from(q) + 64 < i32::from(d) {
                    0
                } else {
                    q.wrapping_sub(d.wrapping_sub(64))
                };
            }
            b[at] = b'Z';
            Ok(())
        }
        (None, Some(at)) => {
            // ZQ to BQ: the qualities get back what ZQ took.
            let q_at = qual_at(b);
            for i in 0..RecordRef::new(b).l_seq() {
                b[q_at + i] = b[q_at + i].wrapping_add(b[at + 3 + i].wrapping_sub(64));
            }
            b[at] = b'B';
            Ok(())
        }
    }
}

/// Where the alignment's first and last match columns are: `(xb, xe, yb, ye)` in reference and
/// read coordinates (ends exclusive); `None` without any, or with a reference skip.
fn aligned_span(r: &RecordRef<'_>) -> Option<(i64, i64, i64, i64)> {
    let (mut x, mut y) = (r.pos(), 0i64);
    let mut span: Option<(i64, i64, i64, i64)> = None;
    for op in r.cigar() {
        let l = i64::from(cigar::len(op));
        match cigar::op(op) {
            cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                let (xb, yb) = span.map_or((x, y), |s| (s.0, s.2));
                span = Some((xb, x + l, yb, y + l));
                x += l;
                y += l;
            }
            cigar::SOFT_CLIP | cigar::INS => y += l,
            cigar::DEL => x += l,
            cigar::REF_SKIP => return None,
            _ => {}
        }
    }
    span
}

/// The realignment proper: BQ (or ZQ) from [`probaln::probaln_glocal`].
fn realign(b: &mut Vec<u8>, reference: &[u8], baq: BaqFlags) -> Result<(), BaqFailed> {
    let r = RecordRef::new(b);
    let l_qseq = r.l_seq() as i64;
    let Some((mut xb, mut xe, yb, ye)) = aligned_span(&r) else { return Ok(()) };
    let mut conf = if l_qseq > 1000 {
        // htslib's long-read parameters (tuned on PacBio CCS).
        probaln::Params { d: 1e-7, e: 1e-1, bw: 10 }
    } else {
        probaln::Params { d: 0.001, e: 0.1, bw: 10 }
    };
    let mut bw = 7;
    let diagonal_shift = ((xe - xb) - (ye - yb)).abs();
    if diagonal_shift > bw {
        bw = diagonal_shift + 3;
    }
    conf.bw = bw as i32;
    xb = (xb - (yb + bw / 2)).max(0);
    xe += l_qseq - ye + bw / 2;
    if xe - xb - l_qseq > bw {
        // C's comma expression: xe's shift sees the new xb.
        xb += (xe - xb - l_qseq - bw) / 2;
        xe -= (xe - xb - l_qseq - bw) / 2;
    }
    let query: Vec<u8> = (0..l_qseq as usize).map(|i| NT16_INT[r.base_code(i) as usize]).collect();
    let mut window = Vec::with_capacity((xe - xb).max(0) as usize);
    let mut i = xb;
    while i < xe {
        let Some(c) = ref_at(reference, i) else {
            xe = i;
            break;
        };
        window.push(NT16_INT[SEQ_NT16[c as usize] as usize]);
        i += 1;
    }
    if xe < xb {
        return Err(BaqFailed);
    }
    let qual = r.qual();
    let n = l_qseq as usize;
    let (mut state, mut q) = (vec![0i32; n], vec![0u8; n]);
    probaln::probaln_glocal(&window, &query, qual, &conf, &mut state, &mut q).ok_or(BaqFailed)?;
    let placed_at = |i: usize, x: i64, y: i64| {
        state[i] & 3 == 0 && i64::from(state[i] >> 2) == x - xb + (i as i64 - y)
    };
    let mut bq: Vec<u8> = qual.to_vec();
    let ops: Vec<u32> = r.cigar().collect();
    if !baq.extend {
        each_aligned_run(&ops, r.pos(), l_qseq, false, |x, y, l| {
            for i in y..y + l {
                let i = i as usize;
                bq[i] = if placed_at(i, x, y) { bq[i].min(q[i]) } else { 0 };
            }
        });
        for (d, &q) in bq.iter_mut().zip(qual) {
            *d = q.wrapping_sub(*d).wrapping_add(64);
        }
    } else {
        let (mut left, mut right) = (vec![0u8; n], vec![0u8; n]);
        each_aligned_run(&ops, r.pos(), l_qseq, true, |x, y, l| {
            let (ys, ye) = (y as usize, (y + l) as usize);
            for i in ys..ye {
                bq[i] = if placed_at(i, x, y) { q[i] } else { 0 };
            }
            // Each base's BAQ: the smaller of the best to its left and the best to its right.
            let mut best = 0;
            for i in ys..ye {
                best = if i == ys { bq[i] } else { bq[i].max(best) };
                left[i] = best;
            }
            for i in (ys..ye).rev() {
                best = if i == ye - 1 { bq[i] } else { bq[i].max(best) };
                right[i] = best;
            }
            for i in ys..ye {
                bq[i] = left[i].min(right[i]);
            }
        });
        for (d, &q) in bq.iter_mut().zip(qual) {
            *d = 64u8.wrapping_add(q.saturating_sub(*d));
        }
    }
    if baq.apply {
        let q_at = qual_at(b);
        for (q, &d) in b[q_at..q_at + n].iter_mut().zip(&bq) {
            *q = q.wrapping_sub(d.wrapping_sub(64));
        }
        edit::append_str(b, *b"ZQ", &bq);
    } else {
        edit::append_str(b, *b"BQ", &bq);
    }
    Ok(())
}

/// Calls `run(x, y, l)` for each aligned (M/=/X) run of the CIGAR `ops`, `l` cut at the read's
/// end as htslib cuts it; with `merge`, adjacent M/=/X ops are one run (extended BAQ).
fn each_aligned_run(
    ops: &[u32],
    pos: i64,
    l_qseq: i64,
    merge: bool,
    mut run: impl FnMut(i64, i64, i64),
) {
    let is_match = |op: u32| matches!(cigar::op(op), cigar::MATCH | cigar::EQUAL | cigar::DIFF);
    let (mut x, mut y, mut pending) = (pos, 0i64, 0i64);
    for (k, &op) in ops.iter().enumerate() {
        let mut l = i64::from(cigar::len(op));
        if merge && is_match(op) {
            if ops.get(k + 1).is_some_and(|&next| is_match(next)) {
                pending += l;
                continue;
            }
            l += pending;
            pending = 0;
        }
        if l == 0 {
            continue;
        }
        match cigar::op(op) {
            cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                l = l.min(l_qseq - y);
                run(x, y, l);
                x += l;
                y += l;
            }
            cigar::SOFT_CLIP | cigar::INS => y += l.min(l_qseq - y),
            cigar::DEL => x += l,
            _ => {}
        }
    }
}
