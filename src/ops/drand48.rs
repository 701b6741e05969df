//! glibc's `drand48`, the generator htslib's `ks_shuffle` and samtools' `phase` draw from: a
//! 48-bit linear congruential generator that starts from state 0 when never seeded (glibc's
//! zero-initialised `__libc_drand48_data`), so a run's draws are the same every time.

/// One `drand48` state (the process-wide one in C).
#[derive(Clone, Debug, Default)]
pub struct Drand48 {
    state: u64,
}

const MULTIPLIER: u64 = 0x5_deec_e66d;
const INCREMENT: u64 = 0xb;
const MASK: u64 = (1 << 48) - 1;

impl Drand48 {
    /// The next draw in [0, 1): the new 48-bit state over 2^48, exact in a double.
    pub fn next_f64(&mut self) -> f64 {
        self.state = self.state.wrapping_mul(MULTIPLIER).wrapping_add(INCREMENT) & MASK;
        self.state as f64 / (1u64 << 48) as f64
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
}
