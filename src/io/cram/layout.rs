//! The few container fields htslib's decoder looks at that noodles keeps private (CRAM 3.x spec
//! §7–8): the compression header's `RR` flag (is an external reference needed?) and, per slice,
//! its reference span and embedded-reference block. htslib's reference for a slice, `s->ref`,
//! decides whether MD and NM are generated; mdsam needs the same answer and the same bases.

use super::varint::Cursor;

/// What a slice's header says about its reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceReference {
    /// `-1` unmapped, `-2` several references, else the reference id.
    pub reference_id: i32,
    pub alignment_start: i64,
    pub alignment_span: i64,
    /// Records in the slice.
    pub records: i32,
    /// The content id of the block holding the embedded reference, `-1` for none.
    pub embedded_block: i32,
}

/// The `RR` flag of a container's compression header (`compression` = the container's bytes
/// before its first slice). Absent means true (§8.4); an unreadable header is taken as true too,
/// the safe side for MD/NM (noodles has read it already and would have failed on a bad one).
pub fn reference_required(compression: &[u8]) -> bool {
    fn parse(bytes: &[u8]) -> Option<bool> {
        let (_, data) = Cursor::new(bytes).block()?;
        let mut map = Cursor::new(&data);
        let _size = map.itf8()?;
        let entries = map.itf8()?;
        for _ in 0..entries {
            let key = map.take(2)?;
            match key {
                b"RN" | b"AP" => {
                    map.byte()?;
                }
                b"RR" => return Some(map.byte()? != 0),
                b"SM" => {
                    map.take(5)?;
                }
                b"TD" => {
                    let n = usize::try_from(map.itf8()?).ok()?;
                    map.take(n)?;
                }
                _ => return None,
            }
        }
        Some(true)
    }
    parse(compression).unwrap_or(true)
}

/// htslib's message for a slice header with a negative start or span (`cram_decode_slice_header`),
/// which every command refuses.
pub const NEGATIVE_SLICE_RANGE: &str =
    "Negative values not permitted for header sequence start or span fields";

/// The reference fields of a slice header (`slice` = the slice's bytes, header block first) of a
/// CRAM `major`.x file; `Err` says why it is refused.
pub fn slice_reference(slice: &[u8], major: u8) -> Result<SliceReference, String> {
    let invalid = || "a slice has no valid header".to_string();
    let (_, data) = Cursor::new(slice).block().ok_or_else(invalid)?;
    let mut h = Cursor::new(&data);
    let mut fields = || -> Option<SliceReference> {
        let reference_id = h.itf8()?;
        let alignment_start = i64::from(h.itf8()?);
        let alignment_span = i64::from(h.itf8()?);
        let records = h.itf8()?;
        if major >= 3 {
            h.ltf8()?;
        } else {
            h.itf8()?;
        }
        let _blocks = h.itf8()?;
        let ids = h.itf8()?;
        for _ in 0..ids {
            h.itf8()?;
        }
        let embedded_block = h.itf8()?;
        Some(SliceReference {
            reference_id,
            alignment_start,
            alignment_span,
            records,
            embedded_block,
        })
    };
    let r = fields().ok_or_else(invalid)?;
    check_slice_range(r.alignment_start, r.alignment_span)?;
    Ok(r)
}

/// A slice header's start and span, refused when negative as htslib refuses them.
pub fn check_slice_range(start: i64, span: i64) -> Result<(), String> {
    if start < 0 || span < 0 {
        return Err(NEGATIVE_SLICE_RANGE.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_header_gives_reference_fields() {
        // raw block, type 2, id 0, sizes; then ref 1, start 100, span 50, 3 records,
        // counter 0, 2 blocks, 1 content id (5), embedded block 5, md5…
        let data = [1u8, 100, 50, 3, 0, 2, 1, 5, 5];
        let mut slice = vec![0u8, 2, 0, data.len() as u8, data.len() as u8];
        slice.extend_from_slice(&data);
        let r = slice_reference(&slice, 3).unwrap();
        assert!(check_slice_range(-1, 5).is_err() && check_slice_range(1, -5).is_err());
        assert_eq!(
            r,
            SliceReference {
                reference_id: 1,
                alignment_start: 100,
                alignment_span: 50,
                records: 3,
                embedded_block: 5
            }
        );
    }
}
