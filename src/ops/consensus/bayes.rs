//! The default bayesian mode (`calculate_consensus_gap5` and `gap5m` in samtools'
//! bam_consensus.c, from Gap5): each read's base adds log likelihoods to the 15 hypotheses
//! (AA, AC, ..., TT, A*, ..., **) and the most likely pure and heterozygous calls win, with
//! phred-scaled confidences.

use super::calibration::Calibration;
use super::emit::BaseCaller;
use super::pileup::PileupRead;
use super::tables::{MQUAL_POW_1M, Q2P};
use super::vote_sums::{self, TermRows, Vote};
use super::{Mode, Options};

const TENLOG2OVERLOG10: f64 = 3.0103;

/// samtools' `cons_probs`: priors and per-quality log likelihoods.
pub struct ConsProbs {
    lprior15: [f64; 15],
    pxx: [f64; 101],
    /// `p_mm_big, px_m, po_m, pox, poo, puu, pum, pmm` by quality, in [`vote_sums`]' term order.
    rows: TermRows,
    poly_mul: f64,
}

/// The per-quality tables `consensus_init` fills, each built from the others.
struct Tables {
    p_mm_big: [f64; 101],
    pxx: [f64; 101],
    px_m: [f64; 101],
    pox: [f64; 101],
    po_m: [f64; 101],
    poo: [f64; 101],
    puu: [f64; 101],
    pum: [f64; 101],
    pmm: [f64; 101],
}

/// `consensus_init`.
pub fn init(
    p_het: f64,
    p_indel: f64,
    het_scale: f64,
    poly_mul: f64,
    q: &Calibration,
    bayes116: bool,
) -> ConsProbs {
    let mut prior = [p_het / 6.0; 25];
    for i in [0, 6, 12, 18, 24] {
        prior[i] = 1.0;
    }
    for i in (4..24).step_by(5) {
        prior[i] = p_indel / 6.0;
    }
    for p in &mut prior[20..24] {
        *p = p_indel / 6.0;
    }
    let pick = [0, 1, 2, 3, 4, 6, 7, 8, 9, 12, 13, 14, 18, 19, 24];
    let lprior15 = pick.map(|i| prior[i].ln());
    let zero = [0.0; 101];
    let mut c = Tables {
        p_mm_big: zero,
        pxx: zero,
        px_m: zero,
        pox: zero,
        po_m: zero,
        poo: zero,
        puu: zero,
        pum: zero,
        pmm: zero,
    };
    for i in 1..101 {
        let prob = 1.0 - 10f64.powf(-f64::from(q.smap[i]) / 10.0);
        c.p_mm_big[i] = prob.ln();
        c.pxx[i] = ((1.0 - prob) / 3.0).ln();
        c.px_m[i] = ((c.p_mm_big[i].exp() + c.pxx[i].exp()) / 2.0).ln();
        c.px_m[i] += het_scale.ln();
        if bayes116 {
            c.pmm[i] = c.p_mm_big[i];
            c.po_m[i] = c.px_m[i];
            c.pum[i] = c.px_m[i];
            c.pox[i] = c.pxx[i];
            c.poo[i] = c.pxx[i];
            c.puu[i] = c.pxx[i];
        } else {
            let prob = 1.0 - 10f64.powf(-f64::from(q.omap[i]) / 10.0);
            c.poo[i] = ((1.0 - prob) / 3.0).ln();
            if c.poo[i] > c.p_mm_big[i] - 0.5 {
                c.poo[i] = c.p_mm_big[i] - 0.5;
            }
            c.pox[i] = ((c.poo[i].exp() + c.pxx[i].exp()) / 2.0).ln();
            c.po_m[i] = ((c.poo[i].exp() + c.p_mm_big[i].exp()) / 2.0).ln();
            if c.po_m[i] > c.px_m[i] + 0.5 {
                c.po_m[i] = c.px_m[i] + 0.5;
            }
            let prob = 1.0 - 10f64.powf(-f64::from(q.umap[i]) / 10.0);
            c.pmm[i] = prob.ln();
            c.puu[i] = ((1.0 - prob) / 3.0).ln();
            if c.puu[i] > c.p_mm_big[i] - 0.5 {
                c.puu[i] = c.p_mm_big[i] - 0.5;
            }
            c.pum[i] = ((c.puu[i].exp() + c.pmm[i].exp()) / 2.0).ln();
        }
    }
    for t in [
        &mut c.p_mm_big,
        &mut c.pxx,
        &mut c.px_m,
        &mut c.pmm,
        &mut c.poo,
        &mut c.pox,
        &mut c.po_m,
        &mut c.puu,
        &mut c.pum,
    ] {
        t[0] = t[1];
    }
    let rows = std::array::from_fn(|q| {
        [c.p_mm_big[q], c.px_m[q], c.po_m[q], c.pox[q], c.poo[q], c.puu[q], c.pum[q], c.pmm[q]]
    });
    ConsProbs { lprior15, pxx: c.pxx, rows, poly_mul }
}

/// `e_tab` (exp of -500..=500) and `e_tab2` (exp of -50.0..=50.0 by tenths), and each base
/// quality as the mapping quality lowers it.
pub struct ExpTables {
    whole: Vec<f64>,
    tenths: Vec<f64>,
    /// [`mapq_lowered`] by `mqual * Q2P.len() + qual`: the same bytes, without the per-read
    /// chain of a multiply, an add and a logarithm (a sixth of `gap5`'s time per read).
    lowered: Vec<u8>,
}

/// A base quality `qual` lowered by the read's (clamped) mapping quality `mqual`.
fn mapq_lowered(qual: u8, mqual: usize) -> u8 {
    let pq = Q2P[qual as usize];
    let m = MQUAL_POW_1M[mqual];
    ph_log(pq + 0.75 * m - pq * m) as u8
}

impl ExpTables {
    pub fn new() -> Self {
        let quals = Q2P.len();
        let lowered = (0..MQUAL_POW_1M.len())
            .flat_map(|mqual| (0..quals).map(move |qual| mapq_lowered(qual as u8, mqual)))
            .collect();
        ExpTables {
            whole: (-500..=500).map(|i| f64::from(i).exp()).collect(),
            tenths: (-500..=500).map(|i| (f64::from(i) / 10.0).exp()).collect(),
            lowered,
        }
    }

    /// [`mapq_lowered`], looked up where the table has it.
    #[inline]
    fn with_mapq(&self, qual: u8, mqual: usize) -> u8 {
        match self.lowered.get(mqual * Q2P.len() + usize::from(qual)) {
            Some(&q) if usize::from(qual) < Q2P.len() => q,
            _ => mapq_lowered(qual, mqual),
        }
    }

    /// `fast_exp`.
    fn exp(&self, y: f64) -> f64 {
        if (-50.0..=50.0).contains(&y) {
            return self.tenths[((y * 10.0) as i32 + 500) as usize];
        }
        let y = y.clamp(-500.0, 500.0);
        self.whole[(y as i32 + 500) as usize]
    }
}

impl Default for ExpTables {
    fn default() -> Self {
        Self::new()
    }
}

/// `fast_log2`: exponent plus a cubic of the mantissa.
pub fn fast_log2(val: f64) -> f64 {
    let mut x = val.to_bits();
    let e = ((x >> 52) & 2047) as i64 - 1024;
    x &= !(2047u64 << 52);
    x += 1023u64 << 52;
    let d = f64::from_bits(x);
    let v = ((-1.0 / 3.0) * d + 2.0) * d - 2.0 / 3.0;
    e as f64 + v
}

fn ph_log(x: f64) -> f64 {
    -TENLOG2OVERLOG10 * fast_log2(x)
}

/// One column's calls (`consensus_t`).
#[derive(Clone, Copy, Default)]
pub struct Cons {
    /// 0..4: A C G T *.
    pub call: i32,
    /// `"ACGT*"[het / 5]` with `"ACGT*"[het % 5]`.
    pub het_call: i32,
    pub het_logodd: i32,
    pub phred: i32,
    pub depth: i32,
}

const MASK24: i32 = (1 << 24) - 1;

/// A read's scores at query index `i` (samtools looks one past the base: `seq_offset + 1`).
#[derive(Clone, Copy)]
enum ScoresAt {
    /// No scores (the simple preparation), or past the read's ends for the homopolymer length.
    None,
    /// Before the read's first base: its first score, undivided.
    Before(i32),
    Inside(i32),
    /// At or past the read's end: its last score, undivided.
    After(i32),
}

#[inline]
fn scores_at(p: &PileupRead, i: i64) -> ScoresAt {
    let Some(nm) = p.extra.as_deref() else { return ScoresAt::None };
    if i < 0 {
        ScoresAt::Before(nm[0])
    } else if i >= p.l_qseq {
        ScoresAt::After(nm[p.l_qseq as usize - 1])
    } else {
        ScoresAt::Inside(nm[i as usize])
    }
}

/// `nm_local`.
#[inline]
fn nm_local(at: ScoresAt) -> f64 {
    match at {
        ScoresAt::None => 0.0,
        ScoresAt::Before(v) | ScoresAt::After(v) => f64::from(v & MASK24),
        ScoresAt::Inside(v) => f64::from(v & MASK24) / 10.0,
    }
}

/// The homopolymer length (0 outside the read).
#[inline]
fn poly_len(at: ScoresAt) -> i32 {
    match at {
        ScoresAt::Inside(v) => v >> 24,
        _ => 0,
    }
}

/// The pure hypotheses (AA, CC, GG, TT, **) and the heterozygous ones, by index.
const PURE: [usize; 5] = [0, 5, 9, 12, 14];
const HET: [usize; 10] = [1, 2, 3, 4, 6, 7, 8, 10, 11, 13];
const MAP_SING: [i32; 15] = [0, 5, 5, 5, 5, 1, 5, 5, 5, 2, 5, 5, 3, 5, 4];
const MAP_HET: [i32; 15] = [0, 1, 2, 3, 4, 6, 7, 8, 9, 12, 13, 14, 18, 19, 24];
/// BAM base code (and 16 = gap) to A C G T * N.
const L: [usize; 32] = [
    5, 0, 1, 5, 2, 5, 5, 5, 3, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
];

/// The highest quality samtools' tables hold.
const MAX_QUAL: u8 = 100;

/// `calculate_consensus_gap5`, in two passes: each read's qualities first (a long chain of
/// conversions and lookups, read after read with nothing between them), then the sums, which
/// stay in read order as samtools adds them. One loop doing both stalled on each read's chain.
fn gap5(
    reads: &[Box<PileupRead>],
    o: &Options,
    cp: &ConsProbs,
    ex: &ExpTables,
    votes: &mut Vec<Vote>,
) -> Cons {
    let min_e_exp = f64::from(f64::MIN_EXP) * 2f64.ln() + 1.0;
    let mut s = [0f64; 15];
    let mut counts = [0i32; 6];
    let td = reads.len() as i32;
    // The depth's weight on every read's mapping quality (samtools computes it per read).
    let depth_weight = 1.0 + 2.0 * (0.5 - f64::from(td.min(30)) / 60.0);
    votes.clear();
    for p in reads {
        if p.qual < o.min_qual || p.ref_skip {
            continue;
        }
        let r = p.record();
        let mut qual = p.qual as u8;
        if qual == 255 || (qual == 0 && p.qual_at(0) == 255) {
            qual = o.default_qual as u8;
        }
        // samtools' tables end at quality 100 and it reads past them for a BAM's higher
        // ones (undefined); those take the last entry here rather than stop the run.
        qual = qual.min(MAX_QUAL);
        let base = L[p.base4 as usize];
        // The read's score one past the base, loaded once for both of its fields.
        let scores = scores_at(p, p.seq_offset + 1);
        if o.use_mqual {
            let mut mqual = f64::from(r.mapq());
            if o.nm_adjust {
                mqual /= nm_local(scores) + 1.0;
                mqual *= depth_weight;
            }
            mqual *= o.scale_mqual;
            if mqual < f64::from(o.low_mqual) {
                mqual = f64::from(o.low_mqual);
            }
            if mqual > f64::from(o.high_mqual) {
                mqual = f64::from(o.high_mqual);
            }
            qual = ex.with_mapq(qual, mqual as i32 as usize);
        }
        if qual < 1 {
            qual = 1;
        }
        let poly = f64::from(poly_len(scores));
        let q2 = f64::from(qual) - (poly - 2.0) * cp.poly_mul;
        let qual2 = ((if 1.0 > q2 { 1.0 } else { q2 }) as i32 as u32).min(u32::from(MAX_QUAL));
        counts[base] += 1;
        votes.push(Vote { base: base as u32, qual: u32::from(qual), qual2 });
    }
    let depth = votes.len() as i32;
    vote_sums::add(votes, &cp.rows, &cp.pxx, &mut s);
    let (mut shift, mut max, mut max_het) = (-f64::MAX, -f64::MAX, -f64::MAX);
    let (mut call, mut het_call) = (0usize, 0usize);
    for (v, prior) in s.iter_mut().zip(&cp.lprior15) {
        *v += prior;
        if shift < *v {
            shift = *v;
        }
    }
    // Only the pure AA, CC, GG, TT and ** are calls; the rest are het calls. Each kind is
    // scanned in samtools' order, so ties go to the same hypothesis.
    for j in PURE {
        if max < s[j] {
            max = s[j];
            call = j;
        }
    }
    for j in HET {
        if max_het < s[j] {
            max_het = s[j];
            het_call = j;
        }
    }
    let mut norm = [0f64; 15];
    for v in &mut s {
        *v -= shift;
        let e = ex.exp(*v);
        *v = if *v > min_e_exp { e } else { f64::MIN_POSITIVE };
    }
    let (mut tot1, mut tot2) = (0f64, 0f64);
    for j in 0..15 {
        norm[j] += tot1;
        norm[14 - j] += tot2;
        tot1 += s[j];
        tot2 += s[14 - j];
    }
    if depth == 0 || depth == counts[5] {
        return Cons { call: 4, ..Cons::default() };
    }
    if norm[call] == 0.0 {
        norm[call] = f64::MIN_POSITIVE;
    }
    let ph = if s[call] == 1.0 && norm[call] < 0.01 {
        (ph_log(norm[call]) + 0.5) as i32
    } else {
        (ph_log(1.0 - s[call] / (norm[call] + s[call])) + 0.5) as i32
    };
    if norm[het_call] == 0.0 {
        norm[het_call] = f64::MIN_POSITIVE;
    }
    let het_ph =
        (TENLOG2OVERLOG10 * (fast_log2(s[het_call]) - fast_log2(norm[het_call])) + 0.5) as i32;
    Cons {
        call: MAP_SING[call],
        het_call: MAP_HET[het_call],
        het_logodd: het_ph,
        phred: ph.max(0),
        depth,
    }
}

/// `-m bayesian_m`: the precise and recall calls blended (`calculate_consensus_gap5m`).
fn mixed(p: Cons, r: Cons) -> Cons {
    let mut cons = p;
    if p.phred > 0 && r.phred > 0 && p.call == r.call {
        cons.phred += r.phred.min(20);
    } else if p.het_logodd >= 0 && r.het_logodd >= 0 && p.het_call == r.het_call {
        cons.het_logodd += r.het_logodd.min(20);
    } else if p.het_logodd >= 0 {
        let q2 = r.phred.max(r.het_logodd);
        cons.het_logodd = 1.max(cons.het_logodd - q2 / 2);
    } else if r.het_logodd >= 70 {
        let (q1, q2) = (p.phred, r.het_logodd);
        cons = r;
        let a = f64::from((q2 - q1 * 2) / 2);
        let b = 1.0 + f64::from(q2) / (f64::from(q1) + 1.0);
        cons.het_logodd = 15f64.min(if a > b { a } else { b }) as i32;
    } else if r.het_logodd >= 0 {
        let (q1, q2) = (p.phred, r.het_logodd);
        cons = r;
        let a = f64::from(q2) - 0.3 * f64::from(q1);
        cons.het_logodd = ((if 1.0 > a { 1.0 } else { a })
            + f64::from(5 * i32::from(p.het_call == r.het_call))) as i32;
        cons.phred = 0;
    } else {
        let mut r = r;
        r.phred /= 2;
        if r.phred > p.phred {
            cons = r;
        }
        cons.phred = cons.phred.max(10);
    }
    cons
}

/// The bayesian mode as a column caller (`consensus_base`).
pub struct BayesCaller {
    o: Options,
    recall: ConsProbs,
    precise: Option<ConsProbs>,
    ex: ExpTables,
    /// [`gap5`]'s per-read scratch, kept from column to column.
    votes: Vec<Vote>,
}

impl BayesCaller {
    pub fn new(o: &Options, q: &Calibration) -> Self {
        let precise = match o.mode {
            Mode::Precise => {
                Some(init(o.p_het, o.p_indel, 0.3 * o.het_scale, o.homopoly_redux, q, false))
            }
            Mode::Mixed => Some(init(
                o.p_het.powf(0.7),
                o.p_indel.powf(0.7),
                0.3 * o.het_scale,
                o.homopoly_redux,
                q,
                false,
            )),
            _ => None,
        };
        let poly = if o.mode == Mode::Recall { o.homopoly_redux } else { 0.01 };
        BayesCaller {
            o: o.clone(),
            recall: init(o.p_het, o.p_indel, o.het_scale, poly, q, false),
            precise,
            ex: ExpTables::new(),
            votes: Vec::new(),
        }
    }

    fn cons(&mut self, reads: &[Box<PileupRead>]) -> Cons {
        let votes = &mut self.votes;
        match (self.o.mode, &self.precise) {
            (Mode::Mixed, Some(p)) => mixed(
                gap5(reads, &self.o, p, &self.ex, votes),
                gap5(reads, &self.o, &self.recall, &self.ex, votes),
            ),
            (Mode::Precise, Some(p)) => gap5(reads, &self.o, p, &self.ex, votes),
            _ => gap5(reads, &self.o, &self.recall, &self.ex, votes),
        }
    }
}

impl BaseCaller for BayesCaller {
    fn call(
        &mut self,
        reads: &mut [Box<PileupRead>],
        _counts: Option<&super::column_counts::BaseCounts>,
        _pos: i64,
    ) -> (u8, i32) {
        let cons = self.cons(reads);
        let (mut cb, mut cq);
        if cons.depth < self.o.min_depth && cons.call != 4 {
            cb = b'N';
            cq = 0;
        } else if cons.het_logodd > 0 && self.o.ambig {
            cb = b"AMRWaMCSYcRSGKgWYKTtacgt*"[cons.het_call as usize];
            cq = cons.het_logodd;
        } else {
            cb = b"ACGT*"[cons.call as usize];
            cq = cons.phred;
        }
        if cq < self.o.cons_cutoff && cb != b'*' && cons.het_call % 5 != 4 && cons.het_call / 5 != 4
        {
            cb = b'N';
            cq = 0;
        }
        (cb, cq)
    }
}
