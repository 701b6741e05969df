//! Illumina-like base qualities and the sequencing errors they predict.
//!
//! Algorithm, per read, in sequencing (cycle) order:
//! 1. Pick a quality class: good (50 %, +4), average (40 %, +0) or poor (10 %, −8).
//! 2. Per cycle `c` of `n`: `36 + class − 8c²/n²`, two lower at the first two cycles, plus a noise
//!    term drawn from a small skewed table (mostly 0 or ±1, sometimes −12), clamped to `2..=41`;
//!    all precomputed into one table per class, so a base costs one lookup. About one base in 512
//!    drops to 2–12, as in a bubble or a phasing dip.
//! 3. Each base is miscalled with probability `10^(−q/10) + 0.001` (the 0.001 stands for real
//!    differences from the reference); a miscalled base of quality 2 becomes `N`.
//!
//! Only multiplications build the probability table, so it is the same on every platform.

use super::genome::substitute;
use super::rng::Rng;

/// The lowest and highest quality written.
pub const MIN_QUALITY: u8 = 2;
pub const MAX_QUALITY: u8 = 41;
/// The `QUAL` offset of SAM text.
pub const PHRED_OFFSET: u8 = 33;

const NOISE: [i8; 16] = [2, 1, 1, 1, 0, 0, 0, 0, 0, -1, -1, -2, -3, -4, -7, -12];

/// The quality class of a read, an offset added to the whole profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QualityClass {
    Good,
    Average,
    Poor,
}

impl QualityClass {
    pub fn draw(rng: &mut Rng) -> QualityClass {
        match rng.below(10) {
            0..5 => QualityClass::Good,
            5..9 => QualityClass::Average,
            _ => QualityClass::Poor,
        }
    }

    fn offset(self) -> i32 {
        match self {
            QualityClass::Good => 4,
            QualityClass::Average => 0,
            QualityClass::Poor => -8,
        }
    }
}

/// Per-cycle quality tables for one read length and the per-quality error thresholds.
#[derive(Clone, Debug)]
pub struct QualityModel {
    read_len: usize,
    /// `[class][cycle][noise index]` → quality: the profile plus noise, already clamped.
    table: Vec<u8>,
    /// Miscall probability of each quality, out of 2^16.
    error_threshold: [u16; MAX_QUALITY as usize + 1],
}

const CLASSES: [QualityClass; 3] = [QualityClass::Good, QualityClass::Average, QualityClass::Poor];

impl QualityModel {
    /// The model for reads of `read_len` cycles.
    pub fn new(read_len: usize) -> QualityModel {
        const TENTH_DECADE: f64 = 0.794_328_234_724_281_5; // 10^(-1/10)
        let mut error_threshold = [0u16; MAX_QUALITY as usize + 1];
        let mut probability = 1.0f64;
        for threshold in error_threshold.iter_mut() {
            *threshold = ((probability + 0.001).min(1.0) * 65_535.0) as u16;
            probability *= TENTH_DECADE;
        }
        let len_squared = (read_len * read_len).max(1);
        let mut table = Vec::with_capacity(CLASSES.len() * read_len * NOISE.len());
        for class in CLASSES {
            for cycle in 0..read_len {
                let decline = (8 * cycle * cycle / len_squared) as i32;
                let start_dip = if cycle < 2 { 2 } else { 0 };
                for noise in NOISE {
                    let q = 36 + class.offset() - decline - start_dip + i32::from(noise);
                    table.push(q.clamp(i32::from(MIN_QUALITY), i32::from(MAX_QUALITY)) as u8);
                }
            }
        }
        QualityModel { read_len, table, error_threshold }
    }

    /// Fills `qualities` with one phred value (not yet offset by 33) per cycle, `len` at most the
    /// model's read length: a table lookup per base, 4 random bits each, then the rare drops (one
    /// chance in four per 128 cycles).
    pub fn fill_qualities(
        &self,
        rng: &mut Rng,
        len: usize,
        class: QualityClass,
        qualities: &mut Vec<u8>,
    ) {
        debug_assert!(len <= self.read_len);
        let class_index = CLASSES.iter().position(|&c| c == class).unwrap_or(0);
        let noise_len = NOISE.len();
        let table = &self.table[class_index * self.read_len * noise_len..][..len * noise_len];
        qualities.clear();
        qualities.resize(len, 0);
        for (qualities, rows) in qualities.chunks_mut(16).zip(table.chunks(16 * noise_len)) {
            let mut bits = rng.next_u64();
            for (quality, row) in qualities.iter_mut().zip(rows.chunks_exact(noise_len)) {
                *quality = row[(bits & 15) as usize];
                bits >>= 4;
            }
        }
        let mut drop_bits = rng.next_u64();
        for (chunk, chunk_start) in (0..len).step_by(128).enumerate() {
            if chunk % 4 == 3 {
                drop_bits = rng.next_u64();
            }
            if drop_bits & 3 == 0 {
                let at = chunk_start + ((drop_bits >> 2) & 127) as usize;
                if at < len {
                    qualities[at] = MIN_QUALITY + ((drop_bits >> 9) % 11) as u8;
                }
            }
            drop_bits >>= 16;
        }
    }

    /// Miscalls bases of `seq` (cycle order) as its `qualities` predict; 16 random bits per base.
    pub fn apply_errors(&self, rng: &mut Rng, qualities: &[u8], seq: &mut [u8]) {
        let mut bits = 0u64;
        for (i, (base, &q)) in seq.iter_mut().zip(qualities).enumerate() {
            if i % 4 == 0 {
                bits = rng.next_u64();
            }
            let draw = bits as u16;
            bits >>= 16;
            if draw < self.error_threshold[q as usize] {
                *base =
                    if q == MIN_QUALITY && draw & 1 == 0 { b'N' } else { substitute(rng, *base) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualities_stay_in_range_and_decline() {
        let model = QualityModel::new(150);
        let mut rng = Rng::new(4);
        let mut q = Vec::new();
        let (mut first, mut last) = (0u64, 0u64);
        let mut seen = [false; 42];
        for _ in 0..2_000 {
            let class = QualityClass::draw(&mut rng);
            model.fill_qualities(&mut rng, 150, class, &mut q);
            assert_eq!(q.len(), 150);
            for &v in &q {
                assert!((MIN_QUALITY..=MAX_QUALITY).contains(&v));
                seen[v as usize] = true;
            }
            first += u64::from(q[10]);
            last += u64::from(q[149]);
        }
        assert!(first > last + 2 * 2_000, "{first} {last}");
        assert!(seen[2] && seen[41]);
    }

    #[test]
    fn error_rate_follows_quality() {
        let model = QualityModel::new(150);
        let mut rng = Rng::new(5);
        let mut seq = vec![b'A'; 100_000];
        model.apply_errors(&mut rng, &[10u8; 100_000], &mut seq);
        let errors = seq.iter().filter(|&&b| b != b'A').count();
        assert!((9_000..11_300).contains(&errors), "{errors}");
        let mut seq = vec![b'C'; 10_000];
        model.apply_errors(&mut rng, &[2u8; 10_000], &mut seq);
        assert!(seq.contains(&b'N'));
    }
}
