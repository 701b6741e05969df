//! The bayesian mode's sums over a column's reads: each read adds one log likelihood term to
//! each of the 15 hypotheses, the term chosen by its base. The sums stay in read order, as
//! samtools adds them, so every lane gives samtools' value to the last bit; with AVX-512 a read
//! costs two permutes and two vector additions instead of fifteen scalar ones.

/// One read's part in a column: its base (A C G T * N as 0..=5) and settled qualities.
#[derive(Clone, Copy)]
pub struct Vote {
    pub base: u32,
    pub qual: u32,
    pub qual2: u32,
}

/// Per quality, the log likelihoods a read's terms come from, in term order: `p_mm_big` and
/// `px_m` are taken at the base's quality, `po_m, pox, poo, puu, pum, pmm` at its
/// homopolymer-lowered one.
pub type TermRows = [[f64; 8]; 101];

/// Which of a read's terms (`mm_big, xm, om, ox, oo, uu, um, mm`, 8: none) each of the 15
/// hypotheses adds, by the read's base (A C G T * N): samtools' per-base additions as a table.
/// A sixteenth lane (no hypothesis, 8) makes each row the vector code's permute indices, where
/// index 8 takes the zero vector's first lane.
const TERMS_BY_BASE: [[i64; 16]; 6] = [
    [0, 1, 1, 1, 2, 8, 8, 8, 3, 8, 8, 3, 8, 3, 4, 8],
    [8, 1, 8, 8, 3, 0, 1, 1, 2, 8, 8, 3, 8, 3, 4, 8],
    [8, 8, 1, 8, 3, 8, 1, 8, 3, 0, 1, 2, 8, 3, 4, 8],
    [8, 8, 8, 1, 3, 8, 8, 1, 3, 8, 1, 3, 0, 2, 4, 8],
    [5, 5, 5, 5, 6, 5, 5, 5, 6, 5, 5, 6, 5, 6, 7, 8],
    [0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 2, 0, 2, 4, 8],
];

/// Adds every vote's terms to `s`, vote by vote.
pub fn add(votes: &[Vote], rows: &TermRows, pxx: &[f64; 101], s: &mut [f64; 15]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        #[allow(unsafe_code)] // calling a target_feature function
        // SAFETY: the CPU has AVX-512F (checked just above); the function indexes with checks.
        unsafe {
            avx512::add(votes, rows, pxx, s)
        };
        return;
    }
    add_scalar(votes, rows, pxx, s);
}

/// A vote's terms, each less `pxx` at its quality (as samtools subtracts it), and a zero.
fn terms(v: &Vote, rows: &TermRows, pxx: &[f64; 101]) -> [f64; 9] {
    let (q, q2) = (v.qual as usize, v.qual2 as usize);
    let xx = pxx[q];
    let (a, b) = (&rows[q], &rows[q2]);
    [a[0] - xx, a[1] - xx, b[2] - xx, b[3] - xx, b[4] - xx, b[5] - xx, b[6] - xx, b[7] - xx, 0.0]
}

/// [`add`] one lane at a time. Adding 0.0 where a base says nothing of a hypothesis changes
/// no sum, and spares a branch on the base.
fn add_scalar(votes: &[Vote], rows: &TermRows, pxx: &[f64; 101], s: &mut [f64; 15]) {
    for v in votes {
        let terms = terms(v, rows, pxx);
        for (sum, &term) in s.iter_mut().zip(&TERMS_BY_BASE[v.base as usize]) {
            *sum += terms[term as usize];
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)] // SIMD intrinsics
mod avx512 {
    use super::{TERMS_BY_BASE, TermRows, Vote};
    use std::arch::x86_64::*;

    /// [`super::add`] with the 15 sums in two vectors of eight (the sixteenth lane adds zeros).
    #[target_feature(enable = "avx512f")]
    pub(super) fn add(votes: &[Vote], rows: &TermRows, pxx: &[f64; 101], s: &mut [f64; 15]) {
        let zero = _mm512_setzero_pd();
        let mut wide = [0f64; 16];
        wide[..15].copy_from_slice(s);
        // SAFETY: loads of eight f64 from the 16-element array's halves.
        let (mut low, mut high) =
            unsafe { (_mm512_loadu_pd(wide.as_ptr()), _mm512_loadu_pd(wide[8..].as_ptr())) };
        for v in votes {
            let (q, q2) = (v.qual as usize, v.qual2 as usize);
            let (at_qual, at_qual2) = (&rows[q], &rows[q2]);
            let lanes = &TERMS_BY_BASE[v.base as usize];
            // SAFETY: loads of eight f64 from rows of eight, and of eight i64 from each half
            // of a row of sixteen.
            let (a, b, to_low, to_high) = unsafe {
                (
                    _mm512_loadu_pd(at_qual.as_ptr()),
                    _mm512_loadu_pd(at_qual2.as_ptr()),
                    _mm512_loadu_epi64(lanes.as_ptr()),
                    _mm512_loadu_epi64(lanes[8..].as_ptr()),
                )
            };
            // Lanes 0 and 1 at the base's quality, the rest at the lowered one.
            let row = _mm512_mask_blend_pd(0b0000_0011, b, a);
            let terms = _mm512_sub_pd(row, _mm512_set1_pd(pxx[q]));
            low = _mm512_add_pd(low, _mm512_permutex2var_pd(terms, to_low, zero));
            high = _mm512_add_pd(high, _mm512_permutex2var_pd(terms, to_high, zero));
        }
        // SAFETY: stores of eight f64 into the 16-element array's halves.
        unsafe {
            _mm512_storeu_pd(wide.as_mut_ptr(), low);
            _mm512_storeu_pd(wide[8..].as_mut_ptr(), high);
        }
        s.copy_from_slice(&wide[..15]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector sums equal the scalar ones bit for bit, on every base and many qualities.
    #[test]
    fn vector_and_scalar_sums_agree() {
        let mut rows = [[0f64; 8]; 101];
        let mut pxx = [0f64; 101];
        for q in 0..101 {
            for (k, v) in rows[q].iter_mut().enumerate() {
                *v = -((q * 8 + k) as f64).sqrt() / 7.0;
            }
            pxx[q] = -(q as f64 + 0.5).ln();
        }
        let votes: Vec<Vote> = (0..997u32)
            .map(|i| Vote { base: i % 6, qual: (i * 37) % 101, qual2: (i * 11) % 101 })
            .collect();
        let mut scalar = [0.25f64; 15];
        add_scalar(&votes, &rows, &pxx, &mut scalar);
        let mut any = [0.25f64; 15];
        add(&votes, &rows, &pxx, &mut any);
        assert_eq!(scalar.map(f64::to_bits), any.map(f64::to_bits));
        assert!(scalar.iter().all(|&v| v != 0.25), "every hypothesis took terms");
    }
}
