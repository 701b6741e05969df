//! The bayesian mode's per-read preparation (`nm_init` and `homopoly_qual_fix` in samtools'
//! bam_consensus.c): a local score per query position from quality dips, soft clips and MD
//! mismatches nearby (it lowers the mapping quality used for that base), and each base's
//! homopolymer length.

use super::bayes::fast_log2;
use super::pileup::PileupRead;
use super::{Mode, Options};

/// Per query position: low 24 bits the local edit score, high bits the homopolymer length.
pub type ReadScores = Vec<i32>;

fn seqi(seq: &[u8], i: usize) -> u8 {
    if i & 1 == 0 { seq[i / 2] >> 4 } else { seq[i / 2] & 0xf }
}

/// `seq_init` of the bayesian mode: whether the read joins the pileup; its scores attached.
pub fn init_read(o: &Options, p: &mut PileupRead) -> bool {
    if o.mode == Mode::Simple || !o.use_mqual {
        return true;
    }
    let qlen = p.l_qseq as usize;
    if qlen == 0 {
        return false;
    }
    let mut nm: ReadScores = std::mem::take(&mut p.spare_scores);
    nm.clear();
    nm.resize(qlen, 0);
    // The read's own bytes, borrowed (copying seq and qual per read was a third of this
    // function's time); the qualities are rewritten in place after the dips read them.
    if o.adj_qual {
        let r = p.record();
        local_quality_dips(o, r.seq_packed(), r.qual(), &mut nm);
    }
    if o.homopoly_fix != 0.0 {
        let seq = p.record().seq_packed().to_vec();
        homopoly_qual_fix(&seq, p.quals_mut());
    }
    let r = p.record();
    homopolymer_lengths(r.seq_packed(), &mut nm);
    if let Some(md) = r.aux_get(*b"MD") {
        let md = if md.ty == b'Z' { md.value } else { &[][..] };
        edits_nearby(o, p.cigar(), md, &mut nm);
    }
    p.extra = Some(nm);
    true
}

/// Each base's homopolymer length (the run's length less one, at most 100) into the high bits.
fn homopolymer_lengths(seq: &[u8], nm: &mut [i32]) {
    let qlen = nm.len();
    let mut set_run = |from: usize, to: usize| {
        let poly = ((to - from - 1) as i32).min(100);
        for v in &mut nm[from..to] {
            *v = (poly.max(*v >> 24) << 24) | (*v & ((1 << 24) - 1));
        }
    };
    // The bases as a stream of codes, two a byte: a lookup with a parity test per base was a
    // tenth of the read's preparation.
    let mut bases = seq.iter().flat_map(|&b| [b >> 4, b & 0xf]).take(qlen).enumerate();
    let Some((_, mut run_base)) = bases.next() else { return };
    let mut run_start = 0;
    for (i, base) in bases {
        if base != run_base {
            set_run(run_start, i);
            run_start = i;
            run_base = base;
        }
    }
    set_run(run_start, qlen);
}

/// `adj_qual`: a base of higher quality than the low ones around it scores the difference.
fn local_quality_dips(o: &Options, seq: &[u8], qual: &[u8], nm: &mut [i32]) {
    if o.mode != Mode::Bayes116 && o.homopoly_fix == 0.0 {
        dips_after_previous(seq, qual, nm);
    } else {
        dips_in_windows(o, seq, qual, nm);
    }
}

/// [`local_quality_dips`] as samtools writes it, for every model and option.
fn dips_in_windows(o: &Options, seq: &[u8], qual: &[u8], nm: &mut [i32]) {
    let qlen = qual.len() as i64;
    let q = |i: i64| i32::from(qual[i as usize]);
    let s = |i: i64| seqi(seq, i as usize);
    const QHALO: i64 = 8;
    const QHALOP: i64 = 2;
    let poly_adj = if o.homopoly_fix != 0.0 { o.homopoly_fix } else { 1.0 };
    let bayes116 = o.mode == Mode::Bayes116;
    let mut qmin = q(0);
    let mut qminp = q(0);
    let mut base = s(0);
    let mut polyl = 0i64;
    let mut polyr;
    let mut i = 1;
    while i < qlen {
        if s(i) != base {
            break;
        }
        if i < QHALOP && qminp > q(i) {
            qminp = q(i);
        }
        i += 1;
    }
    i = 0;
    while i < qlen && i < QHALO {
        qmin = qmin.min(q(i));
        i += 1;
    }
    while i < qlen - QHALO {
        if o.homopoly_fix != 0.0 && s(i) != base {
            polyl = i;
            base = s(i);
            qminp = q(i);
            let mut j = i + 1;
            while j < qlen {
                if s(j) != base {
                    break;
                }
                if i < QHALOP && qminp > q(j) {
                    qminp = q(j);
                }
                j += 1;
            }
            polyr = j - 1;
        } else {
            polyr = polyl;
        }
        let pl = polyr - polyl;
        let t = if bayes116 {
            (q(i) + 5 * qmin) / 4
        } else if poly_adj == 1.0 {
            // Without the homopolymer fix the product is exact, and so is the sum of two
            // small integers: the same value without the conversions.
            q(i) / 3 + (qminp - pl as i32 * 2)
        } else {
            (f64::from(q(i) / 3) + f64::from(qminp - pl as i32 * 2) * poly_adj) as i32
        };
        nm[i as usize] += if t < q(i) { q(i) - t } else { 0 };
        qminp = q(i);
        let (from, to) = (polyl.max(i - QHALOP), polyr.min(i + QHALOP));
        if from <= to {
            qminp = qminp.min(window_min(qual, from, to));
        }
        // Only samtools 1.16's model reads the window's minimum: the others skip keeping it
        // (rescanning the window each time its minimum left was a third of this function).
        if bayes116 {
            if qmin > q(i + QHALO) {
                qmin = q(i + QHALO);
            } else if qmin <= q(i - QHALO) {
                // The window's minimum over slices: an inclusive range's loop with a lookup
                // each step was most of this function's time.
                qmin = window_min(qual, i - QHALO + 1, i + QHALO).min(99);
            }
        }
        i += 1;
    }
    while i < qlen {
        let t = if bayes116 {
            (q(i) + 5 * qmin) / 4
        } else {
            (f64::from(q(i) / 3) + f64::from(qminp) * poly_adj) as i32
        };
        nm[i as usize] += if t < q(i) { q(i) - t } else { 0 };
        i += 1;
    }
}

/// [`local_quality_dips`] of the default models without the homopolymer fix, where it reduces
/// to a comparison with the base before: past the first 8 bases each one scores what its
/// quality exceeds a third of itself plus its predecessor's; the last 8 compare with the base
/// 9 from the end; the first of the middle (or, in a read under 16 bases, all past the eighth)
/// with the lower quality of the read's first two bases if they are the same base, else the first.
/// A loop over slices, without the general loop's branches, so the compiler vectorises it.
fn dips_after_previous(seq: &[u8], qual: &[u8], nm: &mut [i32]) {
    let qlen = qual.len();
    let mut first = qual[0];
    if qlen > 1 && seqi(seq, 1) == seqi(seq, 0) {
        first = first.min(qual[1]);
    }
    let dip = |q: u8, before: u8| {
        let (q, before) = (i32::from(q), i32::from(before));
        let t = q / 3 + before;
        if t < q { q - t } else { 0 }
    };
    let start = qlen.min(8);
    let end = qlen.saturating_sub(8).max(start);
    let mut last = first;
    if start < end {
        nm[start] += dip(qual[start], first);
        let middle = nm[start + 1..end].iter_mut().zip(&qual[start + 1..end]);
        for ((v, &q), &before) in middle.zip(&qual[start..end - 1]) {
            *v += dip(q, before);
        }
        last = qual[end - 1];
    }
    for (v, &q) in nm[end..].iter_mut().zip(&qual[end..]) {
        *v += dip(q, last);
    }
}

/// The lowest quality in `qual[from..=to]` (non-empty).
#[inline]
fn window_min(qual: &[u8], from: i64, to: i64) -> i32 {
    let window = &qual[from as usize..=to as usize];
    i32::from(window.iter().copied().min().unwrap_or(u8::MAX))
}

/// `homopoly_qual_fix`: within a homopolymer the outermost pairs of qualities are averaged
/// (as error probabilities), so neither end is the low one.
fn homopoly_qual_fix(seq: &[u8], qual: &mut [u8]) {
    let n = qual.len();
    let err = |q: u8| 10f64.powf(f64::from(q) / -10.0);
    let mut i = 0;
    while i < n {
        let s = i;
        let base = seqi(seq, i);
        while i + 1 < n && seqi(seq, i + 1) == base {
            i += 1;
        }
        if s != i {
            let (mut j, mut k) = (s, i);
            while j < k {
                let e = err(qual[j]) + err(qual[k]);
                let v = (-fast_log2(e / 2.0) * 3.0104 + 0.49) as i32 as u8;
                qual[j] = v;
                qual[k] = v;
                j += 1;
                k -= 1;
            }
        }
        i += 1;
    }
}

/// Soft clips and MD mismatches raise the score of the positions within `--NM-halo`.
fn edits_nearby(o: &Options, cigar: &[u32], md: &[u8], nm: &mut [i32]) {
    let qlen = nm.len() as i64;
    let halo = i64::from(o.nm_halo);
    let op = |i: usize| cigar[i] & 0xf;
    let n = cigar.len();
    let (soft, hard) = (4, 5);
    if n > 0 && (op(0) == soft || (op(0) == hard && n > 1 && op(1) == soft)) {
        let mut i = 0;
        while i < halo && i < qlen {
            nm[i as usize] += o.sc_cost;
            i += 1;
        }
        while i < halo * 2 && i < qlen {
            nm[i as usize] += o.sc_cost >> 1;
            i += 1;
        }
    }
    if n > 0 && (op(n - 1) == soft || (op(n - 1) == hard && n > 1 && op(n - 2) == soft)) {
        let mut i = qlen - 1;
        while i >= qlen - halo && i >= 0 {
            nm[i as usize] += o.sc_cost;
            i -= 1;
        }
        while i >= qlen - halo * 2 && i >= 0 {
            nm[i as usize] += o.sc_cost >> 1;
            i -= 1;
        }
    }
    let mut pos: i64 = 0;
    let mut at = 0;
    while at < md.len() {
        if md[at].is_ascii_digit() {
            let start = at;
            while at < md.len() && md[at].is_ascii_digit() {
                at += 1;
            }
            let digits = std::str::from_utf8(&md[start..at]).unwrap_or("0");
            pos += digits.parse::<i64>().unwrap_or(i64::MAX);
            continue;
        }
        if md[at] == b'^' {
            at += 1;
            while at < md.len() && !md[at].is_ascii_digit() {
                at += 1;
            }
            continue;
        }
        let mut i = (pos - halo * 2).max(0);
        while i < pos - halo && i < qlen {
            nm[i as usize] += 5;
            i += 1;
        }
        while i < pos + halo && i < qlen {
            nm[i as usize] += 10;
            i += 1;
        }
        while i < pos + halo * 2 && i < qlen {
            nm[i as usize] += 5;
            i += 1;
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut gives what the general loop gives, on reads of every length around its
    /// bounds (under 8, 8 to 16, longer), with runs of one base and random qualities.
    #[test]
    fn dips_after_previous_matches_the_general_loop() {
        let o = Options::default();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for qlen in 1..60usize {
            for _ in 0..50 {
                let codes: Vec<u8> =
                    (0..qlen).map(|_| [1, 2, 4, 8][(next() % 4) as usize]).collect();
                let seq: Vec<u8> =
                    codes.chunks(2).map(|c| c[0] << 4 | c.get(1).unwrap_or(&0)).collect();
                let qual: Vec<u8> = (0..qlen).map(|_| (next() % 42) as u8).collect();
                let (mut fast, mut general) = (vec![3; qlen], vec![3; qlen]);
                dips_after_previous(&seq, &qual, &mut fast);
                dips_in_windows(&o, &seq, &qual, &mut general);
                assert_eq!(fast, general, "qlen {qlen}, qual {qual:?}, codes {codes:?}");
            }
        }
    }
}
