//! htslib's error model (`errmod.c`, Heng Li's MAQ model): phred-scaled likelihoods of the
//! diploid genotypes of one pileup column, from bases packed as `quality << 5 | strand << 4 |
//! base`. Errors on one strand are taken as dependent (`depcorr`). samtools' `targetcut` and
//! `phase` call it with 4 alleles, `tview`'s consensus (`bcf_call_glfgen`) with 5; the tables and
//! the float rounding are htslib's, so the calls agree bit for bit. htslib fills its 32 MB `beta`
//! table up front; here a row (one quality, one depth) is computed the first time it is needed,
//! with the same arithmetic.

use std::sync::OnceLock;

use super::drand48::Drand48;

/// Depth beyond which a column is down-sampled (the tables' size).
const MAX_DEPTH: usize = 255;

#[allow(unsafe_code)]
mod libm {
    unsafe extern "C" {
        /// The C library's `lgamma`: htslib's tables are built from it, and Rust's standard
        /// library has no stable log-gamma. Any other implementation may differ in the last
        /// bit, which can move a rounded genotype quality.
        #[link_name = "lgamma"]
        fn c_lgamma(x: f64) -> f64;
    }

    pub fn lgamma(x: f64) -> f64 {
        // SAFETY: lgamma takes a double and returns one; it only writes the C library's own
        // `signgam`, which nothing here reads.
        unsafe { c_lgamma(x) }
    }
}

/// `lfact(n)`: log(n!).
fn lfact(n: usize) -> f64 {
    libm::lgamma(n as f64 + 1.0)
}

/// `errmod_t`: the tables for one `depcorr` (and eta 0.03).
pub struct ErrorModel {
    /// `fk[n]`: the weight of the n-th base seen on a strand.
    fk: Vec<f64>,
    /// `lc[n << 8 | k]`: log C(n, k), 0 where k is 0 (`logbinomial_table(256)`).
    lc: Vec<f64>,
    /// `beta[q << 16 | n << 8 | k]` for k in 0..=n, by `q << 8 | n`, made when first needed.
    beta: Vec<OnceLock<Vec<f64>>>,
}

impl ErrorModel {
    /// `errmod_init(depcorr)`.
    pub fn new(depcorr: f64) -> Self {
        let eta = 0.03;
        let mut fk = vec![0.0; 256];
        fk[0] = 1.0;
        for (n, f) in fk.iter_mut().enumerate().skip(1) {
            *f = (1.0 - depcorr).powf(n as f64) * (1.0 - eta) + eta;
        }
        let mut lc = vec![0.0f64; 256 * 256];
        for n in 1..256 {
            let lfn = lfact(n);
            for k in 1..=n {
                lc[n << 8 | k] = lfn - lfact(k) - lfact(n - k);
            }
        }
        ErrorModel { fk, lc, beta: (0..64 * 256).map(|_| OnceLock::new()).collect() }
    }

    /// `beta[q << 16 | n << 8 | ..]`: the phred-scaled chance that k or more of `n` bases of
    /// quality `q` are errors.
    fn beta_row(&self, q: usize, n: usize) -> &[f64] {
        self.beta[q << 8 | n].get_or_init(|| {
            let lc = &self.lc;
            let e = 10.0f64.powf(-(q as f64) / 10.0);
            let (le, le1) = (e.ln(), (1.0 - e).ln());
            let mut row = vec![0.0; n + 1];
            row[n] = f64::INFINITY;
            let mut sum1 = lc[n << 8 | n] + n as f64 * le;
            for k in (0..n).rev() {
                let sum = sum1
                    + (lc[n << 8 | k] + k as f64 * le + (n - k) as f64 * le1 - sum1).exp().ln_1p();
                row[k] = -10.0 / std::f64::consts::LN_10 * (sum1 - sum);
                sum1 = sum;
            }
            row
        })
    }

    /// `lhet`: log of C(n, k) / 2^n.
    fn lhet(&self, n: usize, k: usize) -> f64 {
        self.lc[n << 8 | k] - std::f64::consts::LN_2 * n as f64
    }

    /// `errmod_cal(em, n, 4, bases, q)`: `q[i * 4 + j]`, the phred-scaled likelihood of genotype
    /// (i, j). Over 255 bases, `rng` shuffles them and the first 255 are kept, as htslib does;
    /// `bases` is left shuffled and sorted as htslib leaves it.
    pub fn likelihoods(&self, bases: &mut [u16], rng: &mut Drand48) -> [f32; 16] {
        let mut q = [0.0f32; 16];
        self.likelihoods_into(bases, rng, 4, &mut q);
        q
    }

    /// [`ErrorModel::likelihoods`] over `m` alleles (`errmod_cal(em, n, m, ..)`): `q` holds
    /// `m * m` values.
    pub fn likelihoods_into(&self, bases: &mut [u16], rng: &mut Drand48, m: usize, q: &mut [f32]) {
        q.fill(0.0);
        if bases.is_empty() {
            return;
        }
        let mut n = bases.len();
        if n > MAX_DEPTH {
            rng.shuffle(bases);
            n = MAX_DEPTH;
        }
        let bases = &mut bases[..n];
        bases.sort_unstable();
        let mut w = [0usize; 32];
        let mut bsum = [0.0f64; 16];
        let mut count = [0u32; 16];
        for &b in bases.iter().rev() {
            let qual = usize::from(b >> 5).clamp(4, 63);
            let strand_base = usize::from(b & 0x1f);
            let base = usize::from(b & 0xf);
            let fk = self.fk[w[strand_base]];
            bsum[base] += fk * self.beta_row(qual, n)[count[base] as usize];
            count[base] += 1;
            w[strand_base] += 1;
        }
        for j in 0..m {
            // The sums are C floats: each addition is rounded to f32.
            let (mut others, mut seen) = (0.0f32, 0u32);
            for k in (0..m).filter(|&k| k != j) {
                others = (f64::from(others) + bsum[k]) as f32;
                seen += count[k];
            }
            if seen != 0 {
                q[j * m + j] = others;
            }
            for k in j + 1..m {
                let cjk = (count[j] + count[k]) as usize;
                let (mut rest, mut rest_seen) = (0.0f32, 0u32);
                for i in (0..m).filter(|&i| i != j && i != k) {
                    rest = (f64::from(rest) + bsum[i]) as f32;
                    rest_seen += count[i];
                }
                let het = -4.343 * self.lhet(cjk, count[k] as usize);
                let v = if rest_seen != 0 { (het + f64::from(rest)) as f32 } else { het as f32 };
                q[j * m + k] = v;
                q[k * m + j] = v;
            }
            for v in &mut q[j * m..j * m + m] {
                if *v < 0.0 {
                    *v = 0.0;
                }
            }
        }
    }
}

/// `seq_nt16_int`: 4-bit base code to 0..=3 for A, C, G, T and 4 for anything else.
pub const NT16_INT: [u8; 16] = [4, 0, 1, 4, 2, 4, 4, 4, 3, 4, 4, 4, 4, 4, 4, 4];

/// The bases of a pileup column packed for [`ErrorModel::likelihoods`] into `bases` (cleared
/// first), as `targetcut` and `phase` gather them: deletions and reference skips left out, then
/// every base [`packed_base`] keeps.
pub fn packed_column(
    plp: &crate::ops::mpileup::pileup::Pileup,
    min_baseq: i32,
    bases: &mut Vec<u16>,
) {
    bases.clear();
    for e in plp.column.iter().filter(|e| !e.is_del && !e.is_refskip) {
        let r = crate::record::RecordRef::new(&plp.reads[e.read].rec);
        bases.extend(packed_base(&r, e.qpos as usize, min_baseq));
    }
}

/// One read's base at `qpos` packed for [`ErrorModel::likelihoods`], as `targetcut` and `phase`
/// pack it: its quality capped by the mapping quality and kept within 4..=63. `None` for a base
/// under `min_baseq` or not A, C, G or T, and past the read's bases (a read without a
/// sequence, `SEQ *`: samtools reads past its record there; mdsam takes the base as an N, as
/// its mpileup does).
pub fn packed_base(rec: &crate::record::RecordRef<'_>, qpos: usize, min_baseq: i32) -> Option<u16> {
    let base_q = *rec.qual().get(qpos)?;
    if i32::from(base_q) < min_baseq {
        return None;
    }
    let b = NT16_INT[usize::from(rec.base_code(qpos))];
    if b > 3 {
        return None;
    }
    let q = u16::from(base_q.min(rec.mapq())).clamp(4, 63);
    let reverse = u16::from(rec.flag() & crate::record::layout::flags::REVERSE != 0);
    Some(q << 5 | reverse << 4 | u16::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_base_everywhere_favours_its_homozygote() {
        let em = ErrorModel::new(1.0 - 0.83);
        let mut rng = Drand48::default();
        let mut bases: Vec<u16> = (0..10).map(|_| 30 << 5 | 2).collect();
        let mut q = [0f32; 25];
        em.likelihoods_into(&mut bases, &mut rng, 5, &mut q);
        assert_eq!(q[2 * 5 + 2], 0.0);
        assert!(q[0] > 50.0 && q[2 * 5 + 3] > 10.0);
        // Four alleles: the same values where the genotypes are the same.
        let q4 = em.likelihoods(&mut bases, &mut rng);
        assert_eq!((q4[2 * 4 + 2], q4[0], q4[2 * 4 + 3]), (q[2 * 5 + 2], q[0], q[2 * 5 + 3]));
    }
}
