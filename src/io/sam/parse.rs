//! One SAM text line → one BAM record, appended to a [`Batch`] (htslib `sam_parse1`).
//!
//! Encoding choices that decide byte identity with samtools:
//! - `bin` is `reg2bin(pos, pos + rlen)` with rlen = 1 when there is no CIGAR or it covers nothing;
//! - integer aux values get the smallest type (`c`/`s`/`i` when negative, `C`/`S`/`I` otherwise);
//! - a mapped read without CIGAR is flagged unmapped, as htslib does;
//! - POS and PNEXT up to 2⁶² − 1 and any 64-bit TLEN are accepted (htslib's `hts_pos_t`); values
//!   beyond 32 bits go into the record's name extension (see `record::layout`);
//! - an unknown RNAME/RNEXT is treated as `*` with a warning, as htslib does, except that an
//!   RNAME other than `*` is an error when the header has no `@SQ` line at all.

use crate::record::layout::{self, SEQ_NT16, flags};
use crate::record::{Batch, Header, cigar, long_cigar};

mod array;
pub(crate) mod aux;
mod numbers;

use aux::encode_aux;

/// Why a SAM line cannot be parsed; the reader adds the file name and line number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("too few fields (need 11)")]
    TooFewFields,
    #[error("invalid {0}")]
    BadField(&'static str),
    #[error("query name is longer than 254 characters")]
    LongName,
    #[error("invalid CIGAR operation '{}'", char::from(*.0))]
    BadCigarOp(u8),
    #[error("CIGAR and query sequence are of different length")]
    CigarSeqMismatch,
    #[error("SEQ and QUAL are of different length")]
    SeqQualMismatch,
    #[error("invalid QUAL character")]
    BadQual,
    #[error("invalid aux field '{0}'")]
    BadAux(String),
    /// htslib's `aux_parse`: `TAG:TYPE:` without the value its type needs (only `Z` and `H`
    /// may be empty).
    #[error("incomplete aux field")]
    IncompleteAux,
    /// A position beyond 32 bits needs the name extension (`layout::NAME_EXT_LEN` bytes), for
    /// which a name this long leaves no room in the u8 `l_read_name`.
    #[error("query name is too long for a position beyond 32 bits")]
    LongNameForWidePosition,
    /// A CIGAR of more than 65,535 operations needs the name extension too.
    #[error("query name is too long for a CIGAR of more than 65535 operations")]
    LongNameForLongCigar,
    /// RNAME names a reference but the header has none (htslib fails here; RNEXT only warns).
    #[error("no SQ lines present in the header")]
    NoReferences,
    /// htslib reads lines as C strings, so a NUL cuts a field short and the line fails to parse.
    /// Found by fuzzing: a NUL inside a `Z` value was copied into a record that no BAM reader
    /// (mdsam's own included) accepts.
    #[error("NUL byte in SAM text")]
    NulByte,
}

/// Warnings htslib prints but does not fail on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    UnknownReference(Vec<u8>),
    UnknownMateReference(Vec<u8>),
    MappedWithoutCigar,
    MappedAtZero,
    MateAtZero,
    EmptyQueryName,
    /// A placeholder CIGAR replaced by the one in the `CG` tag: read name, operations.
    CigarFromCgTag(Vec<u8>, usize),
}

impl std::fmt::Display for Warning {
    /// htslib's wording, so scripts that grep samtools' stderr keep working.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::UnknownReference(n) => write!(
                f,
                "[W::sam_parse1] unrecognized reference name \"{}\"; treated as unmapped",
                String::from_utf8_lossy(n)
            ),
            Warning::UnknownMateReference(n) => write!(
                f,
                "[W::sam_parse1] unrecognized mate reference name \"{}\"; treated as unmapped",
                String::from_utf8_lossy(n)
            ),
            Warning::MappedWithoutCigar => {
                write!(f, "[W::sam_parse1] mapped query must have a CIGAR; treated as unmapped")
            }
            Warning::EmptyQueryName => write!(f, "[W::sam_parse1] empty query name"),
            Warning::CigarFromCgTag(name, n) => write!(
                f,
                "[W::bam_tag2cigar] {} encodes a CIGAR with {n} operators at the CG tag",
                String::from_utf8_lossy(name)
            ),
            Warning::MateAtZero => {
                write!(
                    f,
                    "[W::sam_parse1] mapped mate cannot have zero coordinate; treated as unmapped"
                )
            }
            Warning::MappedAtZero => {
                write!(
                    f,
                    "[W::sam_parse1] mapped query cannot have zero coordinate; treated as unmapped"
                )
            }
        }
    }
}

fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    // 19 digits always fit a u64, so the loop needs no overflow checks; the range check is once.
    let mut v: u64 = 0;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// Parses SAM lines against one header. Records come in runs on one reference, so the reference
/// a name resolved to last is tried first: one comparison instead of a hash (the hash was 3 % of
/// SAM parsing).
pub struct LineParser<'h> {
    header: &'h Header,
    last_tid: i32,
}

impl<'h> LineParser<'h> {
    pub fn new(header: &'h Header) -> LineParser<'h> {
        LineParser { header, last_tid: -1 }
    }

    /// Parses `line` (no newline, no NUL byte: the caller checks) and appends the record to
    /// `out`.
    pub fn parse(
        &mut self,
        line: &[u8],
        out: &mut Batch,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), ParseError> {
        let at = out.begin_record();
        match self.encode(line, &mut out.data, warnings) {
            Ok(()) => {
                out.end_record(at);
                Ok(())
            }
            Err(e) => {
                out.abandon_record(at);
                Err(e)
            }
        }
    }

    fn ref_id(&mut self, name: &[u8], warnings: &mut Vec<Warning>, mate: bool) -> i32 {
        if name == b"*" {
            return -1;
        }
        if self.header.ref_name(self.last_tid) == Some(name) {
            return self.last_tid;
        }
        match self.header.tid(name) {
            Some(tid) => {
                self.last_tid = tid;
                tid
            }
            None => {
                let n = name.to_vec();
                warnings.push(if mate {
                    Warning::UnknownMateReference(n)
                } else {
                    Warning::UnknownReference(n)
                });
                -1
            }
        }
    }
}

/// Parses `line` (no newline) and appends the record to `out`.
pub fn parse_line(
    line: &[u8],
    header: &Header,
    out: &mut Batch,
    warnings: &mut Vec<Warning>,
) -> Result<(), ParseError> {
    if memchr::memchr(0, line).is_some() {
        return Err(ParseError::NulByte);
    }
    LineParser::new(header).parse(line, out, warnings)
}

/// The fields of a line, split at tabs one at a time.
struct Fields<'a> {
    rest: &'a [u8],
    done: bool,
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: Option<usize>) -> &'a [u8] {
        match n {
            Some(n) => {
                let f = &self.rest[..n];
                self.rest = &self.rest[n + 1..];
                f
            }
            None => {
                self.done = true;
                self.rest
            }
        }
    }

    /// The next field, found by memchr (names, sequences, qualities).
    fn long(&mut self) -> Result<&'a [u8], ParseError> {
        if self.done {
            return Err(ParseError::TooFewFields);
        }
        Ok(self.take(memchr::memchr(b'\t', self.rest)))
    }

    /// The next field, found by [`first_byte`](crate::record::find::first_byte): for the short
    /// fields (FLAG, POS, ..., and most aux fields) memchr's set-up cost more than the scan
    /// (memchr was 20 % of SAM parsing).
    fn short(&mut self) -> Result<&'a [u8], ParseError> {
        if self.done {
            return Err(ParseError::TooFewFields);
        }
        Ok(self.take(crate::record::find::first_byte(self.rest, b'\t')))
    }
}

/// The eleven mandatory fields of a line, as text.
struct MandatoryFields<'a> {
    qname: &'a [u8],
    flag: &'a [u8],
    rname: &'a [u8],
    pos: &'a [u8],
    mapq: &'a [u8],
    cigar: &'a [u8],
    rnext: &'a [u8],
    pnext: &'a [u8],
    tlen: &'a [u8],
    seq: &'a [u8],
    qual: &'a [u8],
}

impl<'a> MandatoryFields<'a> {
    /// Takes the mandatory fields off the front of `fields`, which keeps the aux fields.
    #[inline]
    fn split(fields: &mut Fields<'a>) -> Result<MandatoryFields<'a>, ParseError> {
        // Struct fields are evaluated in the order written: the line's order.
        Ok(MandatoryFields {
            qname: fields.long()?,
            flag: fields.short()?,
            rname: fields.short()?,
            pos: fields.short()?,
            mapq: fields.short()?,
            cigar: fields.short()?,
            rnext: fields.short()?,
            pnext: fields.short()?,
            tlen: fields.short()?,
            seq: fields.long()?,
            qual: fields.long()?,
        })
    }
}

/// FLAG to TLEN decoded: reference ids from the header, positions 0-based and 64-bit.
struct CoreFields {
    flag: u16,
    tid: i32,
    pos: i64,
    mapq: u8,
    next_tid: i32,
    next_pos: i64,
    tlen: i64,
}

impl LineParser<'_> {
    fn encode(
        &mut self,
        line: &[u8],
        buf: &mut Vec<u8>,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), ParseError> {
        let mut fields = Fields { rest: line, done: false };
        let text = MandatoryFields::split(&mut fields)?;
        let rec = buf.len();

        if text.qname.len() > 254 {
            return Err(ParseError::LongName);
        }
        if text.qname.is_empty() {
            warnings.push(Warning::EmptyQueryName);
        }
        let core = self.parse_core(&text, warnings)?;
        let high_halves = [core.pos, core.next_pos, core.tlen].map(|v| layout::split_wide(v).1);
        let wide = high_halves != [0; 3];
        if wide && text.qname.len() > layout::MAX_EXTENDED_NAME_LEN {
            return Err(ParseError::LongNameForWidePosition);
        }
        let long_cigar = is_long_cigar(text.cigar);
        if long_cigar && text.qname.len() > layout::MAX_EXTENDED_NAME_LEN {
            return Err(ParseError::LongNameForLongCigar);
        }

        // Fixed part; filled in by `write_fixed` once the sizes are known.
        buf.resize(rec + layout::FIXED_LEN, 0);
        push_read_name(text.qname, (wide || long_cigar).then_some(high_halves), buf);
        let l_read_name = buf.len() - rec - layout::FIXED_LEN;
        let cigar_at = buf.len();
        let n_cigar = push_cigar(text.cigar, buf)?;
        let cigar_ops = || buf[cigar_at..].chunks_exact(4).map(|c| layout::read_u32(c, 0));
        let rlen = cigar::ref_len(cigar_ops());
        let qlen = cigar::query_len(cigar_ops());
        let l_seq = if text.seq == b"*" { 0 } else { text.seq.len() };
        if n_cigar > 0 && l_seq > 0 && qlen != l_seq as i64 {
            return Err(ParseError::CigarSeqMismatch);
        }
        let bin = layout::reg2bin(core.pos, core.pos + if rlen > 0 { rlen } else { 1 });

        if l_seq > 0 {
            pack_seq(text.seq, buf);
        }
        push_qual(text.qual, l_seq, buf)?;
        while !fields.done {
            let field = fields.short()?;
            // One tab may end the line (htslib stops at the end); an empty field elsewhere is bad.
            if field.is_empty() && fields.done {
                break;
            }
            encode_aux(field, buf)?;
        }
        let sizes = FixedSizes { l_read_name, bin, n_cigar, l_seq };
        write_fixed(&mut buf[rec..rec + layout::FIXED_LEN], &core, sizes);
        if long_cigar {
            let at = rec + layout::FIXED_LEN + text.qname.len() + 1 + layout::EXT_N_CIGAR_HIGH;
            buf[at..at + 2].copy_from_slice(&((n_cigar >> 16) as u16).to_le_bytes());
        }
        if long_cigar::may_hold_cg_cigar(&buf[rec..]) {
            cigar_from_cg_tag(buf, rec, warnings)?;
        }
        Ok(())
    }

    /// Decodes FLAG to TLEN in htslib's order of checks.
    #[inline]
    fn parse_core(
        &mut self,
        text: &MandatoryFields<'_>,
        warnings: &mut Vec<Warning>,
    ) -> Result<CoreFields, ParseError> {
        let bad = |field| move |_| ParseError::BadField(field);
        let mut flag = numbers::field_flag(text.flag).map_err(bad("FLAG"))?;
        if text.rname != b"*" && self.header.refs().is_empty() {
            return Err(ParseError::NoReferences);
        }
        let mut tid = self.ref_id(text.rname, warnings, false);
        let pos = numbers::field_uint(text.pos, 62).map_err(bad("POS"))? as i64 - 1;
        // htslib's corrections, in its order (the warnings too): a placed read at position 0
        // loses its reference; a read without one is unmapped; so is a mapped read without CIGAR.
        // `RNEXT` `=` then names the corrected reference; a placed mate at 0 loses its own.
        if pos < 0 && tid >= 0 {
            warnings.push(Warning::MappedAtZero);
            tid = -1;
        }
        if tid < 0 {
            flag |= flags::UNMAP;
        }
        let mapq = numbers::field_uint(text.mapq, 8).map_err(bad("MAPQ"))? as u8;
        if text.cigar == b"*" && flag & flags::UNMAP == 0 {
            warnings.push(Warning::MappedWithoutCigar);
            flag |= flags::UNMAP;
        }
        let mut next_tid =
            if text.rnext == b"=" { tid } else { self.ref_id(text.rnext, warnings, true) };
        let next_pos = numbers::field_uint(text.pnext, 62).map_err(bad("PNEXT"))? as i64 - 1;
        if next_pos < 0 && next_tid >= 0 {
            warnings.push(Warning::MateAtZero);
            next_tid = -1;
        }
        let tlen = numbers::field_int(text.tlen, 63).map_err(bad("TLEN"))?;
        Ok(CoreFields { flag, tid, pos, mapq, next_tid, next_pos, tlen })
    }
}

/// True when CIGAR text holds more than 65,535 operations (a CIGAR that long is at least two
/// characters an operation, so ordinary CIGARs are not scanned). An invalid CIGAR may be counted
/// wrong: [`push_cigar`] then refuses it.
#[inline]
fn is_long_cigar(text: &[u8]) -> bool {
    text.len() > 2 * layout::MAX_SHORT_CIGAR && count_cigar_ops(text) > layout::MAX_SHORT_CIGAR
}

#[cold]
fn count_cigar_ops(text: &[u8]) -> usize {
    text.iter().filter(|c| !c.is_ascii_digit()).count()
}

/// A record written with BAM's placeholder CIGAR and a `CG:B:I` tag (SAM converted from BAM by
/// a tool that does not convert back) gets its real CIGAR in place, with htslib's warning
/// (`sam_parse1` calls `bam_tag2cigar`).
#[cold]
fn cigar_from_cg_tag(
    buf: &mut Vec<u8>,
    rec: usize,
    warnings: &mut Vec<Warning>,
) -> Result<(), ParseError> {
    let converted =
        long_cigar::from_cg_tag(&buf[rec..]).map_err(|_| ParseError::LongNameForLongCigar)?;
    if let Some(new) = converted {
        let r = crate::record::RecordRef::new(&new);
        warnings.push(Warning::CigarFromCgTag(r.read_name().to_vec(), r.n_cigar_op()));
        buf.truncate(rec);
        buf.extend_from_slice(&new);
    }
    Ok(())
}

/// Appends the read name and its NUL, then the name extension when some value needs its high
/// half (`high_halves`: of POS, PNEXT, TLEN).
#[inline]
fn push_read_name(qname: &[u8], high_halves: Option<[i32; 3]>, buf: &mut Vec<u8>) {
    buf.extend_from_slice(qname);
    buf.push(0);
    if let Some([pos_high, next_pos_high, tlen_high]) = high_halves {
        let mut ext = [0u8; layout::NAME_EXT_LEN];
        ext[layout::EXT_POS_HIGH..][..4].copy_from_slice(&pos_high.to_le_bytes());
        ext[layout::EXT_NEXT_POS_HIGH..][..4].copy_from_slice(&next_pos_high.to_le_bytes());
        ext[layout::EXT_TLEN_HIGH..][..4].copy_from_slice(&tlen_high.to_le_bytes());
        buf.extend_from_slice(&ext);
    }
}

/// Appends the operations of CIGAR text (`*`: none); returns how many.
#[inline]
fn push_cigar(text: &[u8], buf: &mut Vec<u8>) -> Result<u32, ParseError> {
    if text == b"*" {
        return Ok(0);
    }
    let mut n_cigar = 0u32;
    let mut len: u64 = 0;
    let mut have_digit = false;
    for &c in text {
        if c.is_ascii_digit() {
            len = len * 10 + (c - b'0') as u64;
            have_digit = true;
            if len >= 1 << 28 {
                return Err(ParseError::BadField("CIGAR"));
            }
        } else {
            let op = cigar::op_code(c).ok_or(ParseError::BadCigarOp(c))?;
            if !have_digit {
                return Err(ParseError::BadField("CIGAR"));
            }
            buf.extend_from_slice(&((len as u32) << 4 | op as u32).to_le_bytes());
            n_cigar += 1;
            len = 0;
            have_digit = false;
        }
    }
    if have_digit || n_cigar == 0 {
        return Err(ParseError::BadField("CIGAR"));
    }
    Ok(n_cigar)
}

/// Appends QUAL as Phred values (`*`: `l_seq` bytes of 0xff).
#[inline]
fn push_qual(qual: &[u8], l_seq: usize, buf: &mut Vec<u8>) -> Result<(), ParseError> {
    if qual == b"*" {
        buf.resize(buf.len() + l_seq, 0xff);
        return Ok(());
    }
    if qual.len() != l_seq {
        return Err(ParseError::SeqQualMismatch);
    }
    let at = buf.len();
    buf.extend_from_slice(qual);
    // htslib's COPY_MINUS_N: a character below '!' or past '!' + 127 leaves the high bit set.
    let mut high = 0u8;
    buf[at..].iter_mut().for_each(|q| {
        *q = q.wrapping_sub(33);
        high |= *q;
    });
    if high & 0x80 != 0 {
        return Err(ParseError::BadQual);
    }
    Ok(())
}

/// The sizes the fixed part records, known once the variable part is written.
struct FixedSizes {
    l_read_name: usize,
    bin: u16,
    n_cigar: u32,
    l_seq: usize,
}

/// Fills in the fixed part of a record (the low halves of its 64-bit values).
#[inline]
fn write_fixed(fixed: &mut [u8], core: &CoreFields, sizes: FixedSizes) {
    let low = |v: i64| layout::split_wide(v).0.to_le_bytes();
    fixed[layout::REF_ID..][..4].copy_from_slice(&core.tid.to_le_bytes());
    fixed[layout::POS..][..4].copy_from_slice(&low(core.pos));
    fixed[layout::L_READ_NAME] = sizes.l_read_name as u8;
    fixed[layout::MAPQ] = core.mapq;
    fixed[layout::BIN..][..2].copy_from_slice(&sizes.bin.to_le_bytes());
    fixed[layout::N_CIGAR_OP..][..2].copy_from_slice(&(sizes.n_cigar as u16).to_le_bytes());
    fixed[layout::FLAG..][..2].copy_from_slice(&core.flag.to_le_bytes());
    fixed[layout::L_SEQ..][..4].copy_from_slice(&(sizes.l_seq as i32).to_le_bytes());
    fixed[layout::NEXT_REF_ID..][..4].copy_from_slice(&core.next_tid.to_le_bytes());
    fixed[layout::NEXT_POS..][..4].copy_from_slice(&low(core.next_pos));
    fixed[layout::TLEN..][..4].copy_from_slice(&low(core.tlen));
}

/// Appends `seq` as 4-bit codes, two bases a byte. One table look-up per pair of bases (the
/// per-base iterator was 11 % of SAM parsing).
pub(crate) fn pack_seq(seq: &[u8], buf: &mut Vec<u8>) {
    let (pairs, odd) = seq.as_chunks::<2>();
    let at = buf.len();
    buf.resize(at + pairs.len(), 0);
    for (o, p) in buf[at..].iter_mut().zip(pairs) {
        *o = SEQ_NT16_PAIR[u16::from_le_bytes(*p) as usize];
    }
    if let [c] = odd {
        buf.push(SEQ_NT16[*c as usize] << 4);
    }
}

/// Two bases (as a little-endian `u16` of their letters) → their packed byte.
static SEQ_NT16_PAIR: [u8; 65536] = {
    let mut t = [0u8; 65536];
    let mut i = 0;
    while i < 65536 {
        t[i] = SEQ_NT16[i & 0xff] << 4 | SEQ_NT16[i >> 8];
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::aux::AuxValue;

    fn header() -> Header {
        Header::from_sam_text(b"@SQ\tSN:chr1\tLN:1000\n@SQ\tSN:chr2\tLN:500\n".to_vec()).unwrap()
    }

    fn parse(line: &str) -> Result<Batch, ParseError> {
        let mut b = Batch::default();
        let mut w = Vec::new();
        parse_line(line.as_bytes(), &header(), &mut b, &mut w).map(|_| b)
    }

    #[test]
    fn parses_all_fields() {
        let b = parse("r1\t99\tchr1\t100\t60\t5M1I4M\t=\t300\t210\tACGTAACGTA\tIIIIIIIIII\tNM:i:1\tXS:i:-5\tRG:Z:g1\tXB:B:s,1,-2\tXF:f:1.5").unwrap();
        let r = b.get(0);
        assert_eq!(
            (r.ref_id(), r.pos(), r.mapq(), r.flag(), r.next_ref_id(), r.next_pos(), r.tlen()),
            (0, 99, 60, 99, 0, 299, 210)
        );
        assert_eq!(r.read_name(), b"r1");
        assert_eq!(r.n_cigar_op(), 3);
        assert_eq!(r.l_seq(), 10);
        assert_eq!(r.bin(), layout::reg2bin(99, 108));
        assert_eq!(r.qual()[0], 40);
        let aux: Vec<_> = r.aux().collect();
        assert_eq!(aux[0].ty, b'C');
        assert_eq!(aux[1].ty, b'c');
        assert_eq!(aux[3].typed(), AuxValue::Array(b's', &[1, 0, 0xfe, 0xff]));
        assert_eq!(aux[4].typed(), AuxValue::Float(1.5));
    }

    #[test]
    fn positions_beyond_32_bits_round_trip_through_the_name_extension() {
        let line = "of1\t99\tchr1\t10000000010\t30\t3M\t=\t4294967297\t-9000000000\tACG\t*\tNM:i:1";
        let b = parse(line).unwrap();
        let r = b.get(0);
        assert_eq!((r.pos(), r.next_pos(), r.tlen()), (10_000_000_009, 4_294_967_296, -9e9 as i64));
        assert_eq!(r.read_name(), b"of1");
        assert!(r.has_wide_values());
        assert_eq!(r.aux_get(*b"NM").and_then(|f| f.int()), Some(1));
        let mut text = Vec::new();
        crate::io::sam::format::format_record(&mut text, &r, &header());
        assert_eq!(text, format!("{line}\n").into_bytes());
        // Values that fit 32 bits give the ordinary record, byte for byte.
        let small = parse("of1\t99\tchr1\t2147483647\t30\t3M\t=\t1\t-2147483648\tACG\t*").unwrap();
        assert_eq!(small.get(0).bytes()[layout::L_READ_NAME], 4);
        assert!(!small.get(0).has_wide_values());
        assert_eq!(small.get(0).tlen(), i32::MIN as i64);
        let long = "n".repeat(layout::MAX_EXTENDED_NAME_LEN + 1);
        assert!(parse(&format!("{long}\t0\tchr1\t1\t0\t*\t*\t0\t0\t*\t*")).is_ok());
        assert_eq!(
            parse(&format!("{long}\t0\tchr1\t3000000000\t0\t*\t*\t0\t0\t*\t*")).err(),
            Some(ParseError::LongNameForWidePosition)
        );
        assert!(parse("r\t0\tchr1\t4611686018427387904\t0\t*\t*\t0\t0\t*\t*").is_err());
    }

    #[test]
    fn unmapped_star_record_gets_bin_4680() {
        let b = parse("u\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*").unwrap();
        let r = b.get(0);
        assert_eq!((r.ref_id(), r.pos(), r.bin(), r.l_seq()), (-1, -1, 4680, 0));
    }

    #[test]
    fn rejects_bad_lines() {
        assert_eq!(parse("r\t0\tchr1").err(), Some(ParseError::TooFewFields));
        assert_eq!(
            parse("r\tx\tchr1\t1\t0\t*\t*\t0\t0\t*\t*").err(),
            Some(ParseError::BadField("FLAG"))
        );
        assert_eq!(
            parse("r\t0\tchr1\t1\t0\t3Q\t*\t0\t0\t*\t*").err(),
            Some(ParseError::BadCigarOp(b'Q'))
        );
        assert_eq!(
            parse("r\t0\tchr1\t1\t0\t3M\t*\t0\t0\tACGT\t*").err(),
            Some(ParseError::CigarSeqMismatch)
        );
        assert_eq!(
            parse("r\t0\tchr1\t1\t0\t4M\t*\t0\t0\tACGT\tII").err(),
            Some(ParseError::SeqQualMismatch)
        );
        let with_aux =
            |aux: &str| parse(&format!("r\t0\tchr1\t1\t0\t4M\t*\t0\t0\tACGT\tIIII\t{aux}"));
        assert!(matches!(with_aux("NM:i").err(), Some(ParseError::BadAux(_))));
        for empty in ["NM:i:", "XA:A:", "XF:f:", "XB:B:", "XQ:Q:", "NM:i:\x01"] {
            assert_eq!(with_aux(empty).err(), Some(ParseError::IncompleteAux), "{empty}");
        }
        assert!(with_aux("XZ:Z:").is_ok() && with_aux("XH:H:").is_ok());
    }

    /// What samtools 1.24 reads leniently (checked with the oracle): an empty QNAME (with a
    /// warning), a longer `A` value (its first character) and a float with trailing junk.
    #[test]
    fn reads_what_htslib_reads_leniently() {
        let mut b = Batch::default();
        let mut w = Vec::new();
        let line = b"\t4\t*\t0\t0\t*\t*\t0\t0\tAC\tII\tXA:A:ab\tXF:f:abc\tXG:f:1.5x\tXD:d:2e1y";
        parse_line(line, &header(), &mut b, &mut w).unwrap();
        assert_eq!(w, vec![Warning::EmptyQueryName]);
        let r = b.get(0);
        assert_eq!(r.read_name(), b"");
        let aux: Vec<_> = r.aux().map(|f| f.typed()).collect();
        assert_eq!(
            aux,
            [
                AuxValue::Char(b'a'),
                AuxValue::Float(0.0),
                AuxValue::Float(1.5),
                AuxValue::Float(20.0)
            ]
        );
    }

    /// samtools 1.24 fails on a NUL anywhere in a record line (fuzzing found a NUL in a `Z`
    /// value producing a record with a broken aux block).
    #[test]
    fn rejects_nul_bytes_in_any_field() {
        let line = "r1\t0\tchr1\t10\t60\t4M\t*\t0\t0\tACGT\tIIII\tRG:Z:abcd\tNM:i:1";
        assert!(parse(line).is_ok());
        let field_starts = line.match_indices('\t').map(|(i, _)| i + 1);
        for at in std::iter::once(0).chain(field_starts) {
            let mut broken = line.as_bytes().to_vec();
            broken.insert(at + 1, 0);
            let broken = String::from_utf8(broken).unwrap();
            assert_eq!(parse(&broken).err(), Some(ParseError::NulByte), "{broken:?}");
        }
    }

    /// samtools 1.24 reads a headerless SAM of unmapped reads, but an RNAME with no `@SQ` at all
    /// is an error (an unknown RNEXT still only warns).
    #[test]
    fn reference_names_need_sq_lines() {
        let empty = Header::from_sam_text(b"@CO\tno references\n".to_vec()).unwrap();
        let mut b = Batch::default();
        let mut w = Vec::new();
        let line = b"r\t4\tchr1\t0\t0\t*\t*\t0\t0\tACGT\tIIII";
        assert_eq!(parse_line(line, &empty, &mut b, &mut w), Err(ParseError::NoReferences));
        let line = b"r\t4\t*\t0\t0\t*\tchr1\t5\t0\tACGT\tIIII";
        assert_eq!(parse_line(line, &empty, &mut b, &mut w), Ok(()));
        assert_eq!(w, vec![Warning::UnknownMateReference(b"chr1".to_vec())]);
    }

    /// One parser over many lines (as the reader uses it) resolves every name as a fresh
    /// look-up would: runs on one reference, switches, RNEXT on another, unknown names between.
    #[test]
    fn a_parser_reused_across_lines_resolves_every_reference() {
        let header = header();
        let mut parser = LineParser::new(&header);
        let mut b = Batch::default();
        let mut w = Vec::new();
        let cases = [
            ("chr1", "=", 0, 0),
            ("chr1", "chr2", 0, 1),
            ("chr2", "chr1", 1, 0),
            ("chrX", "chr2", -1, 1),
            ("chr2", "chrY", 1, -1),
            ("*", "chr1", -1, 0),
            ("chr1", "*", 0, -1),
        ];
        for (i, (rname, rnext, ..)) in cases.iter().enumerate() {
            let line = format!("r{i}\t1\t{rname}\t5\t0\t4M\t{rnext}\t9\t0\tACGT\tIIII");
            parser.parse(line.as_bytes(), &mut b, &mut w).unwrap();
        }
        for (i, &(.., tid, next_tid)) in cases.iter().enumerate() {
            assert_eq!((b.get(i).ref_id(), b.get(i).next_ref_id()), (tid, next_tid), "line {i}");
        }
        assert_eq!(
            w,
            vec![
                Warning::UnknownReference(b"chrX".to_vec()),
                Warning::UnknownMateReference(b"chrY".to_vec())
            ]
        );
    }

    #[test]
    fn unknown_reference_warns_and_unmaps_nothing_else() {
        let mut b = Batch::default();
        let mut w = Vec::new();
        parse_line(b"r\t0\tchrX\t5\t0\t4M\t*\t0\t0\tACGT\tIIII", &header(), &mut b, &mut w)
            .unwrap();
        assert_eq!(w, vec![Warning::UnknownReference(b"chrX".to_vec())]);
        assert_eq!(b.get(0).ref_id(), -1);
    }
}
