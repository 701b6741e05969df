//! htslib's error model (`errmod.c`) as `bcf_call_init(0.83, 13)` sets it up for tview's
//! consensus: phred-scaled likelihoods of the 15 genotypes of 5 alleles from a column's bases.
//!
//! htslib fills a 32 MB `beta` table up front; here a row (one quality, one depth) is computed
//! the first time it is needed, with the same arithmetic.

use std::collections::HashMap;

/// htslib's `eta`.
const ETA: f64 = 0.03;
/// The table side: depths and counts below 256.
const SIDE: usize = 256;

pub struct ErrMod {
    fk: Vec<f64>,
    /// `logbinom[n<<8|k]`: log C(n, k) (0 for k = 0, as htslib leaves it).
    log_binom: Vec<f64>,
    /// `beta[q<<16|n<<8|k]` for k in 0..=n, by (q, n).
    beta: HashMap<(usize, usize), Vec<f64>>,
    /// glibc's `drand48` state: never seeded by samtools, so it starts at 0.
    drand48: u64,
}

/// ln(n!): htslib's `lgamma(n+1)`, summed (the values agree to about 1e-13).
fn log_factorials() -> Vec<f64> {
    let mut out = vec![0.0; SIDE];
    for n in 2..SIDE {
        out[n] = out[n - 1] + (n as f64).ln();
    }
    out
}

impl ErrMod {
    /// `errmod_init(1 - theta)`.
    pub fn new(theta: f64) -> ErrMod {
        let depcorr = 1.0 - theta;
        let mut fk = vec![1.0; SIDE];
        for (n, f) in fk.iter_mut().enumerate().skip(1) {
            *f = (1.0 - depcorr).powf(n as f64) * (1.0 - ETA) + ETA;
        }
        let lfact = log_factorials();
        let mut log_binom = vec![0.0; SIDE * SIDE];
        for n in 1..SIDE {
            for k in 1..=n {
                log_binom[n << 8 | k] = lfact[n] - lfact[k] - lfact[n - k];
            }
        }
        ErrMod { fk, log_binom, beta: HashMap::new(), drand48: 0 }
    }

    fn beta_row(&mut self, q: usize, n: usize) -> &[f64] {
        let lc = &self.log_binom;
        self.beta.entry((q, n)).or_insert_with(|| {
            let e = 10f64.powf(-(q as f64) / 10.0);
            let (le, le1) = (e.ln(), (1.0 - e).ln());
            let mut beta = vec![0.0; n + 1];
            beta[n] = f64::INFINITY;
            let mut sum1 = lc[n << 8 | n] + n as f64 * le;
            for k in (0..n).rev() {
                let sum = sum1
                    + (lc[n << 8 | k] + k as f64 * le + (n - k) as f64 * le1 - sum1).exp().ln_1p();
                beta[k] = -10.0 / std::f64::consts::LN_10 * (sum1 - sum);
                sum1 = sum;
            }
            beta
        })
    }

    fn lhet(&self, n: usize, k: usize) -> f64 {
        self.log_binom[n << 8 | k] - std::f64::consts::LN_2 * n as f64
    }

    /// glibc's `drand48()`.
    fn next_random(&mut self) -> f64 {
        self.drand48 =
            (self.drand48.wrapping_mul(0x5_DEEC_E66D).wrapping_add(0xB)) & ((1 << 48) - 1);
        self.drand48 as f64 / (1u64 << 48) as f64
    }

    /// `errmod_cal(em, n, 5, bases, q)`: `bases` are `qual<<5 | reverse<<4 | base`; the
    /// 5x5 likelihood matrix. Over 255 bases, htslib shuffles them and keeps 255.
    pub fn cal(&mut self, bases: &mut [u16]) -> [f32; 25] {
        const M: usize = 5;
        let mut q = [0f32; 25];
        let mut n = bases.len();
        if n == 0 {
            return q;
        }
        if n > 255 {
            for i in (2..=n).rev() {
                let j = (self.next_random() * i as f64) as usize;
                bases.swap(j, i - 1);
            }
            n = 255;
        }
        let bases = &mut bases[..n];
        bases.sort_unstable();
        let (mut fsum, mut bsum, mut c) = ([0f64; 16], [0f64; 16], [0usize; 16]);
        let mut w = [0usize; 32];
        for &b in bases.iter().rev() {
            let qual = ((b >> 5) as usize).clamp(4, 63);
            let (strand, base) = ((b & 0x1f) as usize, (b & 0xf) as usize);
            let fk = self.fk[w[strand]];
            let beta = self.beta_row(qual, n)[c[base]];
            fsum[base] += fk;
            bsum[base] += fk * beta;
            c[base] += 1;
            w[strand] += 1;
        }
        for j in 0..M {
            // Sums in float, as htslib's `tmp1`.
            let (mut tmp1, mut tmp2) = (0f32, 0usize);
            for k in (0..M).filter(|&k| k != j) {
                tmp1 = (f64::from(tmp1) + bsum[k]) as f32;
                tmp2 += c[k];
            }
            if tmp2 > 0 {
                q[j * M + j] = tmp1;
            }
            for k in j + 1..M {
                let cjk = c[j] + c[k];
                let (mut tmp1, mut tmp2) = (0f32, 0usize);
                for i in (0..M).filter(|&i| i != j && i != k) {
                    tmp1 = (f64::from(tmp1) + bsum[i]) as f32;
                    tmp2 += c[i];
                }
                let het = -4.343 * self.lhet(cjk, c[k]);
                let v = if tmp2 > 0 { (het + f64::from(tmp1)) as f32 } else { het as f32 };
                q[j * M + k] = v;
                q[k * M + j] = v;
            }
            for k in 0..M {
                if q[j * M + k] < 0.0 {
                    q[j * M + k] = 0.0;
                }
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drand48_starts_as_unseeded_glibc() {
        let mut e = ErrMod::new(0.83);
        // X1 = 0xB: glibc's first unseeded drand48() is 11 / 2^48.
        assert_eq!(e.next_random(), 11.0 / (1u64 << 48) as f64);
    }

    #[test]
    fn all_one_base_favours_its_homozygote() {
        let mut e = ErrMod::new(0.83);
        let mut bases: Vec<u16> = (0..10).map(|_| 30 << 5 | 2).collect();
        let q = e.cal(&mut bases);
        assert_eq!(q[2 * 5 + 2], 0.0);
        assert!(q[0] > 50.0 && q[2 * 5 + 3] > 10.0);
    }
}
