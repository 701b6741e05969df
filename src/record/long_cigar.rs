//! CIGARs of more than 65,535 operations (SAMv1 §4.2.2).
//!
//! BAM's `n_cigar_op` is 16 bits, so such a CIGAR is stored as the placeholder
//! `<l_seq>S<ref_len>N` with the real operations in a `CG:B:I` tag appended to the aux data. As
//! htslib, mdsam holds the real CIGAR in memory (its count's high half in the name extension, see
//! [`layout`]), puts it back when reading ([`from_cg_tag`], htslib's `bam_tag2cigar`) and writes
//! the placeholder form only into BAM files ([`to_bam`], htslib's `bam_write1`).

use super::cigar;
use super::edit::find_tag;
use super::layout::{self, FIXED_LEN, L_READ_NAME, N_CIGAR_OP, NAME_EXT_LEN, read_u16, read_u32};
use super::{Batch, RecordRef};

/// A long CIGAR needs the name extension, but the read name leaves it no room in the u8
/// `l_read_name` (names of more than [`layout::MAX_EXTENDED_NAME_LEN`] characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("read name too long to hold a CIGAR of more than 65535 operations")]
pub struct NameTooLongForCigar;

/// htslib's `bam_write1` refusal: the placeholder's `N` cannot hold the reference span.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Record {name} with {n_cigar} CIGAR ops and ref length {ref_len} cannot be written in BAM.  Try writing SAM or CRAM instead.\n"
)]
pub struct SpanTooLongForBam {
    pub name: String,
    pub n_cigar: usize,
    pub ref_len: i64,
}

/// The longest reference span one CIGAR operation holds (28 bits).
const MAX_OP_LEN: i64 = 1 << 28;
/// htslib ignores a `CG` tag claiming this many operations or more.
const MAX_CG_OPS: usize = 1 << 29;

/// Sets the CIGAR operation count (the CIGAR bytes must already be in place): the low half in the
/// fixed part, the high half in the name extension, which is added when first needed and dropped
/// when nothing in it is needed any more.
pub fn set_n_cigar(b: &mut Vec<u8>, n: usize) -> Result<(), NameTooLongForCigar> {
    set_n_cigar_of_last(b, 0, n)
}

/// [`set_n_cigar`] for the record that starts at `start` and runs to the end of `buf` (a record
/// being appended to a batch).
pub fn set_n_cigar_of_last(
    buf: &mut Vec<u8>,
    start: usize,
    n: usize,
) -> Result<(), NameTooLongForCigar> {
    let high = (n >> 16) as u16;
    let rec = &mut buf[start..];
    rec[N_CIGAR_OP..N_CIGAR_OP + 2].copy_from_slice(&(n as u16).to_le_bytes());
    let ext = match layout::name_ext_start(rec) {
        Some(at) => start + at,
        None if high == 0 => return Ok(()),
        None => {
            let l = rec[L_READ_NAME] as usize;
            if l + NAME_EXT_LEN > 255 {
                return Err(NameTooLongForCigar);
            }
            let at = start + FIXED_LEN + l;
            buf.splice(at..at, [0u8; NAME_EXT_LEN]);
            buf[start + L_READ_NAME] = (l + NAME_EXT_LEN) as u8;
            at
        }
    };
    let field = ext + layout::EXT_N_CIGAR_HIGH;
    if high == 0 && read_u16(buf, field) == 0 {
        // Nothing to change; an all-zero extension may be NUL padding from a file: keep it.
        return Ok(());
    }
    buf[field..field + 2].copy_from_slice(&high.to_le_bytes());
    if !layout::uses_name_ext(&buf[start..]) {
        buf.drain(ext..ext + NAME_EXT_LEN);
        buf[start + L_READ_NAME] -= NAME_EXT_LEN as u8;
    }
    Ok(())
}

/// Cheap test for a record that may hold its CIGAR in a `CG` tag: its first operation is the
/// placeholder's `<l_seq>S` (htslib's own first test). Ordinary reads fail it at one compare.
#[inline(always)]
pub fn may_hold_cg_cigar(b: &[u8]) -> bool {
    let first = FIXED_LEN + b[L_READ_NAME] as usize;
    layout::n_cigar(b) != 0 && read_u32(b, first) == read_u32(b, layout::L_SEQ) << 4 | 4
}

/// The record with the CIGAR its `CG:B:I` tag holds in place of the placeholder, the tag removed
/// and the bin recomputed, as htslib's `bam_tag2cigar`; `Ok(None)` when the record does not
/// qualify (the same tests, in the same order). `b` must be a validated record.
pub fn from_cg_tag(b: &[u8]) -> Result<Option<Vec<u8>>, NameTooLongForCigar> {
    if !may_hold_cg_cigar(b) {
        return Ok(None);
    }
    let r = super::RecordRef::new(b);
    // A stray placeholder-like CIGAR with a leftover tag is unlikely on an unplaced read.
    if r.ref_id() < 0 || r.pos() < 0 {
        return Ok(None);
    }
    let Some((tag_at, tag_len)) = find_tag(b, *b"CG") else {
        return Ok(None);
    };
    if b[tag_at + 2] != b'B' || !matches!(b[tag_at + 3], b'I' | b'i') {
        return Ok(None);
    }
    let n = read_u32(b, tag_at + 4) as usize;
    if n < r.n_cigar_op() || n >= MAX_CG_OPS {
        return Ok(None);
    }
    let cigar_at = FIXED_LEN + b[L_READ_NAME] as usize;
    let after_cigar = cigar_at + 4 * r.n_cigar_op();
    let mut out = Vec::with_capacity(b.len() + 4 * n);
    out.extend_from_slice(&b[..cigar_at]);
    out.extend_from_slice(&b[tag_at + 8..tag_at + 8 + 4 * n]);
    out.extend_from_slice(&b[after_cigar..tag_at]);
    out.extend_from_slice(&b[tag_at + tag_len..]);
    set_n_cigar(&mut out, n)?;
    let r = super::RecordRef::new(&out);
    let bin = layout::reg2bin(r.pos(), r.end_pos());
    out[layout::BIN..layout::BIN + 2].copy_from_slice(&bin.to_le_bytes());
    Ok(Some(out))
}

/// `batch` with [`from_cg_tag`] applied to every record; such records grow, so the batch is
/// rebuilt. `converted` sees each record converted. The error gives the index of a record whose
/// name leaves no room for its long CIGAR's count.
pub fn convert_batch(
    batch: Batch,
    mut converted: impl FnMut(RecordRef<'_>),
) -> Result<Batch, (usize, NameTooLongForCigar)> {
    let mut out = Batch::with_capacity(batch.data.len(), batch.len());
    for i in 0..batch.len() {
        let record = &batch.framed(i)[4..];
        match from_cg_tag(record).map_err(|e| (i, e))? {
            Some(new) => {
                converted(RecordRef::new(&new));
                out.push(&new);
            }
            None => out.push(record),
        }
    }
    Ok(out)
}

/// True when some record of `batch` passes [`may_hold_cg_cigar`].
pub fn batch_may_hold_cg_cigars(batch: &Batch) -> bool {
    (0..batch.len()).any(|i| may_hold_cg_cigar(&batch.framed(i)[4..]))
}

/// Appends record `b` (which [`layout::has_long_cigar`], and no value beyond 32 bits) to `out`
/// as BAM holds it, `block_size` first: the name without its extension, the placeholder
/// `<l_seq>S<ref_len>N`, then sequence, qualities and aux data, then `CG:B:I` with the real
/// CIGAR (htslib's `bam_write1`).
pub fn to_bam(b: &[u8], out: &mut Vec<u8>) -> Result<(), SpanTooLongForBam> {
    let r = super::RecordRef::new(b);
    let n = r.n_cigar_op();
    let ref_len = cigar::ref_len(r.cigar());
    if ref_len >= MAX_OP_LEN {
        let name = String::from_utf8_lossy(r.read_name()).into_owned();
        return Err(SpanTooLongForBam { name, n_cigar: n, ref_len });
    }
    let l_name = b[L_READ_NAME] as usize - NAME_EXT_LEN;
    let cigar_at = FIXED_LEN + b[L_READ_NAME] as usize;
    let after_cigar = cigar_at + 4 * n;
    let size = b.len() - NAME_EXT_LEN - 4 * n + 8 + 8 + 4 * n;
    out.reserve(4 + size);
    out.extend_from_slice(&(size as u32).to_le_bytes());
    let fixed = out.len();
    out.extend_from_slice(&b[..FIXED_LEN + l_name]);
    out[fixed + L_READ_NAME] = l_name as u8;
    out[fixed + N_CIGAR_OP..fixed + N_CIGAR_OP + 2].copy_from_slice(&2u16.to_le_bytes());
    let soft_clip = (r.l_seq() as u32) << 4 | cigar::SOFT_CLIP as u32;
    let skip = (ref_len as u32) << 4 | cigar::REF_SKIP as u32;
    out.extend_from_slice(&soft_clip.to_le_bytes());
    out.extend_from_slice(&skip.to_le_bytes());
    out.extend_from_slice(&b[after_cigar..]);
    out.extend_from_slice(b"CGBI");
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&b[cigar_at..after_cigar]);
    debug_assert_eq!(read_u16(out, fixed + N_CIGAR_OP), 2);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;
    use crate::record::cigar::{DEL, MATCH};
    use crate::record::{RecordRef, edit, view};

    /// `n` operations alternating 1M and 2D: (n + 1) / 2 bases.
    fn ops(n: usize) -> Vec<u32> {
        (0..n)
            .map(|i| if i % 2 == 0 { 1 << 4 | MATCH as u32 } else { 2 << 4 | DEL as u32 })
            .collect()
    }

    /// A placed record named `name` with an `n`-operation CIGAR and an NM tag.
    fn record(name: &[u8], n: usize) -> Vec<u8> {
        let bases = n.div_ceil(2);
        let mut b = RecordBuilder::new(name)
            .tid(0)
            .pos(100)
            .seq_fill(0x12, bases)
            .qual(&vec![30; bases])
            .aux(b"NMC\x07")
            .build();
        edit::set_cigar(&mut b, &ops(n)).unwrap();
        b
    }

    #[test]
    fn accessor_counts_operations_past_65535() {
        let mut b = record(b"long", 70_000);
        view::validate(&b).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!((r.n_cigar_op(), r.cigar().len()), (70_000, 70_000));
        assert!(r.has_long_cigar() && !r.has_wide_values());
        assert_eq!(r.read_name(), b"long");
        assert_eq!((r.l_seq(), r.qual().len(), r.base_code(1)), (35_000, 35_000, 2));
        assert_eq!(r.aux_get(*b"NM").and_then(|f| f.int()), Some(7));
        assert_eq!(r.end_pos(), 100 + 35_000 + 2 * 34_999 + 2);
        // Back to a short CIGAR: the extension goes, the record is plain BAM again.
        edit::set_cigar(&mut b, &ops(3)).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!((b[L_READ_NAME], r.n_cigar_op(), r.read_name()), (5, 3, &b"long"[..]));
        assert!(!r.has_long_cigar());
        assert_eq!(r.aux_get(*b"NM").and_then(|f| f.int()), Some(7));
    }

    #[test]
    fn long_cigar_and_wide_position_share_the_extension() {
        let mut b = record(b"r", 3);
        edit::set_pos(&mut b, 5_000_000_000).unwrap();
        edit::set_cigar(&mut b, &ops(65_536)).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!((r.pos(), r.n_cigar_op()), (5_000_000_000, 65_536));
        edit::set_pos(&mut b, 7).unwrap();
        assert_eq!((RecordRef::new(&b).pos(), RecordRef::new(&b).n_cigar_op()), (7, 65_536));
        edit::set_cigar(&mut b, &ops(1)).unwrap();
        assert_eq!(b[L_READ_NAME], 2);
        assert_eq!(RecordRef::new(&b).pos(), 7);
    }

    #[test]
    fn bam_form_holds_placeholder_then_cg_tag_and_reads_back() {
        let mut b = record(b"long", 70_001);
        let end = RecordRef::new(&b).end_pos();
        b[layout::BIN..layout::BIN + 2].copy_from_slice(&layout::reg2bin(100, end).to_le_bytes());
        let mut framed = Vec::new();
        to_bam(&b, &mut framed).unwrap();
        assert_eq!(read_u32(&framed, 0) as usize, framed.len() - 4);
        let bam = &framed[4..];
        view::validate(bam).unwrap();
        let r = RecordRef::new(bam);
        let span = (35_001 + 2 * 35_000) << 4 | cigar::REF_SKIP as u32;
        assert_eq!(r.cigar().collect::<Vec<_>>(), [35_001 << 4 | cigar::SOFT_CLIP as u32, span]);
        assert_eq!(r.read_name(), b"long");
        let tags: Vec<[u8; 2]> = r.aux().map(|f| f.tag).collect();
        assert_eq!(tags, [*b"NM", *b"CG"]);
        assert!(may_hold_cg_cigar(bam));
        assert!(from_cg_tag(bam).unwrap() == Some(b), "read back differs");
    }

    #[test]
    fn a_batch_gets_each_cg_cigar_back_in_place() {
        let long = record(b"long", 66_000);
        let mut framed = Vec::new();
        to_bam(&long, &mut framed).unwrap();
        let mut batch = Batch::default();
        for r in [&record(b"a", 5)[..], &framed[4..], &record(b"b", 7)] {
            batch.push(r);
        }
        assert!(batch_may_hold_cg_cigars(&batch));
        let mut seen = Vec::new();
        let out = convert_batch(batch, |r| seen.push(r.read_name().to_vec())).unwrap();
        assert_eq!(seen, [b"long".to_vec()]);
        let counts: Vec<usize> = out.iter().map(|r| r.n_cigar_op()).collect();
        assert_eq!(counts, [5, 66_000, 7]);
        assert!(!batch_may_hold_cg_cigars(&out));
    }

    #[test]
    fn cg_tag_is_left_alone_on_unplaced_or_ordinary_reads() {
        let mut framed = Vec::new();
        to_bam(&record(b"long", 70_000), &mut framed).unwrap();
        let mut unplaced = framed[4..].to_vec();
        unplaced[layout::REF_ID..layout::REF_ID + 4].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(from_cg_tag(&unplaced).unwrap(), None);
        assert!(!may_hold_cg_cigar(&record(b"short", 5)));
    }

    #[test]
    fn bam_refuses_a_reference_span_past_28_bits() {
        let long: Vec<u32> =
            (0..70_000).map(|i| if i % 2 == 0 { 0x10 } else { 8000 << 4 | 3 }).collect();
        let mut b =
            RecordBuilder::new(b"wide").tid(0).seq_fill(0x11, 35_000).qual(&[9; 35_000]).build();
        edit::set_cigar(&mut b, &long).unwrap();
        let err = to_bam(&b, &mut Vec::new()).unwrap_err();
        assert_eq!((err.n_cigar, err.ref_len), (70_000, 35_000 + 35_000 * 8000));
    }

    #[test]
    fn a_name_too_long_for_the_extension_is_refused() {
        let name = vec![b'n'; 240];
        let mut b = record(&name, 3);
        assert_eq!(edit::set_cigar(&mut b, &ops(70_000)), Err(NameTooLongForCigar));
        assert!(b == record(&name, 3), "record changed");
    }
}
