//! The consensus letter of a column (`tv_pl_func`'s "call consensus" block over
//! `bcf_call_glfgen`): a diploid call from the bases' error model, with a prior against
//! differing from the reference.

use crate::ops::drand48::Drand48;
use crate::ops::errmod::ErrorModel;
use crate::record::RecordRef;
use crate::record::layout::flags;

/// `bcf_call_init(0.83, 13)`: the minimum base quality counted.
const MIN_BASE_Q: i32 = 13;
/// `bcf_callaux_t.capQ`.
const CAP_Q: i32 = 60;
/// `DEF_MAPQ`: what a MAPQ of 255 counts as.
const DEF_MAPQ: i32 = 20;

/// htslib's `seq_nt16_table` for the reference letter: its 4-bit code.
pub fn nt16_code(c: u8) -> u8 {
    match c.to_ascii_uppercase() {
        b'=' => 0,
        b'A' => 1,
        b'C' => 2,
        b'M' => 3,
        b'G' => 4,
        b'R' => 5,
        b'S' => 6,
        b'V' => 7,
        b'T' | b'U' => 8,
        b'W' => 9,
        b'Y' => 10,
        b'H' => 11,
        b'K' => 12,
        b'D' => 13,
        b'B' => 14,
        _ => 15,
    }
}

/// `seq_nt16_int`: 4-bit code to A,C,G,T = 0..3, anything else 4.
fn nt16_int(code: u8) -> u16 {
    match code {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => 4,
    }
}

/// One read at the column, as the call needs it.
pub struct Observation<'a> {
    pub rec: RecordRef<'a>,
    pub qpos: usize,
    pub is_del: bool,
}

/// The call: its letter (`,ACMGRSVTWYHKDBN`, `.` where it is the reference) and its quality.
pub struct Call {
    pub letter: u8,
    pub quality: i32,
}

/// `bcf_call_glfgen` then tview's genotype choice, for reference letter `rb`.
pub fn call(em: &ErrorModel, rng: &mut Drand48, reads: &[Observation<'_>], rb: u8) -> Call {
    let ref_code = nt16_code(rb);
    let mut bases = Vec::with_capacity(reads.len());
    let mut qsum = [0f32; 4];
    for o in reads {
        let r = &o.rec;
        if o.is_del || r.flag() & flags::UNMAP != 0 {
            continue;
        }
        let mapq = if r.mapq() < 255 { i32::from(r.mapq()) } else { DEF_MAPQ };
        let in_seq = o.qpos < r.l_seq();
        let mut q = if in_seq { i32::from(r.qual()[o.qpos]) } else { 0 };
        if q < MIN_BASE_Q {
            continue;
        }
        q = q.min(99).min(mapq.min(CAP_Q)).clamp(4, 63);
        let b = if in_seq {
            let code = r.base_code(o.qpos);
            nt16_int(if code == 0 { ref_code } else { code })
        } else {
            4
        };
        let reverse = u16::from(r.flag() & flags::REVERSE != 0);
        bases.push((q as u16) << 5 | reverse << 4 | b);
        if b < 4 {
            qsum[b as usize] += q as f32;
        }
    }
    let mut p = [0f32; 25];
    em.likelihoods_into(&mut bases, rng, 5, &mut p);
    // The two alleles with the highest quality sums, ties to the higher code.
    let mut ranked: [i32; 4] = std::array::from_fn(|i| (qsum[i] as i32) << 2 | i as i32);
    for i in 1..4 {
        let mut j = i;
        while j > 0 && ranked[j] > ranked[j - 1] {
            ranked.swap(j, j - 1);
            j -= 1;
        }
    }
    let (a1, a2) = ((ranked[0] & 3) as usize, (ranked[1] & 3) as usize);
    const PRIOR: f64 = 30.0;
    let mut p0 = f64::from(p[a1 * 5 + a1]);
    let p1 = f64::from(p[a1 * 5 + a2]) + PRIOR;
    let mut p2 = f64::from(p[a2 * 5 + a2]);
    let upper = rb.to_ascii_uppercase();
    if b"ACGT"[a1] != upper {
        p0 += PRIOR + 3.0;
    }
    if b"ACGT"[a2] != upper {
        p2 += PRIOR + 3.0;
    }
    let (mask, quality) = if p0 < p1 && p0 < p2 {
        (1 << a1, (p1.min(p2) - p0 + 0.499) as i32)
    } else if p2 < p1 && p2 < p0 {
        (1 << a2, (p0.min(p1) - p2 + 0.499) as i32)
    } else {
        (1 << a1 | 1 << a2, (p0.min(p2) - p1 + 0.499) as i32)
    };
    // htslib ORs the quality into the low half unmasked: a negative one (a tie of the two
    // homozygotes under the heterozygote) sets the letter bits too.
    let call = (mask as u32) << 16 | quality as u32;
    let mut letter = b",ACMGRSVTWYHKDBN"[(call >> 16 & 0xf) as usize];
    if letter == upper {
        letter = b'.';
    }
    Call { letter, quality: (call & 0xffff) as i32 }
}
