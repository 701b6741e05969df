//! A container's compression header (CRAM 3.x §8.4): the preservation map, the encoding of each
//! data series and of each tag.

use std::collections::HashMap;

use super::DecodeError;
use super::encoding::{Encoding, read_encoding};
use crate::io::cram::varint::Cursor;

/// The data series a CRAM 3.x record is made of (§10), in a fixed order for array lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    BF,
    CF,
    RI,
    RL,
    AP,
    RG,
    RN,
    MF,
    NS,
    NP,
    TS,
    NF,
    TL,
    FN,
    FC,
    FP,
    DL,
    BB,
    QQ,
    BS,
    IN,
    RS,
    PD,
    HC,
    SC,
    MQ,
    BA,
    QS,
}

pub const SERIES_COUNT: usize = 28;

const SERIES_KEYS: [(&[u8; 2], Series); SERIES_COUNT] = [
    (b"BF", Series::BF),
    (b"CF", Series::CF),
    (b"RI", Series::RI),
    (b"RL", Series::RL),
    (b"AP", Series::AP),
    (b"RG", Series::RG),
    (b"RN", Series::RN),
    (b"MF", Series::MF),
    (b"NS", Series::NS),
    (b"NP", Series::NP),
    (b"TS", Series::TS),
    (b"NF", Series::NF),
    (b"TL", Series::TL),
    (b"FN", Series::FN),
    (b"FC", Series::FC),
    (b"FP", Series::FP),
    (b"DL", Series::DL),
    (b"BB", Series::BB),
    (b"QQ", Series::QQ),
    (b"BS", Series::BS),
    (b"IN", Series::IN),
    (b"RS", Series::RS),
    (b"PD", Series::PD),
    (b"HC", Series::HC),
    (b"SC", Series::SC),
    (b"MQ", Series::MQ),
    (b"BA", Series::BA),
    (b"QS", Series::QS),
];

/// A tag's key in the tag encoding map and the tag dictionary: its two letters and BAM type.
pub type TagKey = [u8; 3];

pub struct CompressionHeader {
    pub names_included: bool,
    pub positions_are_deltas: bool,
    pub reference_required: bool,
    /// `[reference base (A C G T N)][code]` → read base.
    pub substitution: [[u8; 4]; 5],
    /// The tag dictionary: each line's tags in order.
    pub tag_sets: Vec<Vec<TagKey>>,
    pub series: [Encoding<i32>; SERIES_COUNT],
    pub tags: HashMap<TagKey, Encoding<i32>>,
}

impl CompressionHeader {
    /// The blocks `needed` series read, when each of them is read without core bits and from
    /// blocks no other series or tag reads (so the others can be left unread).
    pub fn exclusive_blocks(&self, needed: &[Series]) -> Option<Vec<i32>> {
        let mut blocks = Vec::new();
        for &s in needed {
            match &self.series[s as usize] {
                Encoding::External(id) => blocks.push(*id),
                Encoding::Null => {}
                Encoding::Huffman(h) if h.is_constant() => {}
                _ => return None,
            }
        }
        let others = self
            .series
            .iter()
            .enumerate()
            .filter(|(i, _)| !needed.iter().any(|&s| s as usize == *i))
            .map(|(_, e)| e)
            .chain(self.tags.values());
        let mut shared = false;
        for encoding in others {
            encoding.visit_blocks(&mut |block| shared |= blocks.contains(&block));
        }
        (!shared).then_some(blocks)
    }

    /// The content id of the block `QS` reads from, when it is external and no other data series
    /// or tag uses that block.
    pub fn exclusive_quality_block(&self) -> Option<i32> {
        let Encoding::External(id) = self.series[Series::QS as usize] else { return None };
        let others = self
            .series
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != Series::QS as usize)
            .map(|(_, e)| e)
            .chain(self.tags.values());
        let mut shared = false;
        for encoding in others {
            encoding.visit_blocks(&mut |block| shared |= block == id);
        }
        (!shared).then_some(id)
    }
}

/// The record and tag encoding maps as the header stores them, in file order (`cram-size`
/// lists them as htslib walks them).
pub struct EncodingMaps {
    /// Data-series key and its encoding (`NULL` encodings left out).
    pub series: Vec<([u8; 2], Encoding<i32>)>,
    pub tags: Vec<(TagKey, Encoding<i32>)>,
}

/// The compression header block's encoding maps (its preservation map checked and skipped).
pub fn encoding_maps(data: &[u8]) -> Result<EncodingMaps, DecodeError> {
    let mut c = Cursor::new(data);
    let mut scratch = empty_header();
    read_preservation(&mut c, &mut scratch)?;
    read_maps(&mut c)
}

fn empty_header() -> CompressionHeader {
    CompressionHeader {
        names_included: true,
        positions_are_deltas: true,
        reference_required: true,
        substitution: default_substitution(),
        tag_sets: Vec::new(),
        series: std::array::from_fn(|_| Encoding::Null),
        tags: HashMap::new(),
    }
}

/// The record encoding map, then the tag encoding map.
fn read_maps(c: &mut Cursor<'_>) -> Result<EncodingMaps, DecodeError> {
    let bad = || DecodeError::corrupt("truncated compression header");
    let mut maps = EncodingMaps { series: Vec::new(), tags: Vec::new() };
    let _size = c.itf8().ok_or_else(bad)?;
    let entries = c.itf8().ok_or_else(bad)?;
    for _ in 0..entries {
        let key = c.take(2).ok_or_else(bad)?;
        let key = [key[0], key[1]];
        let encoding = read_encoding(c)?;
        if encoding != Encoding::Null {
            maps.series.push((key, encoding));
        }
    }
    let _size = c.itf8().ok_or_else(bad)?;
    let entries = c.itf8().ok_or_else(bad)?;
    for _ in 0..entries {
        let key = c.itf8().ok_or_else(bad)? as u32;
        let encoding = read_encoding(c)?;
        maps.tags.push(([(key >> 16) as u8, (key >> 8) as u8, key as u8], encoding));
    }
    Ok(maps)
}

/// The preservation map, into `header`.
fn read_preservation(
    c: &mut Cursor<'_>,
    header: &mut CompressionHeader,
) -> Result<(), DecodeError> {
    let bad = || DecodeError::corrupt("truncated compression header");
    let _size = c.itf8().ok_or_else(bad)?;
    let entries = c.itf8().ok_or_else(bad)?;
    for _ in 0..entries {
        let key = c.take(2).ok_or_else(bad)?;
        match key {
            b"RN" => header.names_included = c.byte().ok_or_else(bad)? != 0,
            b"AP" => header.positions_are_deltas = c.byte().ok_or_else(bad)? != 0,
            b"RR" => header.reference_required = c.byte().ok_or_else(bad)? != 0,
            b"SM" => header.substitution = substitution(c.take(5).ok_or_else(bad)?),
            b"TD" => {
                let n = usize::try_from(c.itf8().ok_or_else(bad)?).map_err(|_| bad())?;
                header.tag_sets = tag_sets(c.take(n).ok_or_else(bad)?)?;
            }
            other => {
                return Err(DecodeError::corrupt(format!(
                    "unknown preservation key {}",
                    String::from_utf8_lossy(other)
                )));
            }
        }
    }
    Ok(())
}

/// Parses the compression header block's data.
pub fn parse(data: &[u8]) -> Result<CompressionHeader, DecodeError> {
    let mut c = Cursor::new(data);
    let mut header = empty_header();
    read_preservation(&mut c, &mut header)?;
    let maps = read_maps(&mut c)?;
    for (key, encoding) in maps.series {
        // CRAM 1.0's TC/TN and unknown keys are skipped, as htslib does.
        if let Some((_, series)) = SERIES_KEYS.iter().find(|(k, _)| **k == key) {
            header.series[*series as usize] = encoding;
        }
    }
    header.tags.extend(maps.tags);
    Ok(header)
}

const BASES: [u8; 5] = *b"ACGTN";

/// The substitution matrix from `SM` (htslib `cram_decode_compression_header`): for reference
/// base `r`, the other four bases in ACGTN order take the 2-bit codes in the byte, high first.
fn substitution(sm: &[u8]) -> [[u8; 4]; 5] {
    let mut matrix = [[b'N'; 4]; 5];
    for (r, &byte) in sm.iter().enumerate().take(5) {
        let others = BASES.iter().filter(|&&b| b != BASES[r]);
        for (slot, &base) in others.enumerate() {
            let code = (byte >> (6 - 2 * slot)) & 3;
            matrix[r][usize::from(code)] = base;
        }
    }
    matrix
}

fn default_substitution() -> [[u8; 4]; 5] {
    // The spec's default SM: each reference base's others in order, codes 0..3.
    substitution(&[0x1b; 5])
}

/// The tag dictionary: lines separated by NUL, each a run of 3-byte keys.
fn tag_sets(bytes: &[u8]) -> Result<Vec<Vec<TagKey>>, DecodeError> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == 0).collect();
    if bytes.last() == Some(&0) {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|line| {
            if line.len() % 3 != 0 {
                return Err(DecodeError::corrupt("bad tag dictionary"));
            }
            Ok(line.chunks_exact(3).map(|k| [k[0], k[1], k[2]]).collect())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_matrix_follows_htslib() {
        // For A: C, G, T, N take codes 0, 1, 2, 3 (0b00_01_10_11 = 0x1b).
        let m = substitution(&[0x1b, 0x1b, 0x1b, 0x1b, 0x1b]);
        assert_eq!(m[0], *b"CGTN");
        assert_eq!(m[1], *b"AGTN");
        assert_eq!(m[4], *b"ACGT");
        // Codes reversed for A: C=3, G=2, T=1, N=0.
        let m = substitution(&[0xe4, 0x1b, 0x1b, 0x1b, 0x1b]);
        assert_eq!(m[0], *b"NTGC");
    }

    #[test]
    fn tag_dictionary_lines() {
        let sets = tag_sets(b"MDZNMc\0\0RGZ\0").unwrap();
        assert_eq!(sets, vec![vec![*b"MDZ", *b"NMc"], vec![], vec![*b"RGZ"]]);
    }
}
