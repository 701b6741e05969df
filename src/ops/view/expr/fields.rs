//! Record variables of the filter language: htslib `sam.c` `bam_sym_lookup`.
//!
//! Names are matched as *prefixes* of the remaining text, in htslib's order, so `posx` reads
//! `pos` and leaves `x` behind (a parse error later), and `flag.dupe` reads `flag.dup`.
//! Positions are 1-based (`pos`, `mpos`, `pnext`); `endpos` is htslib's 0-based exclusive
//! `bam_endpos`; `qual` is the raw Phred bytes (no +33); `seq` is the decoded bases.

use std::borrow::Cow;
use std::io::Write;

use super::value::Value;
use crate::record::aux::AuxValue;
use crate::record::cigar;
use crate::record::layout::{SEQ_CODES, flags, read_u32};
use crate::record::{Header, RecordRef};

/// A named record variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Cigar,
    EndPos,
    Flag,
    /// `flag.NAME`: the flag ANDed with one bit (so `flag.mreverse` is 32, not 1).
    FlagBit(u16),
    HardClipLen,
    Library,
    Mapq,
    MatePos,
    MateRefName,
    MateRefId,
    CigarOpCount,
    Pos,
    QueryLen,
    QueryName,
    Qual,
    RefLen,
    RefName,
    RefId,
    Seq,
    SoftClipLen,
    TemplateLen,
}

/// Names tried in htslib's order for each first letter; the first prefix match wins.
const NAMES: &[(&str, Field)] = &[
    ("cigar", Field::Cigar),
    ("endpos", Field::EndPos),
    ("hclen", Field::HardClipLen),
    ("library", Field::Library),
    ("mapq", Field::Mapq),
    ("mpos", Field::MatePos),
    ("mrname", Field::MateRefName),
    ("mrefid", Field::MateRefId),
    ("ncigar", Field::CigarOpCount),
    ("pos", Field::Pos),
    ("pnext", Field::MatePos),
    ("qlen", Field::QueryLen),
    ("qname", Field::QueryName),
    ("qual", Field::Qual),
    ("rlen", Field::RefLen),
    ("rname", Field::RefName),
    ("rnext", Field::MateRefName),
    ("refid", Field::RefId),
    ("seq", Field::Seq),
    ("sclen", Field::SoftClipLen),
    ("tlen", Field::TemplateLen),
];

/// `flag.NAME` suffixes in htslib's order.
const FLAG_NAMES: &[(&str, u16)] = &[
    ("paired", flags::PAIRED),
    ("proper_pair", flags::PROPER_PAIR),
    ("unmap", flags::UNMAP),
    ("munmap", flags::MUNMAP),
    ("reverse", flags::REVERSE),
    ("mreverse", flags::MREVERSE),
    ("read1", flags::READ1),
    ("read2", flags::READ2),
    ("secondary", flags::SECONDARY),
    ("qcfail", flags::QCFAIL),
    ("dup", flags::DUP),
    ("supplementary", flags::SUPPLEMENTARY),
];

/// What a symbol at the start of `text` names.
#[derive(Debug, PartialEq, Eq)]
pub enum Symbol {
    Field(Field),
    Aux([u8; 2]),
}

/// Reads a variable name or `[XY]` aux tag at the start of `text`: the symbol and its length.
/// `Ok(None)` when nothing matches (the parser then tries function names); `Err` for a bad
/// `flag.` suffix, which htslib reports as such.
pub fn parse_symbol(text: &[u8]) -> Result<Option<(Symbol, usize)>, String> {
    if text.len() >= 4 && text[0] == b'[' && text[3] == b']' {
        return Ok(Some((Symbol::Aux([text[1], text[2]]), 4)));
    }
    if text.starts_with(b"flag") {
        let Some(suffix) = text[4..].strip_prefix(b".") else {
            return Ok(Some((Symbol::Field(Field::Flag), 4)));
        };
        return FLAG_NAMES
            .iter()
            .find(|(name, _)| suffix.starts_with(name.as_bytes()))
            .map(|&(name, bit)| Some((Symbol::Field(Field::FlagBit(bit)), 5 + name.len())))
            .ok_or_else(|| "Unrecognised flag string".to_string());
    }
    Ok(NAMES
        .iter()
        .find(|(name, _)| text.starts_with(name.as_bytes()))
        .map(|&(name, field)| (Symbol::Field(field), name.len())))
}

/// Sets `res` to a field's value as `bam_sym_lookup` does: `is_str` and the value change,
/// `is_true` is left alone.
pub fn load_field<'r>(field: Field, rec: &RecordRef<'r>, header: &'r Header, res: &mut Value<'r>) {
    match field {
        Field::Cigar => res.set_text(Cow::Owned(cigar_text(rec))),
        Field::EndPos => res.set_number(rec.end_pos() as f64),
        Field::Flag => res.set_number(rec.flag() as f64),
        Field::FlagBit(bit) => res.set_number((rec.flag() & bit) as f64),
        Field::HardClipLen => res.set_number(hard_clip_len(rec) as f64),
        Field::Library => res.set_text(Cow::Borrowed(library(rec, header))),
        Field::Mapq => res.set_number(rec.mapq() as f64),
        Field::MatePos => res.set_number(rec.next_pos() as f64 + 1.0),
        Field::MateRefName => res.set_text(Cow::Borrowed(ref_name(header, rec.next_ref_id()))),
        Field::MateRefId => res.set_number(rec.next_ref_id() as f64),
        Field::CigarOpCount => res.set_number(rec.n_cigar_op() as f64),
        Field::Pos => res.set_number(rec.pos() as f64 + 1.0),
        Field::QueryLen => res.set_number(cigar::query_len(rec.cigar()) as f64),
        Field::QueryName => res.set_text(Cow::Borrowed(rec.read_name())),
        Field::Qual => res.set_text(Cow::Borrowed(rec.qual())),
        Field::RefLen => res.set_number(rec.ref_len() as f64),
        Field::RefName => res.set_text(Cow::Borrowed(ref_name(header, rec.ref_id()))),
        Field::RefId => res.set_number(rec.ref_id() as f64),
        Field::Seq => res.set_text(Cow::Owned(seq_text(rec))),
        Field::SoftClipLen => res.set_number(soft_clip_len(rec) as f64),
        Field::TemplateLen => res.set_number(rec.tlen() as f64),
    }
}

/// Sets `res` to an aux tag's value. A present tag is forced true even when 0 or empty; a
/// missing one is a NULL string (undefined). `B` arrays are an error, as in htslib 1.24.
pub fn load_aux<'r>(tag: [u8; 2], rec: &RecordRef<'r>, res: &mut Value<'r>) -> Result<(), String> {
    let Some(field) = rec.aux_get(tag) else {
        // htslib sets the length to 0 without freeing the buffer: NULL stays NULL, and a
        // buffer from earlier in the same slot stays a (defined) empty string.
        res.is_str = true;
        res.clear_text();
        res.number = 0.0;
        res.is_true = false;
        return Ok(());
    };
    res.is_true = true;
    match field.typed() {
        AuxValue::Str(text) => res.set_text(Cow::Borrowed(text)),
        AuxValue::Char(_) => res.set_text(Cow::Borrowed(&field.value[..1])),
        AuxValue::Int(i) => res.set_number(i as f64),
        AuxValue::Float(f) => res.set_number(f),
        AuxValue::Array(..) => {
            return Err(format!("Aux type '{} not yet supported by filters", field.ty as char));
        }
    }
    Ok(())
}

/// A reference name, or `*` for an id outside the header (`sam_hdr_tid2name`).
fn ref_name(header: &Header, tid: i32) -> &[u8] {
    header.ref_name(tid).unwrap_or(b"*")
}

/// `LB` of the record's read group; empty when there is none. htslib copies it into a
/// 1024-byte buffer, so it is cut at 1023 bytes.
fn library<'r>(rec: &RecordRef<'r>, header: &'r Header) -> &'r [u8] {
    let group = rec.aux_get(*b"RG").filter(|f| matches!(f.ty, b'Z' | b'H')).map(|f| f.value);
    let library = group.and_then(|rg| header.read_group_library(rg)).unwrap_or(b"");
    &library[..library.len().min(1023)]
}

/// The CIGAR string, `*` without operations.
fn cigar_text(rec: &RecordRef<'_>) -> Vec<u8> {
    if rec.n_cigar_op() == 0 {
        return b"*".to_vec();
    }
    let mut out = Vec::with_capacity(rec.n_cigar_op() * 4);
    for op in rec.cigar() {
        // Writing into a Vec cannot fail.
        let _ = write!(out, "{}{}", cigar::len(op), cigar::op_char(cigar::op(op)) as char);
    }
    out
}

/// The bases as letters (`=ACMGRSVTWYHKDBN`); empty for `*`.
fn seq_text(rec: &RecordRef<'_>) -> Vec<u8> {
    (0..rec.l_seq()).map(|i| SEQ_CODES[rec.base_code(i) as usize]).collect()
}

/// The CIGAR operation at index `i` as (op, len), read in place.
fn cigar_at(rec: &RecordRef<'_>, i: usize) -> (u8, i64) {
    let raw = read_u32(rec.cigar_bytes(), 4 * i);
    (cigar::op(raw), cigar::len(raw) as i64)
}

/// Hard clips at the first and last operation (the last only when there are two or more).
fn hard_clip_len(rec: &RecordRef<'_>) -> i64 {
    let n = rec.n_cigar_op();
    let mut total = 0;
    if n > 0 && cigar_at(rec, 0).0 == cigar::HARD_CLIP {
        total += cigar_at(rec, 0).1;
    }
    if n > 1 && cigar_at(rec, n - 1).0 == cigar::HARD_CLIP {
        total += cigar_at(rec, n - 1).1;
    }
    total
}

/// Soft clips at each end, looking one operation inwards past a hard clip, as htslib does.
fn soft_clip_len(rec: &RecordRef<'_>) -> i64 {
    // Signed indices as in htslib, where `n - 2 > left` must be false for short CIGARs.
    let n = rec.n_cigar_op() as i64;
    let op = |i: i64| cigar_at(rec, i as usize).0;
    let len = |i: i64| cigar_at(rec, i as usize).1;
    let mut total = 0;
    let mut left = 0;
    if n > 0 && op(0) == cigar::SOFT_CLIP {
        total += len(0);
    } else if n > 1 && op(0) == cigar::HARD_CLIP && op(1) == cigar::SOFT_CLIP {
        left = 1;
        total += len(1);
    }
    if n - 1 > left && op(n - 1) == cigar::SOFT_CLIP {
        total += len(n - 1);
    } else if n - 2 > left && op(n - 1) == cigar::HARD_CLIP && op(n - 2) == cigar::SOFT_CLIP {
        total += len(n - 2);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::super::test_records::{Sam, header};
    use super::*;

    fn clipped(cigar: &'static str) -> Vec<u8> {
        let query: usize = cigar
            .split(|c: char| c.is_ascii_alphabetic())
            .zip(cigar.matches(|c: char| c.is_ascii_alphabetic()))
            .filter(|(_, op)| matches!(*op, "M" | "I" | "S" | "=" | "X"))
            .map(|(len, _)| len.parse::<usize>().unwrap())
            .sum();
        let seq: &'static str = "A".repeat(query).leak();
        Sam { cigar, seq, qual: "*", ..Sam::mapped() }.bytes()
    }

    fn number(field: Field, bytes: &[u8]) -> f64 {
        let header = header();
        let mut res = Value::fresh();
        load_field(field, &RecordRef::new(bytes), &header, &mut res);
        assert!(!res.is_str);
        res.number
    }

    #[test]
    fn clip_lengths_match_samtools() {
        // (cigar, sclen, hclen) as samtools 1.24 reports them.
        for (cigar, soft, hard) in [
            ("5S", 5.0, 0.0),
            ("3H2S", 2.0, 3.0),
            ("2S3M2S", 4.0, 0.0),
            ("1H2S3M4S5H", 6.0, 6.0),
            ("4S3H", 4.0, 3.0),
            ("5H", 0.0, 5.0),
            ("5H3M5H", 0.0, 10.0),
            ("2S3H4S", 6.0, 0.0),
            ("3M", 0.0, 0.0),
        ] {
            let bytes = clipped(cigar);
            assert_eq!(number(Field::SoftClipLen, &bytes), soft, "sclen of {cigar}");
            assert_eq!(number(Field::HardClipLen, &bytes), hard, "hclen of {cigar}");
        }
    }

    #[test]
    fn names_are_read_as_prefixes_in_htslib_order() {
        assert_eq!(parse_symbol(b"posx"), Ok(Some((Symbol::Field(Field::Pos), 3))));
        assert_eq!(parse_symbol(b"flag.dupe"), Ok(Some((Symbol::Field(Field::FlagBit(0x400)), 8))));
        assert_eq!(parse_symbol(b"flag_x"), Ok(Some((Symbol::Field(Field::Flag), 4))));
        assert_eq!(parse_symbol(b"[RG]"), Ok(Some((Symbol::Aux(*b"RG"), 4))));
        assert_eq!(parse_symbol(b"[R]"), Ok(None));
        assert_eq!(parse_symbol(b"length("), Ok(None));
        assert!(parse_symbol(b"flag.x").is_err());
    }

    #[test]
    fn missing_tag_keeps_an_earlier_buffer_as_an_empty_string() {
        let bytes = Sam::mapped().bytes();
        let record = RecordRef::new(&bytes);
        let mut fresh = Value::fresh();
        load_aux(*b"XX", &record, &mut fresh).unwrap();
        assert!(fresh.is_str && fresh.text.is_none() && !fresh.exists());
        let mut reused = Value::fresh();
        reused.set_text(Cow::Borrowed(b"old"));
        load_aux(*b"XX", &record, &mut reused).unwrap();
        assert_eq!(reused.text.as_deref(), Some(&b""[..]));
    }
}
