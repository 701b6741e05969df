//! A CRAM file's structure as `samtools cram-size` walks it (htslib `cram_read_container`,
//! `cram_read_block`): each container's record and base counts and its compression header's
//! encodings, each slice's embedded-reference block, and every block's method and sizes.
//!
//! Blocks are read one at a time, as htslib reads them, not by the container's stated length:
//! a damaged file still reports the blocks before the damage, and htsjdk's short container
//! lengths do not matter.

use super::block_codecs;
use super::decode::compression_header::{EncodingMaps, encoding_maps};
use super::varint::Cursor;
use crate::io::cram_header;
use crate::io::input::Input;

/// One codec of a compression header, as htslib's `cram_codec_iter` visits it.
pub struct Codec {
    /// The data series (`'R' << 8 | 'N'`) or tag (`'X' << 16 | 'A' << 8 | 'Z'`).
    pub key: u32,
    /// htslib's `cram_codec_describe` text.
    pub description: String,
    /// The blocks it reads (`cram_codec_to_id`): a content id, `-1` core, `-2` none.
    pub content_ids: [i32; 2],
}

/// What the walk meets, in file order.
pub enum Event<'a> {
    /// A container with records, once its compression header is read.
    Container { records: i64, bases: i64, slices: usize, codecs: Vec<Codec> },
    /// A slice header: the content id of its embedded reference (`-1` for none).
    Slice { embedded_reference: i32 },
    /// A slice's block: content id (`-1` for the core block), method, stored and raw sizes and
    /// stored bytes.
    Block { content_id: i32, method: u8, stored: i32, raw: i32, data: &'a [u8] },
}

const CORE: u8 = 5;
const MAPPED_SLICE: u8 = 2;
const UNMAPPED_SLICE: u8 = 3;

/// htslib's end-of-file container: no records, no reference, start `0x454f46` ("EOF").
const EOF_START: i32 = 0x45_4f46;

/// Reads the file definition and header container of `input`, then every container, calling
/// `on` for each event. `Err` says why the walk stopped early.
pub fn walk(input: &mut Input, on: &mut dyn FnMut(Event<'_>)) -> Result<(), String> {
    let ((major, _), _, end) =
        cram_header::read_input_with_end(input).map_err(|e| e.to_string())?;
    input.consume(end);
    // As htslib, fewer than 4 bytes left (no container length) is the end of the file.
    while input.peek(4).map_err(|e| e.to_string())?.len() == 4 {
        let c = container_header(input, major)?;
        if c.records == 0 && c.reference_id == -1 && c.start == EOF_START {
            // htslib reads the empty container's one block and goes on.
            read_block(input, major, Crc::Skip, |_| Ok(()))?;
            continue;
        }
        let maps = read_block(input, major, Crc::Check, |b| {
            let data = block_codecs::decompress(b.method, b.data, b.raw as usize)
                .map_err(|e| format!("compression header: {e}"))?;
            encoding_maps(&data).map_err(|e| format!("compression header: {e:?}"))
        })?;
        on(Event::Container {
            records: c.records,
            bases: c.bases,
            slices: c.slices,
            codecs: htslib_order(maps),
        });
        for _ in 0..c.slices {
            let (embedded_reference, blocks) =
                read_block(input, major, Crc::Check, |b| slice_header(&b, major))?;
            on(Event::Slice { embedded_reference });
            for _ in 0..blocks {
                read_block(input, major, Crc::Skip, |b| {
                    let content_id = if b.content_type == CORE { -1 } else { b.content_id };
                    on(Event::Block {
                        content_id,
                        method: b.method,
                        stored: b.data.len() as i32,
                        raw: b.raw,
                        data: b.data,
                    });
                    Ok(())
                })?;
            }
        }
    }
    Ok(())
}

/// The container header fields the walk needs.
struct ContainerHeader {
    reference_id: i32,
    start: i32,
    records: i64,
    bases: i64,
    slices: usize,
}

/// Reads a container header (CRAM 2.1 and 3.x §7), its CRC32 checked in 3.x.
fn container_header(input: &mut Input, major: u8) -> Result<ContainerHeader, String> {
    let parse = |bytes: &[u8]| -> Option<(ContainerHeader, usize)> {
        let mut c = Cursor::new(bytes);
        c.take(4)?;
        let reference_id = c.itf8()?;
        let start = c.itf8()?;
        let _span = c.itf8()?;
        let records = i64::from(c.itf8()?);
        if major >= 3 {
            c.ltf8()?;
        } else {
            c.itf8()?;
        }
        let bases = c.ltf8_value()?;
        let _blocks = c.itf8()?;
        let landmarks = c.itf8()?;
        for _ in 0..landmarks.max(0) {
            c.itf8()?;
        }
        let slices = usize::try_from(landmarks).unwrap_or(0);
        if major >= 3 {
            let end = c.at;
            let crc = u32::from_le_bytes(c.take(4)?.try_into().ok()?);
            if crc32fast::hash(&bytes[..end]) != crc {
                return None;
            }
        }
        Some((ContainerHeader { reference_id, start, records, bases, slices }, c.at))
    };
    let mut want = 256;
    loop {
        let bytes = input.peek(want).map_err(|e| e.to_string())?;
        if let Some((header, len)) = parse(bytes) {
            input.consume(len);
            return Ok(header);
        }
        // Landmarks are at most 5 bytes each: a header this long cannot be valid.
        if bytes.len() < want || want > 1 << 24 {
            return Err("invalid or truncated container header".into());
        }
        want *= 4;
    }
}

/// A block as stored.
struct Block<'a> {
    method: u8,
    content_type: u8,
    content_id: i32,
    raw: i32,
    data: &'a [u8],
}

/// Whether a block's CRC32 is checked: as htslib, only for the blocks it decompresses (the
/// compression and slice headers); data blocks are counted unread.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Crc {
    Check,
    Skip,
}

/// Reads the next block (§8.1) and hands it to `use_block`.
fn read_block<T>(
    input: &mut Input,
    major: u8,
    crc_check: Crc,
    use_block: impl FnOnce(Block<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let truncated = || "truncated block".to_string();
    let head = input.peek(32).map_err(|e| e.to_string())?;
    let mut c = Cursor::new(head);
    let (method, content_type, content_id, stored, raw) =
        (|| Some((c.byte()?, c.byte()?, c.itf8()?, c.itf8()?, c.itf8()?)))()
            .ok_or_else(truncated)?;
    let stored = usize::try_from(stored).map_err(|_| "negative block size".to_string())?;
    if raw < 0 {
        return Err("negative block size".into());
    }
    let header_len = c.at;
    let total = header_len + stored + if major >= 3 { 4 } else { 0 };
    // Read up to the size in growing steps: a damaged size must not size the buffer.
    let mut want = total.min(1 << 20);
    while want < total {
        if input.peek(want).map_err(|e| e.to_string())?.len() < want {
            return Err(truncated());
        }
        want = total.min(want.saturating_mul(8));
    }
    let bytes = input.peek(total).map_err(|e| e.to_string())?;
    if bytes.len() < total {
        return Err(truncated());
    }
    let body_end = header_len + stored;
    if major >= 3 && crc_check == Crc::Check {
        let crc = u32::from_le_bytes(bytes[body_end..total].try_into().unwrap_or_default());
        if crc32fast::hash(&bytes[..body_end]) != crc {
            return Err("block CRC32 mismatch".into());
        }
    }
    let block = Block { method, content_type, content_id, raw, data: &bytes[header_len..body_end] };
    let result = use_block(block);
    input.consume(total);
    result
}

/// A slice header block's embedded-reference content id and block count.
fn slice_header(b: &Block<'_>, major: u8) -> Result<(i32, usize), String> {
    if b.content_type != MAPPED_SLICE && b.content_type != UNMAPPED_SLICE {
        return Err("a slice header block was expected".into());
    }
    let data = block_codecs::decompress(b.method, b.data, b.raw as usize)
        .map_err(|e| format!("slice header: {e}"))?;
    let mut h = Cursor::new(&data);
    let fields = (|| {
        let _reference_id = h.itf8()?;
        let start = h.itf8()?;
        let span = h.itf8()?;
        let _records = h.itf8()?;
        if major >= 3 {
            h.ltf8()?;
        } else {
            h.itf8()?;
        }
        let blocks = h.itf8()?;
        let ids = h.itf8()?;
        for _ in 0..ids.max(0) {
            h.itf8()?;
        }
        let embedded = h.itf8()?;
        Some((start, span, blocks, embedded))
    })();
    let (start, span, blocks, embedded) = fields.ok_or("invalid slice header")?;
    super::layout::check_slice_range(i64::from(start), i64::from(span))?;
    let blocks = usize::try_from(blocks).map_err(|_| "negative slice block count")?;
    Ok((embedded, blocks))
}

/// htslib's data series in `enum cram_DS_ID` order, the order `cram_codec_iter` visits them
/// (TM and TV get no codec).
const SERIES_ORDER: [&[u8; 2]; 30] = [
    b"RN", b"QS", b"IN", b"SC", b"BF", b"CF", b"AP", b"RG", b"MQ", b"NS", b"MF", b"TS", b"NP",
    b"NF", b"RL", b"FN", b"FC", b"FP", b"DL", b"BA", b"BS", b"TL", b"RI", b"RS", b"PD", b"HC",
    b"BB", b"QQ", b"TN", b"TC",
];

/// The codecs in the order htslib visits them: data series in its enum order (a key given
/// twice keeps its last encoding), then tags by `CRAM_MAP` hash bucket, the last stored first
/// within a bucket (each is pushed on its bucket's list).
fn htslib_order(maps: EncodingMaps) -> Vec<Codec> {
    let mut codecs = Vec::new();
    for key in SERIES_ORDER {
        if let Some((_, e)) = maps.series.iter().rev().find(|(k, _)| k == key) {
            codecs.push(Codec {
                key: u32::from(key[0]) << 8 | u32::from(key[1]),
                description: e.describe(),
                content_ids: e.content_ids(),
            });
        }
    }
    let bucket = |k: &[u8; 3]| (usize::from(k[0]) * 3 + usize::from(k[1])) & 31;
    for b in 0..32 {
        for (k, e) in maps.tags.iter().rev().filter(|(k, _)| bucket(k) == b) {
            codecs.push(Codec {
                key: u32::from(k[0]) << 16 | u32::from(k[1]) << 8 | u32::from(k[2]),
                description: e.describe(),
                content_ids: e.content_ids(),
            });
        }
    }
    codecs
}
