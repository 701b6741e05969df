//! `RecordRef`: a zero-copy view of one BAM record's bytes (without `block_size`).

use super::aux::{AuxField, AuxIter};
use super::cigar;
use super::layout::{self, read_i32, read_u16, read_u32};

/// A borrowed BAM record. Construct it only from bytes that passed [`validate`].
#[derive(Clone, Copy)]
pub struct RecordRef<'a> {
    bytes: &'a [u8],
}

/// Why a record's bytes are not a valid BAM record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("record is shorter than the 32-byte fixed part")]
    TooShort,
    #[error("l_read_name is 0")]
    EmptyReadName,
    #[error("read name is not NUL-terminated")]
    UnterminatedReadName,
    #[error("n_cigar_op, l_seq or l_read_name runs past the end of the record")]
    FieldsPastEnd,
    #[error("l_seq is negative")]
    NegativeSeqLength,
    #[error("malformed aux data")]
    BadAux,
    /// Only in BAM input: non-NUL bytes after the read name's NUL where mdsam keeps the high
    /// halves of 64-bit positions, which no BAM can hold (htslib ignores such bytes).
    #[error("read name is padded with non-NUL bytes")]
    NameGarbage,
    /// A CIGAR of more than 65,535 operations (from a `CG` tag) needs the name extension, for
    /// which the read name leaves no room.
    #[error("read name too long for a CIGAR of more than 65535 operations")]
    NameTooLongForLongCigar,
}

/// Checks every length field against the record's size, and the aux block's structure.
pub fn validate(b: &[u8]) -> Result<(), RecordError> {
    if b.len() < layout::FIXED_LEN {
        return Err(RecordError::TooShort);
    }
    let l_name = b[layout::L_READ_NAME] as usize;
    if l_name == 0 {
        return Err(RecordError::EmptyReadName);
    }
    let l_seq = read_i32(b, layout::L_SEQ);
    if l_seq < 0 {
        return Err(RecordError::NegativeSeqLength);
    }
    if layout::FIXED_LEN + l_name > b.len() {
        return Err(RecordError::FieldsPastEnd);
    }
    let n_cigar = layout::n_cigar(b);
    let aux_start =
        layout::FIXED_LEN + l_name + 4 * n_cigar + (l_seq as usize).div_ceil(2) + l_seq as usize;
    if aux_start > b.len() {
        return Err(RecordError::FieldsPastEnd);
    }
    if b[layout::FIXED_LEN + l_name - 1] != 0 {
        return Err(RecordError::UnterminatedReadName);
    }
    super::aux::validate(&b[aux_start..]).map_err(|_| RecordError::BadAux)
}

impl<'a> RecordRef<'a> {
    /// Wraps validated record bytes.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        debug_assert!(validate(bytes).is_ok());
        RecordRef { bytes }
    }

    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    #[inline]
    pub fn ref_id(&self) -> i32 {
        read_i32(self.bytes, layout::REF_ID)
    }
    /// 0-based position; 64-bit, as htslib's `hts_pos_t` (see [`layout`] on the name extension).
    #[inline]
    pub fn pos(&self) -> i64 {
        layout::read_wide(self.bytes, layout::WIDE_POS)
    }
    #[inline]
    pub fn mapq(&self) -> u8 {
        self.bytes[layout::MAPQ]
    }
    #[inline]
    pub fn bin(&self) -> u16 {
        read_u16(self.bytes, layout::BIN)
    }
    #[inline]
    pub fn flag(&self) -> u16 {
        read_u16(self.bytes, layout::FLAG)
    }
    #[inline]
    pub fn next_ref_id(&self) -> i32 {
        read_i32(self.bytes, layout::NEXT_REF_ID)
    }
    #[inline]
    pub fn next_pos(&self) -> i64 {
        layout::read_wide(self.bytes, layout::WIDE_NEXT_POS)
    }
    #[inline]
    pub fn tlen(&self) -> i64 {
        layout::read_wide(self.bytes, layout::WIDE_TLEN)
    }
    /// True when POS, PNEXT or TLEN does not fit BAM's 32 bits.
    #[inline]
    pub fn has_wide_values(&self) -> bool {
        layout::has_wide_values(self.bytes)
    }
    #[inline(always)]
    fn l_read_name(&self) -> usize {
        self.bytes[layout::L_READ_NAME] as usize
    }
    /// CIGAR operations, more than 65,535 included (see [`layout::n_cigar`]).
    #[inline(always)]
    pub fn n_cigar_op(&self) -> usize {
        layout::n_cigar(self.bytes)
    }
    /// True when the CIGAR has more than 65,535 operations.
    #[inline]
    pub fn has_long_cigar(&self) -> bool {
        layout::has_long_cigar(self.bytes)
    }
    #[inline(always)]
    pub fn l_seq(&self) -> usize {
        read_i32(self.bytes, layout::L_SEQ) as usize
    }
    /// The read name: up to its first NUL, as htslib's `bam_get_qname` reads as a C string.
    #[inline]
    pub fn read_name(&self) -> &'a [u8] {
        let end = layout::FIXED_LEN + self.l_read_name() - 1;
        // Fast path: a name whose last byte is not NUL has no padding and no extension. (With
        // l_read_name 1 this reads the byte before the name, and either branch gives "".)
        if self.bytes[end - 1] != 0 {
            return &self.bytes[layout::FIXED_LEN..end];
        }
        let region = &self.bytes[layout::FIXED_LEN..end];
        &region[..memchr::memchr(0, region).unwrap_or(region.len())]
    }
    // The offsets below are forced inline: since the CIGAR count may reach into the name
    // extension, `qual_start` grew past the compiler's inlining threshold and ran as a call,
    // 15 % of `checksum`'s samples (perf, ISA-L inflate, 0.5 M reads).
    #[inline(always)]
    fn cigar_start(&self) -> usize {
        layout::FIXED_LEN + self.l_read_name()
    }
    /// Where the packed bases start in [`Self::bytes`] (for walks that read past them, as
    /// samtools' pointer arithmetic does).
    #[inline(always)]
    pub fn seq_start(&self) -> usize {
        self.cigar_start() + 4 * self.n_cigar_op()
    }
    /// Where the qualities start in [`Self::bytes`].
    #[inline(always)]
    pub fn qual_start(&self) -> usize {
        self.seq_start() + self.l_seq().div_ceil(2)
    }
    #[inline(always)]
    fn aux_start(&self) -> usize {
        self.qual_start() + self.l_seq()
    }
    /// The raw CIGAR bytes (4 per op).
    #[inline]
    pub fn cigar_bytes(&self) -> &'a [u8] {
        &self.bytes[self.cigar_start()..self.seq_start()]
    }
    /// CIGAR ops as `len << 4 | op`.
    pub fn cigar(&self) -> impl DoubleEndedIterator<Item = u32> + ExactSizeIterator + 'a {
        self.cigar_bytes().chunks_exact(4).map(|c| read_u32(c, 0))
    }
    /// The 4-bit packed sequence.
    #[inline(always)]
    pub fn seq_packed(&self) -> &'a [u8] {
        // The start once: each offset re-reads the CIGAR count.
        let start = self.seq_start();
        &self.bytes[start..start + self.l_seq().div_ceil(2)]
    }
    /// The base code (0..16) at query position `i`.
    #[inline]
    pub fn base_code(&self, i: usize) -> u8 {
        let b = self.seq_packed()[i / 2];
        if i.is_multiple_of(2) { b >> 4 } else { b & 0xf }
    }
    /// Phred qualities (0xff in the first byte means absent).
    #[inline(always)]
    pub fn qual(&self) -> &'a [u8] {
        let start = self.qual_start();
        &self.bytes[start..start + self.l_seq()]
    }
    #[inline]
    pub fn aux_bytes(&self) -> &'a [u8] {
        &self.bytes[self.aux_start()..]
    }
    /// Offset of the aux block inside the record bytes.
    #[inline]
    pub fn aux_offset(&self) -> usize {
        self.aux_start()
    }
    pub fn aux(&self) -> AuxIter<'a> {
        AuxIter::new(self.aux_bytes())
    }
    pub fn aux_get(&self, tag: [u8; 2]) -> Option<AuxField<'a>> {
        self.aux().find(|f| f.tag == tag)
    }
    /// Reference length of the alignment (0 without CIGAR).
    pub fn ref_len(&self) -> i64 {
        cigar::ref_len(self.cigar())
    }
    /// 0-based exclusive end as htslib's `bam_endpos`: pos+1 for unmapped or CIGAR-less reads.
    /// Inlined: with the 64-bit `pos()` fat LTO stopped inlining it into markdup's key phase,
    /// 9.4 M more instructions on `markdup -u` of `bench-out/cmp-200000.sorted.bam` (callgrind).
    #[inline(always)]
    pub fn end_pos(&self) -> i64 {
        let rlen = if self.flag() & layout::flags::UNMAP == 0 { self.ref_len() } else { 0 };
        self.pos() + if rlen == 0 { 1 } else { rlen }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut b = vec![0u8; 32];
        b[0..4].copy_from_slice(&1i32.to_le_bytes());
        b[4..8].copy_from_slice(&99i32.to_le_bytes());
        b[8] = 3; // "r1\0"
        b[9] = 60;
        b[12..14].copy_from_slice(&1u16.to_le_bytes());
        b[14..16].copy_from_slice(&0x63u16.to_le_bytes());
        b[16..20].copy_from_slice(&3i32.to_le_bytes());
        b.extend_from_slice(b"r1\0");
        b.extend_from_slice(&((3u32 << 4) | cigar::MATCH as u32).to_le_bytes());
        b.extend_from_slice(&[0x12, 0x40]); // A C G
        b.extend_from_slice(&[30, 31, 32]);
        b.extend_from_slice(b"NMC\x01");
        b
    }

    #[test]
    fn accessors_read_fields() {
        let b = sample();
        validate(&b).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!((r.ref_id(), r.pos(), r.mapq(), r.flag()), (1, 99, 60, 0x63));
        assert_eq!(r.read_name(), b"r1");
        assert_eq!(r.cigar().collect::<Vec<_>>(), vec![0x30]);
        assert_eq!((0..3).map(|i| r.base_code(i)).collect::<Vec<_>>(), vec![1, 2, 4]);
        assert_eq!(r.qual(), &[30, 31, 32]);
        assert_eq!(r.aux_get(*b"NM").and_then(|f| f.int()), Some(1));
        assert_eq!(r.end_pos(), 102);
    }

    /// `sample()` with its name region replaced by `name` + NUL + `ext`.
    fn with_name_region(name: &[u8], ext: &[u8]) -> Vec<u8> {
        let mut b = sample();
        let old = b[8] as usize;
        let mut region = name.to_vec();
        region.push(0);
        region.extend_from_slice(ext);
        b[8] = region.len() as u8;
        b.splice(32..32 + old, region);
        b
    }

    fn extension(pos_high: i32, next_high: i32, tlen_high: i32) -> Vec<u8> {
        [pos_high, next_high, tlen_high, 0].iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn extension_holds_high_halves() {
        let mut b = with_name_region(b"read", &extension(2, 1, -1));
        b[24..28].copy_from_slice(&(-5i32).to_le_bytes());
        b[28..32].copy_from_slice(&1_294_967_296i32.to_le_bytes());
        validate(&b).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!(r.read_name(), b"read");
        assert_eq!(r.pos(), 99 + (2 << 32));
        assert_eq!(r.next_pos(), -5 + (1 << 32));
        assert_eq!(r.tlen(), -3_000_000_000);
        assert!(r.has_wide_values());
        assert_eq!(r.cigar().collect::<Vec<_>>(), vec![0x30]);
        assert_eq!(r.end_pos(), 102 + (2 << 32));
    }

    #[test]
    fn zero_extension_and_stray_padding_read_as_ordinary() {
        for ext in [extension(0, 0, 0), vec![0; 3], vec![0; 30]] {
            let b = with_name_region(b"a-long-read-name-0123456789", &ext);
            validate(&b).unwrap();
            let r = RecordRef::new(&b);
            assert_eq!(r.read_name(), b"a-long-read-name-0123456789");
            assert_eq!((r.pos(), r.next_pos(), r.tlen()), (99, 0, 0));
            assert!(!r.has_wide_values());
        }
    }

    #[test]
    fn long_ordinary_names_have_no_extension() {
        // 16 and more characters: the byte the extension check reads is a name character.
        for name in [&b"0123456789abcdef"[..], b"0123456789abcdefg", b"x"] {
            let b = with_name_region(name, b"");
            let r = RecordRef::new(&b);
            assert_eq!(r.read_name(), name);
            assert_eq!(r.pos(), 99);
            assert_eq!(layout::name_ext_start(&b), None);
        }
    }

    #[test]
    fn rejects_bad_lengths() {
        let mut b = sample();
        b.truncate(40);
        assert_eq!(validate(&b), Err(RecordError::FieldsPastEnd));
        let mut b = sample();
        b[8] = 0;
        assert_eq!(validate(&b), Err(RecordError::EmptyReadName));
        let mut b = sample();
        b[34] = b'x';
        assert_eq!(validate(&b), Err(RecordError::UnterminatedReadName));
        assert_eq!(validate(&b[..10]), Err(RecordError::TooShort));
    }
}
