//! `samtools phase` (samtools 1.24 `phase.c`): heterozygous sites called from each pileup column
//! ([`call_site`]), each read (a fragment, keyed by the hash of its name) reduced to its alleles
//! at those sites, the sites phased in blocks by dynamic programming over `k`-site windows
//! ([`algorithm`]) and printed as samtools prints them ([`report`]). The fragment table is
//! klib's hash ([`khash`]) and the `EV` order klib's sort ([`crate::ops::ksort`]), both
//! replicated because the output order depends on them.

pub mod algorithm;
pub mod khash;
pub mod report;

/// Most sites one fragment records.
pub const MAX_VARS: usize = 256;

/// One fragment (`frag_t`): a read, or a read pair sharing a name, at the sites it covers.
#[derive(Clone, Copy)]
pub struct Frag {
    /// Per site from `vpos`: 0 unknown, 1 the first allele, 2 the second.
    pub seq: [u8; MAX_VARS],
    /// Its first site.
    pub vpos: i32,
    pub beg: i64,
    pub end: i64,
    pub vlen: u16,
    pub single: bool,
    pub flip: bool,
    pub phase: u8,
    pub phased: bool,
    pub ambig: bool,
    /// Sites agreeing / disagreeing with its phase (`in`, `out`).
    pub agree: u16,
    pub disagree: u16,
}

impl Default for Frag {
    fn default() -> Self {
        Frag {
            seq: [0; MAX_VARS],
            vpos: 0,
            beg: 0,
            end: 0,
            vlen: 0,
            single: false,
            flip: false,
            phase: 0,
            phased: false,
            ambig: false,
            agree: 0,
            disagree: 0,
        }
    }
}

/// The fragment table.
pub type Frags = khash::KHash<Frag>;

/// `X31_hash_string`: the fragment key of a read name (C `char`s, signed).
pub fn name_key(name: &[u8]) -> u64 {
    let Some((&first, rest)) = name.split_first() else { return 0 };
    let mut h = first as i8 as u64;
    if h != 0 {
        for &c in rest {
            h = (h << 5).wrapping_sub(h).wrapping_add(c as i8 as u64);
        }
    }
    h
}

/// `gl2cns`: 0 when the most likely genotype is homozygous, else `1 << 18 | a << 16 | b |
/// qual << 2` for the heterozygote a/b with quality the gap to the second-best genotype.
pub fn call_site(q: &[f32; 16]) -> u32 {
    let (mut min, mut min2) = (1e30f32, 1e30f32);
    let mut min_ij: i32 = -1;
    for i in 0..4 {
        for j in i..4 {
            let v = q[i << 2 | j];
            if v < min {
                min_ij = (i << 2 | j) as i32;
                min2 = min;
                min = v;
            } else if v < min2 {
                min2 = v;
            }
        }
    }
    if (min_ij >> 2 & 3) == (min_ij & 3) {
        return 0;
    }
    let qual = (f64::from(min2 - min) + 0.499) as i32;
    (1 << 18 | (min_ij >> 2 & 3) << 16 | (min_ij & 3) | qual << 2) as u32
}
