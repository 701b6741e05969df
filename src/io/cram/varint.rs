//! CRAM's variable-length integers (ITF-8, LTF-8; spec §2.3) and blocks, for the few container
//! fields mdsam reads or rewrites itself ([`super::layout`], [`super::container_out`],
//! [`super::file_header`]).

pub struct Cursor<'a> {
    bytes: &'a [u8],
    /// Where the next read starts.
    pub at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, at: 0 }
    }

    /// Every byte, read or not.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    /// ITF-8 (CRAM §2.3).
    pub fn itf8(&mut self) -> Option<i32> {
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

    /// LTF-8 (CRAM §2.3) read as its value.
    pub fn ltf8_value(&mut self) -> Option<i64> {
        let b0 = self.byte()?;
        let extra = b0.leading_ones() as usize;
        let mut v = if extra >= 7 { 0 } else { u64::from(b0 & (0x7f >> extra)) };
        for &b in self.take(extra)? {
            v = (v << 8) | u64::from(b);
        }
        Some(v as i64)
    }

    /// LTF-8 (CRAM §2.3): as ITF-8, up to 9 bytes; only skipped here.
    pub fn ltf8(&mut self) -> Option<()> {
        let b0 = self.byte()?;
        let extra = b0.leading_ones().min(8) as usize;
        self.take(extra).map(|_| ())
    }

    /// One block (CRAM 3.x §8.1): its content id and decompressed data; `None` when it cannot
    /// be decompressed.
    pub fn block(&mut self) -> Option<(i32, Vec<u8>)> {
        let method = self.byte()?;
        let _content_type = self.byte()?;
        let content_id = self.itf8()?;
        let compressed = usize::try_from(self.itf8()?).ok()?;
        let raw = usize::try_from(self.itf8()?).ok()?;
        let data = self.take(compressed)?;
        let data = super::block_codecs::decompress(method, data, raw).ok()?;
        Some((content_id, data))
    }
}

/// CRAM's ITF8 variable-length integer (spec §2.3).
pub fn itf8(out: &mut Vec<u8>, value: i32) {
    let v = value as u32;
    if v < 0x80 {
        out.push(v as u8);
    } else if v < 0x4000 {
        out.extend_from_slice(&[0x80 | (v >> 8) as u8, v as u8]);
    } else if v < 0x20_0000 {
        out.extend_from_slice(&[0xc0 | (v >> 16) as u8, (v >> 8) as u8, v as u8]);
    } else if v < 0x1000_0000 {
        out.extend_from_slice(&[0xe0 | (v >> 24) as u8, (v >> 16) as u8, (v >> 8) as u8, v as u8]);
    } else {
        out.extend_from_slice(&[
            0xf0 | ((v >> 28) & 0x0f) as u8,
            (v >> 20) as u8,
            (v >> 12) as u8,
            (v >> 4) as u8,
            (v & 0x0f) as u8,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itf8_decodes_every_width() {
        let read = |b: &[u8]| Cursor::new(b).itf8();
        assert_eq!(read(&[0x7f]), Some(127));
        assert_eq!(read(&[0x80, 0xff]), Some(255));
        assert_eq!(read(&[0xc0, 0x40, 0x00]), Some(0x4000));
        assert_eq!(read(&[0xe0, 0x10, 0x00, 0x00]), Some(0x0010_0000));
        assert_eq!(read(&[0xff, 0xff, 0xff, 0xff, 0x0f]), Some(-1));
        assert_eq!(read(&[0xc0]), None);
    }

    #[test]
    fn itf8_matches_the_spec_examples() {
        let enc = |v| {
            let mut out = Vec::new();
            itf8(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(0x7f), [0x7f]);
        assert_eq!(enc(0x80), [0x80, 0x80]);
        assert_eq!(enc(0x3fff), [0xbf, 0xff]);
        assert_eq!(enc(0x4000), [0xc0, 0x40, 0x00]);
        assert_eq!(enc(-1), [0xff, 0xff, 0xff, 0xff, 0x0f]);
    }

    #[test]
    fn ltf8_values() {
        let read = |b: &[u8]| Cursor::new(b).ltf8_value();
        assert_eq!(read(&[0x7f]), Some(127));
        assert_eq!(read(&[0x80, 0xff]), Some(255));
        assert_eq!(read(&[0xc1, 0x00, 0x02]), Some(0x1_0002));
        assert_eq!(read(&[0xfe, 0, 0, 0, 0, 0, 1, 0]), Some(256));
        assert_eq!(read(&[0xff, 0, 0, 0, 0, 0, 0, 1, 0]), Some(256));
        assert_eq!(read(&[0xe0, 1]), None);
    }
}
