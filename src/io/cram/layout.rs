//! The few container fields htslib's decoder looks at that noodles keeps private (CRAM 3.x spec
//! §7–8): the compression header's `RR` flag (is an external reference needed?) and, per slice,
//! its reference span and embedded-reference block. htslib's reference for a slice, `s->ref`,
//! decides whether MD and NM are generated; mdsam needs the same answer and the same bases.

/// What a slice's header says about its reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceReference {
    /// `-1` unmapped, `-2` several references, else the reference id.
    pub reference_id: i32,
    pub alignment_start: i64,
    pub alignment_span: i64,
    /// The content id of the block holding the embedded reference, `-1` for none.
    pub embedded_block: i32,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    /// ITF-8 (CRAM §2.3).
    fn itf8(&mut self) -> Option<i32> {
        let first = self.byte()?;
        let extra = first.leading_ones().min(4);
        let b0 = u32::from(first);
        let mut v = match extra {
            0 => return Some(b0 as i32),
            1 => b0 & 0x3f,
            2 => b0 & 0x1f,
            3 => b0 & 0x0f,
            _ => b0 & 0x0f,
        };
        for i in 0..extra {
            let b = u32::from(self.byte()?);
            v = if i == 3 { (v << 4) | (b & 0x0f) } else { (v << 8) | b };
        }
        Some(v as i32)
    }

    /// LTF-8 (CRAM §2.3): as ITF-8, up to 9 bytes; only skipped here.
    fn ltf8(&mut self) -> Option<()> {
        let b0 = self.byte()?;
        let extra = b0.leading_ones().min(8) as usize;
        self.take(extra).map(|_| ())
    }

    /// One block (CRAM 3.x §8.1): its content id and decompressed data (raw or gzip only;
    /// `None` for any other method).
    fn block(&mut self) -> Option<(i32, Vec<u8>)> {
        let method = self.byte()?;
        let _content_type = self.byte()?;
        let content_id = self.itf8()?;
        let compressed = usize::try_from(self.itf8()?).ok()?;
        let _raw = self.itf8()?;
        let data = self.take(compressed)?;
        let data = match method {
            0 => data.to_vec(),
            1 => {
                let mut out = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(data), &mut out)
                    .ok()?;
                out
            }
            _ => return None,
        };
        Some((content_id, data))
    }
}

/// The `RR` flag of a container's compression header (`compression` = the container's bytes
/// before its first slice). Absent means true (§8.4); an unreadable header is taken as true too,
/// the safe side for MD/NM (noodles has read it already and would have failed on a bad one).
pub fn reference_required(compression: &[u8]) -> bool {
    fn parse(bytes: &[u8]) -> Option<bool> {
        let (_, data) = Cursor { bytes, at: 0 }.block()?;
        let mut map = Cursor { bytes: &data, at: 0 };
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

/// The reference fields of a slice header (`slice` = the slice's bytes, header block first).
pub fn slice_reference(slice: &[u8]) -> Option<SliceReference> {
    let (_, data) = Cursor { bytes: slice, at: 0 }.block()?;
    let mut h = Cursor { bytes: &data, at: 0 };
    let reference_id = h.itf8()?;
    let alignment_start = i64::from(h.itf8()?);
    let alignment_span = i64::from(h.itf8()?);
    let _records = h.itf8()?;
    h.ltf8()?;
    let _blocks = h.itf8()?;
    let ids = h.itf8()?;
    for _ in 0..ids {
        h.itf8()?;
    }
    let embedded_block = h.itf8()?;
    Some(SliceReference { reference_id, alignment_start, alignment_span, embedded_block })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itf8_decodes_every_width() {
        let read = |b: &[u8]| Cursor { bytes: b, at: 0 }.itf8();
        assert_eq!(read(&[0x7f]), Some(127));
        assert_eq!(read(&[0x80, 0xff]), Some(255));
        assert_eq!(read(&[0xc0, 0x40, 0x00]), Some(0x4000));
        assert_eq!(read(&[0xe0, 0x10, 0x00, 0x00]), Some(0x0010_0000));
        assert_eq!(read(&[0xff, 0xff, 0xff, 0xff, 0x0f]), Some(-1));
        assert_eq!(read(&[0xc0]), None);
    }

    #[test]
    fn slice_header_gives_reference_fields() {
        // raw block, type 2, id 0, sizes; then ref 1, start 100, span 50, 3 records,
        // counter 0, 2 blocks, 1 content id (5), embedded block 5, md5…
        let data = [1u8, 100, 50, 3, 0, 2, 1, 5, 5];
        let mut slice = vec![0u8, 2, 0, data.len() as u8, data.len() as u8];
        slice.extend_from_slice(&data);
        let r = slice_reference(&slice).unwrap();
        assert_eq!(
            r,
            SliceReference {
                reference_id: 1,
                alignment_start: 100,
                alignment_span: 50,
                embedded_block: 5
            }
        );
    }
}
