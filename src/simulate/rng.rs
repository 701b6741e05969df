//! Seeded pseudo-random numbers for the simulator: splitmix64 to seed and hash, xoshiro256** to draw.
//!
//! Every random decision of the simulator comes from a [`Rng`] opened for one *stream* of one template
//! ([`Rng::for_stream`]), so any template can be rebuilt on its own from `(seed, template id, stream)`.
//! That is what makes duplicates (which re-read their original's fragment) and the two output orders
//! cheap and deterministic.
//!
//! Only integer arithmetic and exactly rounded `f64` operations (+, ×, comparisons) are used, never
//! `ln`/`exp`/`sin`, so the same seed gives the same bytes on every platform.

/// One step of splitmix64 (Steele, Lea and Flood 2014): advances `state` and returns a well-mixed word.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes two words into one; used for Feistel rounds and per-stream seeds.
pub fn hash2(a: u64, b: u64) -> u64 {
    let mut state = a ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    splitmix64(&mut state) ^ splitmix64(&mut state).rotate_left(17)
}

/// The independent random streams of one template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// Is this template a duplicate, and of which kind.
    Duplicate = 1,
    /// The molecule: position, insert size, layout, chimeric junctions (shared by its duplicates).
    Fragment = 2,
    /// Everything the sequencer and aligner add per read: qualities, errors, clips, indels, tags.
    Reads = 3,
    /// The cluster name jitter within its cell.
    Name = 4,
    /// The reference genome (template id = reference index).
    Genome = 5,
    /// Per-molecule labels shared by duplicates: the UMI.
    Molecule = 6,
}

/// xoshiro256** (Blackman and Vigna 2018): small, fast and good enough for simulation.
#[derive(Clone, Debug)]
pub struct Rng {
    state: [u64; 4],
}

impl Rng {
    /// A generator seeded from one word through splitmix64 (never all-zero).
    pub fn new(seed: u64) -> Rng {
        let mut s = seed;
        let state =
            [splitmix64(&mut s), splitmix64(&mut s), splitmix64(&mut s), splitmix64(&mut s)];
        Rng { state }
    }

    /// The generator for `stream` of template `id` under the global `seed`.
    pub fn for_stream(seed: u64, id: u64, stream: Stream) -> Rng {
        Rng::new(hash2(hash2(seed, stream as u64), id))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; the bias is below 2^-32 for our `n`).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform integer in `low..=high`.
    #[inline]
    pub fn between(&mut self, low: u32, high: u32) -> u32 {
        debug_assert!(low <= high);
        low + self.below(u64::from(high - low) + 1) as u32
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// An approximately standard normal number: the Irwin–Hall sum of four uniforms, rescaled.
    /// Bounded to ±3.46, which is what a simulator wants (no absurd insert sizes).
    pub fn normal(&mut self) -> f64 {
        let sum = self.unit() + self.unit() + self.unit() + self.unit();
        (sum - 2.0) * 1.732_050_807_568_877_2
    }

    /// One of `A`, `C`, `G`, `T` uniformly.
    #[inline]
    pub fn base(&mut self) -> u8 {
        b"ACGT"[(self.next_u64() >> 62) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = Rng::for_stream(7, 3, Stream::Reads);
        let mut b = Rng::for_stream(7, 3, Stream::Reads);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_differ() {
        let mut a = Rng::for_stream(7, 3, Stream::Reads);
        let mut b = Rng::for_stream(7, 3, Stream::Fragment);
        let mut c = Rng::for_stream(7, 4, Stream::Reads);
        let x = a.next_u64();
        assert_ne!(x, b.next_u64());
        assert_ne!(x, c.next_u64());
    }

    #[test]
    fn below_and_between_stay_in_range() {
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            assert!(rng.below(13) < 13);
            let v = rng.between(5, 9);
            assert!((5..=9).contains(&v));
            let n = rng.normal();
            assert!(n.abs() < 3.47);
        }
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut rng = Rng::new(99);
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[rng.below(4) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
