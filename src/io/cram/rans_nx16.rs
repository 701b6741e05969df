//! CRAM 3.1's rANS Nx16 decoder (block method 5; htscodecs `rans_uncompress_to_4x16` and the
//! `_O0/_O1_4x16/_32x16` decoders it calls): 4 or 32 (`X32`) interleaved 32-bit states
//! renormalised 16 bits at a time, order 0 (12-bit frequencies) or order 1 (10- or 12-bit,
//! tables optionally rANS-compressed themselves), and the transforms around the entropy coder:
//! `STRIPE` (N interleaved sub-streams), `NOSZ` (size from the caller), `CAT` (stored), `RLE`
//! and `PACK` (2, 4 or 8 symbols a byte).
//!
//! Malformed input gives `Err`, never a panic; the slot tables are those of
//! [`super::rans4x8_decode`], and every read of the compressed data is checked.

use super::codec_error::CodecError;
use super::context_slots::{ContextSlots, SLOTS, Table, with_table};
use super::rans_nx16_simd::{Lanes32, steps};
use super::rans4x8_decode::{advance, pack_slot};

const ORDER: u8 = 0x01;
const X32: u8 = 0x04;
const STRIPE: u8 = 0x08;
const NO_SIZE: u8 = 0x10;
const CAT: u8 = 0x20;
const RLE: u8 = 0x40;
const PACK: u8 = 0x80;

pub(super) const LOWER_BOUND: u32 = 1 << 15;
const O0_SHIFT: u32 = 12;
/// Stripes nest through recursion; htscodecs writes one level, a damaged stream could write
/// thousands.
const MAX_STRIPE_DEPTH: u32 = 4;

fn corrupt(what: &str) -> CodecError {
    CodecError::corrupt(format!("rANS Nx16: {what}"))
}

/// `src` decoded to `raw_size` bytes (the size is also the one a `NOSZ` stream relies on).
pub fn decode(src: &[u8], raw_size: usize) -> Result<Vec<u8>, CodecError> {
    let out = decode_stream(src, raw_size, 0)?;
    if out.len() != raw_size {
        return Err(corrupt(&format!("{} bytes decoded, {raw_size} expected", out.len())));
    }
    Ok(out)
}

/// The compressed data with a read position.
pub(super) struct Input<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Input<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Input { bytes, at: 0 }
    }

    pub(super) fn byte(&mut self) -> Result<u8, CodecError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| corrupt("truncated"))?;
        self.at += 1;
        Ok(b)
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.at.checked_add(n).ok_or_else(|| corrupt("length overflow"))?;
        let s = self.bytes.get(self.at..end).ok_or_else(|| corrupt("truncated"))?;
        self.at = end;
        Ok(s)
    }

    pub(super) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at.min(self.bytes.len())..]
    }

    /// htscodecs' `uint7`: 7 bits a byte, most significant group first, at most 5 bytes.
    pub(super) fn uint7(&mut self) -> Result<u32, CodecError> {
        let mut value = 0u32;
        for _ in 0..5 {
            let b = self.byte()?;
            value = (value << 7) | u32::from(b & 0x7f);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(corrupt("uint7 longer than 5 bytes"))
    }

    pub(super) fn size(&mut self) -> Result<usize, CodecError> {
        Ok(self.uint7()? as usize)
    }

    /// The initial states, each at least the lower bound.
    fn states<const N: usize>(&mut self) -> Result<[u32; N], CodecError> {
        let mut states = [0u32; N];
        for state in &mut states {
            let b = self.take(4)?;
            *state = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if *state < LOWER_BOUND {
                return Err(corrupt("initial state too small"));
            }
        }
        Ok(states)
    }

    /// 16-bit renormalisation, skipped at the end of the data as htscodecs' safe variant does.
    #[inline(always)]
    fn renormalise(&mut self, x: &mut u32) {
        if *x < LOWER_BOUND
            && let Some(&[a, b]) = self.bytes.get(self.at..self.at + 2)
        {
            *x = (*x << 16) | u32::from(u16::from_le_bytes([a, b]));
            self.at += 2;
        }
    }

    /// The next 64 bytes, when there are that many: enough for one 16-bit renormalisation of
    /// each of 32 states, read by [`renormalise_in`] without bounds checks or branches.
    #[inline(always)]
    fn window(&self) -> Option<&'a [u8; 64]> {
        self.bytes.get(self.at..self.at + 64)?.try_into().ok()
    }

    /// A symbol list: run-length coded as in htscodecs' `decode_alphabet` (a symbol whose
    /// successor follows is followed by a count of further consecutive ones), ended by 0.
    fn alphabet(&mut self) -> Result<[bool; 256], CodecError> {
        let mut present = [false; 256];
        let mut symbol = usize::from(self.byte()?);
        let mut run = 0usize;
        loop {
            present[symbol] = true;
            if run == 0 && self.bytes.get(self.at).map(|&b| usize::from(b)) == Some(symbol + 1) {
                symbol = usize::from(self.byte()?);
                run = usize::from(self.byte()?);
            } else if run > 0 {
                run -= 1;
                symbol += 1;
                if symbol > 255 {
                    return Err(corrupt("symbol run past 255"));
                }
            } else {
                symbol = usize::from(self.byte()?);
            }
            if symbol == 0 {
                return Ok(present);
            }
        }
    }
}

/// [`Input::renormalise`] inside a window: `used` counts the window's bytes taken so far
/// (at most 2 a state, so under 64 for 32 states).
#[inline(always)]
fn renormalise_in(x: u32, window: &[u8; 64], used: &mut usize) -> u32 {
    let word = u32::from(window[*used & 63]) | (u32::from(window[(*used + 1) & 63]) << 8);
    let low = x < LOWER_BOUND;
    *used += 2 * usize::from(low);
    if low { (x << 16) | word } else { x }
}

fn decode_stream(src: &[u8], expected: usize, depth: u32) -> Result<Vec<u8>, CodecError> {
    let flags = *src.first().ok_or_else(|| corrupt("empty stream"))?;
    if flags & STRIPE != 0 {
        return decode_striped(src, expected, depth, decode_stream);
    }
    let mut input = Input { bytes: src, at: 1 };
    let size = if flags & NO_SIZE == 0 { input.size()? } else { expected };
    if size > expected {
        return Err(corrupt(&format!("{size} bytes announced, {expected} expected")));
    }
    let pack = if flags & PACK != 0 { Some(read_pack_map(&mut input, size)?) } else { None };
    let mut coded_size = match &pack {
        Some((_, packed_size)) => *packed_size,
        None => size,
    };
    let mut rle_meta = None;
    if flags & RLE != 0 {
        let (meta, literals) = read_rle_meta(&mut input, coded_size, flags)?;
        rle_meta = Some(meta);
        coded_size = literals;
    }
    let rest = input.rest();
    let coded = if rest.is_empty() {
        Vec::new()
    } else if flags & CAT != 0 {
        rest.get(..coded_size).ok_or_else(|| corrupt("stored data too short"))?.to_vec()
    } else {
        entropy_decode(rest, coded_size, flags)?
    };
    let expanded = match rle_meta {
        Some(meta) => expand_runs(&coded, &meta, size)?,
        None => coded,
    };
    match pack {
        Some((map, _)) => unpack(&expanded, size, &map),
        None => Ok(expanded),
    }
}

/// Order 0 or 1 with 4 or 32 states, as the flags say.
fn entropy_decode(src: &[u8], size: usize, flags: u8) -> Result<Vec<u8>, CodecError> {
    let mut out = vec![0u8; size];
    match (flags & ORDER != 0, flags & X32 != 0) {
        (false, false) => decode_order0::<4>(src, &mut out)?,
        (false, true) => decode_order0::<32>(src, &mut out)?,
        (true, false) => decode_order1::<4>(src, &mut out)?,
        (true, true) => decode_order1::<32>(src, &mut out)?,
    }
    Ok(out)
}

/// A whole stream decoder: data, expected size, stripe nesting depth.
pub(super) type StreamDecoder = fn(&[u8], usize, u32) -> Result<Vec<u8>, CodecError>;

/// `STRIPE`: N sub-streams (each a whole stream for `decode_part`: this codec's or the
/// arithmetic coder's, which stripes alike), the i-th holding bytes i, i+N, …
pub(super) fn decode_striped(
    src: &[u8],
    expected: usize,
    depth: u32,
    decode_part: StreamDecoder,
) -> Result<Vec<u8>, CodecError> {
    if depth >= MAX_STRIPE_DEPTH {
        return Err(corrupt("stripes nested too deep"));
    }
    let mut input = Input { bytes: src, at: 1 };
    let size = input.size()?;
    if size != expected {
        return Err(corrupt(&format!("striped size {size}, {expected} expected")));
    }
    let n = usize::from(input.byte()?);
    if n == 0 {
        return Err(corrupt("zero stripes"));
    }
    let mut lengths = Vec::with_capacity(n);
    for _ in 0..n {
        lengths.push(input.size()?);
    }
    let mut out = vec![0u8; size];
    for (i, &length) in lengths.iter().enumerate() {
        let part_size = size / n + usize::from(size % n > i);
        let part = input.take(length)?;
        let decoded = decode_part(part, part_size, depth + 1)?;
        if decoded.len() != part_size {
            return Err(corrupt("stripe of the wrong size"));
        }
        for (dst, &b) in out.iter_mut().skip(i).step_by(n).zip(&decoded) {
            *dst = b;
        }
    }
    Ok(out)
}

/// `PACK`'s header: the symbols (at most 16 are packed) and the packed length.
pub(super) type PackMap = ([u8; 16], usize);

pub(super) fn read_pack_map(
    input: &mut Input,
    size: usize,
) -> Result<(PackMap, usize), CodecError> {
    let count = match input.byte()? {
        0 => 256,
        n => usize::from(n),
    };
    let mut map = [0u8; 16];
    if count <= 16 {
        map[..count].copy_from_slice(input.take(count)?);
    }
    let packed_size = input.size()?;
    if packed_size > size {
        return Err(corrupt("packed data larger than unpacked"));
    }
    Ok(((map, count), packed_size))
}

/// `RLE`'s metadata (run symbols, then run lengths) and the number of literals.
fn read_rle_meta(
    input: &mut Input,
    coded_size: usize,
    flags: u8,
) -> Result<(Vec<u8>, usize), CodecError> {
    let meta_field = input.size()?;
    let literals = input.size()?;
    if literals > coded_size {
        return Err(corrupt("more RLE literals than bytes"));
    }
    let meta_size = meta_field / 2;
    let meta = if meta_field & 1 != 0 {
        let available = input.rest().len();
        input.take(meta_size.min(available))?.to_vec()
    } else {
        let compressed = input.size()?;
        let packed = input.take(compressed)?;
        let mut meta = vec![0u8; meta_size];
        if flags & X32 != 0 {
            decode_order0::<32>(packed, &mut meta)?;
        } else {
            decode_order0::<4>(packed, &mut meta)?;
        }
        meta
    };
    Ok((meta, literals))
}

/// Undoes `RLE`: each literal that is a run symbol is followed, in the run list, by how many
/// more copies of it follow.
fn expand_runs(literals: &[u8], meta: &[u8], size: usize) -> Result<Vec<u8>, CodecError> {
    let (&count, rest) = meta.split_first().ok_or_else(|| corrupt("empty RLE metadata"))?;
    let count = if count == 0 { 256 } else { usize::from(count) };
    if rest.len() < count {
        return Err(corrupt("RLE metadata too short"));
    }
    let (symbols, runs) = rest.split_at(count);
    let mut is_run = [false; 256];
    for &s in symbols {
        is_run[usize::from(s)] = true;
    }
    let mut runs = Input::new(runs);
    let mut out = vec![0u8; size];
    let mut at = 0;
    for &b in literals {
        if !is_run[usize::from(b)] {
            *out.get_mut(at).ok_or_else(|| corrupt("RLE literals past the output"))? = b;
            at += 1;
            continue;
        }
        let copies = runs.size()? + 1;
        let run =
            out.get_mut(at..at + copies).ok_or_else(|| corrupt("RLE runs past the output"))?;
        run.fill(b);
        at += copies;
    }
    out.truncate(at);
    Ok(out)
}

/// Undoes `PACK`: 8, 4 or 2 symbols a byte (1, 2 or 4 bits, low bits first), a single symbol
/// repeated, or (over 16 symbols) the bytes as they are.
pub(super) fn unpack(
    packed: &[u8],
    size: usize,
    (map, count): &PackMap,
) -> Result<Vec<u8>, CodecError> {
    let bits = match count {
        0..=1 => return Ok(vec![map[0]; size]),
        2 => 1,
        3..=4 => 2,
        5..=16 => 4,
        _ => return Ok(packed.to_vec()),
    };
    let per_byte = 8 / bits;
    if packed.len() < size.div_ceil(per_byte) {
        return Err(corrupt("packed data too short"));
    }
    let mask = (1u8 << bits) - 1;
    // Each packed byte's symbols, looked up whole.
    let mut expansions = [[0u8; 8]; 256];
    for (b, expansion) in expansions.iter_mut().enumerate() {
        for (k, symbol) in expansion[..per_byte].iter_mut().enumerate() {
            *symbol = map[usize::from((b as u8 >> (k * bits)) & mask)];
        }
    }
    let mut out = vec![0u8; size.next_multiple_of(per_byte)];
    for (chunk, &b) in out.chunks_exact_mut(per_byte).zip(packed) {
        chunk.copy_from_slice(&expansions[usize::from(b)][..per_byte]);
    }
    out.truncate(size);
    Ok(out)
}

/// An order-0 frequency table into 4096 slots: the alphabet, then each present symbol's
/// frequency; the total must be a power of two up to 4096 (scaled up to 4096 here).
fn read_order0_table(
    input: &mut Input,
    slots: &mut [u32; 1 << O0_SHIFT],
) -> Result<(), CodecError> {
    let present = input.alphabet()?;
    let mut freqs = [0u32; 256];
    let mut total = 0u64;
    for s in 0..256 {
        if present[s] {
            freqs[s] = input.uint7()?;
            total += u64::from(freqs[s]);
        }
    }
    fill_slots(&freqs, total, O0_SHIFT, slots)
}

/// Scales `freqs` (summing to `total`, a power of two) to sum `1 << shift` and lays the
/// symbols' slots out in order.
fn fill_slots(
    freqs: &[u32; 256],
    total: u64,
    shift: u32,
    slots: &mut [u32],
) -> Result<(), CodecError> {
    let target = 1u64 << shift;
    let mut scale = 0;
    if total > 0 {
        while total << scale < target {
            scale += 1;
        }
    }
    if total << scale != target {
        return Err(corrupt("frequencies do not sum to a power of two"));
    }
    let mut start = 0usize;
    for (symbol, &f) in freqs.iter().enumerate() {
        let freq = (f << scale) as usize;
        if freq == 0 {
            continue;
        }
        for (offset, slot) in slots[start..start + freq].iter_mut().enumerate() {
            *slot = pack_slot(symbol as u8, offset as u32, freq as u32);
        }
        start += freq;
    }
    Ok(())
}

/// Order 0: byte i comes from state i mod N.
fn decode_order0<const N: usize>(src: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    let mut input = Input::new(src);
    let mut slots = [0u32; 1 << O0_SHIFT];
    read_order0_table(&mut input, &mut slots)?;
    let mut r = input.states::<N>()?;
    const MASK: u32 = (1 << O0_SHIFT) - 1;
    let mut first = 0;
    if let Ok(states) = <&mut [u32; 32]>::try_from(&mut r[..]) {
        let (input, at) = (input.bytes, &mut input.at);
        let contexts = &mut [0; 32];
        let part = out.len() / 32;
        let job = Lanes32 { slots: &slots, states, contexts, input, at, out: &mut *out, part };
        first = steps::<false, O0_SHIFT, { 1 << O0_SHIFT }>(job);
    }
    let mut chunks = out[first * N..].chunks_exact_mut(N);
    for chunk in &mut chunks {
        if let Some(window) = input.window() {
            let mut used = 0;
            for g in (0..N).step_by(4) {
                let s = [
                    slots[(r[g] & MASK) as usize],
                    slots[(r[g + 1] & MASK) as usize],
                    slots[(r[g + 2] & MASK) as usize],
                    slots[(r[g + 3] & MASK) as usize],
                ];
                for k in 0..4 {
                    chunk[g + k] = s[k] as u8;
                    r[g + k] = advance(s[k], r[g + k], O0_SHIFT);
                }
                for k in 0..4 {
                    r[g + k] = renormalise_in(r[g + k], window, &mut used);
                }
            }
            input.at += used;
        } else {
            for z in 0..N {
                let s = slots[(r[z] & MASK) as usize];
                chunk[z] = s as u8;
                r[z] = advance(s, r[z], O0_SHIFT);
                input.renormalise(&mut r[z]);
            }
        }
    }
    for (z, byte) in chunks.into_remainder().iter_mut().enumerate() {
        let s = slots[(r[z] & MASK) as usize];
        *byte = s as u8;
        r[z] = advance(s, r[z], O0_SHIFT);
        input.renormalise(&mut r[z]);
    }
    Ok(())
}

/// The order-1 tables: a byte with the frequency bits (high nibble) and whether the tables are
/// themselves order-0 compressed (bit 0), then the contexts' alphabet and one frequency list
/// per context over that alphabet, runs of zeros run-length coded. Each context's slots go in
/// `slots` at `context << shift`.
fn read_order1_tables(input: &mut Input, slots: &mut Table) -> Result<u32, CodecError> {
    let header = input.byte()?;
    let shift = u32::from(header >> 4);
    if shift != 10 && shift != 12 {
        return Err(corrupt(&format!("order-1 frequency bits {shift}")));
    }
    let unpacked;
    let mut tables = if header & 1 != 0 {
        let size = input.size()?;
        let compressed = input.size()?;
        let packed = input.take(compressed)?;
        let mut buffer = vec![0u8; size];
        decode_order0::<4>(packed, &mut buffer)?;
        unpacked = buffer;
        Input::new(&unpacked)
    } else {
        Input::new(input.rest())
    };
    let contexts = tables.alphabet()?;
    for context in 0..256 {
        if !contexts[context] {
            continue;
        }
        if tables.at >= tables.bytes.len() {
            return Err(corrupt("order-1 tables truncated"));
        }
        let mut freqs = [0u32; 256];
        let mut total = 0u64;
        let mut zeros = 0usize;
        for (symbol, freq) in freqs.iter_mut().enumerate() {
            if tables.at >= tables.bytes.len() {
                break;
            }
            if !contexts[symbol] {
                continue;
            }
            if zeros > 0 {
                zeros -= 1;
                continue;
            }
            *freq = tables.uint7()?;
            if *freq == 0 {
                zeros = usize::from(tables.byte()?);
            }
            total += u64::from(*freq);
        }
        if total == 0 {
            continue;
        }
        let start = context << shift;
        fill_slots(&freqs, total, shift, slots.row(start, 1 << shift))?;
    }
    if header & 1 == 0 {
        input.at += tables.at;
    }
    Ok(shift)
}

/// Order 1: the output in N equal parts (the last takes the remainder), part z decoded by
/// state z from context 0 on, each byte the context of the next.
fn decode_order1<const N: usize>(src: &[u8], out: &mut [u8]) -> Result<(), CodecError> {
    with_table(|table| {
        let mut input = Input::new(src);
        let shift = read_order1_tables(&mut input, table)?;
        let r = input.states::<N>()?;
        if shift == 12 {
            order1_loop::<N, 12>(&mut input, table.slots(), r, out);
        } else {
            order1_loop::<N, 10>(&mut input, table.slots(), r, out);
        }
        Ok(())
    })
}

fn order1_loop<const N: usize, const SHIFT: u32>(
    input: &mut Input,
    slots: &ContextSlots,
    mut r: [u32; N],
    out: &mut [u8],
) {
    let mask = (1u32 << SHIFT) - 1;
    let lookup =
        |context: u32, x: u32| slots[(((context << SHIFT) | (x & mask)) as usize) & (SLOTS - 1)];
    let part = out.len() / N;
    let mut context = [0u32; N];
    let mut first = 0;
    if let (Ok(states), Ok(contexts)) =
        (<&mut [u32; 32]>::try_from(&mut r[..]), <&mut [u32; 32]>::try_from(&mut context[..]))
    {
        let (input, at) = (input.bytes, &mut input.at);
        let job = Lanes32 { slots, states, contexts, input, at, out: &mut *out, part };
        first = steps::<true, SHIFT, SLOTS>(job);
    }
    for i in first..part {
        if let Some(window) = input.window() {
            let mut used = 0;
            // Four lanes at a time: their table loads issue together (htscodecs' layout).
            for g in (0..N).step_by(4) {
                let s = [
                    lookup(context[g], r[g]),
                    lookup(context[g + 1], r[g + 1]),
                    lookup(context[g + 2], r[g + 2]),
                    lookup(context[g + 3], r[g + 3]),
                ];
                for k in 0..4 {
                    out[(g + k) * part + i] = s[k] as u8;
                    context[g + k] = s[k] & 0xff;
                    r[g + k] = advance(s[k], r[g + k], SHIFT);
                }
                for k in 0..4 {
                    r[g + k] = renormalise_in(r[g + k], window, &mut used);
                }
            }
            input.at += used;
        } else {
            for z in 0..N {
                let s = lookup(context[z], r[z]);
                out[z * part + i] = s as u8;
                context[z] = s & 0xff;
                r[z] = advance(s, r[z], SHIFT);
                input.renormalise(&mut r[z]);
            }
        }
    }
    let last = N - 1;
    for byte in &mut out[N * part..] {
        let s = lookup(context[last], r[last]);
        *byte = s as u8;
        context[last] = s & 0xff;
        r[last] = advance(s, r[last], SHIFT);
        input.renormalise(&mut r[last]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_data_comes_back() {
        assert_eq!(decode(&[CAT, 3, b'a', b'b', b'c'], 3).unwrap(), b"abc");
        assert_eq!(decode(&[CAT | NO_SIZE, b'x', b'y'], 2).unwrap(), b"xy");
        assert!(decode(&[CAT, 4, b'a', b'b', b'c'], 4).is_err());
        assert!(decode(&[CAT, 3, b'a', b'b', b'c'], 2).is_err());
    }

    #[test]
    fn packed_symbols_unpack_low_bits_first() {
        // Two symbols, one bit each: 0b0000_0110 is A C C A A A A A, then A C.
        let src = [PACK | CAT, 10, 2, b'A', b'C', 2, 0b0000_0110, 0b10];
        assert_eq!(decode(&src, 10).unwrap(), b"ACCAAAAAAC");
        // Three symbols, two bits each.
        let src = [PACK | CAT, 5, 3, b'x', b'y', b'z', 2, 0b1001_0010, 0];
        assert_eq!(decode(&src, 5).unwrap(), b"zxyzx");
        // One symbol: nothing stored.
        assert_eq!(decode(&[PACK | CAT, 4, 1, b'q', 0], 4).unwrap(), b"qqqq");
    }

    #[test]
    fn runs_expand_from_their_metadata() {
        // Run symbol 'a'; literals "abab", run lengths 2 and 0.
        let meta = [1, b'a', 2, 0];
        let mut src = vec![RLE | CAT, 6, (meta.len() * 2 + 1) as u8, 4];
        src.extend_from_slice(&meta);
        src.extend_from_slice(b"abab");
        assert_eq!(decode(&src, 6).unwrap(), b"aaabab");
        assert!(decode(&src, 5).is_err());
    }

    #[test]
    fn stripes_interleave() {
        let src = [STRIPE, 5, 2, 4, 3, CAT | NO_SIZE, b'a', b'c', b'e', CAT | NO_SIZE, b'b', b'd'];
        assert_eq!(decode(&src, 5).unwrap(), b"abcde");
    }

    #[test]
    fn more_stripes_than_bytes_leave_the_extra_ones_empty() {
        let empty = [CAT | NO_SIZE];
        let mut src = vec![STRIPE, 2, 4, 2, 2, 1, 1, CAT | NO_SIZE, b'a', CAT | NO_SIZE, b'b'];
        src.extend_from_slice(&empty);
        src.extend_from_slice(&empty);
        assert_eq!(decode(&src, 2).unwrap(), b"ab");
    }

    #[test]
    fn damaged_streams_are_errors_not_panics() {
        let mut seed = 99u64;
        let samples: [&[u8]; 4] = [
            &[CAT, 3, b'a', b'b', b'c'],
            &[PACK | CAT, 10, 2, b'A', b'C', 2, 6, 2],
            &[STRIPE, 5, 2, 4, 3, CAT | NO_SIZE, b'a', b'c', b'e', CAT | NO_SIZE, b'b', b'd'],
            &[ORDER, 20, 0xc1, 3, 3, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0],
        ];
        for sample in samples {
            for cut in 0..sample.len() {
                let _ = decode(&sample[..cut], 5);
            }
            for _ in 0..2000 {
                let mut bad = sample.to_vec();
                bad.extend((0..(seed % 40)).map(|i| (seed >> (i % 50)) as u8));
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = (seed >> 33) as usize % bad.len();
                bad[at] = (seed >> 13) as u8;
                let _ = decode(&bad, (seed >> 40) as usize % 300);
            }
        }
    }
}
