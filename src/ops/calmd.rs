//! `calmd` (samtools 1.24 `bam_fillmd1_core` in `bam_md.c`) on one record: `MD` and `NM`
//! recomputed against the reference, and the options that edit bases and qualities on the way.
//!
//! This walk is calmd's own, not the CRAM decoder's ([`crate::io::cram::htslib_fields`]): a read
//! base `=` counts as a match, bases are compared as 4-bit codes (an IUPAC reference letter
//! matches the same read letter, `N` never matches), the walk stops at the end of the reference
//! instead of reading `N` past it, NM is stored as `i` (int32), and `-e`/`-n` rewrite the bases
//! it matched.

use crate::record::aux::{AuxField, RawFields};
use crate::record::cigar;
use crate::record::edit;
use crate::record::layout::{self, SEQ_NT16, flags};
use crate::record::view::RecordRef;

#[derive(Clone, Copy, Debug)]
pub struct CalmdFlags {
    /// `-e`: matching bases become `=`.
    pub use_equal: bool,
    /// `-d`: every tag but `RG` dropped.
    pub drop_tags: bool,
    /// `-q`: qualities binned to `q/10*10+7`.
    pub bin_quality: bool,
    /// not `-N`
    pub update_nm: bool,
    pub update_md: bool,
    /// `-n`: with at least this many differences, matching bases become `N` of quality 0.
    pub max_nm: i32,
    /// `-Q`
    pub quiet: bool,
}

impl Default for CalmdFlags {
    fn default() -> Self {
        CalmdFlags {
            use_equal: false,
            drop_tags: false,
            bin_quality: false,
            update_nm: true,
            update_md: true,
            max_nm: 0,
            quiet: false,
        }
    }
}

/// What became of a record.
#[derive(Debug, PartialEq, Eq)]
pub enum Filled {
    Done,
    /// No bases: left as it was (counted in calmd's closing warning).
    NoSequence,
}

/// Offsets of the sequence and qualities in record bytes.
fn seq_and_qual_at(b: &[u8]) -> (usize, usize) {
    let r = RecordRef::new(b);
    let seq = layout::FIXED_LEN + b[layout::L_READ_NAME] as usize + 4 * r.n_cigar_op();
    (seq, seq + r.l_seq().div_ceil(2))
}

/// The reference byte at `pos`, `None` past either end (where calmd's walk stops).
fn ref_at(reference: &[u8], pos: i64) -> Option<u8> {
    usize::try_from(pos).ok().and_then(|p| reference.get(p)).copied().filter(|&c| c != 0)
}

/// Whether read code `c1` matches reference byte `r`.
fn matches(c1: u8, r: u8) -> bool {
    let c2 = SEQ_NT16[r as usize];
    (c1 == c2 && c1 != 15) || c1 == 0
}

/// Walks the aligned bases of `b` against `reference`, calling `on_match(z)` for each matching
/// query position; returns (MD, NM).
fn walk(b: &[u8], reference: &[u8], mut on_match: impl FnMut(usize)) -> (Vec<u8>, i32) {
    let r = RecordRef::new(b);
    let l_seq = r.l_seq();
    let mut md = Vec::with_capacity(16);
    let (mut matched, mut nm) = (0u32, 0i32);
    let (mut rpos, mut qpos) = (r.pos(), 0usize);
    let push_run = |md: &mut Vec<u8>, run: u32| {
        md.extend_from_slice(itoa::Buffer::new().format(run).as_bytes());
    };
    for op in r.cigar() {
        let len = cigar::len(op) as usize;
        match cigar::op(op) {
            cigar::MATCH | cigar::EQUAL | cigar::DIFF => {
                let mut j = 0;
                while j < len {
                    let z = qpos + j;
                    let Some(rb) = ref_at(reference, rpos + j as i64).filter(|_| z < l_seq) else {
                        break;
                    };
                    if matches(r.base_code(z), rb) {
                        on_match(z);
                        matched += 1;
                    } else {
                        push_run(&mut md, matched);
                        md.push(rb.to_ascii_uppercase());
                        matched = 0;
                        nm += 1;
                    }
                    j += 1;
                }
                if j < len {
                    break;
                }
                rpos += len as i64;
                qpos += len;
            }
            cigar::DEL => {
                push_run(&mut md, matched);
                md.push(b'^');
                let mut j = 0;
                while j < len {
                    let Some(rb) = ref_at(reference, rpos + j as i64) else { break };
                    md.push(rb.to_ascii_uppercase());
                    j += 1;
                }
                matched = 0;
                rpos += j as i64;
                nm += j as i32;
                if j < len {
                    break;
                }
            }
            cigar::INS => {
                qpos += len;
                nm += len as i32;
            }
            cigar::SOFT_CLIP => qpos += len,
            cigar::REF_SKIP => rpos += len as i64,
            _ => {}
        }
    }
    push_run(&mut md, matched);
    (md, nm)
}

/// Sets the base at `z` to `code`.
fn set_code(b: &mut [u8], seq_at: usize, z: usize, code: u8) {
    let byte = &mut b[seq_at + z / 2];
    *byte = if z.is_multiple_of(2) { (*byte & 0x0f) | code << 4 } else { (*byte & 0xf0) | code };
}

/// `bam_fillmd1_core` on the record `b` (owned bytes, edited in place); `where_` names the
/// reference and position for the no-sequence warning. Warnings go to `warnings`.
pub fn fill_md(
    b: &mut Vec<u8>,
    reference: &[u8],
    opts: &CalmdFlags,
    where_: (&[u8], i64),
    warnings: &mut Vec<String>,
) -> Filled {
    let name = |b: &[u8]| String::from_utf8_lossy(RecordRef::new(b).read_name()).into_owned();
    if RecordRef::new(b).l_seq() == 0 {
        if !opts.quiet {
            warnings.push(format!(
                "[bam_fillmd1] no sequence in alignment record for '{}' at {}:{}, skipped",
                name(b),
                String::from_utf8_lossy(where_.0),
                where_.1 + 1
            ));
        }
        return Filled::NoSequence;
    }
    let (seq_at, qual_at) = seq_and_qual_at(b);
    let mut equal_at = Vec::new();
    let (md, nm) = walk(b, reference, |z| {
        if opts.use_equal {
            equal_at.push(z);
        }
    });
    for z in equal_at {
        set_code(b, seq_at, z, 0);
    }
    if opts.max_nm > 0 && nm >= opts.max_nm {
        let mut masked = Vec::new();
        walk(b, reference, |z| masked.push(z));
        for z in masked {
            set_code(b, seq_at, z, 15);
            b[qual_at + z] = 0;
        }
    }
    let unmapped = RecordRef::new(b).flag() & flags::UNMAP != 0;
    if opts.update_nm && !unmapped {
        let old = RecordRef::new(b).aux_get(*b"NM").map(|f| f.int().unwrap_or(0) as i32);
        match old {
            None => edit::append_i32(b, *b"NM", nm as u32),
            Some(old) if old != nm => {
                if !opts.quiet {
                    warnings.push(format!(
                        "[bam_fillmd1] different NM for read '{}': {old} -> {nm}",
                        name(b)
                    ));
                }
                edit::delete_tag(b, *b"NM");
                edit::append_i32(b, *b"NM", nm as u32);
            }
            Some(_) => {}
        }
    }
    if opts.update_md && !unmapped {
        let old = RecordRef::new(b).aux_get(*b"MD").map(|f| c_string_value(&f));
        match old {
            None => edit::append_str(b, *b"MD", &md),
            Some(old) if !old.eq_ignore_ascii_case(&md) => {
                if !opts.quiet {
                    warnings.push(format!(
                        "[bam_fillmd1] different MD for read '{}': '{}' -> '{}'",
                        name(b),
                        String::from_utf8_lossy(&old),
                        String::from_utf8_lossy(&md)
                    ));
                }
                edit::delete_tag(b, *b"MD");
                edit::append_str(b, *b"MD", &md);
            }
            Some(_) => {}
        }
    }
    if opts.drop_tags {
        keep_only_read_group(b);
    }
    if opts.bin_quality {
        let (_, qual_at) = seq_and_qual_at(b);
        let l_seq = RecordRef::new(b).l_seq();
        for q in &mut b[qual_at..qual_at + l_seq] {
            if *q >= 3 {
                // htslib stores the int result in a byte: 255 becomes 257 mod 256.
                *q = (*q / 10 * 10).wrapping_add(7);
            }
        }
    }
    Filled::Done
}

/// The bytes of a field's value up to its first NUL, as C's `strlen(old_md+1)` reads them.
fn c_string_value(f: &AuxField<'_>) -> Vec<u8> {
    let raw = &f.raw[3..];
    raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())].to_vec()
}

/// `bam_aux_drop_other(b, bam_aux_get(b, "RG"))`: only the first `RG` field stays.
fn keep_only_read_group(b: &mut Vec<u8>) {
    let at = RecordRef::new(b).aux_offset();
    let rg = RawFields::new(&b[at..]).find(|f| f.starts_with(b"RG")).map(<[u8]>::to_vec);
    b.truncate(at);
    if let Some(rg) = rg {
        b.extend_from_slice(&rg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    fn record(seq: &[u8], cigar: &[u32], aux: &[u8]) -> Vec<u8> {
        RecordBuilder::new(b"r")
            .pos(1)
            .cigar(cigar)
            .seq(seq)
            .qual(&vec![30; seq.len()])
            .aux(aux)
            .build()
    }

    #[test]
    fn md_and_nm_as_calmd_computes_them() {
        // ref ACGTACGT; read at 1: C G A (mismatch T) | ins 1 | del 1 | A C
        let mut b = record(b"CGAGCG", &[3 << 4, 1 << 4 | 1, 1 << 4 | 2, 2 << 4], b"");
        let mut warnings = Vec::new();
        let opts = CalmdFlags { use_equal: true, ..CalmdFlags::default() };
        assert_eq!(fill_md(&mut b, b"ACGTACGT", &opts, (b"chr", 1), &mut warnings), Filled::Done);
        let r = RecordRef::new(&b);
        assert_eq!(r.aux_get(*b"MD").unwrap().raw, b"MDZ2T0^A2\0");
        assert_eq!(r.aux_get(*b"NM").unwrap().raw, b"NMi\x03\0\0\0");
        assert_eq!((0..6).map(|i| r.base_code(i)).collect::<Vec<_>>(), [0, 0, 1, 4, 0, 0]);
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_walk_stops_at_the_reference_end_and_old_tags_are_reported() {
        let mut b = record(b"CGTA", &[4 << 4], b"NMC\x05MDZ9\0");
        let mut warnings = Vec::new();
        fill_md(&mut b, b"ACGT", &CalmdFlags::default(), (b"chr", 1), &mut warnings);
        let r = RecordRef::new(&b);
        assert_eq!(r.aux_bytes(), b"NMi\x00\0\0\0MDZ3\0");
        assert_eq!(warnings.len(), 2);
        assert_eq!(warnings[1], "[bam_fillmd1] different MD for read 'r': '9' -> '3'");
    }
}
