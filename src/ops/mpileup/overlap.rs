//! htslib's read-pair overlap handling in the pileup (`tweak_overlap_quality` in sam.c), on by
//! default in `mpileup` (`-x` turns it off): where the two reads of a pair cover the same
//! reference base, one of them keeps the evidence and the other's quality drops to 0, so that
//! a base is not counted twice. Which read keeps it is picked by a hash of the read name.

use crate::record::RecordRef;
use crate::record::cigar;

/// The walk state of `cigar_iref2iseq_*`: the CIGAR op index, the offset inside it and the
/// query and reference offsets reached.
struct Walk<'a> {
    ops: &'a [u32],
    k: usize,
    icig: i64,
    iseq: i64,
    iref: i64,
}

/// Why the walk stopped: the CIGAR ran out (`-1`) or held an op the walk does not know (`-2`).
#[derive(PartialEq, Eq, Clone, Copy)]
enum Stop {
    End,
    BadOp,
}

impl<'a> Walk<'a> {
    /// `cigar_iref2iseq_set`: moves to reference offset `iref` from the read's start.
    fn set(ops: &'a [u32], iref: i64) -> (Self, Result<(), Stop>) {
        let mut w = Walk { ops, k: 0, icig: 0, iseq: 0, iref: 0 };
        if iref < 0 {
            w.iref = iref;
            return (w, Err(Stop::End));
        }
        let mut pos = iref;
        while w.k < ops.len() {
            let (op, n) = (cigar::op(ops[w.k]), i64::from(cigar::len(ops[w.k])));
            match op {
                cigar::SOFT_CLIP | cigar::INS => {
                    w.k += 1;
                    w.iseq += n;
                    w.icig = 0;
                }
                cigar::HARD_CLIP | cigar::PAD => {
                    w.k += 1;
                    w.icig = 0;
                }
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                    pos -= n;
                    if pos < 0 {
                        w.icig = n + pos;
                        w.iseq += w.icig;
                        w.iref += w.icig;
                        return (w, Ok(()));
                    }
                    w.k += 1;
                    w.iseq += n;
                    w.icig = 0;
                    w.iref += n;
                }
                cigar::DEL | cigar::REF_SKIP => {
                    pos = (pos - n).max(0);
                    w.k += 1;
                    w.icig = 0;
                    w.iref += n;
                }
                _ => return (w, Err(Stop::BadOp)),
            }
        }
        w.iseq = -1;
        (w, Err(Stop::End))
    }

    /// `cigar_iref2iseq_next`: the next aligned base.
    fn next(&mut self) -> Result<(), Stop> {
        while self.k < self.ops.len() {
            let (op, n) = (cigar::op(self.ops[self.k]), i64::from(cigar::len(self.ops[self.k])));
            match op {
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                    if self.icig >= n - 1 {
                        self.icig = -1;
                        self.k += 1;
                        continue;
                    }
                    self.iseq += 1;
                    self.icig += 1;
                    self.iref += 1;
                    return Ok(());
                }
                cigar::DEL | cigar::REF_SKIP => {
                    self.k += 1;
                    self.iref += n;
                    self.icig = -1;
                }
                cigar::INS | cigar::SOFT_CLIP => {
                    self.k += 1;
                    self.iseq += n;
                    self.icig = -1;
                }
                cigar::HARD_CLIP | cigar::PAD => {
                    self.k += 1;
                    self.icig = -1;
                }
                _ => return Err(Stop::BadOp),
            }
        }
        self.iseq = -1;
        self.iref = -1;
        Err(Stop::End)
    }

    /// Whether the op before the current one is a deletion (`cigar[-1] == BAM_CDEL`).
    fn after_deletion(&self) -> bool {
        self.k > 0 && cigar::op(self.ops[self.k - 1]) == cigar::DEL
    }
}

/// khash's `__ac_X31_hash_string` then `__ac_Wang_hash`: picks which mate keeps its qualities.
fn name_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for (i, &c) in name.iter().enumerate() {
        // C's `char` is signed here: bytes above 127 widen negative.
        let c = c as i8 as i32 as u32;
        h = if i == 0 { c } else { (h << 5).wrapping_sub(h).wrapping_add(c) };
    }
    crate::ops::collate::hash_wang(h)
}

/// A read's parts the tweak needs: its CIGAR, position, bases and where its qualities start.
struct Mate {
    ops: Vec<u32>,
    pos: i64,
    l_qseq: i64,
    qual_at: usize,
    seq_at: usize,
}

impl Mate {
    fn of(b: &[u8]) -> Mate {
        let r = RecordRef::new(b);
        let qual_at = r.aux_offset() - r.l_seq();
        Mate {
            ops: r.cigar().collect(),
            pos: r.pos(),
            l_qseq: r.l_seq() as i64,
            qual_at,
            seq_at: qual_at - r.l_seq().div_ceil(2),
        }
    }

    fn base(&self, b: &[u8], i: i64) -> u8 {
        let byte = b[self.seq_at + (i / 2) as usize];
        if i % 2 == 0 { byte >> 4 } else { byte & 0xf }
    }
}

/// Overlap failure (htslib's -1): a CIGAR the walk cannot follow.
#[derive(Debug)]
pub struct OverlapError;

/// `tweak_overlap_quality(a, b)`: `a` is the mate that started first, `b` the one just added.
pub fn tweak_overlap_quality(a: &mut [u8], b: &mut [u8]) -> Result<(), OverlapError> {
    let (ma, mb) = (Mate::of(a), Mate::of(b));
    let mut iref = mb.pos;
    let (mut wa, ra) = Walk::set(&ma.ops, iref - ma.pos);
    if let Err(e) = ra {
        return if e == Stop::BadOp { Err(OverlapError) } else { Ok(()) };
    }
    let (mut wb, rb) = Walk::set(&mb.ops, iref - mb.pos);
    if let Err(e) = rb {
        return if e == Stop::BadOp { Err(OverlapError) } else { Ok(()) };
    }
    let a_keeps = name_hash(RecordRef::new(a).read_name()) & 1 != 0;
    let (amul, bmul): (u8, u8) = if a_keeps { (1, 0) } else { (0, 1) };
    let done = |r: Result<(), Stop>| match r {
        Err(Stop::BadOp) => Err(OverlapError),
        _ => Ok(()),
    };
    let (mut a_ret, mut b_ret) = (Ok(()), Ok(()));
    loop {
        while a_ret.is_ok() && wa.iref >= 0 && wa.iref < iref - ma.pos {
            a_ret = wa.next();
        }
        if a_ret.is_err() {
            return done(a_ret);
        }
        while b_ret.is_ok() && wb.iref >= 0 && wb.iref < iref - mb.pos {
            b_ret = wb.next();
        }
        if b_ret.is_err() {
            return done(b_ret);
        }
        iref = iref.max(wa.iref + ma.pos).max(wb.iref + mb.pos) + 1;
        let (a_at, b_at) = (wa.iref + ma.pos, wb.iref + mb.pos);
        if a_at != b_at {
            // A deletion in one mate: the other catches up, its bases treated as mismatches.
            if a_at < b_at && wb.after_deletion() {
                loop {
                    let q = &mut a[ma.qual_at + wa.iseq as usize];
                    *q = if amul != 0 { (f64::from(*q) * 0.8) as u8 } else { 0 };
                    let r = wa.next();
                    if r.is_err() {
                        return done(r);
                    }
                    if wa.iref + ma.pos >= wb.iref + mb.pos {
                        break;
                    }
                }
            } else if wa.after_deletion() {
                loop {
                    let q = &mut b[mb.qual_at + wb.iseq as usize];
                    *q = if bmul != 0 { (f64::from(*q) * 0.8) as u8 } else { 0 };
                    let r = wb.next();
                    if r.is_err() {
                        return done(r);
                    }
                    if wb.iref + mb.pos >= wa.iref + ma.pos {
                        break;
                    }
                }
            } else {
                // A reference skip, which the tweak does not handle.
                continue;
            }
        }
        if wa.iseq > ma.l_qseq || wb.iseq > mb.l_qseq {
            return Err(OverlapError);
        }
        let (ia, ib) = (ma.qual_at + wa.iseq as usize, mb.qual_at + wb.iseq as usize);
        let (qa, qb) = (a[ia], b[ib]);
        if ma.base(a, wa.iseq) == mb.base(b, wb.iseq) {
            // Agreeing bases: one mate carries both qualities' sum.
            let sum = (i32::from(qa) + i32::from(qb)).min(200) as u8;
            a[ia] = amul * sum;
            b[ib] = bmul * sum;
        } else if qa > qb {
            a[ia] = (0.8 * f64::from(qa)) as u8;
            b[ib] = 0;
        } else if qa < qb {
            b[ib] = (0.8 * f64::from(qb)) as u8;
            a[ia] = 0;
        } else {
            a[ia] = (f64::from(amul) * 0.8 * f64::from(qa)) as u8;
            b[ib] = (f64::from(bmul) * 0.8 * f64::from(qb)) as u8;
        }
    }
}
