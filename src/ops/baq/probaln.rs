//! htslib's `probaln_glocal` (`probaln.c`): banded glocal alignment of a read to a window of the
//! reference by a profile HMM (match, insertion and deletion states), forward and backward, then
//! for every read base the most probable state and its posterior error as a phred value.
//!
//! Everything is f64 in htslib's operation order (its optimised loops, not `PROBALN_ORIG`), and
//! the matrices are laid out as htslib lays them out (rows of `i_dim / 3` cells, zeroed as `calloc`
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

/// One cell of a matrix row: the match, insertion and deletion values.
type Cell = [f64; 3];

/// The forward and backward matrices and scaling factors, kept per thread between reads.
#[derive(Default)]
struct Scratch {
    f: Vec<Cell>,
    b: Vec<Cell>,
    s: Vec<f64>,
    qual: Vec<f64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A vector of `n` zeros, reusing `v`'s allocation (htslib's `calloc`).
fn zeroed<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    v.clear();
    v.resize(n, T::default());
}

/// htslib's `set_u` over 3: which cell of row `i` holds reference position `k`.
#[inline(always)]
fn cell_at(bw: i32, i: i32, k: i32) -> usize {
    let x = (i - bw).max(0);
    (k - x + 1) as usize
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

/// The sizes of one alignment: band width and cells per matrix row (htslib's `i_dim / 3`).
#[derive(Clone, Copy)]
struct Shape {
    bw: i32,
    width: usize,
    l_ref: i32,
    l_query: i32,
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
    let width = if bw2 < l_ref { bw2 as usize + 2 } else { l_ref as usize + 2 };
    let shape = Shape { bw, width, l_ref, l_query };
    let Scratch { f, b, s, qual } = scratch;
    zeroed(f, (lq + 1) * width);
    // One spare cell: where the band reaches the reference's end, the row below is read one cell
    // past its last (a value htslib reads past its buffer and never uses, as the emission there is
    // 0); without it a short reference window panics.
    zeroed(b, (lq + 1) * width + 1);
    zeroed(s, lq + 2);
    qual.clear();
    qual.extend(iqual[..lq].iter().map(|&v| f64::from(QUAL_TO_PROB[v as usize])));
    let t = transitions(c, l_ref, l_query);
    forward(reference, query, qual, &t, shape, f, s);
    backward(reference, query, qual, &t, shape, b, s);
    posterior(shape, f, b, s, state, q);
}

/// Fills `f` and the scaling factors `s[0..=l_query+1]`.
fn forward(
    reference: &[u8],
    query: &[u8],
    qual: &[f64],
    t: &Transitions,
    shape: Shape,
    f: &mut [Cell],
    s: &mut [f64],
) {
    let Shape { bw, width, l_ref, l_query } = shape;
    let m = &t.m;
    f[cell_at(bw, 0, 0)][0] = 1.;
    s[0] = 1.;
    {
        let mut sum = 0.;
        for k in 1..=l_ref.min(bw + 1) {
            let e = first_emission(reference[k as usize - 1], query[0], qual[0]);
            let c = &mut f[width + cell_at(bw, 1, k)];
            c[0] = e * t.b_m;
            c[1] = EI * t.b_i;
            sum += c[0] + c[1];
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
        let row = i as usize * width;
        let n = (end - beg + 1) as usize;
        let (before, after) = f.split_at_mut(row);
        // Row i's cells beg..=end; row i-1's beg-1..=end (each k reads cells k-1 and k).
        let c = cell_at(bw, i, beg);
        let cur = &mut after[c..c + n];
        let p = row - width + cell_at(bw, i - 1, beg - 1);
        let prev = &before[p..p + n + 1];
        let refs = &reference[beg as usize - 1..end as usize];
        let mut l_x0 = m[2] * cur[0][0];
        let mut l_x2 = m[8] * cur[0][2];
        let mut sum = 0.;
        for ((x, (y, y_next)), &r) in cur.iter_mut().zip(prev.iter().zip(&prev[1..])).zip(refs) {
            let z0 = xm[0] * y[0];
            let z1 = xm[1] * y[1];
            let z2 = xm[2] * y[2];
            let z3 = xm[3] * y_next[0];
            let z4 = xm[4] * y_next[1];
            let x0 = emit[emission_case(r, qyi)] * (z0 + z1 + z2);
            let x1 = z3 + z4;
            let x2 = l_x0 + l_x2;
            *x = [x0, x1, x2];
            sum += x0 + x1 + x2;
            l_x0 = m[2] * x0;
            l_x2 = m[8] * x2;
        }
        s[i as usize] = sum;
    }
    let lq = l_query as usize;
    let mm = 1. / s[lq];
    let mut sum = 0.;
    for k in 1..=l_ref {
        let c = cell_at(bw, l_query, k);
        if c < 1 || c >= width {
            continue;
        }
        let cell = &f[lq * width + c];
        sum += mm * cell[0] * t.s_m + mm * cell[1] * t.s_i;
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
fn backward(
    reference: &[u8],
    query: &[u8],
    qual: &[f64],
    t: &Transitions,
    shape: Shape,
    b: &mut [Cell],
    s: &[f64],
) {
    let Shape { bw, width, l_ref, l_query } = shape;
    let lq = l_query as usize;
    let m = &t.m;
    for k in 1..=l_ref {
        let c = cell_at(bw, l_query, k);
        if c < 1 || c >= width {
            continue;
        }
        let cell = &mut b[lq * width + c];
        cell[0] = t.s_m / s[lq] / s[lq + 1];
        cell[1] = t.s_i / s[lq] / s[lq + 1];
    }
    let (e1, e4) = (EI * m[1], EI * m[4]);
    for i in (1..l_query).rev() {
        let (beg, end) = band(i, bw, l_ref);
        let y_flag = if i > 1 { 1. } else { 0. };
        let qli1 = qual[i as usize];
        let qyi1 = query[i as usize];
        let emit = [qli1 * EM, 1. - qli1, 1., 1.];
        let row = i as usize * width;
        let n = (end - beg + 1) as usize;
        // The deletion value right of the band's last cell: zero, or where the band reaches the
        // row's end, the next row's first cell, which htslib reads the same way.
        let mut right_d = b[row + cell_at(bw, i, end) + 1][2];
        let (this, next) = b.split_at_mut(row + width);
        // Row i's cells beg..=end; row i+1's beg..=end+1 (each k reads cells k and k+1).
        let c = row + cell_at(bw, i, beg);
        let cur = &mut this[c..c + n];
        let v = cell_at(bw, i + 1, beg);
        let below = &next[v..v + n + 1];
        let n_inv = 1. / s[i as usize];
        let cells = cur.iter_mut().zip(below.iter().zip(&below[1..]));
        for (k, (x, (y, y_next))) in (beg..=end).rev().zip(cells.rev()) {
            let e = if k >= l_ref {
                0.
            } else {
                emit[emission_case(reference[k as usize], qyi1)] * y_next[0]
            };
            let x1 = e * m[3] + e4 * y[1];
            let x0 = e * m[0] + e1 * y[1] + m[2] * right_d;
            let x2 = (e * m[6] + m[8] * right_d) * y_flag;
            right_d = x2;
            *x = [x0 * n_inv, x1 * n_inv, x2 * n_inv];
        }
    }
}

/// The MAP state of each read base and its error probability.
fn posterior(shape: Shape, f: &[Cell], b: &[Cell], s: &[f64], state: &mut [i32], q: &mut [u8]) {
    let Shape { bw, width, l_ref, l_query } = shape;
    for i in 1..=l_query {
        let (beg, end) = band(i, bw, l_ref);
        let mm = 1. / s[i as usize];
        let (mut sum, mut max, mut max_k) = (0f64, 0f64, -1i32);
        let c = i as usize * width + cell_at(bw, i, beg);
        let n = (end - beg + 1) as usize;
        for (k, (fc, bc)) in (beg..=end).zip(f[c..c + n].iter().zip(&b[c..c + n])) {
            let z1 = mm * fc[0] * bc[0];
            let z2 = mm * fc[1] * bc[1];
            let which = z2 > z1;
            let zm = if which { z2 } else { z1 };
            if zm > max {
                max = zm;
                max_k = (k - 1) << 2 | i32::from(which);
            }
            sum += z1 + z2;
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
