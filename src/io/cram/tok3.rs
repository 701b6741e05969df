//! CRAM 3.1's name tokeniser decoder (block method 8; htscodecs `tok3_decode_names`). Each
//! name is a list of tokens (alpha, char, digits with or without leading zeros, deltas against
//! the same token of an earlier name, matches, duplicates of a whole earlier name); every
//! token position has a type stream and per-type value streams, each rANS Nx16 compressed or
//! arithmetic coded (a flag in the header says which).
//!
//! Output is the names each followed by a NUL, concatenated: what CRAM's read-name series,
//! a `BYTE_ARRAY_STOP(0)`, reads.

use super::arith_dynamic;
use super::codec_error::CodecError;
use super::rans_nx16::{self, Input};

const MAX_TOKENS: usize = 128;
const STREAMS: usize = MAX_TOKENS << 4;
/// htscodecs refuses more names than this in one block.
const MAX_NAMES: usize = 10_000_000;

// Token types (htscodecs `enum name_type`).
const ALPHA: u8 = 1;
const CHAR: u8 = 2;
const DIGITS0: u8 = 3;
const DZLEN: u8 = 4;
const DUP: u8 = 5;
const DIGITS: u8 = 7;
const DDELTA: u8 = 8;
const DDELTA0: u8 = 9;
const MATCH: u8 = 10;
const NOP: u8 = 11;

fn corrupt(what: &str) -> CodecError {
    CodecError::corrupt(format!("name tokeniser: {what}"))
}

/// One decoded value stream, read from the front.
#[derive(Default, Clone)]
struct Stream {
    bytes: Vec<u8>,
    at: usize,
}

impl Stream {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        let b = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// What a name's token decoded to, for later names to match or add to.
#[derive(Clone, Copy, Default)]
struct Token {
    kind: u8,
    /// The number (digits), the byte (char) or the length (alpha).
    value: u32,
    /// The width (digits with leading zeros) or the offset in the name (alpha).
    extra: u32,
}

/// A decoded name: where it lies in the output and its tokens' slice of the token list.
#[derive(Clone, Copy)]
struct Name {
    start: usize,
    tokens: usize,
    /// Tokens before its end (0 while it is being decoded: nothing may refer to it yet).
    count: usize,
}

/// `src` decoded; the names must come to `raw_size` bytes.
pub fn decode(src: &[u8], raw_size: usize) -> Result<Vec<u8>, CodecError> {
    let header = src.get(..9).ok_or_else(|| corrupt("short header"))?;
    let total = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let names = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as usize;
    if total != raw_size {
        return Err(corrupt(&format!("{total} bytes announced, {raw_size} expected")));
    }
    // Every name ends in a NUL: more names than bytes is a damaged count (and would make the
    // implied type streams, a byte a name each, needlessly large).
    if names == 0 || names > MAX_NAMES || names > total {
        return Err(corrupt(&format!("{names} names")));
    }
    let stream_decoder = if header[8] != 0 { arith_dynamic::decode } else { rans_nx16::decode };
    let (streams, token_count) = read_streams(&src[9..], names, stream_decoder)?;
    Decoder { streams, token_count, names: Vec::new(), tokens: Vec::new(), out: Vec::new() }
        .run(names, total)
}

/// The streams, indexed by token position × 16 + type, and the number of token positions.
fn read_streams(
    src: &[u8],
    names: usize,
    stream_decoder: fn(&[u8], usize) -> Result<Vec<u8>, CodecError>,
) -> Result<(Vec<Stream>, usize), CodecError> {
    let mut streams = vec![Stream::default(); STREAMS];
    let mut input = Input::new(src);
    let mut token: Option<usize> = None;
    while input.at < src.len() {
        let kind = input.byte()?;
        let new_token = kind & 128 != 0;
        if new_token {
            let next = token.map_or(0, |t| t + 1);
            if next >= MAX_TOKENS {
                return Err(corrupt("too many tokens"));
            }
            token = Some(next);
            for stream in &mut streams[next << 4..(next + 1) << 4] {
                *stream = Stream::default();
            }
        }
        let t = token.ok_or_else(|| corrupt("stream before the first token"))?;
        if new_token && kind & 15 != 0 {
            // The token's type stream is implied: this type for the first name, then matches.
            let mut types = vec![MATCH; names];
            types[0] = kind & 15;
            streams[t << 4] = Stream { bytes: types, at: 0 };
        }
        let index = (t << 4) | usize::from(kind & 15);
        if kind & 64 != 0 {
            // A copy of an earlier stream.
            let from = (usize::from(input.byte()?) << 4) + usize::from(input.byte()?);
            if from >= index || streams[from].bytes.is_empty() {
                return Err(corrupt("copy of a missing stream"));
            }
            streams[index] = Stream { bytes: streams[from].bytes.clone(), at: 0 };
            continue;
        }
        let length = input.uint7()? as usize;
        let data = input.take(length)?;
        // The size follows the codec's flags byte; the decoder checks it again.
        let size = Input { bytes: data, at: 1 }.uint7()? as usize;
        streams[index] = Stream { bytes: stream_decoder(data, size)?, at: 0 };
    }
    Ok((streams, token.map_or(1, |t| t + 1)))
}

struct Decoder {
    streams: Vec<Stream>,
    token_count: usize,
    names: Vec<Name>,
    tokens: Vec<Token>,
    out: Vec<u8>,
}

impl Decoder {
    fn run(mut self, names: usize, total: usize) -> Result<Vec<u8>, CodecError> {
        self.out.reserve(total);
        // htscodecs decodes until the first token's type stream runs out (one name more than
        // announced is tolerated there).
        while self.names.len() <= names {
            if !self.name()? {
                return Ok(self.out);
            }
            if self.out.len() > total + 1024 {
                return Err(corrupt("names longer than announced"));
            }
        }
        Err(corrupt("more names than announced"))
    }

    fn stream(&mut self, token: usize, kind: u8) -> &mut Stream {
        &mut self.streams[((token << 4) | usize::from(kind)) & (STREAMS - 1)]
    }

    /// Decodes one name; false when there are no more.
    fn name(&mut self) -> Result<bool, CodecError> {
        let current = self.names.len();
        let Some(first) = self.stream(0, 0).byte() else { return Ok(false) };
        if usize::from(first) >= self.token_count * 16 {
            return Ok(false);
        }
        let distance = self.stream(0, first).u32().ok_or_else(|| corrupt("no name distance"))?;
        let distance = distance as usize;
        if distance > current {
            return Err(corrupt("name distance before the first name"));
        }
        let previous = current - distance;
        let start = self.out.len();
        if first == DUP {
            if previous == current {
                return Err(corrupt("a name duplicating itself"));
            }
            let p = self.names[previous];
            let length = self.out[p.start..].iter().position(|&b| b == 0);
            let length = length.ok_or_else(|| corrupt("duplicate of an unfinished name"))?;
            self.out.extend_from_within(p.start..p.start + length + 1);
            self.names.push(Name { start, ..p });
            return Ok(true);
        }
        let tokens = self.tokens.len();
        self.tokens.resize(tokens + MAX_TOKENS, Token::default());
        self.names.push(Name { start, tokens, count: 0 });
        let prev = self.names[previous];
        for t in 1..MAX_TOKENS.min(self.token_count) {
            let kind = self.stream(t, 0).byte().unwrap_or(0);
            let earlier = |d: &Decoder| -> Result<Token, CodecError> {
                if t >= prev.count {
                    return Err(corrupt("reference to a token the earlier name lacks"));
                }
                Ok(d.tokens[prev.tokens + t])
            };
            let missing = || corrupt("token stream ran out");
            let token = match kind {
                CHAR => {
                    let c = self.stream(t, CHAR).byte().ok_or_else(missing)?;
                    self.out.push(c);
                    Token { kind: CHAR, value: u32::from(c), extra: 0 }
                }
                ALPHA => {
                    let offset = (self.out.len() - start) as u32;
                    let s = self.stream(t, ALPHA);
                    if s.at >= s.bytes.len() {
                        return Err(missing());
                    }
                    let rest = &s.bytes[s.at..];
                    let (len, used) = match rest.iter().position(|&b| b == 0) {
                        Some(n) => (n, n + 1),
                        None => (rest.len() - 1, rest.len()),
                    };
                    s.at += used;
                    let text = s.bytes[s.at - used..s.at - used + len].to_vec();
                    self.out.extend_from_slice(&text);
                    Token { kind: ALPHA, value: len as u32, extra: offset }
                }
                DIGITS0 => {
                    let width = self.stream(t, DZLEN).byte().ok_or_else(missing)?;
                    let value = self.stream(t, DIGITS0).u32().ok_or_else(missing)?;
                    push_fixed(&mut self.out, value, u32::from(width))?;
                    Token { kind: DIGITS0, value, extra: u32::from(width) }
                }
                DDELTA0 => {
                    let e = earlier(self)?;
                    let delta = self.stream(t, DDELTA0).byte().ok_or_else(missing)?;
                    let value = e.value.wrapping_add(u32::from(delta));
                    push_fixed(&mut self.out, value, e.extra)?;
                    Token { kind: DIGITS0, value, extra: e.extra }
                }
                DIGITS => {
                    let value = self.stream(t, DIGITS).u32().ok_or_else(missing)?;
                    push_decimal(&mut self.out, value);
                    Token { kind: DIGITS, value, extra: 0 }
                }
                DDELTA => {
                    let e = earlier(self)?;
                    let delta = self.stream(t, DDELTA).byte().ok_or_else(missing)?;
                    let value = e.value.wrapping_add(u32::from(delta));
                    push_decimal(&mut self.out, value);
                    Token { kind: DIGITS, value, extra: 0 }
                }
                NOP => Token { kind: NOP, value: 0, extra: 0 },
                MATCH => {
                    let e = earlier(self)?;
                    match e.kind {
                        CHAR => self.out.push(e.value as u8),
                        ALPHA => {
                            let from = prev.start + e.extra as usize;
                            let to = from + e.value as usize;
                            if to > start {
                                return Err(corrupt("match past the earlier name"));
                            }
                            self.out.extend_from_within(from..to);
                            let offset = (self.out.len() - start) as u32 - e.value;
                            self.tokens[tokens + t] = Token { extra: offset, ..e };
                            continue;
                        }
                        DIGITS => push_decimal(&mut self.out, e.value),
                        DIGITS0 => push_fixed(&mut self.out, e.value, e.extra)?,
                        _ => return Err(corrupt("match of a token that has no value")),
                    }
                    e
                }
                _ => {
                    // The end of the name, written or implied by a type stream that ran out.
                    self.out.push(0);
                    self.tokens.truncate(tokens + t + 1);
                    self.names[current].count = t;
                    return Ok(true);
                }
            };
            self.tokens[tokens + t] = token;
        }
        Err(corrupt("name without an end"))
    }
}

/// `value` in exactly `width` digits (htscodecs' `append_uint32_fixed`: a value wider than
/// that overflows its first digit as htscodecs' does).
fn push_fixed(out: &mut Vec<u8>, value: u32, width: u32) -> Result<(), CodecError> {
    if width > 9 {
        return Err(corrupt("digits wider than 9"));
    }
    let mut rest = value;
    for k in (0..width).rev() {
        let unit = 10u32.pow(k);
        out.push(b'0'.wrapping_add((rest / unit) as u8));
        rest %= unit;
    }
    Ok(())
}

/// `value` in decimal; 0 gives nothing (htscodecs' `append_uint32_var`: a leading-zero-free
/// digits token is never 0).
fn push_decimal(out: &mut Vec<u8>, value: u32) {
    if value > 0 {
        let mut buffer = itoa::Buffer::new();
        out.extend_from_slice(buffer.format(value).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// htscodecs' `tok3_encode_names` (level 5, rANS) of the names below.
    const TOKENISED: [u8; 205] = [
        65, 0, 0, 0, 8, 0, 0, 0, 0, 128, 7, 160, 8, 2, 5, 6, 1, 251, 5, 6, 32, 4, 1, 0, 0, 0, 6,
        10, 160, 28, 2, 0, 1, 4, 16, 17, 17, 1, 128, 9, 32, 7, 2, 10, 2, 10, 1, 2, 2, 1, 7, 32, 5,
        72, 87, 73, 45, 0, 2, 6, 32, 4, 114, 120, 114, 120, 128, 9, 32, 7, 7, 10, 3, 9, 7, 10, 3,
        3, 9, 160, 8, 3, 0, 7, 9, 2, 1, 2, 4, 4, 32, 2, 3, 3, 7, 7, 160, 8, 2, 0, 1, 1, 17, 9, 3,
        32, 1, 1, 128, 9, 32, 7, 2, 10, 12, 2, 2, 10, 2, 2, 6, 32, 4, 58, 47, 58, 47, 128, 7, 160,
        6, 2, 7, 8, 1, 26, 7, 11, 160, 12, 4, 0, 1, 2, 10, 3, 3, 1, 2, 8, 5, 32, 3, 1, 1, 10, 128,
        8, 32, 6, 2, 10, 12, 2, 10, 12, 2, 4, 32, 2, 58, 58, 128, 6, 32, 4, 1, 10, 7, 1, 1, 8, 32,
        6, 65, 67, 0, 65, 71, 0, 7, 6, 32, 4, 3, 0, 0, 0, 128, 5, 160, 4, 1, 12, 0,
    ];
    const NAMES: [&str; 8] =
        ["r1:10:AC", "r1:11:AC", "r1:11:AC", "x007", "x008/1", "HWI-1:2:3", "r1:12:AG", "x009/2"];

    fn expected() -> Vec<u8> {
        NAMES.iter().flat_map(|n| n.bytes().chain([0])).collect()
    }

    #[test]
    fn names_come_back_nul_terminated() {
        assert_eq!(decode(&TOKENISED, 65).unwrap(), expected());
    }

    #[test]
    fn a_wrong_size_is_refused() {
        assert!(matches!(decode(&TOKENISED, 64), Err(CodecError::Corrupt(_))));
    }

    #[test]
    fn numbers_print_as_htscodecs_prints_them() {
        let mut out = Vec::new();
        push_fixed(&mut out, 7, 3).unwrap();
        push_decimal(&mut out, 0);
        push_decimal(&mut out, 4_294_967_295);
        push_fixed(&mut out, 123, 2).unwrap(); // too wide: the first digit overflows
        assert_eq!(out, b"0074294967295<3");
        assert!(push_fixed(&mut out, 1, 10).is_err());
    }

    #[test]
    fn damaged_input_never_panics() {
        for cut in 0..TOKENISED.len() {
            let _ = decode(&TOKENISED[..cut], 65);
        }
        let mut seed = 7u64;
        for _ in 0..20_000 {
            let mut bad = TOKENISED;
            for _ in 0..1 + seed % 3 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = 9 + (seed >> 33) as usize % (bad.len() - 9);
                bad[at] = (seed >> 17) as u8;
            }
            let _ = decode(&bad, 65);
        }
    }
}
