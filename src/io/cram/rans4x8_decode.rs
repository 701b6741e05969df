//! CRAM 3.0's rANS 4x8 decoder (block method 4; htscodecs `rans_uncompress_O0/O1`), the
//! counterpart of [`super::rans`]: four interleaved 32-bit states renormalised a byte at a
//! time, 12-bit frequencies, one 4096-slot lookup table (per context for order 1) that gives a
//! state's symbol, frequency and offset in one load.
//!
//! Malformed input gives `Err`, never a panic: table indices are masked into fixed-size
//! arrays, and input reads stop at the end of the data as htscodecs' "safe" renormalisation
//! does (valid streams never get there before their last symbol).

use super::codec_error::CodecError;
use super::context_slots::{ContextSlots, SLOTS, Table, with_table};

const SHIFT: u32 = 12;
const TOTAL: u32 = 1 << SHIFT;
const MASK: u32 = TOTAL - 1;
const LOWER_BOUND: u32 = 1 << 23;

/// One slot of a lookup table: symbol in bits 0..8, the slot's offset within the symbol's
/// range in bits 8..20 and the symbol's frequency minus one in bits 20..32 (a frequency of 4096
/// fits only that way). A zeroed slot decodes as symbol 0 with frequency 1: garbage for
/// corrupt streams, never a fault.
#[inline(always)]
pub(super) fn pack_slot(symbol: u8, offset: u32, freq: u32) -> u32 {
    u32::from(symbol) | (offset << 8) | ((freq - 1) << 20)
}

/// The state after decoding the symbol of `slot` (`x`'s low `shift` bits chose the slot).
#[inline(always)]
pub(super) fn advance(slot: u32, x: u32, shift: u32) -> u32 {
    let freq = (slot >> 20) + 1;
    let offset = (slot >> 8) & 0xfff;
    freq.wrapping_mul(x >> shift).wrapping_add(offset)
}

/// `src` decoded; its header must announce `raw_size` bytes.
pub fn decode(src: &[u8], raw_size: usize) -> Result<Vec<u8>, CodecError> {
    let header = src.get(..9).ok_or_else(|| CodecError::corrupt("rANS 4x8: short header"))?;
    let order = header[0];
    let compressed = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
    let size = u32::from_le_bytes([header[5], header[6], header[7], header[8]]) as usize;
    if size != raw_size {
        return Err(CodecError::corrupt(format!(
            "rANS 4x8: {size} bytes in the header, {raw_size} expected"
        )));
    }
    let body = src
        .get(9..9 + compressed)
        .ok_or_else(|| CodecError::corrupt("rANS 4x8: data shorter than its header says"))?;
    let mut out = vec![0u8; size];
    match order {
        0 => decode_order0(body, &mut out)?,
        1 => decode_order1(body, &mut out)?,
        _ => return Err(CodecError::corrupt(format!("rANS 4x8: order {order}"))),
    }
    Ok(out)
}

/// A byte reader over the compressed data.
struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn byte(&mut self) -> Result<u8, CodecError> {
        let b =
            *self.bytes.get(self.at).ok_or_else(|| CodecError::corrupt("rANS 4x8: truncated"))?;
        self.at += 1;
        Ok(b)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// The four initial states, each at least the lower bound.
    fn states(&mut self) -> Result<[u32; 4], CodecError> {
        let mut states = [0u32; 4];
        for state in &mut states {
            let b = self.bytes.get(self.at..self.at + 4);
            let b = b.ok_or_else(|| CodecError::corrupt("rANS 4x8: no initial states"))?;
            *state = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if *state < LOWER_BOUND {
                return Err(CodecError::corrupt("rANS 4x8: initial state too small"));
            }
            self.at += 4;
        }
        Ok(states)
    }

    /// The next 8 bytes, when there are that many: enough for the four states' renormalisation,
    /// read by [`renormalise_in`] without bounds checks.
    #[inline(always)]
    fn window(&self) -> Option<&[u8; 8]> {
        self.bytes.get(self.at..self.at + 8)?.try_into().ok()
    }

    /// Byte renormalisation: at most two bytes bring a decoded state back above the bound.
    #[inline(always)]
    fn renormalise(&mut self, x: &mut u32) {
        if *x >= LOWER_BOUND {
            return;
        }
        if let Some(&[a, b]) = self.bytes.get(self.at..self.at + 2) {
            let one = (*x << 8) | u32::from(a);
            if one >= LOWER_BOUND {
                *x = one;
                self.at += 1;
            } else {
                *x = (one << 8) | u32::from(b);
                self.at += 2;
            }
        } else if let Some(&a) = self.bytes.get(self.at) {
            *x = (*x << 8) | u32::from(a);
            self.at += 1;
        }
    }

    /// The next symbol of a run-length coded symbol list (htscodecs' tables): after a symbol
    /// whose successor follows, a count of further consecutive symbols that are left out.
    fn next_symbol(&mut self, symbol: u32, run: &mut u32) -> Result<u32, CodecError> {
        if *run == 0 && self.peek().map(u32::from) == Some(symbol + 1) {
            let next = u32::from(self.byte()?);
            *run = u32::from(self.byte()?);
            Ok(next)
        } else if *run > 0 {
            *run -= 1;
            if symbol + 1 > 255 {
                return Err(CodecError::corrupt("rANS 4x8: symbol run past 255"));
            }
            Ok(symbol + 1)
        } else {
            Ok(u32::from(self.byte()?))
        }
    }

    /// One frequency table into `slots`: symbols with their frequencies (one byte, or two when
    /// the first has bit 7 set) summing to 4095 or 4096. Order 1 reads a 0 as 4096.
    fn table(&mut self, slots: &mut [u32], zero_is_total: bool) -> Result<(), CodecError> {
        let mut run = 0;
        let mut symbol = u32::from(self.byte()?);
        let mut filled = 0u32;
        loop {
            let mut freq = u32::from(self.byte()?);
            if freq >= 128 {
                freq = ((freq & 127) << 8) | u32::from(self.byte()?);
            }
            if freq == 0 && zero_is_total {
                freq = TOTAL;
            }
            if filled + freq > TOTAL {
                return Err(CodecError::corrupt("rANS 4x8: frequencies above 4096"));
            }
            let range = &mut slots[filled as usize..(filled + freq) as usize];
            for (offset, slot) in range.iter_mut().enumerate() {
                *slot = pack_slot(symbol as u8, offset as u32, freq);
            }
            filled += freq;
            symbol = self.next_symbol(symbol, &mut run)?;
            if symbol == 0 {
                break;
            }
        }
        if filled < TOTAL - 1 {
            return Err(CodecError::corrupt("rANS 4x8: frequencies below 4095"));
        }
        if filled == TOTAL - 1 {
            // htscodecs' tables sum to 4095: the spare slot extends the last symbol's range.
            slots[TOTAL as usize - 1] = slots[TOTAL as usize - 2] + (1 << 8);
        }
        Ok(())
    }
}

/// [`Input::renormalise`] inside a window; `used` counts the window's bytes taken so far. How
/// many bytes the state takes (0, 1 or 2) follows from the state alone, so the byte loads of the
/// four states do not wait on one another (a byte at a time, each load waited on the previous
/// one's comparison).
#[inline(always)]
fn renormalise_in(x: u32, window: &[u8; 8], used: &mut usize) -> u32 {
    let n = u32::from(x < LOWER_BOUND) + u32::from(x < LOWER_BOUND >> 8);
    let next_two = u32::from(u16::from_be_bytes([window[*used & 7], window[(*used + 1) & 7]]));
    *used += n as usize;
    // n = 0: x; n = 1: x << 8 and one byte; n = 2: x << 16 and two bytes.
    (x << (8 * n)) | (next_two >> (16 - 8 * n))
}

fn decode_order0(body: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    let mut input = Input { bytes: body, at: 0 };
    let mut slots = [0u32; TOTAL as usize];
    input.table(&mut slots, false)?;
    let mut r = input.states()?;
    let mut quads = out.chunks_exact_mut(4);
    for quad in &mut quads {
        let s = [
            slots[(r[0] & MASK) as usize],
            slots[(r[1] & MASK) as usize],
            slots[(r[2] & MASK) as usize],
            slots[(r[3] & MASK) as usize],
        ];
        for k in 0..4 {
            quad[k] = s[k] as u8;
            r[k] = advance(s[k], r[k], SHIFT);
        }
        renormalise_all(&mut input, &mut r);
    }
    // The last 1-3 bytes are read off states 0.. without advancing them (htscodecs' layout).
    for (k, byte) in quads.into_remainder().iter_mut().enumerate() {
        *byte = slots[(r[k] & MASK) as usize] as u8;
    }
    Ok(())
}

/// The four states renormalised, branch-free while 8 bytes remain.
#[inline(always)]
fn renormalise_all(input: &mut Input, r: &mut [u32; 4]) {
    if let Some(window) = input.window() {
        let mut used = 0;
        for x in r.iter_mut() {
            *x = renormalise_in(*x, window, &mut used);
        }
        input.at += used;
    } else {
        for x in r.iter_mut() {
            input.renormalise(x);
        }
    }
}

fn decode_order1(body: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    with_table(|table| decode_order1_with(body, out, table))
}

fn decode_order1_with(body: &[u8], out: &mut [u8], table: &mut Table) -> Result<(), CodecError> {
    let mut input = Input { bytes: body, at: 0 };
    let mut run = 0;
    let mut context = u32::from(input.byte()?);
    loop {
        let start = (context as usize) << SHIFT;
        input.table(table.row(start, TOTAL as usize), true)?;
        context = input.next_symbol(context, &mut run)?;
        if context == 0 {
            break;
        }
    }
    let slots: &ContextSlots = table.slots();
    let mut r = input.states()?;
    // Four quarters decoded side by side, each from context 0; the last takes the remainder.
    let quarter = out.len() / 4;
    let (q0, rest) = out.split_at_mut(quarter);
    let (q1, rest) = rest.split_at_mut(quarter);
    let (q2, q3) = rest.split_at_mut(quarter);
    let mut ctx = [0u32; 4];
    let lookup = |ctx: u32, x: u32| slots[(((ctx << SHIFT) | (x & MASK)) as usize) & (SLOTS - 1)];
    for i in 0..quarter {
        let s = [
            lookup(ctx[0], r[0]),
            lookup(ctx[1], r[1]),
            lookup(ctx[2], r[2]),
            lookup(ctx[3], r[3]),
        ];
        q0[i] = s[0] as u8;
        q1[i] = s[1] as u8;
        q2[i] = s[2] as u8;
        q3[i] = s[3] as u8;
        for k in 0..4 {
            ctx[k] = s[k] & 0xff;
            r[k] = advance(s[k], r[k], SHIFT);
        }
        renormalise_all(&mut input, &mut r);
    }
    for byte in &mut q3[quarter..] {
        let s = lookup(ctx[3], r[3]);
        *byte = s as u8;
        ctx[3] = s & 0xff;
        r[3] = advance(s, r[3], SHIFT);
        input.renormalise(&mut r[3]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::rans;
    use super::*;

    fn samples() -> Vec<Vec<u8>> {
        let mut seed = 0x9e37_79b9_u32;
        let mut random = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let noise: Vec<u8> = (0..50_000).map(|_| random() as u8).collect();
        let quality: Vec<u8> = (0..70_001).map(|_| b'!' + (random() % 41) as u8).collect();
        let runs: Vec<u8> = (0..9_999).map(|i| b"ACGT"[(i / 700) % 4]).collect();
        vec![
            Vec::new(),
            vec![b'x'],
            b"ab".to_vec(),
            b"abc".to_vec(),
            b"abcd".to_vec(),
            b"abcde".to_vec(),
            vec![7; 1000],
            noise,
            quality,
            runs,
        ]
    }

    #[test]
    fn decodes_what_the_encoder_writes() {
        for src in samples() {
            for order1 in [false, true] {
                let packed = rans::encode(&src, order1);
                let back = decode(&packed, src.len()).unwrap();
                assert!(back == src, "order1 {order1}, {} bytes", src.len());
            }
        }
    }

    #[test]
    fn a_wrong_size_or_order_is_an_error() {
        let packed = rans::encode(b"hello world", false);
        assert!(decode(&packed, 10).is_err());
        let mut bad = packed.clone();
        bad[0] = 2;
        assert!(decode(&bad, 11).is_err());
        assert!(decode(&packed[..5], 11).is_err());
    }

    #[test]
    fn damaged_input_never_panics() {
        let mut seed = 12345u64;
        for src in samples() {
            for order1 in [false, true] {
                let packed = rans::encode(&src, order1);
                for cut in [0, 1, 9, 10, 20, packed.len() / 2, packed.len().saturating_sub(1)] {
                    let _ = decode(&packed[..cut.min(packed.len())], src.len());
                }
                for _ in 0..50 {
                    let mut bad = packed.clone();
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let at = 9 + (seed >> 33) as usize % (bad.len() - 9);
                    bad[at] ^= (seed >> 20) as u8 | 1;
                    let _ = decode(&bad, src.len());
                }
            }
        }
    }
}
