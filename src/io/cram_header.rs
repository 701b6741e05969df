//! The SAM header of a CRAM 2.x/3.x file, as htslib's `cram_dopen` reads it when the file is
//! opened (CRAM spec §6–8): the 26-byte file definition, then the first container, whose first
//! block holds the header text. Enough for commands that only look at the header and the
//! end-of-file container (`quickcheck`), and for CRAM 2.1 files without records, which noodles
//! does not read.

use std::io::Read;

use crate::io::input::Input;
use crate::record::Header;

/// Why the header could not be read (htslib then fails to open the file).
#[derive(Debug, thiserror::Error)]
pub enum CramHeaderError {
    #[error("truncated CRAM header")]
    Truncated,
    #[error("unsupported CRAM version {0}.{1}")]
    Version(u8, u8),
    #[error("CRAM header CRC32 mismatch")]
    Crc,
    #[error("CRAM header block compressed with method {0}, which mdsam does not decode")]
    Method(u8),
    #[error("bad CRAM header: {0}")]
    Bad(String),
}

const FILE_DEFINITION_LEN: usize = 26;

/// [`read`] from the start of `input` (left where it is), peeking further until the header
/// container is whole.
pub fn read_input(input: &mut Input) -> Result<((u8, u8), Header), CramHeaderError> {
    read_input_with_end(input).map(|(version, header, _)| (version, header))
}

/// [`read_input`], and where the header container ends ([`read_with_end`]).
pub fn read_input_with_end(
    input: &mut Input,
) -> Result<((u8, u8), Header, usize), CramHeaderError> {
    let mut want = 1 << 16;
    loop {
        let bytes = input.peek(want).map_err(|e| CramHeaderError::Bad(e.to_string()))?;
        match read_with_end(bytes) {
            Err(CramHeaderError::Truncated) if bytes.len() == want => want *= 4,
            result => return result,
        }
    }
}

/// The file's version and SAM header from its first bytes (`bytes` may hold the whole file).
pub fn read(bytes: &[u8]) -> Result<((u8, u8), Header), CramHeaderError> {
    read_with_end(bytes).map(|(version, header, _)| (version, header))
}

/// [`read`], and the offset where the header container ends (the first data container).
pub fn read_with_end(bytes: &[u8]) -> Result<((u8, u8), Header, usize), CramHeaderError> {
    let def = bytes.get(..FILE_DEFINITION_LEN).ok_or(CramHeaderError::Truncated)?;
    let (major, minor) = (def[4], def[5]);
    if !(2..=3).contains(&major) {
        return Err(CramHeaderError::Version(major, minor));
    }
    let mut at = Cursor { bytes, at: FILE_DEFINITION_LEN };
    let container_start = at.at;
    let length = at.int32()?;
    for _ in 0..4 {
        at.itf8()?; // reference id, start, span, record count
    }
    if major >= 3 {
        at.ltf8()?
    } else {
        at.itf8()? as i64
    }; // record counter
    at.ltf8()?; // bases
    let blocks = at.itf8()?;
    let landmarks = at.itf8()?;
    if landmarks < 0 {
        return Err(CramHeaderError::Bad("negative landmark count".into()));
    }
    for _ in 0..landmarks {
        at.itf8()?;
    }
    if major >= 3 {
        at.check_crc(container_start)?;
    }
    if blocks < 1 {
        return Err(CramHeaderError::Bad("header container without blocks".into()));
    }
    let end = usize::try_from(length)
        .ok()
        .and_then(|l| at.at.checked_add(l))
        .ok_or_else(|| CramHeaderError::Bad("negative container length".into()))?;
    let data = at.block(major)?;
    // htslib reads every block of the header container, then skips to the container's stated
    // end only when that lies further: htsjdk's CRAM 2.1 header containers state a length a
    // byte or two short of their blocks.
    for _ in 1..blocks {
        at.skip_block(major)?;
    }
    let end = end.max(at.at);
    let text = header_text(&data)?;
    let header = Header::from_sam_text(text).map_err(|e| CramHeaderError::Bad(e.to_string()))?;
    Ok(((major, minor), header, end))
}

/// The header text from the first block: a 32-bit length, then the text.
fn header_text(data: &[u8]) -> Result<Vec<u8>, CramHeaderError> {
    let len = data.get(..4).ok_or(CramHeaderError::Truncated)?;
    let len = i32::from_le_bytes(len.try_into().unwrap_or_default());
    let text = usize::try_from(len)
        .ok()
        .and_then(|len| data.get(4..4 + len))
        .ok_or_else(|| CramHeaderError::Bad("header length past its block".into()))?;
    // The text may be padded with NULs (htslib reserves room to rewrite it in place).
    let end = memchr::memchr(0, text).unwrap_or(text.len());
    let mut text = text[..end].to_vec();
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    Ok(text)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], CramHeaderError> {
        let end = self.at.checked_add(n).ok_or(CramHeaderError::Truncated)?;
        let taken = self.bytes.get(self.at..end).ok_or(CramHeaderError::Truncated)?;
        self.at = end;
        Ok(taken)
    }

    fn byte(&mut self) -> Result<u8, CramHeaderError> {
        Ok(self.take(1)?[0])
    }

    fn int32(&mut self) -> Result<i32, CramHeaderError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }

    /// ITF-8: the count of leading 1 bits of the first byte says how many bytes follow.
    fn itf8(&mut self) -> Result<i32, CramHeaderError> {
        let first = self.byte()? as u32;
        let extra = (first as u8).leading_ones().min(4) as usize;
        let rest = self.take(extra)?;
        let value = match extra {
            0 => first,
            4 => {
                let high = (first & 0x0f) << 28;
                high | (rest[0] as u32) << 20
                    | (rest[1] as u32) << 12
                    | (rest[2] as u32) << 4
                    | (rest[3] as u32 & 0x0f)
            }
            n => {
                let mask = 0xffu32 >> (n + 1);
                rest.iter().fold(first & mask, |v, &b| (v << 8) | b as u32)
            }
        };
        Ok(value as i32)
    }

    /// LTF-8: as ITF-8 with up to eight bytes following.
    fn ltf8(&mut self) -> Result<i64, CramHeaderError> {
        let first = self.byte()? as u64;
        let extra = ((first as u8).leading_ones() as usize).min(8);
        let rest = self.take(extra)?;
        let start = if extra >= 7 { 0 } else { first & (0xff >> (extra + 1)) };
        Ok(rest.iter().fold(start, |v, &b| (v << 8) | b as u64) as i64)
    }

    /// CRAM 3's CRC32 of the bytes from `start` to here, stored after them.
    fn check_crc(&mut self, start: usize) -> Result<(), CramHeaderError> {
        let covered = &self.bytes[start..self.at];
        let expected = libdeflater::crc32(covered);
        let stored = self.int32()? as u32;
        if stored == expected { Ok(()) } else { Err(CramHeaderError::Crc) }
    }

    /// Steps over one block.
    fn skip_block(&mut self, major: u8) -> Result<(), CramHeaderError> {
        self.take(2)?; // method, content type
        self.itf8()?; // content id
        let compressed = self.itf8()?;
        self.itf8()?; // raw size
        let compressed = usize::try_from(compressed)
            .map_err(|_| CramHeaderError::Bad("negative block size".into()))?;
        self.take(compressed + if major >= 3 { 4 } else { 0 })?;
        Ok(())
    }

    /// One block's uncompressed content (raw or gzip, the methods headers are written with).
    fn block(&mut self, major: u8) -> Result<Vec<u8>, CramHeaderError> {
        let start = self.at;
        let method = self.byte()?;
        let _content_type = self.byte()?;
        let _content_id = self.itf8()?;
        let compressed = self.itf8()?;
        let raw = self.itf8()?;
        let (Ok(compressed), Ok(raw)) = (usize::try_from(compressed), usize::try_from(raw)) else {
            return Err(CramHeaderError::Bad("negative block size".into()));
        };
        let data = self.take(compressed)?.to_vec();
        if major >= 3 {
            self.check_crc(start)?;
        }
        match method {
            0 => Ok(data),
            1 => {
                let mut out = Vec::with_capacity(raw);
                flate2::read::MultiGzDecoder::new(&data[..])
                    .read_to_end(&mut out)
                    .map_err(|e| CramHeaderError::Bad(e.to_string()))?;
                Ok(out)
            }
            m => Err(CramHeaderError::Method(m)),
        }
    }
}

/// htslib's `cram_check_EOF` templates: the last bytes of a complete CRAM 2.1 or 3.x file.
pub fn eof_template(major: u8, minor: u8) -> Option<&'static [u8]> {
    const TEMPLATE_2_1: [u8; 30] = [
        0x0b, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xe0, 0x45, 0x4f, 0x46, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x06, 0x06, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00,
    ];
    const TEMPLATE_3: [u8; 38] = [
        0x0f, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xe0, 0x45, 0x4f, 0x46, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x05, 0xbd, 0xd9, 0x4f, 0x00, 0x01, 0x00, 0x06, 0x06, 0x01, 0x00,
        0x01, 0x00, 0x01, 0x00, 0xee, 0x63, 0x01, 0x4b,
    ];
    match (major, minor) {
        (0..2, _) | (2, 0) => None,
        (2, 1) => Some(&TEMPLATE_2_1),
        _ => Some(&TEMPLATE_3),
    }
}

/// Whether `tail` (the file's last bytes, as long as the template) is the EOF container; byte 8
/// is compared on its low four bits, as early Java and C writers differ there.
pub fn is_eof_container(tail: &[u8], template: &[u8]) -> bool {
    tail.len() == template.len()
        && tail.iter().zip(template).enumerate().all(
            |(i, (&t, &e))| {
                if i == 8 { t & 0x0f == e } else { t == e }
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itf8_and_ltf8_decode_their_lengths() {
        let mut c = Cursor {
            bytes: &[0x05, 0x9f, 0x00, 0xc1, 0xb7, 0x3b, 0xff, 0xff, 0xff, 0xff, 0x0f],
            at: 0,
        };
        assert_eq!(c.itf8().unwrap(), 5);
        assert_eq!(c.itf8().unwrap(), 0x1f00);
        assert_eq!(c.itf8().unwrap(), 0x1b73b);
        assert_eq!(c.itf8().unwrap(), -1);
        let mut c = Cursor { bytes: &[0x80, 0x81], at: 0 };
        assert_eq!(c.ltf8().unwrap(), 0x81);
    }

    #[test]
    fn eof_templates_follow_the_version() {
        assert!(eof_template(2, 0).is_none());
        let t = eof_template(3, 0).unwrap();
        let mut tail = t.to_vec();
        tail[8] = 0xff;
        assert!(is_eof_container(&tail, t));
        tail[0] = 0;
        assert!(!is_eof_container(&tail, t));
    }
}
