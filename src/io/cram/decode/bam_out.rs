//! A decoded slice's records as raw BAM: mates within the slice linked and their TLEN worked out
//! (htslib `cram_decode_slice_xref`), names generated where none were stored, and each record laid
//! out as htslib's `cram_to_bam` / `bam_set1` would, with the tags htslib adds (MD, NM, read
//! group) and without the one it drops (`cF`).

use super::records::{Decoded, Record};
use super::slice::SliceHeader;
use super::{DecodeError, FileContext, ReferenceSource};
use crate::io::cram::htslib_fields::{ReferenceWindow, md_and_nm_into, push_generated};
use crate::record::Batch;
use crate::record::layout::{self, SEQ_CODES, reg2bin};

const BAM_FPAIRED: u32 = 1;
const BAM_FUNMAP: u32 = 4;
const BAM_FMUNMAP: u32 = 8;
const BAM_FREVERSE: u32 = 16;
const BAM_FMREVERSE: u32 = 32;
const BAM_FREAD1: u32 = 64;
const MATE_REVERSE: u32 = 1;
const MATE_UNMAPPED: u32 = 2;

/// Links each template's segments stored together (`NF`): mate fields from the next segment,
/// the last one's link back to the first, and TLEN from the template's leftmost start and
/// rightmost end, signed as htslib signs it.
pub fn link_mates(recs: &mut [Record]) -> Result<(), DecodeError> {
    let n = recs.len() as i64;
    let broken = || DecodeError::corrupt("mate line out of bounds");
    for rec in 0..recs.len() {
        if recs[rec].mate_line >= 0 {
            if recs[rec].mate_line >= n {
                return Err(broken());
            }
            if recs[rec].tlen.is_none() {
                template_length(recs, rec)?;
            }
            let mate = recs[recs[rec].mate_line as usize].clone_mate_fields();
            let r = &mut recs[rec];
            r.mate_pos = mate.apos;
            r.mate_ref_id = mate.ref_id;
            r.flag |= BAM_FPAIRED;
            if mate.flag & BAM_FUNMAP != 0 {
                r.flag |= BAM_FMUNMAP;
                r.tlen = Some(0);
            }
            if r.flag & BAM_FUNMAP != 0 {
                r.tlen = Some(0);
            }
            if mate.flag & BAM_FREVERSE != 0 {
                r.flag |= BAM_FMREVERSE;
            }
        } else {
            let r = &mut recs[rec];
            if r.mate_flags & MATE_REVERSE != 0 {
                r.flag |= BAM_FPAIRED | BAM_FMREVERSE;
            }
            if r.mate_flags & MATE_UNMAPPED != 0 {
                r.flag |= BAM_FMUNMAP;
            }
            if r.flag & BAM_FPAIRED == 0 {
                r.mate_ref_id = -1;
            }
        }
        if recs[rec].tlen.is_none() {
            recs[rec].tlen = Some(0);
        }
    }
    for r in recs.iter_mut() {
        if let Some(t) = r.explicit_tlen {
            r.tlen = Some(t);
        }
    }
    Ok(())
}

struct MateFields {
    apos: i64,
    ref_id: i32,
    flag: u32,
}

impl Record {
    fn clone_mate_fields(&self) -> MateFields {
        MateFields { apos: self.apos, ref_id: self.ref_id, flag: self.flag }
    }
}

/// TLEN for the template whose first stored segment is `first`; the last segment's `mate_line`
/// is pointed back at `first`.
fn template_length(recs: &mut [Record], first: usize) -> Result<(), DecodeError> {
    let n = recs.len() as i64;
    let (mut aleft, mut aright) = (recs[first].apos, recs[first].aend);
    let (mut left_count, mut right_count) = (0, 0);
    let mut reference = recs[first].ref_id;
    let mut id = first;
    loop {
        let r = &recs[id];
        if aleft > r.apos {
            (aleft, left_count) = (r.apos, 1);
        } else if aleft == r.apos {
            left_count += 1;
        }
        if aright < r.aend {
            (aright, right_count) = (r.aend, 1);
        } else if aright == r.aend {
            right_count += 1;
        }
        if r.mate_line == -1 {
            recs[id].mate_line = first as i64;
            break;
        }
        if r.mate_line <= id as i64 || r.mate_line >= n {
            return Err(DecodeError::corrupt("mate line out of bounds"));
        }
        id = r.mate_line as usize;
        if recs[id].ref_id != reference {
            reference = -1;
        }
        if id == first {
            break;
        }
    }
    let mut tlen = if reference != -1 { aright - aleft + 1 } else { 0 };
    let r = &mut recs[first];
    if reference == -1 {
        r.tlen = Some(0);
    } else if r.apos == aleft && (r.aend < aright || left_count <= 1) {
        r.tlen = Some(tlen);
        tlen = -tlen;
    } else if r.apos == aleft && r.aend == aright && left_count > 1 && right_count > 1 {
        if r.flag & BAM_FREAD1 != 0 {
            r.tlen = Some(tlen);
            tlen = -tlen;
        } else {
            r.tlen = Some(-tlen);
        }
    } else {
        r.tlen = Some(-tlen);
    }
    let mut id = recs[first].mate_line as usize;
    while id != first {
        recs[id].tlen = Some(tlen);
        id = recs[id].mate_line as usize;
    }
    Ok(())
}

/// 4-bit codes of the bases (htslib `seq_nt16_table`).
static NT16: [u8; 256] = {
    let mut t = [15u8; 256];
    let codes = b"=ACMGRSVTWYHKDBN";
    let mut i = 0;
    while i < 16 {
        t[codes[i] as usize] = i as u8;
        t[codes[i].to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    t
};

/// The bases as htslib's MD generation reads them back from BAM: each letter through its 4-bit
/// code.
static LETTERS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = SEQ_CODES[NT16[i] as usize];
        i += 1;
    }
    t
};

/// Buffers for generating MD, kept across records.
#[derive(Default)]
pub struct Scratch {
    query: Vec<u8>,
    md: Vec<u8>,
}

/// Appends every record of `decoded` to `batch` as raw BAM, finished as htslib finishes it.
pub fn append(
    decoded: &Decoded,
    slice: &SliceHeader,
    reference: &mut ReferenceSource<'_>,
    file: &FileContext<'_>,
    scratch: &mut Scratch,
    batch: &mut Batch,
) -> Result<(), DecodeError> {
    for (index, r) in decoded.records.iter().enumerate() {
        let window = reference.window(r.ref_id)?;
        let at = batch.begin_record();
        write_record(decoded, index, r, slice, file, window, scratch, &mut batch.data)?;
        batch.end_record(at);
    }
    Ok(())
}

/// One record as raw BAM into `out`, as htslib's `cram_to_bam` lays it out: the stored tags
/// (without `cF`), then the MD and NM generated against `window`, then the read group.
#[allow(clippy::too_many_arguments)]
fn write_record(
    decoded: &Decoded,
    index: usize,
    r: &Record,
    slice: &SliceHeader,
    file: &FileContext<'_>,
    window: Option<ReferenceWindow<'_>>,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let cigar = &decoded.cigar[r.cigar.clone()];
    let pos = r.apos - 1;
    let reference_length: i64 = cigar
        .iter()
        .filter(|op| matches!(*op & 0xf, 0 | 2 | 3 | 7 | 8))
        .map(|op| i64::from(op >> 4))
        .sum();
    let bin = reg2bin(pos, pos + reference_length.max(1));

    let mut name_buffer = itoa::Buffer::new();
    let mut generated;
    let name: &[u8] = if decoded.without_names {
        b"?"
    } else if !r.name.is_empty() {
        &decoded.names[r.name.clone()]
    } else {
        let mate = usize::try_from(r.mate_line).ok().and_then(|m| decoded.records.get(m));
        match mate {
            Some(m) if !m.name.is_empty() => &decoded.names[m.name.clone()],
            _ => {
                let line = match r.mate_line {
                    m if m >= 0 && (m as usize) < index => m as u64,
                    _ => index as u64,
                };
                generated = file.name_prefix.to_vec();
                generated.push(b':');
                generated.extend_from_slice(
                    name_buffer.format(slice.record_counter + line + 1).as_bytes(),
                );
                &generated
            }
        }
    };
    if name.len() > 254 {
        return Err(DecodeError::corrupt("a read name longer than 254 bytes"));
    }
    // More than 65,535 operations keep their count's high half in the name extension.
    let long_cigar = cigar.len() > layout::MAX_SHORT_CIGAR;
    if long_cigar && name.len() > layout::MAX_EXTENDED_NAME_LEN {
        return Err(DecodeError::Unsupported(
            "a read name too long for a CIGAR of over 65535 operations".into(),
        ));
    }
    let ext_len = if long_cigar { layout::NAME_EXT_LEN } else { 0 };
    let i32_of = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    out.extend_from_slice(&r.ref_id.to_le_bytes());
    out.extend_from_slice(&i32_of(pos).to_le_bytes());
    out.push((name.len() + 1 + ext_len) as u8);
    out.push(if r.flag & BAM_FUNMAP != 0 { 0 } else { r.mapq });
    out.extend_from_slice(&bin.to_le_bytes());
    out.extend_from_slice(&(cigar.len() as u16).to_le_bytes());
    out.extend_from_slice(&(r.flag as u16).to_le_bytes());
    out.extend_from_slice(&(r.len as u32).to_le_bytes());
    out.extend_from_slice(&r.mate_ref_id.to_le_bytes());
    out.extend_from_slice(&i32_of(r.mate_pos - 1).to_le_bytes());
    out.extend_from_slice(&i32_of(r.tlen.unwrap_or(0)).to_le_bytes());
    out.extend_from_slice(name);
    out.push(0);
    if long_cigar {
        let mut ext = [0u8; layout::NAME_EXT_LEN];
        let high = (cigar.len() >> 16) as u16;
        ext[layout::EXT_N_CIGAR_HIGH..][..2].copy_from_slice(&high.to_le_bytes());
        out.extend_from_slice(&ext);
    }
    for op in cigar {
        out.extend_from_slice(&op.to_le_bytes());
    }
    let bases = &decoded.bases[r.seq.clone()];
    let pairs = bases.chunks_exact(2);
    let odd = pairs.remainder().first().map(|&b| NT16[usize::from(b)] << 4);
    out.extend(pairs.map(|p| (NT16[usize::from(p[0])] << 4) | NT16[usize::from(p[1])]));
    out.extend(odd);
    let quals = &decoded.quals[r.qual.clone()];
    if quals.len() == r.len {
        out.extend_from_slice(quals);
    } else {
        out.resize(out.len() + r.len, 255);
    }
    // A stored read group last, one of the header's, goes after MD and NM (htslib adds the
    // read-group series' tag there).
    let trailing = r.last_tag.filter(|_| r.read_group < 0).filter(|&at| {
        let tag = &decoded.aux[at..r.aux.end];
        tag.len() > 3
            && tag.starts_with(b"RGZ")
            && tag.ends_with(&[0])
            && file.read_groups.iter().any(|id| id[..] == tag[3..tag.len() - 1])
    });
    out.extend_from_slice(&decoded.aux[r.aux.start..trailing.unwrap_or(r.aux.end)]);
    let mapped = r.flag & BAM_FUNMAP == 0 && r.ref_id >= 0;
    if let (true, Some(window)) = (mapped && r.len > 0 && !(r.keep_md && r.keep_nm), window) {
        scratch.query.clear();
        scratch.query.extend(bases.iter().map(|&b| LETTERS[usize::from(b)]));
        let ref_len = file.references.get(r.ref_id as usize).map_or(i64::MAX, |(_, len)| *len);
        let (cigar, query, md) = (cigar.iter().copied(), &scratch.query, &mut scratch.md);
        let nm = md_and_nm_into(pos, cigar, window, ref_len, query, md);
        push_generated(out, &scratch.md, nm, r.keep_md, r.keep_nm);
    }
    if let Some(at) = trailing {
        out.extend_from_slice(&decoded.aux[at..r.aux.end]);
    }
    if r.read_group >= 0 {
        let id = file
            .read_groups
            .get(r.read_group as usize)
            .ok_or_else(|| DecodeError::corrupt("read group index out of range"))?;
        out.extend_from_slice(b"RGZ");
        out.extend_from_slice(id);
        out.push(0);
    }
    Ok(())
}
