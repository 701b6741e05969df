//! `samtools targetcut` (samtools 1.24 `cut_target.c`): each covered position gets a consensus
//! base and quality ([`column_consensus`]); a two-state HMM (outside / inside a target) decoded
//! by Viterbi splits each reference into target regions ([`segments`]), printed as SAM-like
//! lines of their consensus.

pub mod segments;

use crate::ops::drand48::Drand48;
use crate::ops::errmod::ErrorModel;

/// `ERR_DEP`: the error model's dependency between errors on one strand is 1 - 0.83.
pub const ERR_DEP: f64 = 0.83;

/// `score_param_t`: emission scores `e[state][class]` (class 0: no reads, 1: reads without a
/// confident base, 2: a consensus base) and transition scores `p[from][to]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreParams {
    pub e: [[i32; 3]; 2],
    pub p: [[i32; 2]; 2],
}

impl Default for ScoreParams {
    /// samtools' `g_param`.
    fn default() -> Self {
        ScoreParams { e: [[0, 0, 0], [-4, 1, 6]], p: [[0, -14000], [0, 0]] }
    }
}

/// `gencns`: one position's consensus from its packed bases, `quality << 10 | base << 8 |
/// depth` (depth capped at 255; quality the gap between the best and second-best homozygous
/// likelihood, capped at 63); 0 without bases.
pub fn column_consensus(em: &ErrorModel, bases: &mut [u16], rng: &mut Drand48) -> u16 {
    if bases.is_empty() {
        return 0;
    }
    let depth = bases.len().min(255) as u16;
    let q = em.likelihoods(bases, rng);
    // Each homozygous likelihood rounded, with its base in the low bits to break ties.
    let mut sum: [i32; 4] =
        std::array::from_fn(|i| ((f64::from(q[i << 2 | i]) + 0.499) as i32) << 2 | i as i32);
    sum.sort_unstable();
    let qual = (sum[1] >> 2) - (sum[0] >> 2);
    let packed = (qual.min(63) << 2 | (sum[0] & 3)) as u16;
    packed << 8 | depth
}
