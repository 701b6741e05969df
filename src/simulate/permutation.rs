//! A seeded bijection on `0..n`: the Feistel network that shuffles templates into name order.
//!
//! Template ids count along the genome (id order is coordinate order). Name (aligner) order visits
//! them in a pseudo-random order: rank `r` holds template `inverse(r)`, and template `id` sits at rank
//! `forward(id)`. Both directions cost a few hashes and no memory, for any `n`.
//!
//! Algorithm:
//! 1. Pick the smallest even bit width `2h` with `2^(2h) >= n`; split a value into halves `(l, r)`.
//! 2. Four rounds of `(l, r) -> (r, l ^ F_k(r))` with `F_k` a keyed hash masked to `h` bits; this is
//!    a bijection on `0..2^(2h)`.
//! 3. Cycle-walk: re-apply until the value falls below `n` (expected < 4 walks, since `2^(2h) < 4n`).
//!    The inverse runs the rounds backwards and walks the same way.

use super::rng::hash2;

const ROUNDS: usize = 4;

/// A bijection on `0..n` with its inverse.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; ROUNDS],
}

impl Permutation {
    /// The permutation of `0..n` selected by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0; ROUNDS];
        for (i, key) in keys.iter_mut().enumerate() {
            *key = hash2(seed, 0xFE15_7E10 + i as u64);
        }
        Permutation { n, half_bits, keys }
    }

    fn mask(&self) -> u64 {
        (1u64 << self.half_bits) - 1
    }

    fn round_function(&self, half: u64, key: u64) -> u64 {
        hash2(half, key) & self.mask()
    }

    fn encrypt_once(&self, value: u64) -> u64 {
        let mask = self.mask();
        let (mut left, mut right) = (value >> self.half_bits, value & mask);
        for &key in &self.keys {
            (left, right) = (right, left ^ self.round_function(right, key));
        }
        (left << self.half_bits) | right
    }

    fn decrypt_once(&self, value: u64) -> u64 {
        let mask = self.mask();
        let (mut left, mut right) = (value >> self.half_bits, value & mask);
        for &key in self.keys.iter().rev() {
            (left, right) = (right ^ self.round_function(left, key), left);
        }
        (left << self.half_bits) | right
    }

    /// The image of `value` (must be below `n`).
    pub fn forward(&self, value: u64) -> u64 {
        debug_assert!(value < self.n);
        let mut x = self.encrypt_once(value);
        while x >= self.n {
            x = self.encrypt_once(x);
        }
        x
    }

    /// The preimage of `value` (must be below `n`).
    pub fn inverse(&self, value: u64) -> u64 {
        debug_assert!(value < self.n);
        let mut x = self.decrypt_once(value);
        while x >= self.n {
            x = self.decrypt_once(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_bijection_with_inverse() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let f = p.forward(i);
                assert!(f < n);
                assert!(!seen[f as usize], "n={n} collision at {i}");
                seen[f as usize] = true;
                assert_eq!(p.inverse(f), i);
            }
        }
    }

    #[test]
    fn shuffles() {
        let p = Permutation::new(1000, 1);
        let fixed = (0..1000).filter(|&i| p.forward(i) == i).count();
        assert!(fixed < 20, "{fixed} fixed points");
    }
}
