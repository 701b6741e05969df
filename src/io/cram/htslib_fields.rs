//! What htslib's CRAM decoder (`cram_decode_slice`, `cram_decode_seq`) adds to a record beyond the
//! stored data, applied to the raw BAM record noodles' decode gives:
//!
//! - `MD` and `NM` are generated for a mapped read with bases when the slice has a reference
//!   (external, or embedded) and the record does not store them verbatim: CRAM writers drop them
//!   when they can be regenerated. They go after the stored tags, `MD` first, then `RG`.
//! - The `cF` tag (CRAM flags: bit 1 keeps MD from being generated, bit 2 NM) is removed.
//! - An unmapped read's mapping quality is 0 (noodles leaves it missing, 255).

use crate::record::RecordRef;
use crate::record::aux::{AuxField, RawFields};
use crate::record::layout::{MAPQ, SEQ_CODES};

/// Reference bases for a slice: `bases[0]` is 1-based position `start`.
#[derive(Clone, Copy)]
pub struct ReferenceWindow<'a> {
    pub bases: &'a [u8],
    pub start: i64,
}

impl<'a> ReferenceWindow<'a> {
    /// `n` bases from 0-based position `pos`, when the window holds them all (as stored: the
    /// case may differ from [`Self::base`]'s).
    pub fn slice(&self, pos: i64, n: usize) -> Option<&'a [u8]> {
        let from = usize::try_from(pos + 1 - self.start).ok()?;
        self.bases.get(from..from.checked_add(n)?)
    }

    /// The upper-case base at 0-based position `pos`; `N` outside the window, as htslib.
    pub fn base(&self, pos: i64) -> u8 {
        usize::try_from(pos + 1 - self.start)
            .ok()
            .and_then(|i| self.bases.get(i))
            .map_or(b'N', |b| b.to_ascii_uppercase())
    }
}

const BAM_FUNMAP: u16 = 0x4;

/// `record` (a raw BAM record, no `block_size`) as htslib decodes it, appended to `out`;
/// `read_group_ids` tells a trailing `RG` noodles added from the read-group series.
pub fn append_as_htslib(
    record: &[u8],
    reference: Option<ReferenceWindow<'_>>,
    is_read_group: impl Fn(&[u8]) -> bool,
    out: &mut Vec<u8>,
) {
    let view = RecordRef::new(record);
    let unmapped = view.flag() & BAM_FUNMAP != 0;
    let aux_at = view.aux_offset();
    let start = out.len();
    out.extend_from_slice(&record[..aux_at]);
    if unmapped {
        out[start + MAPQ] = 0;
    }
    let fields: Vec<&[u8]> = RawFields::new(view.aux_bytes()).collect();
    let trailing_rg = fields
        .last()
        .filter(|f| f.starts_with(b"RGZ") && is_read_group(&f[3..f.len() - 1]))
        .copied();
    let stored = &fields[..fields.len() - usize::from(trailing_rg.is_some())];
    let (mut keep_md, mut keep_nm) = (false, false);
    for field in stored {
        match &field[..3] {
            b"cFC" if field.len() == 4 => {
                keep_md |= field[3] & 1 != 0;
                keep_nm |= field[3] & 2 != 0;
                continue;
            }
            [b'M', b'D', _] => keep_md = true,
            [b'N', b'M', _] => keep_nm = true,
            _ => {}
        }
        out.extend_from_slice(field);
    }
    let generate = !unmapped && view.ref_id() >= 0 && view.l_seq() > 0 && (!keep_md || !keep_nm);
    if let (true, Some(reference)) = (generate, reference) {
        let (md, nm) = md_and_nm(&view, reference);
        push_generated(out, &md, nm, keep_md, keep_nm);
    }
    if let Some(rg) = trailing_rg {
        out.extend_from_slice(rg);
    }
}

/// `record` (a raw BAM record, no `block_size`) as htslib's CRAM encoder stores it
/// (`cram_encode_aux`): a mapped read's `MD` and `NM` are left out when they equal what the
/// decoder will generate from `reference` (`MD` compared ignoring case), so that decoding puts
/// them back where htslib puts them. Appends the record to `out` and returns true when a tag was
/// left out; otherwise appends nothing and returns false.
pub fn strip_regenerable(record: &[u8], reference: ReferenceWindow<'_>, out: &mut Vec<u8>) -> bool {
    let view = RecordRef::new(record);
    if view.flag() & BAM_FUNMAP != 0 || view.ref_id() < 0 || view.l_seq() == 0 {
        return false;
    }
    let fields: Vec<&[u8]> = RawFields::new(view.aux_bytes()).collect();
    if !fields.iter().any(|f| f.starts_with(b"MDZ") || f.starts_with(b"NM")) {
        return false;
    }
    let (md, nm) = md_and_nm(&view, reference);
    let regenerable = |f: &[u8]| {
        if f.starts_with(b"MDZ") {
            f[3..f.len() - 1].eq_ignore_ascii_case(&md)
        } else {
            f.starts_with(b"NM") && AuxField::from_raw(f).int() == Some(i64::from(nm))
        }
    };
    if !fields.iter().any(|f| regenerable(f)) {
        return false;
    }
    out.extend_from_slice(&record[..view.aux_offset()]);
    for field in fields.into_iter().filter(|f| !regenerable(f)) {
        out.extend_from_slice(field);
    }
    true
}

/// The generated `MD` and `NM` appended to a record's tags, each unless it is to be kept.
pub fn push_generated(out: &mut Vec<u8>, md: &[u8], nm: u32, keep_md: bool, keep_nm: bool) {
    if !keep_md {
        out.extend_from_slice(b"MDZ");
        out.extend_from_slice(md);
        out.push(0);
    }
    if !keep_nm {
        push_nm(out, nm);
    }
}

/// `NM` in the smallest unsigned type, as htslib writes it.
fn push_nm(out: &mut Vec<u8>, nm: u32) {
    out.extend_from_slice(b"NM");
    if let Ok(v) = u8::try_from(nm) {
        out.extend_from_slice(&[b'C', v]);
    } else if let Ok(v) = u16::try_from(nm) {
        out.push(b'S');
        out.extend_from_slice(&v.to_le_bytes());
    } else {
        out.push(b'I');
        out.extend_from_slice(&nm.to_le_bytes());
    }
}

/// The MD string and edit distance of a mapped record against `reference`: a base matches when
/// it equals the reference base and that is not `N`; inserted and deleted bases count in NM.
fn md_and_nm(view: &RecordRef<'_>, reference: ReferenceWindow<'_>) -> (Vec<u8>, u32) {
    // The read's bases as letters, so that a run of matches compares as slices (one buffer a
    // thread: this runs for every record).
    thread_local! {
        static QUERY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    QUERY.with_borrow_mut(|query| {
        query.clear();
        for &pair in view.seq_packed() {
            query.extend_from_slice(&[
                SEQ_CODES[usize::from(pair >> 4)],
                SEQ_CODES[usize::from(pair & 0xf)],
            ]);
        }
        query.truncate(view.l_seq());
        let mut md = Vec::new();
        let nm = md_and_nm_into(view.pos(), view.cigar(), reference, i64::MAX, query, &mut md);
        (md, nm)
    })
}

/// [`md_and_nm`] of a mapped read at 0-based `pos` with `cigar` and bases `query` (as letters of
/// [`SEQ_CODES`]), the MD string into `md` (cleared first); returns NM. `ref_len` is the
/// reference's length in the header: as htslib's decoder (`cram_decode_seq`), the MD string ends
/// at the first base aligned past it (a read running off a circular contig's end), and bases
/// there are no mismatches.
pub fn md_and_nm_into(
    pos: i64,
    cigar: impl Iterator<Item = u32>,
    reference: ReferenceWindow<'_>,
    ref_len: i64,
    query: &[u8],
    md: &mut Vec<u8>,
) -> u32 {
    md.clear();
    let (mut run, mut nm) = (0u32, 0u32);
    let (mut rpos, mut qpos) = (pos, 0usize);
    // Set once the alignment has passed `ref_len`: nothing more goes into MD.
    let mut md_ended = false;
    let push_run = |md: &mut Vec<u8>, run: u32| {
        md.extend_from_slice(itoa::Buffer::new().format(run).as_bytes());
    };
    for op in cigar {
        let len = (op >> 4) as usize;
        match op & 0xf {
            // M, =, X
            0 | 7 | 8 => {
                let mut i = 0;
                while i < len {
                    let in_reference = usize::try_from(ref_len - rpos).unwrap_or(0).min(len - i);
                    if in_reference == 0 {
                        if !md_ended {
                            push_run(md, run);
                            md_ended = true;
                        }
                        (rpos, qpos) = (rpos + (len - i) as i64, qpos + (len - i));
                        break;
                    }
                    // The matching stretch, compared in one pass where the window holds it.
                    let matched = reference
                        .slice(rpos, in_reference)
                        .zip(query.get(qpos..qpos + in_reference))
                        .map_or(0, |(r, q)| matching_prefix(r, q));
                    run += matched as u32;
                    (i, rpos, qpos) = (i + matched, rpos + matched as i64, qpos + matched);
                    if i == len || matched == in_reference {
                        continue;
                    }
                    let r = reference.base(rpos);
                    let q = query.get(qpos).copied();
                    if q == Some(r) && r != b'N' {
                        run += 1;
                    } else {
                        push_run(md, run);
                        md.push(r);
                        run = 0;
                        nm += 1;
                    }
                    (i, rpos, qpos) = (i + 1, rpos + 1, qpos + 1);
                }
            }
            // I
            1 => {
                nm += len as u32;
                qpos += len;
            }
            // D: what lies past the reference's end is no deletion (htslib)
            2 => {
                let in_reference = usize::try_from(ref_len - rpos).unwrap_or(0).min(len);
                if !md_ended {
                    push_run(md, run);
                    md.push(b'^');
                    for i in 0..in_reference {
                        md.push(reference.base(rpos + i as i64));
                    }
                    if in_reference < len {
                        push_run(md, 0);
                        md_ended = true;
                    }
                }
                rpos += len as i64;
                run = 0;
                nm += in_reference as u32;
            }
            // N
            3 => rpos += len as i64,
            // S
            4 => qpos += len,
            _ => {}
        }
    }
    if !md_ended {
        push_run(md, run);
    }
    nm
}

/// How many leading bases of `query` match `reference` (equal to the upper-cased reference base,
/// and not `N`). Eight at a time while they are equal as stored: the query's letters are upper
/// case, so equal bytes match unless they are `N`.
fn matching_prefix(reference: &[u8], query: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let n = reference.len().min(query.len());
    let mut i = 0;
    while let (Some(r), Some(q)) = (reference.get(i..i + 8), query.get(i..i + 8)) {
        let r = u64::from_le_bytes(r.try_into().unwrap_or_default());
        let q = u64::from_le_bytes(q.try_into().unwrap_or_default());
        // A zero byte where a base is N.
        let zero_at_n = q ^ (ONES * u64::from(b'N'));
        let has_n = zero_at_n.wrapping_sub(ONES) & !zero_at_n & (ONES << 7) != 0;
        if r != q || has_n {
            break;
        }
        i += 8;
    }
    i + reference[i..n]
        .iter()
        .zip(&query[i..n])
        .position(|(&r, &q)| r.to_ascii_uppercase() != q || q == b'N')
        .unwrap_or(n - i)
}
