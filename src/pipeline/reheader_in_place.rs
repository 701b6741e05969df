//! `samtools reheader -i` on a CRAM: the header container is rewritten where it is, in the
//! space it already takes (samtools' `cram_reheader_inplace2/3`). A container of one block
//! gets that block back, NUL-padded to fill the space; a container of two (htslib's text and
//! blank blocks) gets the text block and a blank block that fills the rest. The container
//! header itself is left as it is. Blocks are written raw (samtools compresses the text block
//! with gzip level 9), so a header fits when its text does.

use std::io::{Read, Seek, SeekFrom, Write};

use crate::error::Error;
use crate::io::cram::varint::{Cursor, itf8};

const FILE_DEFINITION_LEN: usize = 26;
/// Block content type of the SAM header (CRAM §8.1).
const FILE_HEADER: u8 = 0;

/// Where the header container's blocks start and end, and how many blocks it declares.
struct Space {
    major: u8,
    blocks_at: usize,
    end: usize,
    blocks: i32,
}

fn parse_space(bytes: &[u8]) -> Option<Space> {
    let major = *bytes.get(4)?;
    let mut at = Cursor::new(bytes);
    at.at = FILE_DEFINITION_LEN;
    let length = i32::from_le_bytes(at.take(4)?.try_into().ok()?);
    for _ in 0..4 {
        at.itf8()?; // reference id, start, span, record count
    }
    if major >= 3 {
        at.ltf8()?;
    } else {
        at.itf8()?;
    }
    at.ltf8()?; // bases
    let blocks = at.itf8()?;
    let landmarks = at.itf8()?;
    for _ in 0..landmarks.max(0) {
        at.itf8()?;
    }
    if major >= 3 {
        at.take(4)?; // CRC32 of the container header
    }
    let end = at.at.checked_add(usize::try_from(length).ok()?)?;
    Some(Space { major, blocks_at: at.at, end, blocks })
}

fn itf8_len(v: i32) -> usize {
    let mut b = Vec::new();
    itf8(&mut b, v);
    b.len()
}

/// A raw block holding `data`, with CRC32 from CRAM 3.
fn raw_block(major: u8, data: &[u8]) -> Vec<u8> {
    block(major, (RAW, data), data.len())
}

const RAW: u8 = 0;
const GZIP: u8 = 1;

/// A block of `payload` stored with `method`, `raw_len` bytes once decompressed.
fn block(major: u8, (method, payload): (u8, &[u8]), raw_len: usize) -> Vec<u8> {
    let mut b = vec![method, FILE_HEADER];
    itf8(&mut b, 0);
    itf8(&mut b, payload.len() as i32);
    itf8(&mut b, raw_len as i32);
    b.extend_from_slice(payload);
    if major >= 3 {
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
    }
    b
}

/// A raw block of exactly `total` bytes whose data is `data` followed by NULs, if one exists.
fn block_filling(major: u8, data: &[u8], total: usize) -> Option<Vec<u8>> {
    let fixed = 3 + if major >= 3 { 4 } else { 0 };
    (1..=5).find_map(|k| {
        let n = total.checked_sub(fixed + 2 * k)?;
        if n < data.len() || itf8_len(i32::try_from(n).ok()?) != k {
            return None;
        }
        let mut padded = data.to_vec();
        padded.resize(n, 0);
        Some(raw_block(major, &padded))
    })
}

/// Rewrites the header text of the CRAM at `path` in place.
pub fn rewrite(path: &str, text: &[u8]) -> Result<(), Error> {
    let fail = |m: String| Error::Bare(m);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let mut head = Vec::new();
    (&mut file).take(1 << 24).read_to_end(&mut head).map_err(|e| Error::io(path, e))?;
    let space = parse_space(&head)
        .filter(|s| s.end <= head.len())
        .ok_or_else(|| fail(format!("samtools reheader: '{path}' has no readable CRAM header")))?;
    let mut data = (text.len() as i32).to_le_bytes().to_vec();
    data.extend_from_slice(text);
    let room = space.end - space.blocks_at;
    let too_big = || {
        fail(format!("New header will not fit. Use non-inplace version ({} > {room})", data.len()))
    };
    if !(1..=2).contains(&space.blocks) {
        return Err(fail(format!(
            "samtools reheader: a CRAM header container of {} blocks; use the non-inplace version",
            space.blocks
        )));
    }
    // The text raw, else (CRAM 3, as samtools stores it) gzip-compressed at level 9.
    let mut texts = vec![raw_block(space.major, &data)];
    if space.major >= 3 {
        texts.push(block(space.major, (GZIP, &gzip(&data)), data.len()));
    }
    let fill = |first: &Vec<u8>| -> Option<Vec<u8>> {
        let rest = room.checked_sub(first.len())?;
        let mut out = first.clone();
        match space.blocks {
            // Padding after the only block, which readers skip by the container length.
            1 => out.resize(room, 0),
            _ => out.extend(block_filling(space.major, &[], rest)?),
        }
        Some(out)
    };
    let one_padded = (space.blocks == 1).then(|| block_filling(space.major, &data, room)).flatten();
    let blocks = one_padded.or_else(|| texts.iter().find_map(fill)).ok_or_else(too_big)?;
    file.seek(SeekFrom::Start(space.blocks_at as u64))
        .and_then(|_| file.write_all(&blocks))
        .map_err(|e| Error::io(path, e))
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(data);
    gz.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filling_block_is_exactly_as_long_as_asked() {
        for total in [12, 100, 200, 5000] {
            let b = block_filling(3, b"abc", total).unwrap();
            assert_eq!(b.len(), total);
        }
        assert!(block_filling(3, &[7; 50], 20).is_none());
    }
}
