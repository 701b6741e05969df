//! CRAM 3.1's rANS Nx16 entropy coders, encoder side (htscodecs `rans_compress_O0_4x16`,
//! `rans_compress_O1_4x16` and their 32-way twins `_32x16`): order 0 with 12-bit frequencies,
//! order 1 with 10- or 12-bit ones (htscodecs' entropy estimate picks), N interleaved 32-bit
//! states renormalised 16 bits at a time. The frequency tables are normalised and written as
//! htscodecs writes them, so its decoder and [`super::rans_nx16`] read them back.
//!
//! The output is the table then the states' bytes, without the flags byte and sizes that
//! [`super::rans_nx16_encode`] puts around it.

const LOWER_BOUND: u32 = 1 << 15;
const O0_BITS: u32 = 12;
const O1_BITS: u32 = 12;
const O1_FAST_BITS: u32 = 10;

/// A symbol's range in the `1 << bits` total, with the reciprocal that replaces the division
/// (htscodecs' `RansEncSymbolInit`).
#[derive(Clone, Copy, Default)]
struct Slot {
    /// The state above which two bytes go out before this symbol goes in.
    x_max: u32,
    reciprocal: u64,
    shift: u32,
    bias: u32,
    complement: u32,
}

impl Slot {
    fn new(start: u32, freq: u32, bits: u32) -> Slot {
        let x_max = ((LOWER_BOUND >> bits) << 16).wrapping_mul(freq).wrapping_sub(1);
        let complement = (1 << bits) - freq;
        if freq < 2 {
            // x / 1 = x: multiplying by 2^32 - 1 and shifting by 32 gives x - 1; the bias adds
            // the 1 back (wrapping, as in htscodecs).
            let bias = start.wrapping_add((1 << bits) - 1);
            return Slot { x_max, reciprocal: u64::from(u32::MAX), shift: 32, bias, complement };
        }
        let log = 32 - (freq - 1).leading_zeros(); // ceil(log2(freq))
        let reciprocal = (1u64 << (log + 31)).div_ceil(u64::from(freq));
        Slot { x_max, reciprocal, shift: log - 1 + 32, bias: start, complement }
    }
}

/// The encoder's bytes, written from the end of a buffer backwards (rANS emits in reverse).
struct Reversed {
    buf: Vec<u8>,
    at: usize,
}

impl Reversed {
    /// Room for `n` symbols (at most 2 bytes each) and `ways` final states.
    fn new(n: usize, ways: usize) -> Reversed {
        let len = 2 * n + 4 * ways + 8;
        Reversed { buf: vec![0; len], at: len }
    }

    #[inline(always)]
    fn put(&mut self, state: &mut u32, slot: &Slot) {
        let mut x = *state;
        if x > slot.x_max {
            self.at -= 2;
            self.buf[self.at] = x as u8;
            self.buf[self.at + 1] = (x >> 8) as u8;
            x >>= 16;
        }
        let q = ((u64::from(x) * slot.reciprocal) >> slot.shift) as u32;
        *state = x.wrapping_add(slot.bias).wrapping_add(q.wrapping_mul(slot.complement));
    }

    fn flush(&mut self, states: &[u32]) {
        for &state in states.iter().rev() {
            self.at -= 4;
            self.buf[self.at..self.at + 4].copy_from_slice(&state.to_le_bytes());
        }
    }

    fn forward(&self) -> &[u8] {
        &self.buf[self.at..]
    }
}

/// htscodecs' `var_put_u32` (its `uint7`): 7 bits a byte, most significant group first.
pub(super) fn put_uint7(out: &mut Vec<u8>, value: u32) {
    let groups = (1..5).take_while(|&k| value >> (7 * k) != 0).count();
    for k in (1..=groups).rev() {
        out.push(((value >> (7 * k)) & 0x7f) as u8 | 0x80);
    }
    out.push((value & 0x7f) as u8);
}

/// htscodecs' `normalise_freq`: `freqs` (summing to `size`) scaled to sum `total`, no present
/// symbol at 0, the most frequent one taking up the rounding. `false` where it cannot.
fn normalise(freqs: &mut [u32; 256], size: u32, total: u32) -> bool {
    if size == 0 {
        return true;
    }
    let mut size = i64::from(size);
    let mut second_pass = false;
    loop {
        let scale = (u64::from(total) << 31) / size as u64 + (1u64 << 30) / size as u64;
        let (mut most, mut biggest) = (0u32, 0usize);
        size = 0;
        for (s, f) in freqs.iter_mut().enumerate() {
            if *f == 0 {
                continue;
            }
            if most < *f {
                (most, biggest) = (*f, s);
            }
            *f = ((u64::from(*f) * scale) >> 31).max(1) as u32;
            size += i64::from(*f);
        }
        let mut adjust = i64::from(total) - size;
        let big = i64::from(freqs[biggest]);
        if adjust > 0 {
            freqs[biggest] += adjust as u32;
        } else if adjust < 0 {
            if big > -adjust && (second_pass || big / 2 >= -adjust) {
                freqs[biggest] = (big + adjust) as u32;
            } else if !second_pass {
                second_pass = true;
                continue;
            } else {
                // Take the excess from every symbol that can give some.
                adjust += big - 1;
                freqs[biggest] = 1;
                for f in freqs.iter_mut() {
                    if adjust == 0 {
                        break;
                    }
                    if *f < 2 {
                        continue;
                    }
                    let change = if i64::from(*f) > -adjust { adjust } else { 1 - i64::from(*f) };
                    *f = (i64::from(*f) + change) as u32;
                    adjust -= change;
                }
            }
        }
        return freqs[biggest] > 0;
    }
}

/// The symbols present, as htscodecs' `encode_alphabet`: a symbol that follows a present one
/// starts a run, written as the count of the present symbols after it; a 0 ends the list.
fn write_alphabet(out: &mut Vec<u8>, present: impl Fn(usize) -> bool) {
    let mut run = 0usize;
    for s in 0..256 {
        if !present(s) {
            continue;
        }
        if run > 0 {
            run -= 1;
            continue;
        }
        out.push(s as u8);
        if s > 0 && present(s - 1) {
            run = (s + 1..256).take_while(|&t| present(t)).count();
            out.push(run as u8);
        }
    }
    out.push(0);
}

/// Slots laid out in symbol order for frequencies summing to `1 << bits`.
fn slots(freqs: &[u32; 256], bits: u32) -> [Slot; 256] {
    let mut slots = [Slot::default(); 256];
    let mut start = 0;
    for (slot, &f) in slots.iter_mut().zip(freqs) {
        if f > 0 {
            *slot = Slot::new(start, f, bits);
            start += f;
        }
    }
    slots
}

/// Order 0 over `ways` (4 or 32) states: byte i goes to state i mod `ways`. Empty input
/// writes nothing (htscodecs' `goto empty`).
pub(super) fn order0(src: &[u8], ways: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(src.len() / 2 + 300);
    if src.is_empty() {
        return Some(out);
    }
    let mut freqs = [0u32; 256];
    for &b in src {
        freqs[b as usize] += 1;
    }
    // Stored scaled to a power of two at most 4096, which the decoder scales up by shifting.
    let stored_total = (src.len() as u64).next_power_of_two().min(1 << O0_BITS) as u32;
    if !normalise(&mut freqs, src.len() as u32, stored_total) {
        return None;
    }
    write_alphabet(&mut out, |s| freqs[s] > 0);
    for &f in freqs.iter().filter(|&&f| f > 0) {
        put_uint7(&mut out, f);
    }
    let up = O0_BITS - stored_total.trailing_zeros();
    freqs.iter_mut().for_each(|f| *f <<= up);
    let slots = slots(&freqs, O0_BITS);

    let n = src.len();
    let mut rev = Reversed::new(n, ways);
    let mut states = vec![LOWER_BOUND; ways];
    let tail = n % ways;
    for z in (0..tail).rev() {
        rev.put(&mut states[z], &slots[src[n - tail + z] as usize]);
    }
    for chunk in src[..n - tail].chunks_exact(ways).rev() {
        for z in (0..ways).rev() {
            rev.put(&mut states[z], &slots[chunk[z] as usize]);
        }
    }
    rev.flush(&states);
    out.extend_from_slice(rev.forward());
    Some(out)
}

/// htscodecs' `fast_log`: an approximate natural logarithm from the float's bits.
fn fast_log(a: f64) -> f64 {
    (a.to_bits() as i64 - 4_606_921_278_410_026_770) as f64 * 1.539_095_918_623_324e-16
}

/// htscodecs' `rans_compute_shift`: 10-bit tables unless the estimated entropy of 12-bit ones
/// is at least 1 % smaller; `limits` gets each context's stored total.
fn choose_bits(freqs: &[[u32; 256]], totals: &[u32; 256], limits: &mut [u32; 256]) -> u32 {
    let (mut e10, mut e12) = (0f64, 0f64);
    let mut max_total = 0;
    for i in 0..256 {
        if totals[i] == 0 {
            continue;
        }
        let mut max_val = totals[i].next_power_of_two();
        let row = &freqs[i];
        let bumped = |limit: u32| row.iter().filter(|&&f| f > 0 && max_val / f > limit).count();
        let l10 = ((1u32 << O1_FAST_BITS) as f64 + bumped(1 << O1_FAST_BITS) as f64).ln();
        let l12 = ((1u32 << O1_BITS) as f64 + bumped(1 << O1_BITS) as f64).ln();
        let t_slow = f64::from(1u32 << O1_BITS) / f64::from(totals[i]);
        let t_fast = f64::from(1u32 << O1_FAST_BITS) / f64::from(totals[i]);
        let mut symbols = 0;
        for &f in row.iter().filter(|&&f| f > 0) {
            symbols += 1;
            let f = f64::from(f);
            e10 -= f * (fast_log((f * t_fast).max(1.0)) - l10);
            e12 -= f * (fast_log((f * t_slow).max(1.0)) - l12);
            // The table's own cost.
            e10 += 1.3;
            e12 += 4.7;
        }
        if symbols < 64 && max_val > 128 {
            max_val /= 2;
        }
        if max_val > 1024 {
            max_val /= 2;
        }
        max_val = max_val.min(1 << O1_BITS);
        limits[i] = max_val;
        max_total = max_total.max(max_val);
    }
    if e10 / e12 < 1.01 || max_total <= 1 << O1_FAST_BITS { O1_FAST_BITS } else { O1_BITS }
}

/// One context's frequencies over the alphabet `present`, zero runs coded as a 0 and the count
/// of further zeros (htscodecs' `encode_freq_d`).
fn write_context(out: &mut Vec<u8>, present: &[u32; 256], freqs: &[u32; 256]) {
    let mut zeros = 0usize;
    for s in (0..256).filter(|&s| present[s] > 0) {
        if freqs[s] != 0 {
            if zeros > 0 {
                out.truncate(out.len() - (zeros - 1));
                out.push((zeros - 1) as u8);
            }
            zeros = 0;
            put_uint7(out, freqs[s]);
        } else {
            zeros += 1;
            out.push(0);
        }
    }
    if zeros > 0 {
        out.truncate(out.len() - (zeros - 1));
        out.push((zeros - 1) as u8);
    }
}

/// Order 1 over `ways` states, each coding one of `ways` equal parts (the last takes the
/// remainder) from context 0. Needs at least `ways` bytes.
pub(super) fn order1(src: &[u8], ways: usize) -> Option<Vec<u8>> {
    let n = src.len();
    if n < ways.max(4) {
        return None;
    }
    let part = n / ways;
    let mut freqs = vec![[0u32; 256]; 256];
    let mut totals = [0u32; 256];
    let mut previous = 0usize;
    for &b in src {
        freqs[previous][b as usize] += 1;
        previous = b as usize;
    }
    // htscodecs counts the last byte once more as a context, and each part's first byte in
    // context 0 (where it is coded) besides its real context.
    totals[previous] += 1;
    for (total, row) in totals.iter_mut().zip(&freqs) {
        *total += row.iter().sum::<u32>();
    }
    for z in 1..ways {
        freqs[0][src[z * part] as usize] += 1;
    }
    totals[0] += ways as u32 - 1;

    let mut out = vec![0u8];
    write_alphabet(&mut out, |s| s == 0 || totals[s] > 0);
    let mut limits = [0u32; 256];
    let bits = choose_bits(&freqs, &totals, &mut limits);
    // Tables for the contexts present only: all 256 zeroed for every block cost more than
    // coding a small one.
    let mut tables: Vec<Option<Box<[Slot; 256]>>> = vec![None; 256];
    for i in 0..256 {
        if totals[i] == 0 {
            continue;
        }
        let mut max_val = limits[i];
        if bits == O1_FAST_BITS {
            max_val = max_val.min(1 << O1_FAST_BITS);
        }
        if !normalise(&mut freqs[i], totals[i], max_val) {
            return None;
        }
        totals[i] = max_val;
        write_context(&mut out, &totals, &freqs[i]);
        let up = bits - max_val.trailing_zeros();
        freqs[i].iter_mut().for_each(|f| *f <<= up);
        tables[i] = Some(Box::new(slots(&freqs[i], bits)));
    }
    out[0] = (bits << 4) as u8;
    if out.len() > 1000 {
        // Large tables are stored order-0 compressed when that saves.
        let packed = order0(&out[1..], 4)?;
        if packed.len() + 6 < out.len() {
            let mut header = vec![out[0] | 1];
            put_uint7(&mut header, (out.len() - 1) as u32);
            put_uint7(&mut header, packed.len() as u32);
            header.extend_from_slice(&packed);
            out = header;
        }
    }

    let absent = [Slot::default(); 256];
    let tables: Vec<&[Slot; 256]> =
        tables.iter().map(|t| t.as_deref().unwrap_or(&absent)).collect();
    let mut rev = Reversed::new(n, ways);
    let mut states = vec![LOWER_BOUND; ways];
    // `next[z]`: the symbol after the position state z codes next, which that position is
    // the context of.
    let mut next: Vec<u8> = (0..ways).map(|z| src[(z + 1) * part - 1]).collect();
    let last = ways - 1;
    next[last] = src[n - 1];
    for i in (ways * part - 1..n - 1).rev() {
        rev.put(&mut states[last], &tables[src[i] as usize][next[last] as usize]);
        next[last] = src[i];
    }
    for step in (0..part - 1).rev() {
        for z in (0..ways).rev() {
            let c = src[z * part + step];
            rev.put(&mut states[z], &tables[c as usize][next[z] as usize]);
            next[z] = c;
        }
    }
    for z in (0..ways).rev() {
        rev.put(&mut states[z], &tables[0][next[z] as usize]);
    }
    rev.flush(&states);
    out.extend_from_slice(rev.forward());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uint7_puts_the_high_groups_first() {
        for (value, bytes) in [
            (0u32, vec![0u8]),
            (127, vec![127]),
            (128, vec![0x81, 0]),
            (300, vec![0x82, 0x2c]),
            (u32::MAX, vec![0x8f, 0xff, 0xff, 0xff, 0x7f]),
        ] {
            let mut out = Vec::new();
            put_uint7(&mut out, value);
            assert_eq!(out, bytes, "{value}");
        }
    }

    #[test]
    fn normalised_frequencies_keep_every_symbol_and_sum_to_the_total() {
        let mut freqs = [0u32; 256];
        freqs[0] = 1_000_000;
        for f in &mut freqs[1..200] {
            *f = 1;
        }
        let size = freqs.iter().sum();
        assert!(normalise(&mut freqs, size, 4096));
        assert_eq!(freqs.iter().sum::<u32>(), 4096);
        assert!(freqs[..200].iter().all(|&f| f >= 1));
    }

    #[test]
    fn the_reciprocal_divides_exactly() {
        for bits in [10, 12] {
            for freq in [1u32, 2, 3, 7, 100, 1000, (1 << bits) - 1, 1 << bits] {
                let slot = Slot::new(5, freq, bits);
                let top = slot.x_max.min((1 << 31) - 1);
                for x in [LOWER_BOUND, LOWER_BOUND + 12345, top / 2 + 1, top] {
                    let q = ((u64::from(x) * slot.reciprocal) >> slot.shift) as u32;
                    let fast =
                        x.wrapping_add(slot.bias).wrapping_add(q.wrapping_mul(slot.complement));
                    let exact = ((x / freq) << bits) + x % freq + 5;
                    assert_eq!(fast, exact, "bits {bits}, freq {freq}, x {x}");
                }
            }
        }
    }
}
