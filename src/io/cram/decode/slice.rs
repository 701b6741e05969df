//! A slice as stored (CRAM 2.1 and 3.x §8.5–8.6): its header and its blocks, decompressed.

use super::DecodeError;
use crate::io::cram::block_codecs;
use crate::io::cram::codec_error::CodecError;
use crate::io::cram::varint::Cursor;

/// What a slice header says.
pub struct SliceHeader {
    /// `-1` unmapped, `-2` several references, else the reference id.
    pub reference_id: i32,
    pub alignment_start: i64,
    pub alignment_span: i64,
    pub records: usize,
    /// The number of records in the file before this slice (for generated names).
    pub record_counter: u64,
    /// The content id of the block holding the embedded reference, `-1` for none.
    pub embedded_reference: i32,
    pub reference_md5: [u8; 16],
}

/// A slice's blocks, decompressed: the core block's data and the external blocks by content id.
pub struct SliceBlocks {
    pub core: Vec<u8>,
    pub external: Vec<(i32, Vec<u8>)>,
}

/// One block (§8.1) of a CRAM `major`.x file read from `c`, decompressed; its CRC32 is checked
/// (CRAM 3.x has one, 2.1 none).
pub fn read_block(c: &mut Cursor<'_>, major: u8) -> Result<(u8, i32, Vec<u8>), DecodeError> {
    read_block_if(c, Wanted::All, major)
}

/// Which external blocks a reader decompresses.
#[derive(Clone, Copy)]
pub enum Wanted<'a> {
    All,
    AllBut(i32),
    Only(&'a [i32]),
}

impl Wanted<'_> {
    fn wants(&self, id: i32) -> bool {
        match self {
            Wanted::All => true,
            Wanted::AllBut(skip) => *skip != id,
            Wanted::Only(ids) => ids.contains(&id),
        }
    }
}

/// [`read_block`], but an external block that is not wanted is left empty.
fn read_block_if(
    c: &mut Cursor<'_>,
    wanted: Wanted<'_>,
    major: u8,
) -> Result<(u8, i32, Vec<u8>), DecodeError> {
    let bad = || DecodeError::corrupt("truncated block");
    let start = c.at;
    let method = c.byte().ok_or_else(bad)?;
    let content_type = c.byte().ok_or_else(bad)?;
    let content_id = c.itf8().ok_or_else(bad)?;
    let compressed = usize::try_from(c.itf8().ok_or_else(bad)?).map_err(|_| bad())?;
    let raw = usize::try_from(c.itf8().ok_or_else(bad)?).map_err(|_| bad())?;
    c.take(compressed).ok_or_else(bad)?;
    let end = c.at;
    if major >= 3 {
        let crc = c.take(4).ok_or_else(bad)?;
        if crc32fast::hash(&c.bytes()[start..end]).to_le_bytes() != crc {
            return Err(DecodeError::corrupt("block CRC32 mismatch"));
        }
    }
    let bytes = c.bytes();
    if content_type == EXTERNAL && !wanted.wants(content_id) {
        return Ok((content_type, content_id, Vec::new()));
    }
    let data = decompress(method, &bytes[end - compressed..end], raw)?;
    Ok((content_type, content_id, data))
}

/// A block's data, decompressed by its method ([`block_codecs`]: fqzcomp is left to noodles).
fn decompress(method: u8, src: &[u8], raw: usize) -> Result<Vec<u8>, DecodeError> {
    block_codecs::decompress(method, src, raw).map_err(|e| match e {
        CodecError::Unsupported(m) => {
            DecodeError::Unsupported(format!("block compression method {m}"))
        }
        CodecError::Corrupt(why) => DecodeError::Corrupt(why),
    })
}

const SLICE_HEADER: u8 = 2;
const CORE: u8 = 5;
const EXTERNAL: u8 = 4;

/// Reads a slice of a CRAM `major`.x file (`bytes` starts at its header block); external blocks
/// not `wanted` are left empty.
pub fn read_slice(
    bytes: &[u8],
    wanted: Wanted<'_>,
    major: u8,
) -> Result<(SliceHeader, SliceBlocks), DecodeError> {
    let bad = || DecodeError::corrupt("truncated slice header");
    let mut c = Cursor::new(bytes);
    let (content_type, _, data) = read_block(&mut c, major)?;
    if content_type != SLICE_HEADER {
        return Err(DecodeError::corrupt("a slice does not start with its header"));
    }
    let mut h = Cursor::new(&data);
    let reference_id = h.itf8().ok_or_else(bad)?;
    let alignment_start = i64::from(h.itf8().ok_or_else(bad)?);
    let alignment_span = i64::from(h.itf8().ok_or_else(bad)?);
    let records = usize::try_from(h.itf8().ok_or_else(bad)?).map_err(|_| bad())?;
    // CRAM 2.1 wrote the record counter as ITF8.
    let record_counter = if major >= 3 {
        ltf8(&mut h).ok_or_else(bad)?
    } else {
        u64::try_from(h.itf8().ok_or_else(bad)?).map_err(|_| bad())?
    };
    let blocks = usize::try_from(h.itf8().ok_or_else(bad)?).map_err(|_| bad())?;
    let ids = h.itf8().ok_or_else(bad)?;
    for _ in 0..ids {
        h.itf8().ok_or_else(bad)?;
    }
    let embedded_reference = h.itf8().ok_or_else(bad)?;
    crate::io::cram::layout::check_slice_range(alignment_start, alignment_span)
        .map_err(DecodeError::Corrupt)?;
    let mut reference_md5 = [0u8; 16];
    reference_md5.copy_from_slice(h.take(16).ok_or_else(bad)?);
    let header = SliceHeader {
        reference_id,
        alignment_start,
        alignment_span,
        records,
        record_counter,
        embedded_reference,
        reference_md5,
    };

    let mut out =
        SliceBlocks { core: Vec::new(), external: Vec::with_capacity(blocks.min(bytes.len())) };
    for _ in 0..blocks {
        let (content_type, id, data) = read_block_if(&mut c, wanted, major)?;
        if content_type == CORE {
            out.core = data;
        } else {
            out.external.push((id, data));
        }
    }
    Ok((header, out))
}

/// LTF-8 (§2.3), up to 9 bytes.
fn ltf8(c: &mut Cursor<'_>) -> Option<u64> {
    let b0 = c.byte()?;
    let extra = b0.leading_ones().min(8);
    let mut v = if extra >= 7 { 0 } else { u64::from(b0) & (0xff >> (extra + 1)) };
    for _ in 0..extra {
        v = (v << 8) | u64::from(c.byte()?);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ltf8_widths() {
        let read = |b: &[u8]| ltf8(&mut Cursor::new(b));
        assert_eq!(read(&[0x7f]), Some(0x7f));
        assert_eq!(read(&[0x81, 0x00]), Some(0x100));
        assert_eq!(read(&[0xc1, 0x00, 0x00]), Some(0x1_0000));
        assert_eq!(read(&[0xff, 1, 2, 3, 4, 5, 6, 7, 8]), Some(0x0102_0304_0506_0708));
    }

    #[test]
    fn blocks_check_their_crc() {
        let mut block = vec![0u8, 4, 3, 2, 2, b'h', b'i'];
        let crc = crc32fast::hash(&block).to_le_bytes();
        block.extend_from_slice(&crc);
        let (ty, id, data) = read_block(&mut Cursor::new(&block), 3).unwrap();
        assert_eq!((ty, id, &data[..]), (4, 3, &b"hi"[..]));
        block[5] = b'H';
        assert!(read_block(&mut Cursor::new(&block), 3).is_err());
        // CRAM 2.1 blocks have no CRC32: the same bytes without it read.
        let (_, _, data) = read_block(&mut Cursor::new(&block[..7]), 2).unwrap();
        assert_eq!(&data[..], b"Hi");
    }
}
