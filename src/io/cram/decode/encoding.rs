//! CRAM 3.x data-series encodings (spec §13) and how values are read through them: bits from the
//! core block, bytes and ITF-8 integers from external blocks.
//!
//! An [`Encoding`] names its external blocks by content id as the compression header stores them;
//! [`Encoding::bind`] turns those into indexes of one slice's block list, so that reading a value
//! never looks a block up by id.

use super::DecodeError;
use crate::io::cram::varint::Cursor;

/// An encoding; `B` is how an external block is named: content id (`i32`) or slice index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding<B> {
    Null,
    External(B),
    Huffman(Huffman),
    ByteArrayLen(Box<Encoding<B>>, Box<Encoding<B>>),
    ByteArrayStop(u8, B),
    Beta { offset: i32, bits: u32 },
    Subexp { offset: i32, k: u32 },
    Gamma { offset: i32 },
}

/// Canonical Huffman codes, in the order they are tried (htslib `cram_huffman_decode_init`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Huffman {
    /// (code length, code, symbol), by length then symbol.
    codes: Vec<(u32, u32, i32)>,
}

impl Huffman {
    fn new(symbols: Vec<i32>, lengths: Vec<i32>) -> Result<Huffman, DecodeError> {
        if symbols.len() != lengths.len() {
            return Err(DecodeError::corrupt("Huffman code lengths do not match its symbols"));
        }
        // htsjdk declares codes without symbols for series that hold no values: an error only
        // when a value is read through one (htslib `cram_huffman_decode_null0`).
        if symbols.is_empty() {
            return Ok(Huffman { codes: Vec::new() });
        }
        let mut codes = Vec::with_capacity(symbols.len());
        for (&s, &l) in symbols.iter().zip(&lengths) {
            let l = u32::try_from(l)
                .ok()
                .filter(|&l| l <= 31)
                .ok_or_else(|| DecodeError::corrupt("Huffman code length out of range"))?;
            codes.push((l, 0, s));
        }
        codes.sort_unstable_by_key(|&(l, _, s)| (l, s));
        let (mut code, mut last) = (0u32, codes[0].0);
        for entry in &mut codes {
            code <<= entry.0 - last;
            last = entry.0;
            entry.1 = code;
            code = code.wrapping_add(1);
        }
        Ok(Huffman { codes })
    }

    /// One symbol with a zero-length code: decoding reads no bits.
    pub fn is_constant(&self) -> bool {
        matches!(self.codes[..], [(0, _, _)])
    }

    fn decode(&self, core: &mut BitReader<'_>) -> Result<i32, DecodeError> {
        match self.codes[..] {
            [(0, _, symbol)] => return Ok(symbol),
            [] => {
                return Err(DecodeError::corrupt(
                    "a value read through a Huffman code without symbols",
                ));
            }
            _ => {}
        }
        let (mut code, mut len) = (0u32, 0u32);
        for &(l, c, symbol) in &self.codes {
            while len < l {
                code = (code << 1) | core.bit()?;
                len += 1;
            }
            if code == c {
                return Ok(symbol);
            }
        }
        Err(DecodeError::corrupt("Huffman code not found"))
    }
}

/// Reads one encoding from a compression header map.
pub fn read_encoding(map: &mut Cursor<'_>) -> Result<Encoding<i32>, DecodeError> {
    let bad = || DecodeError::corrupt("truncated encoding");
    let codec = map.itf8().ok_or_else(bad)?;
    let len = usize::try_from(map.itf8().ok_or_else(bad)?).map_err(|_| bad())?;
    let params = map.take(len).ok_or_else(bad)?;
    let mut p = Cursor::new(params);
    let mut int = || p.itf8().ok_or_else(bad);
    Ok(match codec {
        0 => Encoding::Null,
        1 => Encoding::External(int()?),
        3 => {
            let n = count(int()?)?;
            let symbols = (0..n).map(|_| int()).collect::<Result<Vec<_>, _>>()?;
            let m = count(int()?)?;
            let lengths = (0..m).map(|_| int()).collect::<Result<Vec<_>, _>>()?;
            Encoding::Huffman(Huffman::new(symbols, lengths)?)
        }
        4 => {
            let mut nested = Cursor::new(params);
            let lengths = read_encoding(&mut nested)?;
            let values = read_encoding(&mut nested)?;
            Encoding::ByteArrayLen(Box::new(lengths), Box::new(values))
        }
        5 => {
            let stop = *params.first().ok_or_else(bad)?;
            let id = Cursor::new(&params[1..]).itf8().ok_or_else(bad)?;
            Encoding::ByteArrayStop(stop, id)
        }
        6 => {
            let offset = int()?;
            let bits = u32::try_from(int()?).ok().filter(|&b| b <= 32).ok_or_else(bad)?;
            Encoding::Beta { offset, bits }
        }
        7 => {
            let offset = int()?;
            let k = u32::try_from(int()?).ok().filter(|&k| k < 32).ok_or_else(bad)?;
            Encoding::Subexp { offset, k }
        }
        9 => Encoding::Gamma { offset: int()? },
        other => return Err(DecodeError::Unsupported(format!("encoding {other}"))),
    })
}

fn count(n: i32) -> Result<usize, DecodeError> {
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= 1 << 16)
        .ok_or_else(|| DecodeError::corrupt("bad Huffman symbol count"))
}

impl Encoding<i32> {
    /// The encoding in htslib's words (`cram_codec_describe`, as `cram-size -e` prints it;
    /// htslib's `BYTE_ARRAY_LEN` text lacks its closing parenthesis).
    pub fn describe(&self) -> String {
        match self {
            Encoding::Null => "?".to_string(),
            Encoding::External(id) => format!("EXTERNAL(id={id})"),
            Encoding::Huffman(h) => {
                let join = |f: &dyn Fn(&(u32, u32, i32)) -> String| {
                    h.codes.iter().map(f).collect::<Vec<_>>().join(",")
                };
                let symbols = join(&|&(_, _, s)| s.to_string());
                let lengths = join(&|&(l, _, _)| l.to_string());
                format!("HUFFMAN(codes={{{symbols}}},lengths={{{lengths}}})")
            }
            Encoding::ByteArrayLen(l, v) => {
                format!(
                    "BYTE_ARRAY_LEN(len_codec={{{}}},val_codec={{{}}}",
                    l.describe(),
                    v.describe()
                )
            }
            Encoding::ByteArrayStop(stop, id) => format!("BYTE_ARRAY_STOP(stop={stop},id={id})"),
            Encoding::Beta { offset, bits } => format!("BETA(offset={offset}, nbits={bits})"),
            Encoding::Subexp { offset, k } => format!("SUBEXP(offset={offset},k={k})"),
            Encoding::Gamma { offset } => format!("GAMMA(offset={offset})"),
        }
    }

    /// The blocks this encoding reads as htslib's `cram_codec_to_id` names them: a content id,
    /// `-1` for the core block, `-2` for none; the second only for `BYTE_ARRAY_LEN`'s values.
    pub fn content_ids(&self) -> [i32; 2] {
        match self {
            Encoding::ByteArrayLen(l, v) => [l.content_ids()[0], v.content_ids()[0]],
            Encoding::External(id) | Encoding::ByteArrayStop(_, id) => [*id, -2],
            // A one-code Huffman reads no bits.
            Encoding::Huffman(h) if h.codes.len() == 1 => [-2, -2],
            Encoding::Huffman(_)
            | Encoding::Beta { .. }
            | Encoding::Subexp { .. }
            | Encoding::Gamma { .. } => [-1, -2],
            Encoding::Null => [-2, -2],
        }
    }

    /// Calls `f` with each external block this encoding reads.
    pub fn visit_blocks(&self, f: &mut impl FnMut(i32)) {
        match self {
            Encoding::External(id) | Encoding::ByteArrayStop(_, id) => f(*id),
            Encoding::ByteArrayLen(l, v) => {
                l.visit_blocks(f);
                v.visit_blocks(f);
            }
            _ => {}
        }
    }

    /// This encoding with its content ids replaced by indexes into a slice's blocks; a block the
    /// slice lacks reads as empty (`index_of` gives the empty block's index).
    pub fn bind(&self, index_of: &impl Fn(i32) -> usize) -> Encoding<usize> {
        match self {
            Encoding::Null => Encoding::Null,
            Encoding::External(id) => Encoding::External(index_of(*id)),
            Encoding::Huffman(h) => Encoding::Huffman(h.clone()),
            Encoding::ByteArrayLen(l, v) => {
                Encoding::ByteArrayLen(Box::new(l.bind(index_of)), Box::new(v.bind(index_of)))
            }
            Encoding::ByteArrayStop(stop, id) => Encoding::ByteArrayStop(*stop, index_of(*id)),
            Encoding::Beta { offset, bits } => Encoding::Beta { offset: *offset, bits: *bits },
            Encoding::Subexp { offset, k } => Encoding::Subexp { offset: *offset, k: *k },
            Encoding::Gamma { offset } => Encoding::Gamma { offset: *offset },
        }
    }
}

/// The core block, read MSB first.
pub struct BitReader<'a> {
    data: &'a [u8],
    bit: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        BitReader { data, bit: 0 }
    }

    fn bit(&mut self) -> Result<u32, DecodeError> {
        let byte = self.data.get(self.bit >> 3).ok_or_else(|| DecodeError::corrupt(EXHAUSTED))?;
        let b = (byte >> (7 - (self.bit & 7))) & 1;
        self.bit += 1;
        Ok(u32::from(b))
    }

    fn bits(&mut self, n: u32) -> Result<u32, DecodeError> {
        let mut v = 0u32;
        for _ in 0..n {
            v = (v << 1) | self.bit()?;
        }
        Ok(v)
    }
}

const EXHAUSTED: &str = "a data series read past the end of its block";

/// An external block being read.
pub struct External<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> External<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        External { data, at: 0 }
    }

    #[inline]
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.data.get(self.at).ok_or_else(|| DecodeError::corrupt(EXHAUSTED))?;
        self.at += 1;
        Ok(b)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let s = self
            .data
            .get(self.at..self.at.saturating_add(n))
            .ok_or_else(|| DecodeError::corrupt(EXHAUSTED))?;
        self.at += n;
        Ok(s)
    }

    #[inline]
    fn itf8(&mut self) -> Result<i32, DecodeError> {
        let rest = &self.data[self.at.min(self.data.len())..];
        match rest {
            [b0, ..] if *b0 < 0x80 => {
                self.at += 1;
                Ok(i32::from(*b0))
            }
            [b0, b1, ..] if *b0 < 0xc0 => {
                self.at += 2;
                Ok((i32::from(*b0 & 0x3f) << 8) | i32::from(*b1))
            }
            _ => {
                let mut c = Cursor::new(rest);
                let v = c.itf8().ok_or_else(|| DecodeError::corrupt(EXHAUSTED))?;
                self.at += c.at;
                Ok(v)
            }
        }
    }
}

/// Where a slice's values come from: the core block and its external blocks, by index.
pub struct Sources<'a> {
    pub core: BitReader<'a>,
    pub external: Vec<External<'a>>,
}

impl Encoding<usize> {
    /// An integer value (ITF-8 from an external block).
    #[inline]
    pub fn int(&self, src: &mut Sources<'_>) -> Result<i32, DecodeError> {
        match self {
            Encoding::External(i) => src.external[*i].itf8(),
            Encoding::Huffman(h) => h.decode(&mut src.core),
            Encoding::Beta { offset, bits } => {
                Ok((src.core.bits(*bits)? as i32).wrapping_sub(*offset))
            }
            Encoding::Gamma { offset } => {
                let mut n = 0;
                while src.core.bit()? == 0 {
                    n += 1;
                    if n > 31 {
                        return Err(DecodeError::corrupt("bad gamma code"));
                    }
                }
                let v = (1u32 << n) | src.core.bits(n)?;
                Ok((v as i32).wrapping_sub(*offset))
            }
            Encoding::Subexp { offset, k } => {
                let mut i = 0u32;
                while src.core.bit()? == 1 {
                    i += 1;
                    if i > 31 {
                        return Err(DecodeError::corrupt("bad subexponential code"));
                    }
                }
                let v = if i == 0 {
                    src.core.bits(*k)?
                } else {
                    let b = i + k - 1;
                    if b > 31 {
                        return Err(DecodeError::corrupt("bad subexponential code"));
                    }
                    (1u32 << b) | src.core.bits(b)?
                };
                Ok((v as i32).wrapping_sub(*offset))
            }
            Encoding::Null => Err(DecodeError::corrupt("a needed data series has no encoding")),
            _ => Err(DecodeError::corrupt("a byte-array encoding for an integer series")),
        }
    }

    /// A byte value (a raw byte from an external block).
    #[inline]
    pub fn byte(&self, src: &mut Sources<'_>) -> Result<u8, DecodeError> {
        match self {
            Encoding::External(i) => src.external[*i].byte(),
            other => other.int(src).map(|v| v as u8),
        }
    }

    /// `n` byte values appended to `out`.
    #[inline]
    pub fn fill(
        &self,
        src: &mut Sources<'_>,
        n: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        match self {
            Encoding::External(i) => out.extend_from_slice(src.external[*i].take(n)?),
            other => {
                for _ in 0..n {
                    out.push(other.byte(src)?);
                }
            }
        }
        Ok(())
    }

    /// A byte array (its length is part of the encoding), appended to `out`; returns its length.
    #[inline]
    pub fn array(&self, src: &mut Sources<'_>, out: &mut Vec<u8>) -> Result<usize, DecodeError> {
        match self {
            Encoding::ByteArrayStop(stop, i) => {
                let ext = &mut src.external[*i];
                let rest = &ext.data[ext.at.min(ext.data.len())..];
                let n =
                    memchr::memchr(*stop, rest).ok_or_else(|| DecodeError::corrupt(EXHAUSTED))?;
                out.extend_from_slice(&rest[..n]);
                ext.at += n + 1;
                Ok(n)
            }
            Encoding::ByteArrayLen(lengths, values) => {
                let n = usize::try_from(lengths.int(src)?)
                    .map_err(|_| DecodeError::corrupt("negative byte-array length"))?;
                values.fill(src, n, out)?;
                Ok(n)
            }
            Encoding::Null => Err(DecodeError::corrupt("a needed data series has no encoding")),
            _ => Err(DecodeError::corrupt("an integer encoding for a byte-array series")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources<'a>(core: &'a [u8], blocks: &[&'a [u8]]) -> Sources<'a> {
        Sources {
            core: BitReader::new(core),
            external: blocks.iter().map(|b| External::new(b)).collect(),
        }
    }

    #[test]
    fn huffman_codes_are_canonical() {
        // symbols 10 (len 1), 20 and 30 (len 2): codes 0, 10, 11.
        let h = Huffman::new(vec![30, 10, 20], vec![2, 1, 2]).unwrap();
        let e: Encoding<usize> = Encoding::Huffman(h);
        let mut src = sources(&[0b0101_1000], &[]);
        assert_eq!(e.int(&mut src).unwrap(), 10);
        assert_eq!(e.int(&mut src).unwrap(), 20);
        assert_eq!(e.int(&mut src).unwrap(), 30);
        assert_eq!(e.int(&mut src).unwrap(), 10);
    }

    #[test]
    fn single_symbol_huffman_reads_no_bits() {
        let e: Encoding<usize> = Encoding::Huffman(Huffman::new(vec![7], vec![0]).unwrap());
        let mut src = sources(&[], &[]);
        assert_eq!(e.int(&mut src).unwrap(), 7);
    }

    #[test]
    fn huffman_without_symbols_fails_only_when_read() {
        let e: Encoding<usize> = Encoding::Huffman(Huffman::new(vec![], vec![]).unwrap());
        assert!(e.int(&mut sources(&[0xff], &[])).is_err());
        assert!(Huffman::new(vec![1], vec![]).is_err());
    }

    #[test]
    fn external_values_and_arrays() {
        let ints: Encoding<usize> = Encoding::External(0);
        let stop: Encoding<usize> = Encoding::ByteArrayStop(0, 1);
        let len: Encoding<usize> = Encoding::ByteArrayLen(
            Box::new(Encoding::External(0)),
            Box::new(Encoding::External(1)),
        );
        let mut src = sources(&[], &[&[5, 0x80, 0xff, 2], b"ab\0xyz"]);
        assert_eq!(ints.int(&mut src).unwrap(), 5);
        assert_eq!(ints.int(&mut src).unwrap(), 255);
        let mut out = Vec::new();
        assert_eq!(stop.array(&mut src, &mut out).unwrap(), 2);
        assert_eq!(len.array(&mut src, &mut out).unwrap(), 2);
        assert_eq!(out, b"abxy");
        assert!(ints.int(&mut src).is_err());
    }

    #[test]
    fn beta_gamma_subexp_read_bits() {
        let beta: Encoding<usize> = Encoding::Beta { offset: 1, bits: 3 };
        let gamma: Encoding<usize> = Encoding::Gamma { offset: 0 };
        // beta 101 = 5 - 1; gamma 00101 = 5
        let mut src = sources(&[0b1010_0101, 0], &[]);
        assert_eq!(beta.int(&mut src).unwrap(), 4);
        assert_eq!(gamma.int(&mut src).unwrap(), 5);
        let subexp: Encoding<usize> = Encoding::Subexp { offset: 0, k: 2 };
        // i=0: 0 then k=2 bits "11" = 3; i=1: "10" then b=2 bits "01" -> 4|1 = 5
        let mut src = sources(&[0b0111_0010, 0b1000_0000], &[]);
        assert_eq!(subexp.int(&mut src).unwrap(), 3);
        assert_eq!(subexp.int(&mut src).unwrap(), 5);
    }
}
