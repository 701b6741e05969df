//! Raw BAM records → CRAM data series (spec §10), as htslib's encoder lays a record out, with
//! every series in an external block of its own. Mates are linked where htslib links them
//! ([`super::mate_links`]); every other record is stored detached, its mate fields written out.

use std::collections::BTreeMap;

use super::container_out::window_end;
use super::htslib_fields::{ReferenceWindow, strip_regenerable};
use super::mate_links::MateLink;
use crate::record::RecordRef;
use crate::record::aux::RawFields;

/// Block content ids of the data series (any distinct numbers do; tags use their 24-bit keys).
pub mod id {
    pub const BF: i32 = 1;
    pub const CF: i32 = 2;
    pub const RI: i32 = 3;
    pub const RL: i32 = 4;
    pub const AP: i32 = 5;
    pub const RG: i32 = 6;
    pub const RN: i32 = 7;
    pub const MF: i32 = 8;
    pub const NS: i32 = 9;
    pub const NP: i32 = 10;
    pub const TS: i32 = 11;
    pub const NF: i32 = 12;
    pub const TL: i32 = 13;
    pub const FN: i32 = 14;
    pub const FC: i32 = 15;
    pub const FP: i32 = 16;
    pub const DL: i32 = 17;
    pub const BA: i32 = 18;
    pub const QS: i32 = 19;
    pub const BS: i32 = 20;
    pub const IN: i32 = 21;
    pub const RS: i32 = 22;
    pub const PD: i32 = 23;
    pub const HC: i32 = 24;
    pub const SC: i32 = 25;
    pub const MQ: i32 = 26;
    /// Verbatim bases (`b` features) and their lengths.
    pub const BB: i32 = 27;
    pub const BB_LEN: i32 = 28;
    /// The embedded reference span.
    pub const REFERENCE: i32 = 29;
}

/// CRAM record flags (`CF`).
const CF_QUALITY_ARRAY: i32 = 0x1;
const CF_DETACHED: i32 = 0x2;
const CF_MATE_DOWNSTREAM: i32 = 0x4;
const CF_NO_SEQUENCE: i32 = 0x8;

const UNMAPPED: u16 = 0x4;
const MATE_UNMAPPED: u16 = 0x8;
const MATE_REVERSE: u16 = 0x20;

const NT16: &[u8; 16] = b"=ACMGRSVTWYHKDBN";
const SUBSTITUTABLE: &[u8; 5] = b"ACGTN";

/// What a slice's records are laid out by: the header's read groups, and the slice's kind.
pub struct Context<'a> {
    pub read_group_index: &'a dyn Fn(&[u8]) -> Option<usize>,
    /// The slice holds several references: each record carries its own (`RI`).
    pub multi_reference: bool,
    /// Alignment starts are stored as deltas from the previous record's.
    pub delta_positions: bool,
    /// Aligned bases are stored as they are, not against a reference (`no_ref`).
    pub verbatim_bases: bool,
}

/// The data series of one slice, and the tag lines (`TD`) its records use.
#[derive(Default)]
pub struct SliceData {
    pub blocks: BTreeMap<i32, Vec<u8>>,
    pub tag_lines: Vec<Vec<[u8; 3]>>,
    pub bases: u64,
}

impl SliceData {
    fn block(&mut self, id: i32) -> &mut Vec<u8> {
        self.blocks.entry(id).or_default()
    }

    fn int(&mut self, id: i32, value: i64) {
        super::varint::itf8(self.block(id), value as i32);
    }

    fn byte(&mut self, id: i32, b: u8) {
        self.block(id).push(b);
    }

    /// Bytes with CRAM's stop byte (NUL) after them (`BYTE_ARRAY_STOP`).
    fn stopped(&mut self, id: i32, bytes: &[u8]) {
        let block = self.block(id);
        block.extend_from_slice(bytes);
        block.push(0);
    }

    /// Appends one record, with the bases of its reference (`None` for an unplaced read);
    /// `previous_start` is the previous record's 1-based start (delta positions). Returns this
    /// record's start; `link` says how its mate fields are stored. `Err` names what CRAM
    /// cannot hold.
    pub fn push(
        &mut self,
        record: &[u8],
        reference: Option<ReferenceWindow<'_>>,
        previous_start: i64,
        context: &Context<'_>,
        link: MateLink,
    ) -> Result<i64, String> {
        let mut stripped = Vec::new();
        // `MD` and `NM` of a read past the reference's end stay as they are, as in htslib.
        let within = |w: &ReferenceWindow<'_>| RecordRef::new(record).end_pos() <= window_end(w);
        let record = match reference {
            Some(window) if within(&window) && strip_regenerable(record, window, &mut stripped) => {
                &stripped[..]
            }
            _ => record,
        };
        let r = RecordRef::new(record);
        let flag = r.flag();
        let mapped = flag & UNMAPPED == 0;
        // As htslib: qualities always stored as an array (255s where there are none); a read
        // without bases (`SEQ` `*`) is as long as its CIGAR says, its bases unknown.
        let no_sequence = r.l_seq() == 0;
        let length = if no_sequence { query_length(&r) } else { r.l_seq() };
        let cf = CF_QUALITY_ARRAY
            | if link.detached { CF_DETACHED } else { 0 }
            | if link.downstream.is_some() { CF_MATE_DOWNSTREAM } else { 0 }
            | if no_sequence { CF_NO_SEQUENCE } else { 0 };
        self.int(id::BF, i64::from(flag));
        self.int(id::CF, i64::from(cf));
        if context.multi_reference {
            self.int(id::RI, i64::from(r.ref_id()));
        }
        self.int(id::RL, length as i64);
        self.bases += r.l_seq() as u64;
        let start = r.pos() + 1;
        let stored = if context.delta_positions { start - previous_start } else { start };
        self.int(id::AP, stored);
        let (read_group, tags) = self.split_read_group(&r, context);
        self.int(id::RG, read_group);
        self.stopped(id::RN, r.read_name());
        if link.detached {
            let mate_flags =
                i64::from(flag & MATE_REVERSE != 0) | (2 * i64::from(flag & MATE_UNMAPPED != 0));
            self.int(id::MF, mate_flags);
            self.int(id::NS, i64::from(r.next_ref_id()));
            self.int(id::NP, r.next_pos() + 1);
            self.int(id::TS, r.tlen());
        } else if let Some(next) = link.downstream {
            self.int(id::NF, i64::from(next));
        }
        self.tags(&tags);
        if mapped {
            self.features(&r, reference, context.verbatim_bases)?;
            self.int(id::MQ, i64::from(r.mapq()));
        } else {
            for i in 0..r.l_seq() {
                self.byte(id::BA, NT16[r.base_code(i) as usize]);
            }
        }
        if no_sequence {
            self.block(id::QS).extend(std::iter::repeat_n(0xff, length));
        } else {
            self.block(id::QS).extend_from_slice(r.qual());
        }
        Ok(start)
    }

    /// The record's read-group index (from its first `RG:Z` when the header has that group,
    /// which is then not stored as a tag, as htslib does) and the tags to store.
    fn split_read_group<'r>(
        &mut self,
        r: &RecordRef<'r>,
        context: &Context<'_>,
    ) -> (i64, Vec<&'r [u8]>) {
        let mut group = -1;
        let mut tags = Vec::new();
        for field in RawFields::new(r.aux_bytes()) {
            if group < 0
                && field.starts_with(b"RGZ")
                && let Some(i) = (context.read_group_index)(&field[3..field.len() - 1])
            {
                group = i as i64;
                continue;
            }
            tags.push(field);
        }
        (group, tags)
    }

    /// `TL` (the index of the record's tag line) and each tag's value in its own block, length
    /// first (`BYTE_ARRAY_LEN`) unless its type fixes it ([`fixed_tag_length`]).
    fn tags(&mut self, tags: &[&[u8]]) {
        let line: Vec<[u8; 3]> = tags.iter().map(|f| [f[0], f[1], f[2]]).collect();
        let index = match self.tag_lines.iter().position(|l| *l == line) {
            Some(i) => i,
            None => {
                self.tag_lines.push(line);
                self.tag_lines.len() - 1
            }
        };
        self.int(id::TL, index as i64);
        for field in tags {
            let value = &field[3..];
            let block = self.block(tag_key(field));
            if fixed_tag_length(field[2]).is_none() {
                super::varint::itf8(block, value.len() as i32);
            }
            block.extend_from_slice(value);
        }
    }

    /// `FN` and the read features (§10.6) that rebuild the CIGAR and the bases from the
    /// reference: substitutions, other bases, insertions, soft clips, deletions, skips, pads,
    /// hard clips. With `verbatim` bases (no reference) each aligned run is one `b` feature;
    /// aligned bases past the reference's end are `B` features, base and quality, as htslib
    /// stores them.
    fn features(
        &mut self,
        r: &RecordRef<'_>,
        window: Option<ReferenceWindow<'_>>,
        verbatim: bool,
    ) -> Result<(), String> {
        let window = match window {
            Some(window) => window,
            None if verbatim => ReferenceWindow { bases: &[], start: 1 },
            None => return Err("internal: mapped read without its reference".into()),
        };
        let known = r.l_seq() > 0;
        // A base of the read; `N` for a read without bases (htslib's soft clips and insertions).
        let base = |i: usize| if known { NT16[r.base_code(i) as usize] } else { b'N' };
        let mut features: Vec<(i64, u8, Feature)> = Vec::new();
        let (mut read_pos, mut ref_pos) = (0usize, r.pos());
        for op in r.cigar() {
            let len = (op >> 4) as usize;
            match op & 0xf {
                0 | 7 | 8 if verbatim => {
                    if known && len > 0 {
                        let bases = (read_pos..read_pos + len).map(base);
                        features.push((read_pos as i64 + 1, b'b', Feature::Bases(bases.collect())));
                    }
                    read_pos += len;
                    ref_pos += len as i64;
                }
                0 | 7 | 8 => {
                    // Bases on the reference are compared with it; the rest are stored.
                    let on_reference =
                        (window_end(&window) - ref_pos).clamp(0, len as i64) as usize;
                    for k in (0..len).filter(|_| known) {
                        let i = read_pos + k;
                        let read = NT16[r.base_code(i) as usize];
                        let quality = || r.qual().get(i).copied().unwrap_or(0xff);
                        if k >= on_reference {
                            features.push((i as i64 + 1, b'B', Feature::Base(read, quality())));
                            continue;
                        }
                        let reference = window.base(ref_pos + k as i64);
                        if read == reference {
                            continue;
                        }
                        let feature = match (code_of(reference), code_of(read)) {
                            (Some(rc), Some(qc)) => {
                                Feature::Substitution(if qc < rc { qc } else { qc - 1 })
                            }
                            _ => Feature::Base(read, quality()),
                        };
                        features.push((i as i64 + 1, feature.code(), feature));
                    }
                    read_pos += len;
                    ref_pos += len as i64;
                }
                1 => {
                    let bases = (read_pos..read_pos + len).map(base);
                    features.push((read_pos as i64 + 1, b'I', Feature::Bases(bases.collect())));
                    read_pos += len;
                }
                4 => {
                    let bases = (read_pos..read_pos + len).map(base);
                    features.push((read_pos as i64 + 1, b'S', Feature::Bases(bases.collect())));
                    read_pos += len;
                }
                2 => {
                    features.push((read_pos as i64 + 1, b'D', Feature::Length(len)));
                    ref_pos += len as i64;
                }
                3 => {
                    features.push((read_pos as i64 + 1, b'N', Feature::Length(len)));
                    ref_pos += len as i64;
                }
                5 => features.push((read_pos as i64 + 1, b'H', Feature::Length(len))),
                6 => features.push((read_pos as i64 + 1, b'P', Feature::Length(len))),
                _ => return Err("a CIGAR operation CRAM has no feature for".into()),
            }
        }
        self.int(id::FN, features.len() as i64);
        let mut last = 0;
        for (position, code, feature) in features {
            self.byte(id::FC, code);
            self.int(id::FP, position - last);
            last = position;
            match (code, feature) {
                (_, Feature::Substitution(c)) => self.byte(id::BS, c),
                (_, Feature::Base(b, q)) => {
                    self.byte(id::BA, b);
                    self.byte(id::QS, q);
                }
                (b'I', Feature::Bases(bases)) => self.stopped(id::IN, &bases),
                (b'b', Feature::Bases(bases)) => {
                    self.int(id::BB_LEN, bases.len() as i64);
                    self.block(id::BB).extend_from_slice(&bases);
                }
                (_, Feature::Bases(bases)) => self.stopped(id::SC, &bases),
                (b'D', Feature::Length(n)) => self.int(id::DL, n as i64),
                (b'N', Feature::Length(n)) => self.int(id::RS, n as i64),
                (b'H', Feature::Length(n)) => self.int(id::HC, n as i64),
                (_, Feature::Length(n)) => self.int(id::PD, n as i64),
            }
        }
        Ok(())
    }
}

/// One read feature's data.
enum Feature {
    /// `X`: the substitution code of the read base against the reference base.
    Substitution(u8),
    /// `B`: a base (and its quality) the substitution matrix cannot code.
    Base(u8, u8),
    /// `I`, `S` or `b`: the read's bases.
    Bases(Vec<u8>),
    /// `D`, `N`, `H`, `P`: a length.
    Length(usize),
}

impl Feature {
    fn code(&self) -> u8 {
        match self {
            Feature::Substitution(_) => b'X',
            _ => b'B',
        }
    }
}

/// The bases a CIGAR covers on the read (M, I, S, =, X).
fn query_length(r: &RecordRef<'_>) -> usize {
    let consumes = |op: u32| matches!(op & 0xf, 0 | 1 | 4 | 7 | 8);
    r.cigar().filter(|&op| consumes(op)).map(|op| (op >> 4) as usize).sum()
}

/// The index of `base` in `ACGTN`, the bases the substitution matrix covers.
fn code_of(base: u8) -> Option<u8> {
    SUBSTITUTABLE.iter().position(|&b| b == base).map(|i| i as u8)
}

/// A tag's block content id and `TD` key: its two letters and type, as htslib numbers them.
/// The value length a tag type always has: such a tag's length is a constant of the compression
/// header (a one-symbol `HUFFMAN`, no bits), as htslib writes it, not a byte per record.
pub fn fixed_tag_length(tag_type: u8) -> Option<i32> {
    match tag_type {
        b'A' | b'c' | b'C' => Some(1),
        b's' | b'S' => Some(2),
        b'i' | b'I' | b'f' => Some(4),
        _ => None,
    }
}

pub fn tag_key(field: &[u8]) -> i32 {
    (i32::from(field[0]) << 16) | (i32::from(field[1]) << 8) | i32::from(field[2])
}

/// The substitution matrix (`SM`): for each reference base A, C, G, T, N, the codes 0–3 given
/// to the other four in `ACGTN` order ([`SliceData::features`] codes them so).
pub const SUBSTITUTION_MATRIX: [u8; 5] = [0x1b; 5];
