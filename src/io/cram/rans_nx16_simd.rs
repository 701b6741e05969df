//! The 32-state loops of [`super::rans_nx16`] (`X32` streams: CRAM 3.1's quality blocks, order
//! 1, and some order-0 series) eight states at a time in AVX2 registers, as htscodecs'
//! `rans_uncompress_O1_32x16_avx2` does: one slot load a state, then the state update and the
//! 16-bit renormalisation as vector arithmetic. The scalar order-1 loop decoded quality blocks
//! at 550 MB/s against htscodecs' 1340.
//!
//! Each step decodes one byte for each state (order 1: one byte of each of the 32 parts of the
//! output; order 0: 32 consecutive bytes); a state that falls below the lower bound takes the
//! next 16-bit word of the input, states in order, as in the scalar loop, so both read the same
//! words. Steps run while 64 input bytes remain (two a state at most); the scalar loop finishes
//! the rest with its bounds-checked reads.

/// A 32-state loop's data: its slot table (order 1: 256 contexts' rows; order 0: one row),
/// states, contexts (order 1: each part's last byte; order 0: zero), the compressed input with
/// the read position, and the output: `part` steps of 32 bytes.
pub(super) struct Lanes32<'a, const TABLE: usize> {
    pub slots: &'a [u32; TABLE],
    pub states: &'a mut [u32; 32],
    pub contexts: &'a mut [u32; 32],
    pub input: &'a [u8],
    pub at: &'a mut usize,
    pub out: &'a mut [u8],
    pub part: usize,
}

/// Decodes steps `0..` of the loop (order 1 or order 0, `SHIFT`-bit slots) while `input[*at..]`
/// holds 64 bytes, updating the states, contexts and read position; returns the first step
/// left undone (0 without AVX2).
pub(super) fn steps<const ORDER1: bool, const SHIFT: u32, const TABLE: usize>(
    job: Lanes32<'_, TABLE>,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[allow(unsafe_code)] // calling a target_feature function
        // SAFETY: the CPU has AVX2 (checked just above); the function reads `input` only
        // below `*at + 64 <= input.len()` and indexes `slots` and `out` with checks.
        let step = unsafe { avx2::steps::<ORDER1, SHIFT, TABLE>(job) };
        return step;
    }
    let _ = job;
    0
}

/// For each 8-bit mask of the states that renormalise, the word each state takes: state j the
/// one numbered by the count of set bits below j (the others take one they then ignore).
#[cfg(target_arch = "x86_64")]
const EXPAND: [[u32; 8]; 256] = expand_table();

#[cfg(target_arch = "x86_64")]
const fn expand_table() -> [[u32; 8]; 256] {
    let mut table = [[0u32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut taken = 0;
        let mut lane = 0;
        while lane < 8 {
            table[mask][lane] = taken;
            if (mask >> lane) & 1 == 1 {
                taken += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)] // SIMD intrinsics
mod avx2 {
    use super::{EXPAND, Lanes32};
    use crate::io::cram::rans_nx16::LOWER_BOUND;
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2")]
    pub(super) fn steps<const ORDER1: bool, const SHIFT: u32, const TABLE: usize>(
        job: Lanes32<'_, TABLE>,
    ) -> usize {
        let Lanes32 { slots, states, contexts, input, at, out, part } = job;
        let low_bits = _mm256_set1_epi32(((1u32 << SHIFT) - 1) as i32);
        let shift = _mm_cvtsi32_si128(SHIFT as i32);
        let byte = _mm256_set1_epi32(0xff);
        let offset_bits = _mm256_set1_epi32(0xfff);
        let one = _mm256_set1_epi32(1);
        // x < 2^15 as unsigned: min(x, 2^15 - 1) == x.
        let below = _mm256_set1_epi32((LOWER_BOUND - 1) as i32);
        // SAFETY: loads of eight u32 from the arrays' own eight-element parts.
        let load =
            |a: &[u32; 32], v: usize| unsafe { _mm256_loadu_si256(a[8 * v..].as_ptr().cast()) };
        let mut x = [0, 1, 2, 3].map(|v| load(states, v));
        let mut context = [0, 1, 2, 3].map(|v| load(contexts, v));
        let mut lanes = [0u32; 8];
        let mut step = 0;
        while step < part && *at + 64 <= input.len() {
            for v in 0..4 {
                let index = _mm256_or_si256(
                    _mm256_sll_epi32(context[v], shift),
                    _mm256_and_si256(x[v], low_bits),
                );
                // SAFETY: a store of eight u32 into an array of eight.
                unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), index) };
                let slot = lanes.map(|i| slots[i as usize & (TABLE - 1)] as i32);
                let s = _mm256_setr_epi32(
                    slot[0], slot[1], slot[2], slot[3], slot[4], slot[5], slot[6], slot[7],
                );
                let symbols = _mm256_and_si256(s, byte);
                // SAFETY: as above.
                unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), symbols) };
                for (k, &symbol) in lanes.iter().enumerate() {
                    let lane = 8 * v + k;
                    out[if ORDER1 { lane * part + step } else { step * 32 + lane }] = symbol as u8;
                }
                if ORDER1 {
                    context[v] = symbols;
                }
                // x = freq * (x >> shift) + offset, from the packed slot (`pack_slot`).
                let freq = _mm256_add_epi32(_mm256_srli_epi32::<20>(s), one);
                let offset = _mm256_and_si256(_mm256_srli_epi32::<8>(s), offset_bits);
                let next = _mm256_add_epi32(
                    _mm256_mullo_epi32(freq, _mm256_srl_epi32(x[v], shift)),
                    offset,
                );
                let low = _mm256_cmpeq_epi32(_mm256_min_epu32(next, below), next);
                let mask = _mm256_movemask_ps(_mm256_castsi256_ps(low)) as usize & 0xff;
                // SAFETY: `*at + 64 <= input.len()` at the step's start and each group of
                // eight takes at most 16 bytes, so these 16 lie inside `input`.
                let words = unsafe { _mm_loadu_si128(input.as_ptr().add(*at).cast()) };
                // SAFETY: a load of eight u32 from a table row of eight.
                let spread = unsafe { _mm256_loadu_si256(EXPAND[mask].as_ptr().cast()) };
                let words = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(words), spread);
                let renormalised = _mm256_or_si256(_mm256_slli_epi32::<16>(next), words);
                x[v] = _mm256_blendv_epi8(next, renormalised, low);
                *at += 2 * mask.count_ones() as usize;
            }
            step += 1;
        }
        for v in 0..4 {
            // SAFETY: stores of eight u32 into the arrays' own eight-element parts.
            unsafe {
                _mm256_storeu_si256(states[8 * v..].as_mut_ptr().cast(), x[v]);
                _mm256_storeu_si256(contexts[8 * v..].as_mut_ptr().cast(), context[v]);
            }
        }
        step
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn expand_table_hands_words_to_set_lanes_in_order() {
        let row = super::EXPAND[0b1010_0110];
        assert_eq!([row[1], row[2], row[5], row[7]], [0, 1, 2, 3]);
        assert_eq!(super::EXPAND[0xff], [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
