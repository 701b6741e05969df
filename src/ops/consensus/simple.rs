//! `-m simple`: the call is the base (or gap) with the most reads (or the most quality with
//! `-q`), two of them as an IUPAC code with `-A` when the second is close enough
//! (`calculate_consensus_simple` in samtools' bam_consensus.c).

use super::column_counts::{BaseCounts, QualWeight};
use super::pileup::PileupRead;

/// How much of each base an ambiguity code (BAM's 4-bit code) is: 8 for a pure base.
//                     * A C M  G R S V  T W Y H  K D B N
const TO_A: [u64; 16] = [0, 8, 0, 4, 0, 4, 0, 2, 0, 4, 0, 2, 0, 2, 0, 1];
const TO_C: [u64; 16] = [0, 0, 8, 4, 0, 0, 4, 2, 0, 0, 4, 2, 0, 0, 2, 1];
const TO_G: [u64; 16] = [0, 0, 0, 0, 8, 4, 4, 1, 0, 0, 0, 0, 4, 2, 2, 1];
const TO_T: [u64; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 8, 4, 4, 2, 8, 2, 2, 1];

/// The calls by bit set (A=1 C=2 G=4 T=8, 16 the gap); lower case where one is the gap.
const CALLS: &[u8; 32] = b"NACMGRSVTWYHKDBN*ac?g???t???????";

pub struct SimpleParams {
    pub min_qual: i32,
    pub use_qual: bool,
    pub ambig: bool,
    pub het_fract: f64,
    pub call_fract: f64,
    pub min_depth: i32,
}

/// The call and its quality (the percentage of the score it stands for).
pub fn call(reads: &[Box<PileupRead>], o: &SimpleParams) -> (u8, i32) {
    let weight = QualWeight { min_qual: o.min_qual, use_qual: o.use_qual };
    let mut counts = BaseCounts::default();
    for p in reads {
        counts.add(p.base4, p.qual, weight);
    }
    call_counted(&counts, o)
}

/// The call from the column's counts.
pub fn call_counted(counts: &BaseCounts, o: &SimpleParams) -> (u8, i32) {
    let mut score = [0u64; 17];
    for (b, &weight) in counts.weight[..16].iter().enumerate() {
        score[1] += TO_A[b] * weight;
        score[2] += TO_C[b] * weight;
        score[4] += TO_G[b] * weight;
        score[8] += TO_T[b] * weight;
    }
    score[16] = 8 * counts.weight[16];
    let tot_depth = counts.depth;
    let tscore: u64 = (0..5).map(|i| score[1 << i]).sum();
    let (mut call1, mut call2) = (15usize, 15usize);
    let (mut score1, mut score2) = (0u64, 0u64);
    for i in 0..5 {
        let c = 1 << i;
        if score1 < score[c] {
            score2 = score1;
            call2 = call1;
            score1 = score[c];
            call1 = c;
        } else if score2 < score[c] {
            score2 = score[c];
            call2 = c;
        }
    }
    let mut used_score = score1;
    let mut used_base = call1;
    if score2 as f64 >= o.het_fract * score1 as f64 && o.ambig {
        used_base |= call2;
        used_score += score2;
    }
    if tot_depth < o.min_depth.max(0) as u64 || (used_score as f64) < o.call_fract * tscore as f64 {
        // A shallow gap is still a gap: more likely than any base.
        used_base = if call1 == 16 { 16 } else { 0 };
    }
    // A column of reference skips alone scores 0 of 0: C's cast of that NaN is INT_MIN.
    let share = 100.0 * used_score as f64 / tscore as f64;
    let qual = if used_base != 0 { crate::ops::baq::probaln::c_int(share) } else { 0 };
    (CALLS[used_base], qual)
}
