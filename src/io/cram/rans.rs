//! CRAM's rANS 4x8 codec, encoder side (spec §13; htscodecs `rANS_static.c`), order 0 and
//! order 1: four interleaved 32-bit states, byte renormalisation, frequencies scaled to 4095 of
//! 4096 as htscodecs scales them. noodles has the codec but keeps it private to its writer.

const SCALE_BITS: u32 = 12;
const TOTAL: u32 = 1 << SCALE_BITS;
const LOWER_BOUND: u32 = 1 << 23;

/// A symbol's slot in the 4096-wide cumulative range, with the reciprocal that replaces the
/// division in [`Reversed::put`] (htscodecs' `RansEncSymbolInit`; the division was the
/// encoder's largest cost).
#[derive(Clone, Copy, Default)]
struct Slot {
    freq: u32,
    reciprocal: u64,
    shift: u32,
    bias: u32,
    /// The state from which a byte must be emitted before this symbol goes in.
    max: u32,
}

impl Slot {
    fn new(start: u32, freq: u32) -> Slot {
        let max = ((LOWER_BOUND >> SCALE_BITS) << 8) * freq;
        if freq < 2 {
            // x / 1 = x: multiply by 2^32 - 1 and shift by 32 gives x - 1; the bias adds it back.
            return Slot {
                freq,
                reciprocal: u64::from(u32::MAX),
                shift: 32,
                bias: start + TOTAL - 1,
                max,
            };
        }
        let shift = 32 - (freq - 1).leading_zeros(); // ceil(log2(freq))
        let reciprocal = (1u64 << (shift + 31)).div_ceil(u64::from(freq));
        Slot { freq, reciprocal, shift: shift - 1 + 32, bias: start, max }
    }
}

/// The encoder's output, written from the end of a buffer backwards (rANS emits in reverse):
/// no reversal pass, no capacity check per byte.
struct Reversed {
    buf: Vec<u8>,
    /// Where the last byte written is.
    at: usize,
}

impl Reversed {
    /// Room for `n` symbols: at most 12 bits each, plus the final states.
    fn for_symbols(n: usize) -> Reversed {
        let len = n * 2 + 64;
        Reversed { buf: vec![0; len], at: len }
    }

    #[inline]
    fn put(&mut self, state: &mut u32, slot: Slot) {
        let mut x = *state;
        while x >= slot.max {
            self.at -= 1;
            self.buf[self.at] = x as u8;
            x >>= 8;
        }
        let q = ((u64::from(x) * slot.reciprocal) >> slot.shift) as u32;
        // Wrapping: for a frequency of 1 the sum passes 2^32 and wraps to the exact result.
        *state = x.wrapping_add(slot.bias).wrapping_add(q.wrapping_mul(TOTAL - slot.freq));
    }

    /// Writes a final state; in the finished stream it reads as little-endian.
    fn flush(&mut self, state: u32) {
        self.at -= 4;
        self.buf[self.at..self.at + 4].copy_from_slice(&state.to_le_bytes());
    }

    fn forward(&self) -> &[u8] {
        &self.buf[self.at..]
    }
}

/// `src` compressed with order-0 (`order1` false) or order-1 rANS, header included; order 1
/// needs at least 4 bytes (shorter input is coded order 0, as htscodecs does).
pub fn encode(src: &[u8], order1: bool) -> Vec<u8> {
    let (order, mut out) =
        if order1 && src.len() >= 4 { (1, encode_order1(src)) } else { (0, encode_order0(src)) };
    let size = (out.len() - 9) as u32;
    out[0] = order;
    out[1..5].copy_from_slice(&size.to_le_bytes());
    out[5..9].copy_from_slice(&(src.len() as u32).to_le_bytes());
    out
}

/// Scales `counts` to sum 4095 with no present symbol at zero (htscodecs' normalisation: the
/// most frequent symbol takes up the rounding), then lays the slots out in symbol order.
fn normalise(counts: &[u32; 256]) -> [Slot; 256] {
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    let mut freqs = [0u32; 256];
    let mut scale = (u64::from(TOTAL) << 31) / total.max(1);
    loop {
        let mut sum = 1u32; // htscodecs keeps one slot spare: the table sums to 4095
        let mut most = 0usize;
        for (s, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if c > counts[most] {
                most = s;
            }
            freqs[s] = ((u64::from(c) * scale) >> 31).max(1) as u32;
            sum += freqs[s];
        }
        if counts[most] == 0 {
            most = counts.iter().position(|&c| c > 0).unwrap_or(0);
        }
        if sum <= TOTAL {
            freqs[most] += TOTAL - sum;
            break;
        } else if sum - TOTAL < freqs[most] / 2 {
            freqs[most] -= sum - TOTAL;
            break;
        }
        scale = scale * 98 / 100;
    }
    let mut slots = [Slot::default(); 256];
    let mut start = 0;
    for s in 0..256 {
        slots[s] = if freqs[s] > 0 { Slot::new(start, freqs[s]) } else { Slot::default() };
        start += freqs[s];
    }
    slots
}

/// One frequency table: the present symbols with htscodecs' run-length coding of consecutive
/// symbols, each frequency in one byte (<128) or two; a 0 ends it.
fn write_table(out: &mut Vec<u8>, slots: &[Slot; 256]) {
    write_runs(out, |s| slots[s].freq > 0, |out, s| write_freq(out, slots[s].freq));
}

fn write_freq(out: &mut Vec<u8>, freq: u32) {
    if freq < 128 {
        out.push(freq as u8);
    } else {
        out.extend_from_slice(&[128 | (freq >> 8) as u8, freq as u8]);
    }
}

/// Writes the symbols for which `present` holds, in order, each followed by `body`: a symbol
/// that follows a present one starts a run, written as the count of the present symbols after
/// it, whose own numbers are then left out. A 0 ends the list.
fn write_runs(
    out: &mut Vec<u8>,
    present: impl Fn(usize) -> bool,
    mut body: impl FnMut(&mut Vec<u8>, usize),
) {
    let mut run = 0usize;
    for s in 0..256 {
        if !present(s) {
            continue;
        }
        if run > 0 {
            run -= 1;
        } else {
            out.push(s as u8);
            if s > 0 && present(s - 1) {
                run = (s + 1..256).take_while(|&t| present(t)).count();
                out.push(run as u8);
            }
        }
        body(out, s);
    }
    out.push(0);
}

fn encode_order0(src: &[u8]) -> Vec<u8> {
    let mut counts = [0u32; 256];
    for &b in src {
        counts[b as usize] += 1;
    }
    let slots = normalise(&counts);
    let mut out = vec![0; 9];
    write_table(&mut out, &slots);
    let n = src.len();
    let mut rev = Reversed::for_symbols(n);
    let mut states = [LOWER_BOUND; 4];
    let tail = n & 3;
    for k in (0..tail).rev() {
        // The last `tail` bytes go to states 0..tail, the last byte to the highest.
        rev.put(&mut states[k], slots[src[n - tail + k] as usize]);
    }
    for i in (0..n / 4).rev() {
        for k in (0..4).rev() {
            rev.put(&mut states[k], slots[src[4 * i + k] as usize]);
        }
    }
    for k in (0..4).rev() {
        rev.flush(states[k]);
    }
    out.extend_from_slice(rev.forward());
    out
}

fn encode_order1(src: &[u8]) -> Vec<u8> {
    let n = src.len();
    let quarter = n / 4;
    let mut counts = vec![[0u32; 256]; 256];
    let mut previous = 0usize;
    for &b in src {
        counts[previous][b as usize] += 1;
        previous = b as usize;
    }
    for k in 1..4 {
        counts[0][src[k * quarter] as usize] += 1;
    }
    // Tables for the contexts that occur only: a full 256 x 256 table zeroed for every block
    // was most of the encoder's time.
    let slots: Vec<Option<Box<[Slot; 256]>>> =
        counts.iter().map(|c| c.iter().any(|&x| x > 0).then(|| Box::new(normalise(c)))).collect();
    let absent = [Slot::default(); 256];
    let tables: Vec<&[Slot; 256]> = slots.iter().map(|t| t.as_deref().unwrap_or(&absent)).collect();
    let table = |c: u8| tables[c as usize];
    let mut out = vec![0; 9];
    write_runs(&mut out, |c| slots[c].is_some(), |out, c| write_table(out, table(c as u8)));

    // Stream k codes src[k*quarter ..] (the last one to the end); each starts in context 0.
    let starts = [0, quarter, 2 * quarter, 3 * quarter];
    let ends = [quarter, 2 * quarter, 3 * quarter, n];
    let mut rev = Reversed::for_symbols(n);
    let mut states = [LOWER_BOUND; 4];
    // The last stream's extra bytes first, then all four in step, last positions first.
    for i in (starts[3] + quarter..ends[3]).rev() {
        rev.put(&mut states[3], table(src[i - 1])[src[i] as usize]);
    }
    for step in (1..quarter).rev() {
        for k in (0..4).rev() {
            let i = starts[k] + step;
            rev.put(&mut states[k], table(src[i - 1])[src[i] as usize]);
        }
    }
    for k in (0..4).rev() {
        rev.put(&mut states[k], table(0)[src[starts[k]] as usize]);
    }
    for k in (0..4).rev() {
        rev.flush(states[k]);
    }
    out.extend_from_slice(rev.forward());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_sum_to_4095_and_keep_rare_symbols() {
        let mut counts = [0u32; 256];
        counts[b'A' as usize] = 1_000_000;
        counts[b'C' as usize] = 1;
        counts[b'G' as usize] = 3;
        let slots = normalise(&counts);
        let sum: u32 = slots.iter().map(|s| s.freq).sum();
        assert_eq!(sum, 4095);
        assert!(slots[b'C' as usize].freq >= 1 && slots[b'G' as usize].freq >= 1);
    }

    #[test]
    fn the_reciprocal_divides_exactly() {
        for freq in [1u32, 2, 3, 7, 100, 2048, 4095] {
            let slot = Slot::new(17, freq);
            for x in [LOWER_BOUND, LOWER_BOUND + 12345, slot.max - 1] {
                let q = ((u64::from(x) * slot.reciprocal) >> slot.shift) as u32;
                let fast = x.wrapping_add(slot.bias).wrapping_add(q.wrapping_mul(TOTAL - freq));
                let exact = ((x / freq) << SCALE_BITS) + x % freq + 17;
                assert_eq!(fast, exact, "freq {freq}, x {x}");
            }
        }
    }

    #[test]
    fn runs_of_present_symbols_are_counted_not_listed() {
        let mut out = Vec::new();
        let present = |s: usize| (65..=68).contains(&s) || s == 70;
        write_runs(&mut out, present, |out, _| out.push(9));
        // 'A' then 'B' starts a run of 2 more (C, D), then 'F'.
        assert_eq!(out, [65, 9, 66, 2, 9, 9, 9, 70, 9, 0]);
    }

    #[test]
    fn the_header_gives_order_and_sizes() {
        let src = b"ACGTACGTTTTTGGGGCCCCAAAA".repeat(20);
        for order1 in [false, true] {
            let out = encode(&src, order1);
            assert_eq!(out[0], u8::from(order1));
            let size = u32::from_le_bytes(out[1..5].try_into().unwrap()) as usize;
            assert_eq!(size, out.len() - 9);
            assert_eq!(u32::from_le_bytes(out[5..9].try_into().unwrap()) as usize, src.len());
            assert!(out.len() < src.len(), "{order1}: no compression");
        }
    }
}
