//! One CRAM container of one slice, from framed BAM records (spec §7–9): the compression header
//! (preservation map, every data series and tag in an external block), the slice header with
//! the reference span and its MD5, an empty core block, and the external blocks, each
//! compressed by the method [`super::block_method`] picks.

use std::collections::HashMap;
use std::sync::Arc;

use noodles_fasta as fasta;

use super::block_method::{Choice, RAW};
use super::consensus;
use super::file_header::md5;
use super::htslib_fields::ReferenceWindow;
use super::records_out::{Context, SUBSTITUTION_MATRIX, SliceData, fixed_tag_length, id, tag_key};
use super::varint::itf8;
use crate::record::RecordRef;

/// Block content types (§8.1).
const COMPRESSION_HEADER: u8 = 1;
const MAPPED_SLICE: u8 = 2;
const EXTERNAL: u8 = 4;
const CORE: u8 = 5;

/// The reference a slice's records lie on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SliceReference {
    One(i32),
    Unplaced,
    Several,
}

impl SliceReference {
    fn id(self) -> i32 {
        match self {
            SliceReference::One(t) => t,
            SliceReference::Unplaced => -1,
            SliceReference::Several => -2,
        }
    }
}

/// How slices use the reference (htslib's `no_ref` and `embed_ref` output options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceMode {
    /// Bases stored as differences from a reference the reader must have (the default).
    External,
    /// As `External`, with the reference span of each slice stored in the slice itself.
    Embedded,
    /// A reference made from the slice's reads ([`super::consensus`]), embedded; where none
    /// can be made (unsorted or unplaced records), bases verbatim.
    Consensus,
    /// Bases stored as they are: no reference read or needed, slice MD5s zero.
    Verbatim,
}

/// What a container's encoding needs from the file: a reference's bases by id, a read group's
/// position in the header, and how the reference is used.
pub struct Sources<'a> {
    pub bases: &'a (dyn Fn(i32) -> Result<Arc<fasta::record::Sequence>, String> + Sync),
    pub read_group_index: &'a (dyn Fn(&[u8]) -> Option<usize> + Sync),
    pub mode: ReferenceMode,
    /// A reference's length (`LN`) by id: a generated reference ends there.
    pub reference_length: &'a (dyn Fn(i32) -> i64 + Sync),
}

/// Encodes `framed` records (each `block_size` first) as one container; `record_counter` is
/// the number of records written before; `choice` picks each block's compression.
pub fn encode(
    framed: &[u8],
    sources: &Sources<'_>,
    record_counter: u64,
    mut choice: Choice<'_>,
) -> Result<Vec<u8>, String> {
    let records: Vec<&[u8]> = split_framed(framed);
    let tids: Vec<i32> = records.iter().map(|r| RecordRef::new(r).ref_id()).collect();
    let starts: Vec<i64> = records.iter().map(|r| RecordRef::new(r).pos()).collect();
    let slice_reference = match (tids.first(), tids.iter().all(|t| Some(t) == tids.first())) {
        (Some(&t), true) if t >= 0 => SliceReference::One(t),
        (_, true) => SliceReference::Unplaced,
        _ => SliceReference::Several,
    };
    let consensus = match (sources.mode, slice_reference) {
        (ReferenceMode::Consensus, SliceReference::One(t)) => consensus::build(&records)
            .map(|mut c| {
                // As htslib, a generated reference ends where the header says the reference does.
                let length = (sources.reference_length)(t);
                c.bases.truncate(usize::try_from(length - (c.start - 1)).unwrap_or(0));
                c
            })
            .map(|c| (t, c)),
        _ => None,
    };
    let external = matches!(sources.mode, ReferenceMode::External | ReferenceMode::Embedded);
    let verbatim = !external && consensus.is_none();
    let mut references: HashMap<i32, Arc<fasta::record::Sequence>> = HashMap::new();
    for &tid in tids.iter().filter(|_| external) {
        if tid >= 0 && !references.contains_key(&tid) {
            references.insert(tid, (sources.bases)(tid)?);
        }
    }
    let reference = |tid: i32| match &consensus {
        Some((t, c)) if *t == tid => Some(ReferenceWindow { bases: &c.bases, start: c.start }),
        _ => references.get(&tid).map(|s| ReferenceWindow { bases: (**s).as_ref(), start: 1 }),
    };
    let sorted = starts.windows(2).all(|w| w[0] <= w[1]);
    let context = Context {
        read_group_index: sources.read_group_index,
        multi_reference: slice_reference == SliceReference::Several,
        delta_positions: matches!(slice_reference, SliceReference::One(_)) && sorted,
        verbatim_bases: verbatim,
    };
    let reference_length = |tid: i32| reference(tid).map_or(0, |w| window_end(&w));
    let links = super::mate_links::link(&records, &reference_length);
    let mut data = SliceData::default();
    // Deltas start from the slice's start (htslib's `last_apos`), the first record's.
    let mut previous = starts.first().map_or(0, |p| p + 1);
    let (mut first, mut last_end) = (i64::MAX, 0i64);
    let mut flagged = Vec::new();
    for ((&record, &tid), &link) in records.iter().zip(&tids).zip(&links) {
        let window = if tid >= 0 { reference(tid) } else { None };
        // Against a generated reference, what the decoder must not generate is flagged (`cF`).
        let record = match consensus {
            Some(_) if consensus::with_cram_flags(record, &mut flagged) => &flagged[..],
            _ => record,
        };
        check_encodable(record, window, verbatim)?;
        let start = data.push(record, window, previous, &context, link)?;
        if context.delta_positions {
            previous = start;
        }
        if tid >= 0 {
            first = first.min(start);
            // As htslib's `aend`: a read past the reference's end ends with it (not in `no_ref`).
            let end = RecordRef::new(record).end_pos();
            last_end = last_end.max(window.map_or(end, |w| end.min(window_end(&w))));
        }
    }
    // The slice's reference span: its MD5 (zero without a reference) and, embedded, its bases.
    let (start, span, md5, embedded) = match slice_reference {
        SliceReference::One(t) => {
            let span = (last_end - first + 1).max(0);
            match reference(t) {
                Some(window) => {
                    let bases = window.bases;
                    let offset = first - window.start;
                    let from = usize::try_from(offset).unwrap_or(0).min(bases.len());
                    let to = usize::try_from(offset + span).unwrap_or(0).min(bases.len());
                    let bases = &bases[from..to];
                    let embed = sources.mode != ReferenceMode::External && span > 0;
                    (first, span, md5(bases), embed.then_some(bases))
                }
                None => (first, span, [0; 16], None),
            }
        }
        _ => (0, 0, [0; 16], None),
    };

    let reference_required = sources.mode == ReferenceMode::External;
    let compression_header = compression_header(&data, context.delta_positions, reference_required);
    let header_block =
        block(COMPRESSION_HEADER, 0, RAW, &compression_header, compression_header.len());
    let mut slice_blocks = Vec::new();
    let mut content_ids = vec![0];
    slice_blocks.push(block(CORE, 0, RAW, &[], 0));
    if let Some(bases) = embedded {
        content_ids.push(id::REFERENCE);
        let (method, packed) = choice.compress(bases, id::REFERENCE);
        slice_blocks.push(block(EXTERNAL, id::REFERENCE, method, &packed, bases.len()));
    }
    for (&content_id, bytes) in &data.blocks {
        content_ids.push(content_id);
        let (method, packed) = choice.compress(bytes, content_id);
        slice_blocks.push(block(EXTERNAL, content_id, method, &packed, bytes.len()));
    }
    let records_n = records.len() as i32;
    let mut slice_header = Vec::new();
    for v in [slice_reference.id(), start as i32, span as i32, records_n] {
        itf8(&mut slice_header, v);
    }
    ltf8(&mut slice_header, record_counter);
    itf8(&mut slice_header, content_ids.len() as i32);
    itf8(&mut slice_header, content_ids.len() as i32);
    for &c in &content_ids {
        itf8(&mut slice_header, c);
    }
    itf8(&mut slice_header, if embedded.is_some() { id::REFERENCE } else { -1 });
    slice_header.extend_from_slice(&md5);
    let slice_header_block = block(MAPPED_SLICE, 0, RAW, &slice_header, slice_header.len());

    let body_len = header_block.len()
        + slice_header_block.len()
        + slice_blocks.iter().map(Vec::len).sum::<usize>();
    let mut out = (body_len as i32).to_le_bytes().to_vec();
    for v in [slice_reference.id(), start as i32, span as i32, records_n] {
        itf8(&mut out, v);
    }
    ltf8(&mut out, record_counter);
    ltf8(&mut out, data.bases);
    itf8(&mut out, 2 + slice_blocks.len() as i32);
    itf8(&mut out, 1); // one landmark: the slice starts after the compression header
    itf8(&mut out, header_block.len() as i32);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&header_block);
    out.extend_from_slice(&slice_header_block);
    for b in &slice_blocks {
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// The 0-based position just past `window`'s last base.
pub fn window_end(window: &ReferenceWindow<'_>) -> i64 {
    window.start - 1 + window.bases.len() as i64
}

/// Refuses what mdsam's CRAM encoder does not write: a mapped read without a CIGAR, or one
/// without its reference (unless bases are stored verbatim).
fn check_encodable(
    record: &[u8],
    window: Option<ReferenceWindow<'_>>,
    verbatim: bool,
) -> Result<(), String> {
    let r = RecordRef::new(record);
    if r.flag() & 0x4 != 0 || r.ref_id() < 0 {
        return Ok(());
    }
    let why = if r.n_cigar_op() == 0 {
        "is mapped but has no CIGAR"
    } else if window.is_none() && !verbatim {
        "has no reference"
    } else {
        return Ok(());
    };
    let name = String::from_utf8_lossy(r.read_name());
    Err(format!(
        "read {name} {why}: mdsam cannot write it as CRAM; write BAM, or CRAM with samtools"
    ))
}

fn split_framed(framed: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= framed.len() {
        let size = u32::from_le_bytes(framed[at..at + 4].try_into().unwrap()) as usize;
        out.push(&framed[at + 4..at + 4 + size]);
        at += 4 + size;
    }
    out
}

/// The compression header (§8.4): preservation map, data series encodings, tag encodings.
/// `reference_required` is the `RR` flag: false where bases are verbatim or the reference embedded.
fn compression_header(
    data: &SliceData,
    delta_positions: bool,
    reference_required: bool,
) -> Vec<u8> {
    let mut td = Vec::new();
    for line in &data.tag_lines {
        for key in line {
            td.extend_from_slice(key);
        }
        td.push(0);
    }
    let mut preservation = Vec::new();
    itf8(&mut preservation, 5);
    preservation.extend_from_slice(&[b'R', b'N', 1, b'A', b'P', u8::from(delta_positions)]);
    preservation.extend_from_slice(&[b'R', b'R', u8::from(reference_required), b'S', b'M']);
    preservation.extend_from_slice(&SUBSTITUTION_MATRIX);
    preservation.extend_from_slice(b"TD");
    itf8(&mut preservation, td.len() as i32);
    preservation.extend_from_slice(&td);

    let mut series = Vec::new();
    let mut n_series = 0;
    for (key, content_id) in DATA_SERIES {
        let encoding = match *key {
            b"RN" | b"IN" | b"SC" => byte_array_stop(*content_id),
            _ => external(*content_id),
        };
        series.extend_from_slice(*key);
        series.extend_from_slice(&encoding);
        n_series += 1;
    }
    // Verbatim bases (`b` features, `no_ref`): lengths and bases in blocks of their own.
    if data.blocks.contains_key(&id::BB) {
        series.extend_from_slice(b"BB");
        series.extend_from_slice(&encoding(4, &[external(id::BB_LEN), external(id::BB)].concat()));
        n_series += 1;
    }
    let mut tags = Vec::new();
    let keys: Vec<i32> = {
        let mut k: Vec<i32> = data.tag_lines.iter().flatten().map(|key| tag_key(key)).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    for &key in &keys {
        itf8(&mut tags, key);
        // BYTE_ARRAY_LEN (codec 4): the length (a constant where the type fixes it), then the
        // bytes from the tag's block.
        let length = match fixed_tag_length(key as u8) {
            Some(length) => constant(length),
            None => external(key),
        };
        let params = [length, external(key)].concat();
        tags.extend_from_slice(&encoding(4, &params));
    }
    let mut out = Vec::new();
    for (count, body) in
        [(None, &preservation), (Some(n_series), &series), (Some(keys.len() as i32), &tags)]
    {
        let mut map = Vec::new();
        if let Some(n) = count {
            itf8(&mut map, n);
        }
        map.extend_from_slice(body);
        itf8(&mut out, map.len() as i32);
        out.extend_from_slice(&map);
    }
    out
}

/// Every data series mdsam writes, with its block.
const DATA_SERIES: &[(&[u8; 2], i32)] = &[
    (b"BF", id::BF),
    (b"CF", id::CF),
    (b"RI", id::RI),
    (b"RL", id::RL),
    (b"AP", id::AP),
    (b"RG", id::RG),
    (b"RN", id::RN),
    (b"MF", id::MF),
    (b"NS", id::NS),
    (b"NP", id::NP),
    (b"TS", id::TS),
    (b"NF", id::NF),
    (b"TL", id::TL),
    (b"FN", id::FN),
    (b"FC", id::FC),
    (b"FP", id::FP),
    (b"DL", id::DL),
    (b"BA", id::BA),
    (b"QS", id::QS),
    (b"BS", id::BS),
    (b"IN", id::IN),
    (b"RS", id::RS),
    (b"PD", id::PD),
    (b"HC", id::HC),
    (b"SC", id::SC),
    (b"MQ", id::MQ),
];

/// `EXTERNAL` encoding (codec 1) from block `content_id`.
fn external(content_id: i32) -> Vec<u8> {
    let mut params = Vec::new();
    itf8(&mut params, content_id);
    encoding(1, &params)
}

/// A constant: `HUFFMAN` (codec 3) with one symbol of code length 0.
fn constant(value: i32) -> Vec<u8> {
    let mut params = Vec::new();
    for v in [1, value, 1, 0] {
        itf8(&mut params, v);
    }
    encoding(3, &params)
}

/// `BYTE_ARRAY_STOP` encoding (codec 5): bytes up to a NUL, from block `content_id`.
fn byte_array_stop(content_id: i32) -> Vec<u8> {
    let mut params = vec![0];
    itf8(&mut params, content_id);
    encoding(5, &params)
}

/// An encoding: codec id, then its parameters with their length.
fn encoding(codec: i32, params: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    itf8(&mut out, codec);
    itf8(&mut out, params.len() as i32);
    out.extend_from_slice(params);
    out
}

/// A block (§8.1) with its CRC32; `raw_size` is the data's size before compression.
fn block(content_type: u8, content_id: i32, method: u8, data: &[u8], raw_size: usize) -> Vec<u8> {
    let mut out = vec![method, content_type];
    itf8(&mut out, content_id);
    itf8(&mut out, data.len() as i32);
    itf8(&mut out, raw_size as i32);
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// CRAM's LTF-8 (§2.3): ITF-8's scheme over up to 9 bytes.
pub fn ltf8(out: &mut Vec<u8>, value: u64) {
    let extra = match value {
        v if v < 1 << 7 => 0,
        v if v < 1 << 14 => 1,
        v if v < 1 << 21 => 2,
        v if v < 1 << 28 => 3,
        v if v < 1 << 35 => 4,
        v if v < 1 << 42 => 5,
        v if v < 1 << 49 => 6,
        v if v < 1 << 56 => 7,
        _ => 8,
    };
    if extra == 8 {
        out.push(0xff);
        out.extend_from_slice(&value.to_be_bytes());
        return;
    }
    let bytes = value.to_be_bytes();
    let prefix = !(0xffu8 >> extra); // `extra` leading ones
    out.push(prefix | bytes[7 - extra]);
    out.extend_from_slice(&bytes[8 - extra..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ltf8_matches_itf8_for_small_values_and_widens() {
        let enc = |v| {
            let mut out = Vec::new();
            ltf8(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(0x80), [0x80, 0x80]);
        assert_eq!(enc(0x4000), [0xc0, 0x40, 0x00]);
        assert_eq!(enc(1 << 40), [0xf9, 0, 0, 0, 0, 0]);
        assert_eq!(enc(1 << 35), [0xf8, 0x08, 0, 0, 0, 0]);
        assert_eq!(enc(u64::MAX), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    }
}
