//! POSIX `srand48`/`lrand48` (glibc's, which htslib's `hts_srand48` calls): samtools merge
//! suffixes clashing `@RG`/`@PG` IDs with `lrand48()` seeded by `-s`, so the same seed must give
//! the same IDs.

/// The 48-bit linear congruential generator `X' = (0x5DEECE66D · X + 0xB) mod 2^48`.
#[derive(Clone, Debug)]
pub struct Rand48 {
    state: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const INCREMENT: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;

impl Rand48 {
    /// `srand48(seed)`: only the low 32 bits of the seed count, as glibc's `srand48_r`.
    pub fn new(seed: i64) -> Rand48 {
        Rand48 { state: ((seed as u64 & 0xffff_ffff) << 16) | 0x330e }
    }

    /// `lrand48()`: the top 31 bits of the next state.
    pub fn next_u31(&mut self) -> u32 {
        self.state = (self.state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT)) & MASK;
        (self.state >> 17) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_glibc_for_seed_one() {
        // glibc: srand48(1); lrand48() → 89400484, 976015093, 1792756325.
        let mut r = Rand48::new(1);
        assert_eq!([r.next_u31(), r.next_u31(), r.next_u31()], [89400484, 976015093, 1792756325]);
    }
}
