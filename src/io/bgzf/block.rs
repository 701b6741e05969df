//! One BGZF block: header parsing, inflate with CRC/ISIZE checks, and htslib-identical deflate.
//!
//! | offset | size | field (SAMv1 §4.1) |
//! |--------|------|--------------------|
//! | 0      | 4    | `1f 8b 08 04` (gzip, deflate, FEXTRA) |
//! | 4      | 6    | MTIME=0, XFL=0, OS=0xff |
//! | 10     | 2    | XLEN (6 for htslib's blocks) |
//! | 12     | XLEN | subfields; `BC`, len 2, BSIZE = total block size − 1 |
//! | 12+XLEN| ..   | raw DEFLATE data |
//! | end−8  | 4    | CRC32 of the uncompressed data |
//! | end−4  | 4    | ISIZE, uncompressed length (≤ 65536) |

use libdeflater::Crc;

use super::codec::{Inflater, PayloadDeflater};

/// Most uncompressed bytes htslib puts in one block (`BGZF_BLOCK_SIZE`).
pub const BLOCK_DATA_MAX: usize = 0xff00;
/// Largest block on disk (`BGZF_MAX_BLOCK_SIZE`).
pub const BLOCK_MAX: usize = 0x10000;
/// The 28-byte empty block that ends every BGZF file.
pub const EOF_BLOCK: [u8; 28] = [
    0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 0x06, 0, 0x42, 0x43, 0x02, 0, 0x1b, 0, 0x03, 0, 0,
    0, 0, 0, 0, 0, 0, 0,
];
const FOOTER_LEN: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    #[error("truncated BGZF block")]
    Truncated,
    #[error("not a BGZF block (bad gzip header or no BC field)")]
    NotBgzf,
    #[error("corrupt deflate data in BGZF block")]
    BadDeflate,
    #[error("BGZF block CRC32 mismatch (expected {expected:08x}, got {actual:08x})")]
    CrcMismatch { expected: u32, actual: u32 },
    #[error("BGZF block ISIZE {expected} does not match inflated size {actual}")]
    SizeMismatch { expected: u32, actual: usize },
    /// A virtual offset (an index's) inside a block shorter than it: htslib's words.
    #[error("BGZF block offset {offset} set beyond block size {size}")]
    OffsetBeyondBlock { offset: usize, size: usize },
}

/// True if `b` starts like a gzip member with the FEXTRA flag (BGZF or plain gzip).
pub fn is_gzip(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

/// Total on-disk size of the block starting at `b[0]`, read from its BC subfield.
pub fn block_size(b: &[u8]) -> Result<usize, BlockError> {
    if b.len() < 12 {
        return Err(if is_gzip(b) || b.is_empty() {
            BlockError::Truncated
        } else {
            BlockError::NotBgzf
        });
    }
    if b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 || b[3] & 4 == 0 {
        return Err(BlockError::NotBgzf);
    }
    let xlen = u16::from_le_bytes([b[10], b[11]]) as usize;
    let extra = b.get(12..12 + xlen).ok_or(BlockError::Truncated)?;
    let mut at = 0;
    while at + 4 <= extra.len() {
        let len = u16::from_le_bytes([extra[at + 2], extra[at + 3]]) as usize;
        if &extra[at..at + 2] == b"BC" && len == 2 && at + 6 <= extra.len() {
            let bsize = u16::from_le_bytes([extra[at + 4], extra[at + 5]]) as usize + 1;
            if bsize < 12 + xlen + FOOTER_LEN {
                return Err(BlockError::NotBgzf);
            }
            return Ok(bsize);
        }
        at += 4 + len;
    }
    Err(BlockError::NotBgzf)
}

/// ISIZE of a complete block.
pub fn inflated_size(block: &[u8]) -> usize {
    let n = block.len();
    u32::from_le_bytes([block[n - 4], block[n - 3], block[n - 2], block[n - 1]]) as usize
}

/// Inflates a complete block into `out` (exactly `inflated_size` long) and checks CRC32 and ISIZE.
pub fn inflate(block: &[u8], out: &mut [u8], d: &mut Inflater) -> Result<(), BlockError> {
    let expected = out.len();
    let got = inflate_unsized(block, out, d)?;
    if got != expected {
        return Err(BlockError::SizeMismatch { expected: expected as u32, actual: got });
    }
    Ok(())
}

/// Inflates a complete block into the front of `out` (room for [`BLOCK_MAX`] bytes is always
/// enough), checks CRC32 and returns the inflated length, whatever ISIZE says: htslib never checks
/// ISIZE, so a block with a wrong one is still readable.
pub fn inflate_unsized(
    block: &[u8],
    out: &mut [u8],
    d: &mut Inflater,
) -> Result<usize, BlockError> {
    if let Some(got) = d.inflate_checked_member(block, out) {
        return Ok(got);
    }
    let xlen = u16::from_le_bytes([block[10], block[11]]) as usize;
    let n = block.len();
    let data = block.get(12 + xlen..n - FOOTER_LEN).ok_or(BlockError::Truncated)?;
    let expected_crc = u32::from_le_bytes([block[n - 8], block[n - 7], block[n - 6], block[n - 5]]);
    let got = if data == [3, 0] {
        0
    } else {
        d.libdeflate().deflate_decompress(data, out).map_err(|_| BlockError::BadDeflate)?
    };
    let mut crc = Crc::new();
    crc.update(&out[..got]);
    if crc.sum() != expected_crc {
        return Err(BlockError::CrcMismatch { expected: expected_crc, actual: crc.sum() });
    }
    Ok(got)
}

/// A per-thread compressor for one samtools level, with this process's engine
/// ([`super::codec::deflate_engine`]).
pub struct Deflater {
    payload: PayloadDeflater,
}

impl Deflater {
    pub fn new(samtools_level: i32) -> Self {
        Deflater { payload: PayloadDeflater::new(samtools_level) }
    }

    pub fn with_engine(samtools_level: i32, engine: super::codec::Engine) -> Self {
        Deflater { payload: PayloadDeflater::with_engine(samtools_level, engine) }
    }

    /// Appends one complete BGZF block holding `data` (≤ 0xff00 bytes) to `out`.
    pub fn deflate_into(&mut self, data: &[u8], out: &mut Vec<u8>) {
        debug_assert!(data.len() <= BLOCK_DATA_MAX);
        let start = out.len();
        // Room for the whole block up front: growing mid-block made the allocator copy it. At
        // most a full block: a payload that needs more is written stored (that fits).
        let room = self.payload.bound(data.len()).map(|b| b.min(BLOCK_MAX - 18 - FOOTER_LEN));
        out.reserve(18 + room.unwrap_or(0).max(data.len() + 5) + FOOTER_LEN);
        out.extend_from_slice(&[
            0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0, 0,
        ]);
        let at = out.len();
        let compressed = room.and_then(|room| {
            out.resize(at + room, 0);
            self.payload.compress(data, &mut out[at..])
        });
        match compressed {
            Some(n) => out.truncate(at + n),
            None => {
                out.truncate(at);
                push_stored(data, out);
            }
        }
        let mut crc = Crc::new();
        crc.update(data);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        let bsize = (out.len() - start - 1) as u16;
        out[start + 16..start + 18].copy_from_slice(&bsize.to_le_bytes());
    }
}

/// One stored (uncompressed) deflate block, as htslib writes at level 0.
fn push_stored(data: &[u8], out: &mut Vec<u8>) {
    out.push(1);
    let len = data.len() as u16;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(level: i32, data: &[u8]) {
        let mut out = Vec::new();
        Deflater::new(level).deflate_into(data, &mut out);
        assert_eq!(block_size(&out).unwrap(), out.len());
        assert_eq!(inflated_size(&out), data.len());
        let mut back = vec![0; data.len()];
        inflate(&out, &mut back, &mut Inflater::new()).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn deflates_and_inflates_at_every_level() {
        let data: Vec<u8> = (0..40000u32).map(|i| (i * 7 % 251) as u8).collect();
        for l in [-1, 0, 1, 5, 9] {
            roundtrip(l, &data);
        }
        roundtrip(0, b"");
    }

    #[test]
    fn eof_block_is_an_empty_block() {
        assert_eq!(block_size(&EOF_BLOCK).unwrap(), 28);
        assert_eq!(inflated_size(&EOF_BLOCK), 0);
        inflate(&EOF_BLOCK, &mut [], &mut Inflater::new()).unwrap();
    }

    #[test]
    fn detects_corruption() {
        let mut out = Vec::new();
        Deflater::new(1).deflate_into(b"hello hello hello", &mut out);
        let n = out.len();
        let mut bad_crc = out.clone();
        bad_crc[n - 8] ^= 1;
        let mut buf = vec![0; 17];
        assert!(matches!(
            inflate(&bad_crc, &mut buf, &mut Inflater::new()),
            Err(BlockError::CrcMismatch { .. })
        ));
        let mut short = vec![0; 16];
        assert!(inflate(&out, &mut short, &mut Inflater::new()).is_err());
        assert_eq!(block_size(&out[..8]), Err(BlockError::Truncated));
        assert_eq!(block_size(b"@HD\tVN:1.6\n@SQ"), Err(BlockError::NotBgzf));
    }

    /// htslib ignores ISIZE: a block whose trailer lies still inflates, at its real size.
    #[test]
    fn wrong_isize_is_reported_but_unsized_inflate_reads_the_block() {
        let mut out = Vec::new();
        Deflater::new(1).deflate_into(b"hello hello hello", &mut out);
        let n = out.len();
        for lie in [3u32, 40] {
            let mut block = out.clone();
            block[n - 4..].copy_from_slice(&lie.to_le_bytes());
            let mut slot = vec![0; inflated_size(&block)];
            assert!(inflate(&block, &mut slot, &mut Inflater::new()).is_err());
            let mut scratch = vec![0; BLOCK_MAX];
            let got = inflate_unsized(&block, &mut scratch, &mut Inflater::new()).unwrap();
            assert_eq!(&scratch[..got], b"hello hello hello");
        }
    }
}
