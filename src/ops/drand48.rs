//! glibc's `drand48` family, the generator htslib's `ks_shuffle`, samtools' `phase` and `tview`
//! draw from: a 48-bit linear congruential generator that starts from state 0 when never seeded
//! (glibc's zero-initialised `__libc_drand48_data`), so a run's draws are the same every time.
//! samtools merge seeds it (`hts_srand48`, `-s`) and draws `lrand48()` for clashing IDs.

/// One `drand48` state (the process-wide one in C).
#[derive(Clone, Debug, Default)]
pub struct Drand48 {
    state: u64,
}

const MULTIPLIER: u64 = 0x5_deec_e66d;
const INCREMENT: u64 = 0xb;
const MASK: u64 = (1 << 48) - 1;

impl Drand48 {
    /// `srand48(seed)`: only the low 32 bits of the seed count, as glibc's `srand48_r`.
    pub fn seeded(seed: i64) -> Drand48 {
        Drand48 { state: ((seed as u64 & 0xffff_ffff) << 16) | 0x330e }
    }

    fn step(&mut self) -> u64 {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT) & MASK;
        self.state
    }

    /// The next draw in [0, 1): the new 48-bit state over 2^48, exact in a double.
    pub fn next_f64(&mut self) -> f64 {
        self.step() as f64 / (1u64 << 48) as f64
    }

    /// `lrand48()`: the top 31 bits of the next state.
    pub fn next_u31(&mut self) -> u32 {
        (self.step() >> 17) as u32
    }

    /// klib's `ks_shuffle`: from the end, each element swapped with one drawn at or before it.
    pub fn shuffle<T>(&mut self, a: &mut [T]) {
        for i in (2..=a.len()).rev() {
            let j = (self.next_f64() * i as f64) as usize;
            a.swap(j, i - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_draws_match_glibc_unseeded() {
        // glibc: the first drand48() of a process is 11 / 2^48 (state 0 * a + c).
        let mut r = Drand48::default();
        assert_eq!(r.next_f64(), 11.0 / (1u64 << 48) as f64);
        let second = (11 * MULTIPLIER + INCREMENT) & MASK;
        assert_eq!(r.next_f64(), second as f64 / (1u64 << 48) as f64);
    }

    #[test]
    fn seeded_lrand48_matches_glibc() {
        // glibc: srand48(1); lrand48() → 89400484, 976015093, 1792756325.
        let mut r = Drand48::seeded(1);
        assert_eq!([r.next_u31(), r.next_u31(), r.next_u31()], [89400484, 976015093, 1792756325]);
    }
}
