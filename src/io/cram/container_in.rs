//! A container read straight from the input into one buffer (CRAM 2.1 and 3.x §7): its header
//! parsed here, its body copied once. noodles read each container into its own buffer while mdsam kept
//! a second copy of the bytes; those two copies were a fifth of `flagstat`'s time on a CRAM.

use super::varint::Cursor;
use crate::io::input::Input;

/// A container as read: header and body in `bytes`, the body from `body_start`.
pub struct RawContainer {
    pub bytes: Vec<u8>,
    pub body_start: usize,
    pub landmarks: Vec<usize>,
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
    landmarks: Vec<usize>,
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
    let all = input.peek(total).map_err(ReadError::Io)?;
    if all.len() < total {
        return Err(ReadError::Truncated);
    }
    let mut bytes = crate::io::recycle::take(total);
    bytes.extend_from_slice(all);
    input.consume(total);
    Ok(Some(RawContainer {
        bytes,
        body_start: header.len,
        landmarks: header.landmarks,
        records: header.records,
    }))
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
    let landmarks = landmarks
        .into_iter()
        .map(|l| usize::try_from(l).ok().filter(|&l| l <= body_len))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| invalid("a slice outside the container"))?;
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
