//! CRAM 3.1's adaptive arithmetic coder (block method 6; htscodecs `arith_uncompress_to`, and
//! its order-0 and order-1 encoders `arith_compress_O0/O1` for the `archive` profile): a byte-wise range coder driven by adaptive frequency models (order 0,
//! order 1, each optionally with run lengths coded by their own models), wrapped in the same
//! `STRIPE`/`NOSZ`/`CAT`/`PACK` transforms as rANS Nx16, plus `EXT` (bzip2). noodles has this
//! decoder too, but private to its crate.
//!
//! The models must evolve exactly as htscodecs' do (`c_simple_model.h`): counts step by 16,
//! halve past 65519, and a symbol trades places with its predecessor when it overtakes it.

use std::io::Read;

use super::codec_error::CodecError;
use super::rans_nx16::{self, Input};

const ORDER1: u8 = 0x01;
const EXT: u8 = 0x04;
const STRIPE: u8 = 0x08;
const NO_SIZE: u8 = 0x10;
const CAT: u8 = 0x20;
const RLE: u8 = 0x40;
const PACK: u8 = 0x80;

const MAX_FREQ: u32 = (1 << 16) - 17;
const STEP: u16 = 16;
const TOP: u32 = 1 << 24;
/// Run lengths are coded in pieces of 0..=3, a 3 meaning more follows.
const MAX_RUN: usize = 4;
/// Run models: one per literal value, 256 for continuation pieces, 257 beyond.
const RUN_CONTEXTS: usize = 258;

fn corrupt(what: &str) -> CodecError {
    CodecError::corrupt(format!("arithmetic coder: {what}"))
}

/// `src` decoded to `raw_size` bytes.
pub fn decode(src: &[u8], raw_size: usize) -> Result<Vec<u8>, CodecError> {
    let out = decode_stream(src, raw_size, 0)?;
    if out.len() != raw_size {
        return Err(corrupt(&format!("{} bytes decoded, {raw_size} expected", out.len())));
    }
    Ok(out)
}

/// The range decoder (htscodecs `c_range_coder.h`); all arithmetic wraps as in C.
struct RangeDecoder<'a> {
    bytes: &'a [u8],
    at: usize,
    range: u32,
    code: u32,
    failed: bool,
}

impl<'a> RangeDecoder<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let mut rc = RangeDecoder { bytes, at: 0, range: u32::MAX, code: 0, failed: false };
        if bytes.len() < 5 {
            rc.at = bytes.len(); // htscodecs decodes nothing from it, without an error
        } else {
            for &b in &bytes[..5] {
                rc.code = (rc.code << 8) | u32::from(b);
            }
            rc.at = 5;
        }
        rc
    }

    fn frequency(&mut self, total: u32) -> u32 {
        if total == 0 || self.range < total {
            return 0;
        }
        self.range /= total;
        self.code / self.range
    }

    fn consume(&mut self, cumulative: u32, freq: u32) {
        self.code = self.code.wrapping_sub(cumulative.wrapping_mul(self.range));
        self.range = self.range.wrapping_mul(freq);
        while self.range < TOP {
            let Some(&b) = self.bytes.get(self.at) else {
                self.failed = true;
                return;
            };
            self.at += 1;
            self.code = (self.code << 8).wrapping_add(u32::from(b));
            self.range <<= 8;
        }
    }
}

/// The range encoder (htscodecs `c_range_coder.h`, Eugene Shelwien's carry-counting coder).
struct RangeEncoder {
    low: u32,
    range: u32,
    /// Bytes of 0xFF held back until a carry decides them.
    ff_run: u32,
    cache: u32,
    carry: u32,
    out: Vec<u8>,
}

/// `low` at or past this may still carry into its top byte.
const THRESHOLD: u32 = 255 * TOP;

impl RangeEncoder {
    fn new(out: Vec<u8>) -> Self {
        RangeEncoder { low: 0, range: u32::MAX, ff_run: 0, cache: 0, carry: 0, out }
    }

    fn encode(&mut self, cumulative: u32, freq: u32, total: u32) {
        let before = self.low;
        self.range /= total;
        self.low = self.low.wrapping_add(cumulative.wrapping_mul(self.range));
        self.range = self.range.wrapping_mul(freq);
        self.carry += u32::from(self.low < before);
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    fn shift_low(&mut self) {
        if self.low < THRESHOLD || self.carry != 0 {
            self.out.push(self.cache.wrapping_add(self.carry) as u8);
            for _ in 0..self.ff_run {
                self.out.push(self.carry.wrapping_sub(1) as u8);
            }
            self.ff_run = 0;
            self.cache = self.low >> 24;
            self.carry = 0;
        } else {
            self.ff_run += 1;
        }
        self.low <<= 8;
    }

    fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

/// `src` coded with an adaptive order-0 or order-1 model, no transforms (htscodecs
/// `arith_compress_to` with order 0 or 1): flags, size, the alphabet's bound, the coded bytes.
pub fn encode(src: &[u8], order1: bool) -> Vec<u8> {
    // htscodecs codes short inputs with order 0.
    let order1 = order1 && src.len() >= 8;
    let mut out = vec![u8::from(order1)];
    put_uint7(&mut out, src.len() as u32);
    let max_symbol = src.iter().max().map_or(1, |&m| usize::from(m) + 1);
    // 256 is stored as 0.
    out.push(max_symbol as u8);
    let mut models = byte_models(max_symbol, order1);
    let mut rc = RangeEncoder::new(out);
    let mut last = 0usize;
    for &b in src {
        models[if order1 { last } else { 0 }].encode(&mut rc, u16::from(b));
        last = usize::from(b);
    }
    rc.finish()
}

/// htscodecs' `var_put_u32`: 7 bits a byte, most significant first, the high bit on all but
/// the last.
fn put_uint7(out: &mut Vec<u8>, value: u32) {
    let mut groups = vec![(value & 0x7f) as u8];
    let mut rest = value >> 7;
    while rest != 0 {
        groups.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.extend(groups.iter().rev());
}

/// An adaptive model over `N` symbols: (frequency, symbol) pairs kept roughly sorted, most
/// frequent first, between a sentinel and a terminal entry that stop the searches.
struct Model<const N: usize> {
    total: u32,
    /// [sentinel, symbols 0..N, a zero that ends halving, terminal].
    entries: Vec<(u16, u16)>,
}

impl<const N: usize> Model<N> {
    fn new(max_symbol: usize) -> Self {
        let mut entries = Vec::with_capacity(N + 3);
        entries.push((MAX_FREQ as u16, 0));
        for s in 0..N {
            entries.push((u16::from(s < max_symbol), s as u16));
        }
        entries.push((0, 0));
        entries.push((MAX_FREQ as u16, 0));
        Model { total: max_symbol.min(N) as u32, entries }
    }

    fn halve(&mut self) {
        self.total = 0;
        for entry in &mut self.entries[1..] {
            if entry.0 == 0 {
                break;
            }
            entry.0 -= entry.0 >> 1;
            self.total += u32::from(entry.0);
        }
    }

    /// Codes `symbol` (one the model was made for) and adapts as [`Model::decode`] does.
    fn encode(&mut self, rc: &mut RangeEncoder, symbol: u16) {
        let mut cumulative = 0u32;
        let mut s = 1;
        while self.entries[s].1 != symbol {
            cumulative += u32::from(self.entries[s].0);
            s += 1;
        }
        rc.encode(cumulative, u32::from(self.entries[s].0), self.total);
        self.entries[s].0 += STEP;
        self.total += u32::from(STEP);
        if self.total > MAX_FREQ {
            self.halve();
        }
        if self.entries[s].0 > self.entries[s - 1].0 {
            self.entries.swap(s, s - 1);
        }
    }

    /// The next symbol; 0 for data htscodecs would also read as 0 (a frequency out of range).
    fn decode(&mut self, rc: &mut RangeDecoder) -> u16 {
        let freq = rc.frequency(self.total);
        if freq > MAX_FREQ {
            return 0;
        }
        let mut cumulative = 0u32;
        let mut s = 1;
        loop {
            cumulative += u32::from(self.entries[s].0);
            if cumulative > freq {
                break;
            }
            s += 1;
            if s >= self.entries.len() {
                return 0;
            }
        }
        if s > N + 1 {
            return 0; // the terminal entry: past every symbol
        }
        let own = u32::from(self.entries[s].0);
        rc.consume(cumulative - own, own);
        self.entries[s].0 += STEP;
        self.total += u32::from(STEP);
        if self.total > MAX_FREQ {
            self.halve();
        }
        if self.entries[s].0 > self.entries[s - 1].0 {
            self.entries.swap(s, s - 1);
            return self.entries[s - 1].1;
        }
        self.entries[s].1
    }
}

fn decode_stream(src: &[u8], expected: usize, depth: u32) -> Result<Vec<u8>, CodecError> {
    let flags = *src.first().ok_or_else(|| corrupt("empty stream"))?;
    if flags & STRIPE != 0 {
        return rans_nx16::decode_striped(src, expected, depth, decode_stream);
    }
    let mut input = Input::new(src);
    input.at = 1;
    let size = if flags & NO_SIZE == 0 { input.size()? } else { expected };
    if size > expected {
        return Err(corrupt(&format!("{size} bytes announced, {expected} expected")));
    }
    let pack =
        if flags & PACK != 0 { Some(rans_nx16::read_pack_map(&mut input, size)?) } else { None };
    let coded_size = pack.as_ref().map_or(size, |(_, packed)| *packed);
    let rest = input.rest();
    let coded = if rest.is_empty() {
        Vec::new()
    } else if flags & CAT != 0 {
        rest.get(..coded_size).ok_or_else(|| corrupt("stored data too short"))?.to_vec()
    } else if flags & EXT != 0 {
        let mut out = Vec::with_capacity(coded_size);
        bzip2::read::BzDecoder::new(rest)
            .take(coded_size as u64)
            .read_to_end(&mut out)
            .map_err(|e| corrupt(&format!("bzip2: {e}")))?;
        out
    } else {
        let (&max_symbol, coded) = rest.split_first().ok_or_else(|| corrupt("no data"))?;
        let max_symbol = if max_symbol == 0 { 256 } else { usize::from(max_symbol) };
        let mut rc = RangeDecoder::new(coded);
        let out = match (flags & ORDER1 != 0, flags & RLE != 0) {
            (false, false) => literals(&mut rc, coded_size, max_symbol, false),
            (true, false) => literals(&mut rc, coded_size, max_symbol, true),
            (false, true) => with_runs(&mut rc, coded_size, max_symbol, false),
            (true, true) => with_runs(&mut rc, coded_size, max_symbol, true),
        };
        if rc.failed {
            return Err(corrupt("data ran out"));
        }
        out
    };
    match pack {
        Some((map, _)) => rans_nx16::unpack(&coded, size, &map),
        None => Ok(coded),
    }
}

/// The byte models: one, or one per previous byte.
fn byte_models(max_symbol: usize, order1: bool) -> Vec<Model<256>> {
    (0..if order1 { 256 } else { 1 }).map(|_| Model::new(max_symbol)).collect()
}

fn literals(rc: &mut RangeDecoder, size: usize, max_symbol: usize, order1: bool) -> Vec<u8> {
    let mut models = byte_models(max_symbol, order1);
    let mut out = Vec::with_capacity(size);
    let mut last = 0usize;
    for _ in 0..size {
        let b = models[if order1 { last } else { 0 }].decode(rc) as u8;
        out.push(b);
        last = usize::from(b);
        if rc.failed {
            break;
        }
    }
    out.resize(size, 0);
    out
}

/// Each literal is followed by its run length, in pieces of 0..=3 from the run models.
fn with_runs(rc: &mut RangeDecoder, size: usize, max_symbol: usize, order1: bool) -> Vec<u8> {
    let mut models = byte_models(max_symbol, order1);
    let mut runs: Vec<Model<RUN_CONTEXTS>> =
        (0..RUN_CONTEXTS).map(|_| Model::new(MAX_RUN)).collect();
    let mut out = Vec::with_capacity(size);
    let mut last = 0usize;
    while out.len() < size && !rc.failed {
        let b = models[if order1 { last } else { 0 }].decode(rc) as u8;
        out.push(b);
        last = usize::from(b);
        let mut run = 0usize;
        let mut context = last;
        loop {
            let piece = usize::from(runs[context].decode(rc));
            context = if context == last { 256 } else { context + usize::from(context < 257) };
            run += piece;
            if piece != MAX_RUN - 1 || run >= size || rc.failed {
                break;
            }
        }
        let copies = run.min(size - out.len());
        out.resize(out.len() + copies, b);
    }
    out.resize(size, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &[u8; 64] = b"IIIIHHHGGG#####IIIIHHHGGG#####IIIIHHHGGG#####IIIIHHHGGG#####ACGT";
    /// htscodecs' `arith_compress` of [`SOURCE`]: order 0, then order 1 with runs.
    const ORDER0: [u8; 32] = [
        0, 64, 85, 0, 222, 111, 253, 78, 14, 253, 13, 177, 216, 238, 154, 201, 140, 164, 108, 221,
        66, 36, 244, 201, 164, 99, 181, 197, 63, 144, 0, 0,
    ];
    const ORDER1_RUNS: [u8; 22] = [
        65, 64, 85, 0, 222, 71, 86, 182, 100, 34, 176, 170, 169, 124, 172, 63, 134, 24, 38, 72, 12,
        0,
    ];

    #[test]
    fn decodes_what_htscodecs_encodes() {
        assert_eq!(decode(&ORDER0, 64).unwrap(), SOURCE);
        assert_eq!(decode(&ORDER1_RUNS, 64).unwrap(), SOURCE);
        assert_eq!(decode(&[CAT | NO_SIZE, b'h', b'i'], 2).unwrap(), b"hi");
    }

    #[test]
    fn encodes_as_htscodecs_encodes() {
        assert_eq!(encode(SOURCE, false), ORDER0);
        let mut x = 7u32;
        let quals: Vec<u8> = (0..5000)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                b'#' + ((x >> 16) % 8) as u8 + (i % 30 == 0) as u8 * 30
            })
            .collect();
        for order1 in [false, true] {
            let coded = encode(&quals, order1);
            assert!(coded.len() < quals.len() / 2, "{}", coded.len());
            assert_eq!(decode(&coded, quals.len()).unwrap(), quals);
        }
        assert_eq!(decode(&encode(b"", true), 0).unwrap(), b"");
    }

    #[test]
    fn wrong_sizes_and_short_data_are_errors() {
        assert!(decode(&ORDER0, 63).is_err());
        assert!(decode(&ORDER0[..20], 64).is_err());
        assert!(decode(&[], 0).is_err());
    }

    #[test]
    fn damaged_input_never_panics() {
        let mut seed = 5u64;
        for sample in [&ORDER0[..], &ORDER1_RUNS[..]] {
            for cut in 0..sample.len() {
                let _ = decode(&sample[..cut], 64);
            }
            for _ in 0..3000 {
                let mut bad = sample.to_vec();
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = (seed >> 33) as usize % bad.len();
                bad[at] = (seed >> 17) as u8;
                let _ = decode(&bad, 64);
            }
        }
    }
}
