//! CRAM 3.1's rANS Nx16 codec, encoder side (block method 5; htscodecs
//! `rans_compress_to_4x16`): the flags byte and size, then the transforms the caller asks for
//! around the entropy coder of [`super::rans_nx16_entropy`] — `PACK` (2, 4 or 8 symbols a
//! byte when at most 16 are used), `RLE` (runs of the symbols that repeat, their lengths kept
//! apart), `STRIPE` (4 interleaved sub-streams, each coded its best way) — and `CAT` (stored)
//! where coding does not shrink the data. A transform that does not pay is dropped from the
//! flags, as htscodecs drops it; [`super::rans_nx16`] decodes every stream written here.

use std::borrow::Cow;

use super::rans_nx16_entropy::{order0, order1, put_uint7};

pub const ORDER1: u8 = 0x01;
pub const X32: u8 = 0x04;
pub const STRIPE: u8 = 0x08;
pub const NO_SIZE: u8 = 0x10;
pub const CAT: u8 = 0x20;
pub const RLE: u8 = 0x40;
pub const PACK: u8 = 0x80;

/// Blocks from this size are coded with 32 states (htscodecs' `RANS_ORDER_SIMD_AUTO`), the
/// layout its SIMD decoders are fast on.
const X32_FROM: usize = 50_000;
/// How many sub-streams `STRIPE` makes (htscodecs' default).
const STRIPES: usize = 4;

/// `src` as a rANS Nx16 stream with the transforms `flags` asks for (order 1, `PACK`, `RLE`,
/// `STRIPE`, `NO_SIZE`); with `auto_x32`, 32 states for large blocks. `None` where htscodecs
/// fails too (the method is then not used).
pub fn compress(src: &[u8], mut flags: u8, auto_x32: bool) -> Option<Vec<u8>> {
    if auto_x32 && src.len() >= X32_FROM && flags & STRIPE == 0 {
        flags |= X32;
    }
    if src.len() <= 20 {
        flags &= !STRIPE;
    }
    if src.len() <= 1000 {
        flags &= !X32;
    }
    if flags & STRIPE != 0 {
        return striped(src, flags);
    }
    let mut out = Vec::with_capacity(src.len() / 2 + 64);
    if flags & CAT != 0 {
        out.push(CAT);
        put_uint7(&mut out, src.len() as u32);
        out.extend_from_slice(src);
        return Some(out);
    }
    out.push(flags);
    let no_size = flags & NO_SIZE;
    if no_size == 0 {
        put_uint7(&mut out, src.len() as u32);
    }
    let mut x32 = flags & X32 != 0;
    let mut data = Cow::Borrowed(src);
    if flags & PACK != 0 {
        match pack(src).filter(|_| !src.is_empty()) {
            Some((map, packed)) => {
                out.extend_from_slice(&map);
                put_uint7(&mut out, packed.len() as u32);
                if x32 && packed.len() < 32 {
                    x32 = false;
                    out[0] &= !X32;
                }
                data = Cow::Owned(packed);
            }
            None => out[0] &= !PACK,
        }
    }
    if flags & RLE != 0 {
        match run_lengths(&data) {
            Some((meta, literals)) if !data.is_empty() => {
                if x32 && (meta.len() < 32 || literals.len() < 32) {
                    x32 = false;
                    out[0] &= !X32;
                }
                let packed = order0(&meta, ways(x32))?;
                if packed.len() < meta.len() {
                    put_uint7(&mut out, meta.len() as u32 * 2);
                    put_uint7(&mut out, literals.len() as u32);
                    put_uint7(&mut out, packed.len() as u32);
                    out.extend_from_slice(&packed);
                } else {
                    put_uint7(&mut out, meta.len() as u32 * 2 + 1);
                    put_uint7(&mut out, literals.len() as u32);
                    out.extend_from_slice(&meta);
                }
                data = Cow::Owned(literals);
            }
            _ => out[0] &= !RLE,
        }
    }
    let mut order = flags & ORDER1 != 0;
    if order && data.len() < 8 {
        out[0] &= !ORDER1;
        order = false;
    }
    let coded = if order { order1(&data, ways(x32))? } else { order0(&data, ways(x32))? };
    if coded.len() >= data.len() {
        out[0] = (out[0] & !3) | CAT | no_size;
        out.extend_from_slice(&data);
    } else {
        out.extend_from_slice(&coded);
    }
    Some(out)
}

fn ways(x32: bool) -> usize {
    if x32 { 32 } else { 4 }
}

/// `STRIPE`: byte i to sub-stream i mod 4, each coded (without its size) by the best of order
/// 1 (if asked for), `RLE`, `PACK` (if asked for) and order 0.
fn striped(src: &[u8], flags: u8) -> Option<Vec<u8>> {
    let n = STRIPES.min(src.len());
    let mut out = vec![flags & !NO_SIZE];
    put_uint7(&mut out, src.len() as u32);
    out.push(n as u8);
    let mut parts = Vec::with_capacity(n);
    for i in 0..n {
        let part: Vec<u8> = src[i..].iter().step_by(n).copied().collect();
        let mut best: Option<Vec<u8>> = None;
        for m in [ORDER1, RLE, PACK, 0] {
            if flags & m != m {
                continue;
            }
            let Some(coded) = compress(&part, m | NO_SIZE | (flags & X32), false) else {
                continue;
            };
            if best.as_ref().is_none_or(|b| coded.len() < b.len()) {
                best = Some(coded);
            }
        }
        let best = best?;
        put_uint7(&mut out, best.len() as u32);
        parts.push(best);
    }
    for part in parts {
        out.extend_from_slice(&part);
    }
    Some(out)
}

/// htscodecs' `hts_pack`: the symbol map (count, then the symbols) and the data packed 8, 4
/// or 2 symbols a byte, low bits first; nothing at all for one symbol. `None` over 16 symbols.
fn pack(src: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut code = [0u8; 256];
    let mut present = [false; 256];
    for &b in src {
        present[b as usize] = true;
    }
    let mut map = vec![0u8];
    for s in 0..256 {
        if present[s] {
            code[s] = (map.len() - 1) as u8;
            map.push(s as u8);
        }
    }
    let symbols = map.len() - 1;
    map[0] = symbols as u8; // 256 wraps to 0, as htscodecs writes it
    if symbols > 16 {
        return None;
    }
    let per_byte = match symbols {
        0..=1 => return Some((map, Vec::new())),
        2 => 8,
        3..=4 => 4,
        _ => 2,
    };
    let bits = 8 / per_byte;
    let packed = src
        .chunks(per_byte)
        .map(|chunk| {
            chunk.iter().enumerate().fold(0u8, |b, (k, &s)| b | (code[s as usize] << (k * bits)))
        })
        .collect();
    Some((map, packed))
}

/// htscodecs' `hts_rle_encode` with the symbols chosen for it: the metadata (count of run
/// symbols, the symbols, then each run's extra copies as `uint7`) and the literals. `None`
/// where it would not save 1 %.
fn run_lengths(src: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    // A symbol is worth running when it repeats its predecessor more often than not.
    let mut saved = [0i64; 256];
    let mut last = None;
    for &b in src {
        saved[b as usize] += if last == Some(b) { 1 } else { -1 };
        last = Some(b);
    }
    let symbols: Vec<u8> = (0..=255u8).filter(|&s| saved[s as usize] > 0).collect();
    let mut runs = Vec::new();
    let mut literals = Vec::with_capacity(src.len() / 2);
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        literals.push(b);
        if saved[b as usize] > 0 {
            let start = i;
            while i + 1 < src.len() && src[i + 1] == b {
                i += 1;
            }
            put_uint7(&mut runs, (i - start) as u32);
        }
        i += 1;
    }
    let mut meta = Vec::with_capacity(1 + symbols.len() + runs.len());
    meta.push(symbols.len() as u8); // 256 wraps to 0
    meta.extend_from_slice(&symbols);
    meta.extend_from_slice(&runs);
    if (literals.len() + meta.len()) as f64 >= 0.99 * src.len() as f64 {
        return None;
    }
    Some((meta, literals))
}

#[cfg(test)]
mod tests {
    use super::super::rans_nx16::decode;
    use super::*;

    /// Every flag combination the writer and the name tokeniser use.
    const METHODS: [u8; 12] = [
        0,
        ORDER1,
        RLE,
        STRIPE | ORDER1,
        PACK,
        PACK | RLE | ORDER1,
        PACK | RLE,
        PACK | ORDER1,
        PACK | STRIPE,
        PACK | RLE | STRIPE,
        PACK | RLE | ORDER1 | STRIPE,
        CAT,
    ];

    fn noise(n: usize, alphabet: u32, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 11) as u32 % alphabet) as u8
            })
            .collect()
    }

    fn round_trip(src: &[u8]) {
        for flags in METHODS {
            for auto in [false, true] {
                let coded = compress(src, flags, auto).expect("compressed");
                let back = decode(&coded, src.len())
                    .unwrap_or_else(|e| panic!("flags {flags:#x}, {} bytes: {e}", src.len()));
                assert!(back == src, "flags {flags:#x}, {} bytes differ", src.len());
            }
        }
    }

    #[test]
    fn edge_cases_round_trip() {
        round_trip(b"");
        round_trip(b"x");
        round_trip(&[7; 5000]);
        round_trip(&(0..=255).collect::<Vec<u8>>());
        round_trip(&(0..=255).cycle().take(70_000).collect::<Vec<u8>>());
        for n in [2, 3, 7, 8, 9, 21, 31, 32, 33, 100, 1001, 4099] {
            round_trip(&noise(n, 3, n as u64));
            round_trip(&noise(n, 40, n as u64 + 1));
        }
    }

    #[test]
    fn large_blocks_use_32_states_and_round_trip() {
        // Qualities-like: a skewed alphabet of 40 with runs.
        let mut src = noise(1_200_000, 40, 5);
        for chunk in src.chunks_mut(97) {
            chunk[..10].fill(b'#');
        }
        let coded = compress(&src, ORDER1, true).unwrap();
        assert_eq!(coded[0] & X32, X32);
        assert!(coded.len() < src.len());
        assert_eq!(decode(&coded, src.len()).unwrap(), src);
        let coded = compress(&src, PACK | RLE | ORDER1, true).unwrap();
        assert_eq!(decode(&coded, src.len()).unwrap(), src);
        let small = noise(60_000, 12, 9);
        round_trip(&small);
    }

    #[test]
    fn transforms_that_do_not_pay_are_dropped() {
        // 256 symbols cannot pack; noise has no runs; 3 bytes are stored.
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(compress(&all, PACK, false).unwrap()[0] & PACK, 0);
        assert_eq!(compress(&noise(5000, 200, 3), RLE, false).unwrap()[0] & RLE, 0);
        assert_eq!(compress(b"abc", 0, false).unwrap()[0], CAT);
        // One symbol packs to nothing at all.
        let one = compress(&[b'Q'; 1000], PACK, false).unwrap();
        assert!(one.len() < 10, "{one:?}");
        // Runs are found and coded.
        let runs: Vec<u8> = (0..4000).map(|i| if i % 50 < 45 { b'A' } else { b'C' }).collect();
        let coded = compress(&runs, RLE, false).unwrap();
        assert_eq!(coded[0] & RLE, RLE);
        assert!(coded.len() < 100, "{}", coded.len());
    }

    #[test]
    fn the_stripe_of_four_integers_beats_plain_order0() {
        let ints: Vec<u8> = (0u32..5000).flat_map(|i| (i * 3 + 1000).to_le_bytes()).collect();
        let striped = compress(&ints, STRIPE | ORDER1, false).unwrap();
        let plain = compress(&ints, 0, false).unwrap();
        assert_eq!(striped[0] & STRIPE, STRIPE);
        assert!(striped.len() < plain.len(), "{} vs {}", striped.len(), plain.len());
        assert_eq!(decode(&striped, ints.len()).unwrap(), ints);
    }
}
