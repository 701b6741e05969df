//! Template subsampling as samtools `view -s/--subsample` does it: a read is kept when
//! `(Wang(X31(qname) ^ seed) & 0xffffff) / 2^24 < fraction`, so both mates of a pair share the
//! decision. A non-zero seed is first replaced by glibc's first `rand()` after `srand(seed)`; the
//! `auto` seed is the FNV-1a hash of the header text (samtools 1.24, `sam_view.c`).

#[derive(Clone, Copy, Debug)]
pub struct Subsample {
    fraction: f64,
    /// The seed as mixed into the hash.
    mixed_seed: u32,
}

/// htslib's `__ac_X31_hash_string` over the bytes of a read name (signed chars).
fn x31_hash(name: &[u8]) -> u32 {
    let Some((&first, rest)) = name.split_first() else { return 0 };
    rest.iter().fold(first as i8 as u32, |h, &c| h.wrapping_mul(31).wrapping_add(c as i8 as u32))
}

/// Thomas Wang's 32-bit integer hash (`__ac_Wang_hash`).
fn wang_hash(mut k: u32) -> u32 {
    k = k.wrapping_add(!(k << 15));
    k ^= k >> 10;
    k = k.wrapping_add(k << 3);
    k ^= k >> 6;
    k = k.wrapping_add(!(k << 11));
    k ^= k >> 16;
    k
}

/// FNV-1a over the header text: the `auto` seed.
pub fn auto_seed(header_text: &[u8]) -> u32 {
    header_text.iter().fold(2166136261u32, |h, &c| (h ^ c as u32).wrapping_mul(16777619))
}

/// glibc's first `rand()` after `srand(seed)` (the TYPE_3 additive feedback generator).
fn glibc_first_rand(seed: u32) -> u32 {
    let mut r = [0i32; 345];
    r[0] = if seed == 0 { 1 } else { seed as i32 };
    for i in 1..31 {
        // Schrage's method on signed 32-bit values, as glibc's srandom_r.
        let word = r[i - 1];
        let hi = word / 127773;
        let lo = word % 127773;
        let mut w = 16807i32.wrapping_mul(lo).wrapping_sub(2836i32.wrapping_mul(hi));
        if w < 0 {
            w = w.wrapping_add(2147483647);
        }
        r[i] = w;
    }
    for i in 31..34 {
        r[i] = r[i - 31];
    }
    for i in 34..345 {
        r[i] = r[i - 31].wrapping_add(r[i - 3]);
    }
    (r[344] as u32) >> 1
}

impl Subsample {
    /// `seed` is the user's seed (already resolved from `auto`).
    pub fn new(fraction: f64, seed: u32) -> Self {
        let mixed_seed = if seed != 0 { glibc_first_rand(seed) } else { 0 };
        Subsample { fraction, mixed_seed }
    }

    pub fn keeps(&self, read_name: &[u8]) -> bool {
        if self.fraction <= 0.0 {
            return true;
        }
        let k = wang_hash(x31_hash(read_name) ^ self.mixed_seed);
        ((k & 0xffffff) as f64) / (0x1000000 as f64) < self.fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_rand_matches_known_values() {
        // glibc: srand(1); rand() == 1804289383; srand(42); rand() == 71876166.
        assert_eq!(glibc_first_rand(1), 1804289383);
        assert_eq!(glibc_first_rand(42), 71876166);
    }

    #[test]
    fn mates_share_the_decision_and_fraction_is_respected() {
        let s = Subsample::new(0.3, 7);
        let kept = (0..10000).filter(|i| s.keeps(format!("read{i}").as_bytes())).count();
        assert!((2700..3300).contains(&kept), "{kept}");
        assert!(Subsample::new(0.0, 1).keeps(b"x"));
    }
}
