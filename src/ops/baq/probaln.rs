//! htslib's `probaln_glocal` (`probaln.c`): banded glocal alignment of a read to a window of the
//! reference by a profile HMM (match, insertion and deletion states), forward and backward, then
//! for every read base the most probable state and its posterior error as a phred value.
//!
//! Everything is f64 in htslib's operation order (its optimised loops, not `PROBALN_ORIG`), and
//! the matrices are laid out as htslib lays them out (rows of `i_dim` values, zeroed as `calloc`
//! zeroes them), because a few reads at band edges run one row into the next: only then are the
//! qualities the same to the bit.

use std::cell::RefCell;
use std::sync::LazyLock;

/// Insertion emission probability.
const EI: f64 = 0.25;
/// Mismatch emission share (one of three other bases).
const EM: f64 = 0.33333333333;

/// `probaln_par_t`: gap open and extension probabilities and band width.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub d: f64,
    pub e: f64,
    pub bw: i32,
}

/// `g_qual2prob`: phred to error probability, stored as `float` as htslib stores it.
static QUAL_TO_PROB: LazyLock<[f32; 256]> = LazyLock::new(|| {
    let mut t = [0f32; 256];
    for (i, p) in t.iter_mut().enumerate() {
        *p = 10f64.powf(-(i as f64) / 10.) as f32;
    }
    t
});

/// The forward and backward matrices and scaling factors, kept per thread between reads.
#[derive(Default)]
struct Scratch {
    f: Vec<f64>,
    b: Vec<f64>,
    s: Vec<f64>,
    qual: Vec<f64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A vector of `n` zeros, reusing `v`'s allocation.
fn zeroed(v: &mut Vec<f64>, n: usize) {
    v.clear();
    v.resize(n, 0.);
}

/// `set_u`: where cell (`i`, `k`) of the band starts in row `i`.
#[inline(always)]
fn band_at(bw: i32, i: i32, k: i32) -> usize {
    let x = (i - bw).max(0);
    ((k - x + 1) * 3) as usize
}

/// C's `(int)x` on x86-64 (`cvttsd2si`): NaN and values out of range give `INT_MIN`.
pub fn c_int(x: f64) -> i32 {
    if x.is_nan() || x >= 2147483648. || x <= -2147483649. { i32::MIN } else { x as i32 }
}

/// The emission of read base `qy` against reference base `r`: `(ambiguous)*2 + (equal)`.
#[inline(always)]
fn emission_case(r: u8, qy: u8) -> usize {
    usize::from(r > 3 || qy > 3) * 2 + usize::from(r == qy)
}

/// Aligns `query` (codes 0..=4, 4 ambiguous) with base qualities `iqual` to `reference` (same
/// codes). For each read base, `state` gets `ref_pos << 2 | 0` (match) or `| 1` (insertion) and
/// `q` the phred probability that it is wrong. With an empty reference or read both are left as
/// they are (htslib returns early too). `None`: invalid lengths (htslib's `INT_MIN`).
pub fn probaln_glocal(
    reference: &[u8],
    query: &[u8],
    iqual: &[u8],
    c: &Params,
    state: &mut [i32],
    q: &mut [u8],
) -> Option<()> {
    let (l_ref, l_query) = (i32::try_from(reference.len()).ok()?, i32::try_from(query.len()).ok()?);
    if l_query >= i32::MAX - 2 {
        return None;
    }
    if l_ref == 0 || l_query == 0 {
        return Some(());
    }
    SCRATCH.with(|scratch| {
        let scratch = &mut *scratch.borrow_mut();
        run(reference, query, iqual, c, state, q, scratch);
    });
    Some(())
}

/// The transition matrix `m` (3×3, M/I/D) and the start/end probabilities.
struct Transitions {
    m: [f64; 9],
    s_m: f64,
    s_i: f64,
    b_m: f64,
    b_i: f64,
}

fn transitions(c: &Params, l_ref: i32, l_query: i32) -> Transitions {
    let s_m = 1. / f64::from(2 * l_query + 2);
    let s_i = s_m;
    let mut m = [0f64; 9];
    m[0] = (1. - c.d - c.d) * (1. - s_m);
    m[1] = c.d * (1. - s_m);
    m[2] = m[1];
    m[3] = (1. - c.e) * (1. - s_i);
    m[4] = c.e * (1. - s_i);
    m[5] = 0.;
    m[6] = 1. - c.e;
    m[7] = 0.;
    m[8] = c.e;
    let b_m = (1. - c.d) / f64::from(l_ref);
    let b_i = c.d / f64::from(l_ref);
    Transitions { m, s_m, s_i, b_m, b_i }
}

/// The band of row `i`: `beg..=end` (1-based reference positions).
#[inline(always)]
fn band(i: i32, bw: i32, l_ref: i32) -> (i32, i32) {
    ((i - bw).max(1), (i + bw).min(l_ref))
}

fn run(
    reference: &[u8],
    query: &[u8],
    iqual: &[u8],
    c: &Params,
    state: &mut [i32],
    q: &mut [u8],
    scratch: &mut Scratch,
) {
    let (l_ref, l_query) = (reference.len() as i32, query.len() as i32);
    let lq = l_query as usize;
    let mut bw = l_ref.max(l_query).min(c.bw);
    bw = bw.max((l_ref - l_query).abs());
    let bw2 = bw * 2 + 1;
    let i_dim = if bw2 < l_ref { bw2 as usize * 3 + 6 } else { l_ref as usize * 3 + 6 };
    let Scratch { f, b, s, qual } = scratch;
    zeroed(f, (lq + 1) * i_dim);
    zeroed(b, (lq + 1) * i_dim);
    zeroed(s, lq + 2);
    qual.clear();
    qual.extend(iqual[..lq].iter().map(|&v| f64::from(QUAL_TO_PROB[v as usize])));
    let t = transitions(c, l_ref, l_query);
    forward(reference, query, qual, &t, bw, i_dim, f, s);
    backward(reference, query, qual, &t, bw, i_dim, b, s);
    posterior(l_ref, lq, bw, i_dim, f, b, s, state, q);
}

/// Fills `f` and the scaling factors `s[0..=l_query+1]`.
#[allow(clippy::too_many_arguments)]
fn forward(
    reference: &[u8],
    query: &[u8],
    qual: &[f64],
    t: &Transitions,
    bw: i32,
    i_dim: usize,
    f: &mut [f64],
    s: &mut [f64],
) {
    let (l_ref, l_query) = (reference.len() as i32, query.len() as i32);
    let m = &t.m;
    f[band_at(bw, 0, 0)] = 1.;
    s[0] = 1.;
    {
        let mut sum = 0.;
        for k in 1..=l_ref.min(bw + 1) {
            let e = first_emission(reference[k as usize - 1], query[0], qual[0]);
            let u = i_dim + band_at(bw, 1, k);
            f[u] = e * t.b_m;
            f[u + 1] = EI * t.b_i;
            sum += f[u] + f[u + 1];
        }
        s[1] = sum;
    }
    for i in 2..=l_query {
        let qli = qual[i as usize - 1];
        let qyi = query[i as usize - 1];
        let (beg, end) = band(i, bw, l_ref);
        let emit = [qli * EM, 1. - qli, 1., 1.];
        let mm = 1. / s[i as usize - 1];
        let xm = [mm * m[0], mm * m[3], mm * m[6], EI * mm * m[1], EI * mm * m[4]];
        let row = i as usize * i_dim;
        let mut xi = row + band_at(bw, i, beg);
        let mut yi = row - i_dim + band_at(bw, i - 1, beg - 1);
        let mut l_x0 = m[2] * f[xi];
        let mut l_x2 = m[8] * f[xi + 2];
        let mut sum = 0.;
        for k in beg..=end {
            let cond = emission_case(reference[k as usize - 1], qyi);
            let z0 = xm[0] * f[yi];
            let z1 = xm[1] * f[yi + 1];
            let z2 = xm[2] * f[yi + 2];
            let z3 = xm[3] * f[yi + 3];
            let z4 = xm[4] * f[yi + 4];
            let x0 = emit[cond] * (z0 + z1 + z2);
            let x1 = z3 + z4;
            let x2 = l_x0 + l_x2;
            f[xi] = x0;
            f[xi + 1] = x1;
            f[xi + 2] = x2;
            sum += x0 + x1 + x2;
            l_x0 = m[2] * x0;
            l_x2 = m[8] * x2;
            xi += 3;
            yi += 3;
        }
        s[i as usize] = sum;
    }
    let lq = l_query as usize;
    let mm = 1. / s[lq];
    let mut sum = 0.;
    for k in 1..=l_ref {
        let u = band_at(bw, l_query, k);
        if u < 3 || u >= i_dim {
            continue;
        }
        sum += mm * f[lq * i_dim + u] * t.s_m + mm * f[lq * i_dim + u + 1] * t.s_i;
    }
    s[lq + 1] = sum;
}

/// The emission of the first read base (htslib's `f[1]` and `b[0]` rows).
#[inline(always)]
fn first_emission(r: u8, qy: u8, qual: f64) -> f64 {
    if r > 3 || qy > 3 {
        1.
    } else if r == qy {
        1. - qual
    } else {
        qual * EM
    }
}

/// Fills `b` from row `l_query` down to row 1 (htslib's `b[0]` is never read by its callers).
#[allow(clippy::too_many_arguments)]
fn backward(
    reference: &[u8],
    query: &[u8],
    qual: &[f64],
    t: &Transitions,
    bw: i32,
    i_dim: usize,
    b: &mut [f64],
    s: &[f64],
) {
    let (l_ref, l_query) = (reference.len() as i32, query.len() as i32);
    let lq = l_query as usize;
    let m = &t.m;
    for k in 1..=l_ref {
        let u = band_at(bw, l_query, k);
        if u < 3 || u >= i_dim {
            continue;
        }
        b[lq * i_dim + u] = t.s_m / s[lq] / s[lq + 1];
        b[lq * i_dim + u + 1] = t.s_i / s[lq] / s[lq + 1];
    }
    let (e1, e4) = (EI * m[1], EI * m[4]);
    for i in (1..l_query).rev() {
        let (beg, end) = band(i, bw, l_ref);
        let y = if i > 1 { 1. } else { 0. };
        let qli1 = qual[i as usize];
        let qyi1 = query[i as usize];
        let emit = [qli1 * EM, 1. - qli1, 1., 1.];
        let row = i as usize * i_dim;
        let mut xi = row + band_at(bw, i, end);
        let mut yi = row + i_dim + band_at(bw, i + 1, end);
        // b[xi + 5] is the cell to the right (v01 + 2), computed one step before.
        let mut xi_5 = b[xi + 5];
        let n = 1. / s[i as usize];
        for k in (beg..=end).rev() {
            let e = if k >= l_ref {
                0.
            } else {
                emit[emission_case(reference[k as usize], qyi1)] * b[yi + 3]
            };
            let x1 = e * m[3] + e4 * b[yi + 1];
            let x0 = e * m[0] + e1 * b[yi + 1] + m[2] * xi_5;
            let x2 = (e * m[6] + m[8] * xi_5) * y;
            xi_5 = x2;
            b[xi + 1] = x1 * n;
            b[xi] = x0 * n;
            b[xi + 2] = x2 * n;
            xi -= 3;
            yi -= 3;
        }
    }
}

/// The MAP state of each read base and its error probability.
#[allow(clippy::too_many_arguments)]
fn posterior(
    l_ref: i32,
    lq: usize,
    bw: i32,
    i_dim: usize,
    f: &[f64],
    b: &[f64],
    s: &[f64],
    state: &mut [i32],
    q: &mut [u8],
) {
    for i in 1..=lq as i32 {
        let (beg, end) = band(i, bw, l_ref);
        let row = i as usize * i_dim;
        let mm = 1. / s[i as usize];
        let (mut sum, mut max, mut max_k) = (0f64, 0f64, -1i32);
        let mut u = row + band_at(bw, i, beg);
        for k in beg..=end {
            let z1 = mm * f[u] * b[u];
            let z2 = mm * f[u + 1] * b[u + 1];
            let which = z2 > z1;
            let zm = if which { z2 } else { z1 };
            if zm > max {
                max = zm;
                max_k = (k - 1) << 2 | i32::from(which);
            }
            sum += z1 + z2;
            u += 3;
        }
        max /= sum;
        state[i as usize - 1] = max_k;
        let k = c_int(-4.343 * (1. - max).ln() + 0.499);
        q[i as usize - 1] = if k > 100 { 99 } else { k as u8 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_match_is_confident_and_a_gap_is_found() {
        let reference = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0];
        let query = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 3, 2, 1, 0];
        let par = Params { d: 0.001, e: 0.1, bw: 7 };
        let (mut state, mut q) = (vec![0; 16], vec![0; 16]);
        probaln_glocal(&reference, &query, &[30; 16], &par, &mut state, &mut q).unwrap();
        assert_eq!(state, (0..16).map(|k| k << 2).collect::<Vec<_>>());
        assert!(q.iter().all(|&v| v > 20), "{q:?}");
    }

    #[test]
    fn c_int_is_x86_truncation() {
        assert_eq!(
            (c_int(2.9), c_int(-2.9), c_int(f64::INFINITY), c_int(f64::NAN)),
            (2, -2, i32::MIN, i32::MIN)
        );
    }
}
