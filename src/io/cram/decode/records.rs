//! A slice's records decoded from their data series, as htslib's `cram_decode_slice` and
//! `cram_decode_seq` do: flags, positions, names, mate fields, tags, then the read's features,
//! which give its CIGAR, its bases against the reference, and its qualities.
//!
//! MD and NM are not generated here: [`super::bam_out`] adds them to the BAM record it writes.

use std::ops::Range;

use super::compression_header::{CompressionHeader, SERIES_COUNT, Series, TagKey};
use super::encoding::{BitReader, Encoding, External, Sources};
use super::slice::{SliceBlocks, SliceHeader};
use super::{DecodeError, ReferenceSource};
use crate::io::cram::htslib_fields::ReferenceWindow;

pub const CF_PRESERVE_QUAL: u32 = 1;
pub const CF_DETACHED: u32 = 2;
pub const CF_MATE_DOWNSTREAM: u32 = 4;
pub const CF_NO_SEQ: u32 = 8;
pub const CF_EXPLICIT_TLEN: u32 = 16;
const BAM_FUNMAP: u32 = 4;

/// One record as decoded, before mates are linked; byte fields are ranges into [`Decoded`]'s
/// buffers.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub flag: u32,
    pub cram_flags: u32,
    pub ref_id: i32,
    /// Read length (bases stored: 0 when the sequence is `*`).
    pub len: usize,
    /// 1-based alignment start, and end (inclusive).
    pub apos: i64,
    pub aend: i64,
    pub read_group: i32,
    pub mapq: u8,
    pub name: Range<usize>,
    pub mate_flags: u32,
    pub mate_ref_id: i32,
    pub mate_pos: i64,
    /// `None` until known (htslib's `INT64_MIN`).
    pub tlen: Option<i64>,
    pub explicit_tlen: Option<i64>,
    /// The index of the next segment of this template in the slice (`NF`), else -1.
    pub mate_line: i64,
    /// The stored tags, without `cF`.
    pub aux: Range<usize>,
    /// MD or NM was stored, or `cF` asked to keep it: htslib generates only the other.
    pub keep_md: bool,
    pub keep_nm: bool,
    /// Where the last stored tag starts in `aux` (a stored `RG` last goes after the generated
    /// MD and NM); `None` without tags or when `cF` came last.
    pub last_tag: Option<usize>,
    pub cigar: Range<usize>,
    pub seq: Range<usize>,
    pub qual: Range<usize>,
}

/// A slice's records and the buffers they point into.
#[derive(Default)]
pub struct Decoded {
    /// Names were not decoded (flags only): every record is named `?`, as htslib names them
    /// without `SAM_QNAME` in its required fields.
    pub without_names: bool,
    pub records: Vec<Record>,
    pub names: Vec<u8>,
    pub bases: Vec<u8>,
    pub quals: Vec<u8>,
    pub aux: Vec<u8>,
    pub cigar: Vec<u32>,
}

/// What decoding a slice needs beyond its blocks.
pub struct SliceInput<'a> {
    pub header: &'a CompressionHeader,
    pub slice: &'a SliceHeader,
    /// The read-group index htslib treats as none (a last `@RG` named `UNKNOWN`), else -1.
    pub unknown_read_group: i32,
    pub references: usize,
    /// The qualities' block was not decompressed (no command will look at them): `QS` is not read.
    pub skip_qualities: bool,
}

/// The encodings of a slice, bound to its blocks.
struct Bound {
    series: Vec<Encoding<usize>>,
    tag_sets: Vec<Vec<(TagKey, Encoding<usize>)>>,
}

fn bind(header: &CompressionHeader, blocks: &SliceBlocks) -> Result<Bound, DecodeError> {
    // The last index is an empty block, for content ids the slice lacks.
    let missing = blocks.external.len();
    let index_of = |id: i32| blocks.external.iter().position(|(i, _)| *i == id).unwrap_or(missing);
    let series = header.series.iter().map(|e| e.bind(&index_of)).collect();
    let tag_sets = header
        .tag_sets
        .iter()
        .map(|set| {
            set.iter()
                .map(|key| {
                    let encoding = header.tags.get(key).ok_or_else(|| {
                        DecodeError::corrupt(format!(
                            "no encoding for tag {}",
                            String::from_utf8_lossy(key)
                        ))
                    })?;
                    Ok((*key, encoding.bind(&index_of)))
                })
                .collect::<Result<Vec<_>, DecodeError>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    debug_assert_eq!(header.series.len(), SERIES_COUNT);
    Ok(Bound { series, tag_sets })
}

impl Decoded {
    fn clear(&mut self) {
        self.without_names = false;
        self.records.clear();
        self.names.clear();
        self.bases.clear();
        self.quals.clear();
        self.aux.clear();
        self.cigar.clear();
    }
}

/// Readers of a slice's blocks, by the indexes [`bind`] gives (the last one empty).
fn sources(blocks: &SliceBlocks) -> Sources<'_> {
    Sources {
        core: BitReader::new(&blocks.core),
        external: blocks
            .external
            .iter()
            .map(|(_, d)| External::new(d))
            .chain(std::iter::once(External::new(&[])))
            .collect(),
    }
}

/// Decodes every record of a slice into `out` (cleared first; its buffers are reused).
pub fn decode_records(
    input: &SliceInput<'_>,
    blocks: &SliceBlocks,
    reference: &mut ReferenceSource<'_>,
    out: &mut Decoded,
) -> Result<(), DecodeError> {
    let bound = bind(input.header, blocks)?;
    let mut src = sources(blocks);
    let n = input.slice.records;
    out.clear();
    let mut decoder =
        RecordDecoder { input, bound: &bound, last_apos: input.slice.alignment_start };
    for index in 0..n {
        let record = decoder.record(&mut src, out, index, reference)?;
        out.records.push(record);
    }
    Ok(())
}

struct RecordDecoder<'a> {
    input: &'a SliceInput<'a>,
    bound: &'a Bound,
    last_apos: i64,
}

/// The data series [`decode_flags_only`] reads.
pub const FLAG_SERIES: [Series; 7] =
    [Series::BF, Series::CF, Series::RI, Series::MF, Series::NS, Series::NF, Series::MQ];

/// Decodes only what flags, reference, mapping quality and mate links need (htslib's required
/// fields `SAM_FLAG | SAM_RNAME | SAM_MAPQ | SAM_RNEXT`): the caller has checked that these
/// series read blocks no other series reads, so the rest can be left unread.
pub fn decode_flags_only(
    input: &SliceInput<'_>,
    blocks: &SliceBlocks,
    out: &mut Decoded,
) -> Result<(), DecodeError> {
    let bound = bind(input.header, blocks)?;
    let mut src = sources(blocks);
    let series = |s: Series| &bound.series[s as usize];
    out.clear();
    out.without_names = true;
    for index in 0..input.slice.records {
        // The read-group series is not read: no read group (-1), as htslib without `SAM_AUX`.
        let mut r = Record { mate_line: -1, mate_ref_id: -1, read_group: -1, ..Default::default() };
        r.flag = u32::try_from(series(Series::BF).int(&mut src)?)
            .ok()
            .filter(|&f| f < 0x1000)
            .ok_or_else(|| DecodeError::corrupt("bad BAM flags"))?;
        r.cram_flags = series(Series::CF).int(&mut src)? as u32;
        r.ref_id = match input.slice.reference_id {
            -2 => series(Series::RI).int(&mut src)?,
            id => id,
        };
        if r.ref_id < -1 || r.ref_id >= input.references as i32 {
            return Err(DecodeError::corrupt(format!("unknown reference id {}", r.ref_id)));
        }
        if r.cram_flags & CF_DETACHED != 0 {
            r.mate_flags = series(Series::MF).int(&mut src)? as u32;
            r.mate_ref_id = series(Series::NS).int(&mut src)?;
        } else if r.cram_flags & CF_MATE_DOWNSTREAM != 0 {
            r.mate_line = i64::from(series(Series::NF).int(&mut src)?) + index as i64 + 1;
        }
        if r.flag & BAM_FUNMAP == 0 {
            r.mapq = series(Series::MQ).int(&mut src)? as u8;
        }
        out.records.push(r);
    }
    Ok(())
}

impl RecordDecoder<'_> {
    fn series(&self, s: Series) -> &Encoding<usize> {
        &self.bound.series[s as usize]
    }

    fn int(&self, s: Series, src: &mut Sources<'_>) -> Result<i32, DecodeError> {
        self.series(s).int(src)
    }

    fn quality(&self, src: &mut Sources<'_>) -> Result<u8, DecodeError> {
        if self.input.skip_qualities {
            return Ok(255);
        }
        self.series(Series::QS).byte(src)
    }

    fn qualities(
        &self,
        src: &mut Sources<'_>,
        n: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        if self.input.skip_qualities {
            out.resize(out.len() + n, 255);
            return Ok(());
        }
        self.series(Series::QS).fill(src, n, out)
    }

    fn record(
        &mut self,
        src: &mut Sources<'_>,
        out: &mut Decoded,
        index: usize,
        reference: &mut ReferenceSource<'_>,
    ) -> Result<Record, DecodeError> {
        let header = self.input.header;
        let mut r = Record { mate_line: -1, mate_ref_id: -1, ..Default::default() };
        let bf = self.int(Series::BF, src)?;
        if !(0..0x1000).contains(&bf) {
            return Err(DecodeError::corrupt("bad BAM flags"));
        }
        r.flag = bf as u32;
        r.cram_flags = self.int(Series::CF, src)? as u32;
        r.ref_id = match self.input.slice.reference_id {
            -2 => self.int(Series::RI, src)?,
            id => id,
        };
        if r.ref_id < -1 || r.ref_id >= self.input.references as i32 {
            return Err(DecodeError::corrupt(format!("unknown reference id {}", r.ref_id)));
        }
        r.len = usize::try_from(self.int(Series::RL, src)?)
            .map_err(|_| DecodeError::corrupt("negative read length"))?;
        let ap = i64::from(self.int(Series::AP, src)?);
        r.apos = if header.positions_are_deltas { self.last_apos + ap } else { ap };
        self.last_apos = r.apos;
        r.read_group = self.int(Series::RG, src)?;
        if r.read_group == self.input.unknown_read_group {
            r.read_group = -1;
        }
        // -1 is no read group; an index past the header's `@RG` lines fails when the record is
        // written (htslib `cram_to_bam`).
        if r.read_group < -1 {
            return Err(DecodeError::corrupt("read group index out of range"));
        }
        let name_start = out.names.len();
        if header.names_included {
            self.series(Series::RN).array(src, &mut out.names)?;
        }
        let cf = r.cram_flags;
        if cf & CF_DETACHED != 0 {
            r.mate_flags = self.int(Series::MF, src)? as u32;
            if !header.names_included {
                self.series(Series::RN).array(src, &mut out.names)?;
            }
            r.mate_ref_id = self.int(Series::NS, src)?;
            if r.mate_ref_id < -1 || r.mate_ref_id >= self.input.references as i32 {
                return Err(DecodeError::corrupt("unknown mate reference id"));
            }
            r.mate_pos = i64::from(self.int(Series::NP, src)?);
            r.tlen = Some(i64::from(self.int(Series::TS, src)?));
        } else if cf & CF_MATE_DOWNSTREAM != 0 {
            r.mate_line = i64::from(self.int(Series::NF, src)?) + index as i64 + 1;
            if cf & CF_EXPLICIT_TLEN != 0 {
                r.explicit_tlen = Some(i64::from(self.int(Series::TS, src)?));
            }
        } else if cf & CF_EXPLICIT_TLEN != 0 {
            r.explicit_tlen = Some(i64::from(self.int(Series::TS, src)?));
        }
        r.name = name_start..out.names.len();

        let aux_start = out.aux.len();
        let tag_line = usize::try_from(self.int(Series::TL, src)?)
            .ok()
            .and_then(|i| self.bound.tag_sets.get(i))
            .ok_or_else(|| DecodeError::corrupt("bad tag line"))?;
        for (key, encoding) in tag_line {
            let at = out.aux.len();
            out.aux.extend_from_slice(key);
            encoding.array(src, &mut out.aux)?;
            match key {
                // htslib drops a cF tag; its bits keep MD (1) and NM (2) from being generated.
                b"cFC" if out.aux.len() == at + 4 => {
                    r.keep_md |= out.aux[at + 3] & 1 != 0;
                    r.keep_nm |= out.aux[at + 3] & 2 != 0;
                    out.aux.truncate(at);
                    r.last_tag = None;
                    continue;
                }
                [b'M', b'D', _] => r.keep_md = true,
                [b'N', b'M', _] => r.keep_nm = true,
                _ => {}
            }
            r.last_tag = Some(at);
        }
        r.aux = aux_start..out.aux.len();

        if r.flag & BAM_FUNMAP == 0 {
            if r.apos <= 0 {
                return Err(DecodeError::corrupt(format!(
                    "read has alignment position {} but no unmapped flag",
                    r.apos
                )));
            }
            let window = reference.window(r.ref_id)?;
            self.mapped(src, out, &mut r, window)?;
        } else {
            r.cigar = out.cigar.len()..out.cigar.len();
            r.aend = r.apos;
            r.mapq = 0;
            let at = out.bases.len();
            if r.len > 0 {
                self.series(Series::BA).fill(src, r.len, &mut out.bases)?;
            }
            r.seq = at..out.bases.len();
            let at = out.quals.len();
            if cf & CF_PRESERVE_QUAL != 0 {
                self.qualities(src, r.len, &mut out.quals)?;
            } else {
                out.quals.resize(at + r.len, 255);
            }
            r.qual = at..out.quals.len();
        }
        Ok(r)
    }

    /// A mapped read's features, CIGAR, bases, mapping quality and qualities
    /// (htslib `cram_decode_seq`).
    fn mapped(
        &self,
        src: &mut Sources<'_>,
        out: &mut Decoded,
        r: &mut Record,
        reference: Option<ReferenceWindow<'_>>,
    ) -> Result<(), DecodeError> {
        let header = self.input.header;
        let cf = r.cram_flags;
        let len = r.len;
        let seq_at = out.bases.len();
        match reference {
            Some(_) => out.bases.resize(seq_at + len, b'N'),
            None => out.bases.resize(seq_at + len, b'='),
        }
        let qual_at = out.quals.len();
        // Stored qualities replace whatever the features would put there.
        if cf & CF_PRESERVE_QUAL == 0 {
            out.quals.resize(qual_at + len, 255);
        }
        let cigar_at = out.cigar.len();
        let mut cigar = CigarBuilder { out: &mut out.cigar, op: 0, len: 0 };
        let mut scratch = Vec::new();

        let features = self.int(Series::FN, src)?;
        let (mut prev_pos, mut seq_pos, mut ref_pos) = (0i64, 1i64, r.apos - 1);
        let copy_reference = |bases: &mut [u8], from: i64, ref_pos: i64, n: i64| {
            if let (Some(w), Some(dst)) = (reference, bases.get_mut((from - 1) as usize..)) {
                copy_from_reference(dst, w, ref_pos, n as usize);
            }
        };
        for _ in 0..features {
            let op = self.series(Series::FC).byte(src)?;
            let pos = i64::from(self.int(Series::FP, src)?) + prev_pos;
            if pos <= 0 {
                return Err(DecodeError::corrupt(format!(
                    "feature position {pos} before start of read"
                )));
            }
            let valid_end =
                if matches!(op, b'N' | b'P' | b'H' | b'D') { len as i64 + 1 } else { len as i64 };
            if len != 0 && pos > valid_end {
                return Err(DecodeError::corrupt(format!(
                    "feature position {pos} after end of read"
                )));
            }
            if pos > seq_pos {
                let n = pos - seq_pos;
                copy_reference(&mut out.bases[seq_at..], seq_pos, ref_pos, n);
                cigar.add(CIGAR_M, n as u32);
                ref_pos += n;
                seq_pos = pos;
            }
            prev_pos = pos;
            let seq = &mut out.bases[seq_at..];
            let at = (pos - 1) as usize;
            match op {
                b'S' => {
                    scratch.clear();
                    let n = self.series(Series::SC).array(src, &mut scratch)?;
                    put(seq, at, &scratch);
                    cigar.flush();
                    cigar.add(CIGAR_S, n as u32);
                    cigar.flush();
                    seq_pos += n as i64;
                }
                b'X' => {
                    let code = self.series(Series::BS).byte(src)?;
                    let ref_base = reference.map_or(b'N', |w| w.base(ref_pos));
                    let base = header.substitution[base_index(ref_base)][usize::from(code & 3)];
                    put(seq, at, &[base]);
                    cigar.add(CIGAR_M, 1);
                    seq_pos += 1;
                    ref_pos += 1;
                }
                b'D' => {
                    let n = non_negative(self.int(Series::DL, src)?)?;
                    cigar.add(CIGAR_D, n);
                    ref_pos += i64::from(n);
                }
                b'I' => {
                    scratch.clear();
                    let n = self.series(Series::IN).array(src, &mut scratch)?;
                    put(seq, at, &scratch);
                    cigar.add(CIGAR_I, n as u32);
                    seq_pos += n as i64;
                }
                b'i' => {
                    let base = self.series(Series::BA).byte(src)?;
                    put(seq, at, &[base]);
                    cigar.add(CIGAR_I, 1);
                    seq_pos += 1;
                }
                b'b' => {
                    scratch.clear();
                    let n = self.series(Series::BB).array(src, &mut scratch)?;
                    put(seq, at, &scratch);
                    cigar.add(CIGAR_M, n as u32);
                    seq_pos += n as i64;
                    ref_pos += n as i64;
                }
                b'q' => {
                    let quals = feature_qualities(&mut out.quals[qual_at..], cf);
                    scratch.clear();
                    self.series(Series::QQ).array(src, &mut scratch)?;
                    put(quals, at, &scratch);
                    cigar.add(CIGAR_M, 0);
                }
                b'B' => {
                    let base = self.series(Series::BA).byte(src)?;
                    put(seq, at, &[base]);
                    let q = self.quality(src)?;
                    let quals = feature_qualities(&mut out.quals[qual_at..], cf);
                    put(quals, at, &[q]);
                    cigar.add(CIGAR_M, 1);
                    seq_pos += 1;
                    ref_pos += 1;
                }
                b'Q' => {
                    let q = self.quality(src)?;
                    let quals = feature_qualities(&mut out.quals[qual_at..], cf);
                    put(quals, at, &[q]);
                }
                b'H' => cigar.add(CIGAR_H, non_negative(self.int(Series::HC, src)?)?),
                b'P' => cigar.add(CIGAR_P, non_negative(self.int(Series::PD, src)?)?),
                b'N' => {
                    let n = non_negative(self.int(Series::RS, src)?)?;
                    cigar.add(CIGAR_N, n);
                    ref_pos += i64::from(n);
                }
                other => {
                    return Err(DecodeError::corrupt(format!(
                        "unknown feature code '{}'",
                        char::from(other)
                    )));
                }
            }
        }
        if len as i64 >= seq_pos {
            let n = len as i64 - seq_pos + 1;
            copy_reference(&mut out.bases[seq_at..], seq_pos, ref_pos, n);
            ref_pos += n;
            cigar.add(CIGAR_M, n as u32);
        }
        cigar.flush();
        r.cigar = cigar_at..out.cigar.len();
        r.aend = ref_pos.max(r.apos);
        r.mapq = self.int(Series::MQ, src)? as u8;
        if cf & CF_PRESERVE_QUAL != 0 {
            out.quals.truncate(qual_at);
            self.qualities(src, len, &mut out.quals)?;
        }
        if cf & CF_NO_SEQ != 0 {
            out.bases.truncate(seq_at);
            out.quals.truncate(qual_at);
            r.len = 0;
        }
        r.seq = seq_at..out.bases.len();
        r.qual = qual_at..out.quals.len();
        Ok(())
    }
}

const CIGAR_M: u32 = 0;
const CIGAR_I: u32 = 1;
const CIGAR_D: u32 = 2;
const CIGAR_N: u32 = 3;
const CIGAR_S: u32 = 4;
const CIGAR_H: u32 = 5;
const CIGAR_P: u32 = 6;

/// Runs of one operation merged into CIGAR elements, as htslib's `cig_op`/`cig_len`.
struct CigarBuilder<'a> {
    out: &'a mut Vec<u32>,
    op: u32,
    len: u32,
}

impl CigarBuilder<'_> {
    fn add(&mut self, op: u32, n: u32) {
        if self.len != 0 && self.op != op {
            self.flush();
        }
        self.op = op;
        self.len += n;
    }

    fn flush(&mut self) {
        if self.len != 0 {
            self.out.push((self.len << 4) | self.op);
            self.len = 0;
        }
    }
}

/// `n` reference bases from 0-based `ref_pos` into the front of `dst` (as far as it reaches):
/// one copy where the window holds them all, else base by base with `N` outside it.
fn copy_from_reference(dst: &mut [u8], w: ReferenceWindow<'_>, ref_pos: i64, n: usize) {
    let n = n.min(dst.len());
    let from = usize::try_from(ref_pos + 1 - w.start).ok();
    match from.and_then(|f| w.bases.get(f..f + n)) {
        Some(src) => dst[..n].copy_from_slice(src),
        None => {
            for (i, b) in dst[..n].iter_mut().enumerate() {
                *b = w.base(ref_pos + i as i64);
            }
        }
    }
}

/// A read's qualities, about to take a quality feature: when the read stores no qualities of
/// its own (all 255 so far) they become 30 first, as htslib and htsjdk do.
fn feature_qualities(quals: &mut [u8], cram_flags: u32) -> &mut [u8] {
    if cram_flags & CF_PRESERVE_QUAL == 0 && quals.first() == Some(&255) {
        quals.fill(30);
    }
    quals
}

/// Writes `bytes` at `at`, keeping what fits (a read whose bases are not stored has none).
fn put(dst: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(room) = dst.get_mut(at..) {
        let n = bytes.len().min(room.len());
        room[..n].copy_from_slice(&bytes[..n]);
    }
}

fn non_negative(v: i32) -> Result<u32, DecodeError> {
    u32::try_from(v)
        .map_err(|_| DecodeError::corrupt("CRAM CIGAR extends beyond slice reference extents"))
}

/// htslib's `L1`: A C G T → 0..3, anything else → 4 (N).
fn base_index(base: u8) -> usize {
    match base {
        b'A' | b'a' => 0,
        b'C' | b'c' => 1,
        b'G' | b'g' => 2,
        b'T' | b't' => 3,
        _ => 4,
    }
}
