//! A container read straight from the input into one buffer (CRAM 2.1 and 3.x §7): its header
//! parsed here, its body copied once. noodles read each container into its own buffer while mdsam kept
//! a second copy of the bytes; those two copies were a fifth of `flagstat`'s time on a CRAM.
//!
//! Its slices are found as htslib's decoder finds them, one after another (the compression
//! header block, then each slice's header block and the blocks it names), not where the
//! header's landmarks say: htsjdk wrote CRAM 2.1 landmarks that point past the container, which
//! samtools decodes (only its `index` compares them, see [`RawContainer::landmarks`]).

use std::ops::Range;

use super::varint::Cursor;
use crate::io::input::Input;

/// A container as read: header and body in `bytes`, the body from `body_start`.
pub struct RawContainer {
    pub bytes: Vec<u8>,
    pub body_start: usize,
    /// The slices' offsets as the container header states them (its landmarks).
    pub landmarks: Vec<i32>,
    /// Where each slice lies in the body, found block by block.
    pub slices: Vec<Range<usize>>,
    pub records: usize,
}

/// Why a container could not be read.
pub enum ReadError {
    /// The input ends inside the container.
    Truncated,
    Invalid(String),
    Io(std::io::Error),
}

/// The fields of a container header, and its length in bytes.
struct Header {
    body_len: usize,
    reference_id: i32,
    alignment_start: i32,
    records: usize,
    blocks: i32,
    landmarks: Vec<i32>,
    len: usize,
}

/// The next container of a CRAM `major`.x file; `None` at the end-of-file container.
pub fn read(input: &mut Input, major: u8) -> Result<Option<RawContainer>, ReadError> {
    let mut want = 4096;
    let header = loop {
        let bytes = input.peek(want).map_err(ReadError::Io)?;
        match parse_header(bytes, major)? {
            Some(h) => break h,
            None if bytes.len() < want => return Err(ReadError::Truncated),
            None => want *= 16,
        }
    };
    // htslib's end-of-file container: 15 bytes (11 in CRAM 2.1, without CRC32), no reference,
    // one block, no records.
    if header.body_len == if major >= 3 { 15 } else { 11 }
        && header.reference_id == -1
        && header.alignment_start == 4_542_278
        && header.blocks == 1
        && header.records == 0
    {
        input.consume(header.len + header.body_len);
        return Ok(None);
    }
    let total = header.len + header.body_len;
    // Read up to the length in growing steps: a damaged length past the end of a piped input
    // must not size the buffer.
    let mut want = total.min(1 << 20);
    loop {
        if input.peek(want).map_err(ReadError::Io)?.len() < want {
            return Err(ReadError::Truncated);
        }
        if want == total {
            break;
        }
        want = total.min(want.saturating_mul(8));
    }
    let all = input.peek(total).map_err(ReadError::Io)?;
    // As htslib, a container without records has no slices to decode.
    let slices = if header.records == 0 {
        Vec::new()
    } else {
        slice_ranges(&all[header.len..], header.landmarks.len(), major)
            .map_err(|what| ReadError::Invalid(format!("invalid container: {what}")))?
    };
    let mut bytes = crate::io::recycle::take(total);
    bytes.extend_from_slice(all);
    input.consume(total);
    Ok(Some(RawContainer {
        bytes,
        body_start: header.len,
        landmarks: header.landmarks,
        slices,
        records: header.records,
    }))
}

/// Where each of a container's `count` slices lies in its `body`: after the compression header
/// block, each slice is its header block and the number of blocks that header names.
pub fn slice_ranges(body: &[u8], count: usize, major: u8) -> Result<Vec<Range<usize>>, String> {
    let mut c = Cursor::new(body);
    skip_block(&mut c, major).ok_or("truncated compression header")?;
    let mut slices = Vec::new();
    for i in 0..count {
        let start = c.at;
        let outside = || format!("slice {i} lies outside the container");
        let (method, data, raw) = block(&mut c, major).ok_or_else(outside)?;
        let data = super::block_codecs::decompress(method, data, raw)
            .map_err(|_| format!("slice {i} header cannot be decompressed"))?;
        let blocks = slice_block_count(&data, major)
            .ok_or_else(|| format!("slice {i} has no valid header"))?;
        for _ in 0..blocks {
            skip_block(&mut c, major).ok_or_else(outside)?;
        }
        slices.push(start..c.at);
    }
    Ok(slices)
}

/// The number of blocks a slice header (its block's data) names.
fn slice_block_count(header: &[u8], major: u8) -> Option<usize> {
    let mut h = Cursor::new(header);
    for _ in 0..4 {
        h.itf8()?; // reference id, start, span, records
    }
    if major >= 3 {
        h.ltf8()?;
    } else {
        h.itf8()?;
    }
    usize::try_from(h.itf8()?).ok()
}

/// One block's method, stored data and raw size; the cursor left after it (and its CRC32 in
/// CRAM 3.x, checked where the block is decoded).
fn block<'a>(c: &mut Cursor<'a>, major: u8) -> Option<(u8, &'a [u8], usize)> {
    let method = c.byte()?;
    let _content_type = c.byte()?;
    let _content_id = c.itf8()?;
    let stored = usize::try_from(c.itf8()?).ok()?;
    let raw = usize::try_from(c.itf8()?).ok()?;
    let data = c.take(stored)?;
    if major >= 3 {
        c.take(4)?;
    }
    Some((method, data, raw))
}

fn skip_block(c: &mut Cursor<'_>, major: u8) -> Option<()> {
    block(c, major).map(|_| ())
}

/// A container header from the front of `bytes`; `None` when `bytes` ends inside it. CRAM 2.1
/// writes the record counter as ITF8 and has no CRC32.
fn parse_header(bytes: &[u8], major: u8) -> Result<Option<Header>, ReadError> {
    let mut c = Cursor::new(bytes);
    let Some(parsed) = (|| {
        let body_len = i32::from_le_bytes(c.take(4)?.try_into().ok()?);
        let reference_id = c.itf8()?;
        let alignment_start = c.itf8()?;
        let _span = c.itf8()?;
        let records = c.itf8()?;
        if major >= 3 {
            c.ltf8()?;
        } else {
            c.itf8()?;
        }
        c.ltf8()?;
        let blocks = c.itf8()?;
        let n = c.itf8()?;
        let mut landmarks = Vec::new();
        for _ in 0..n.max(0) {
            landmarks.push(c.itf8()?);
        }
        let end = c.at;
        let crc =
            if major >= 3 { Some(u32::from_le_bytes(c.take(4)?.try_into().ok()?)) } else { None };
        Some((body_len, reference_id, alignment_start, records, blocks, landmarks, end, crc))
    })() else {
        return Ok(None);
    };
    let (body_len, reference_id, alignment_start, records, blocks, landmarks, end, crc) = parsed;
    if crc.is_some_and(|crc| crc32fast::hash(&bytes[..end]) != crc) {
        return Err(ReadError::Invalid("container header CRC32 mismatch".into()));
    }
    let invalid = |what: &str| ReadError::Invalid(format!("invalid container header: {what}"));
    let body_len = usize::try_from(body_len).map_err(|_| invalid("negative length"))?;
    let records = usize::try_from(records).map_err(|_| invalid("negative record count"))?;
    Ok(Some(Header {
        body_len,
        reference_id,
        alignment_start,
        records,
        blocks,
        landmarks,
        len: end + if crc.is_some() { 4 } else { 0 },
    }))
}
