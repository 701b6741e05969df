//! Seeded Monte Carlo: a small deterministic PRNG and percentile intervals, so the same seed
//! gives bit-identical intervals.

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for sampling ranges.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A predicted quantity: the value at nominal parameters and a 5-95 % interval over samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Interval {
    pub low: f64,
    pub nominal: f64,
    pub high: f64,
}

impl Interval {
    pub fn exact(v: f64) -> Interval {
        Interval { low: v, nominal: v, high: v }
    }

    /// The 5th and 95th percentiles of `samples` around `nominal` (widened to contain it).
    pub fn from_samples(nominal: f64, mut samples: Vec<f64>) -> Interval {
        if samples.is_empty() {
            return Interval::exact(nominal);
        }
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Interval { low: at(0.05).min(nominal), nominal, high: at(0.95).max(nominal) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_rng_is_deterministic_and_uniform() {
        let a: Vec<u64> = (0..5).scan(Rng::new(7), |r, _| Some(r.next_u64())).collect();
        let b: Vec<u64> = (0..5).scan(Rng::new(7), |r, _| Some(r.next_u64())).collect();
        assert_eq!(a, b);
        let mut r = Rng::new(1);
        let mean = (0..10_000).map(|_| r.next_f64()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }

    #[test]
    fn test_interval_percentiles() {
        let i = Interval::from_samples(50.0, (0..101).map(f64::from).collect());
        assert_eq!((i.low, i.high), (5.0, 95.0));
        let j = Interval::from_samples(200.0, vec![1.0, 2.0]);
        assert_eq!(j.high, 200.0);
    }
}
