//! Auxiliary fields (SAMv1 §4.2.4): `tag[2] type value`, iterated in place over record bytes.

/// One aux field borrowed from a record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuxField<'a> {
    pub tag: [u8; 2],
    /// The BAM type letter: one of `AcCsSiIfdZHB`.
    pub ty: u8,
    /// The value bytes: for `Z`/`H` without the NUL; for `B` from the subtype byte on.
    pub value: &'a [u8],
    /// Every byte of the field, from the tag to the end (NUL included).
    pub raw: &'a [u8],
}

/// Typed value of an aux field, for comparisons and printing.
#[derive(Clone, Debug, PartialEq)]
pub enum AuxValue<'a> {
    Char(u8),
    Int(i64),
    Float(f64),
    Str(&'a [u8]),
    Array(u8, &'a [u8]),
}

/// Size in bytes of a fixed-width aux or B-array element type.
pub fn type_size(ty: u8) -> Option<usize> {
    match ty {
        b'A' | b'c' | b'C' => Some(1),
        b's' | b'S' => Some(2),
        b'i' | b'I' | b'f' => Some(4),
        b'd' => Some(8),
        _ => None,
    }
}

/// Length of the field starting at `b[0]` (tag included), or `None` if it is malformed or runs past the end.
pub fn field_len(b: &[u8]) -> Option<usize> {
    if b.len() < 3 {
        return None;
    }
    let ty = b[2];
    let n = match ty {
        // Aux strings are short (MD, RG, MC) and every tag lookup or edit walks the fields
        // through here: a short-slice search, not memchr.
        b'Z' | b'H' => crate::record::find::first_byte(&b[3..], 0)? + 1,
        b'B' => {
            if b.len() < 8 {
                return None;
            }
            let sub = type_size(b[3]).filter(|_| b[3] != b'A' && b[3] != b'd')?;
            let count = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
            5 + count.checked_mul(sub)?
        }
        _ => type_size(ty)?,
    };
    let total = 3 + n;
    (total <= b.len()).then_some(total)
}

/// The raw bytes of each aux field (tag to end, NUL included), without decoding them: for walks
/// that look at tags and decode only the few they want. Stops at the first malformed field.
pub struct RawFields<'a> {
    rest: &'a [u8],
}

impl<'a> RawFields<'a> {
    pub fn new(aux: &'a [u8]) -> Self {
        RawFields { rest: aux }
    }
}

impl<'a> Iterator for RawFields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let Some(n) = field_len(self.rest) else {
            self.rest = &[];
            return None;
        };
        let (raw, rest) = self.rest.split_at(n);
        self.rest = rest;
        Some(raw)
    }
}

/// Iterator over the aux fields of a record; stops at the first malformed field
/// (readers validate the aux block up front, so a stored record never has one).
pub struct AuxIter<'a> {
    raw: RawFields<'a>,
}

impl<'a> AuxIter<'a> {
    pub fn new(aux: &'a [u8]) -> Self {
        AuxIter { raw: RawFields::new(aux) }
    }
}

impl<'a> Iterator for AuxIter<'a> {
    type Item = AuxField<'a>;

    fn next(&mut self) -> Option<AuxField<'a>> {
        self.raw.next().map(AuxField::from_raw)
    }
}

/// Checks that the whole aux block parses; returns the offset of the first bad field.
pub fn validate(aux: &[u8]) -> Result<(), usize> {
    let mut at = 0;
    while at < aux.len() {
        match field_len(&aux[at..]) {
            Some(n) => at += n,
            None => return Err(at),
        }
    }
    Ok(())
}

impl<'a> AuxField<'a> {
    /// The field whose bytes (as [`RawFields`] gives them) are `raw`.
    pub fn from_raw(raw: &'a [u8]) -> AuxField<'a> {
        let ty = raw[2];
        let value = if ty == b'Z' || ty == b'H' { &raw[3..raw.len() - 1] } else { &raw[3..] };
        AuxField { tag: [raw[0], raw[1]], ty, value, raw }
    }

    /// The typed value.
    pub fn typed(&self) -> AuxValue<'a> {
        let v = self.value;
        match self.ty {
            b'A' => AuxValue::Char(v[0]),
            b'c' => AuxValue::Int(v[0] as i8 as i64),
            b'C' => AuxValue::Int(v[0] as i64),
            b's' => AuxValue::Int(i16::from_le_bytes([v[0], v[1]]) as i64),
            b'S' => AuxValue::Int(u16::from_le_bytes([v[0], v[1]]) as i64),
            b'i' => AuxValue::Int(i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64),
            b'I' => AuxValue::Int(u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64),
            b'f' => AuxValue::Float(f32::from_le_bytes([v[0], v[1], v[2], v[3]]) as f64),
            b'd' => AuxValue::Float(f64::from_le_bytes(v[..8].try_into().unwrap_or([0; 8]))),
            b'B' => AuxValue::Array(v[0], &v[5..]),
            _ => AuxValue::Str(v),
        }
    }

    /// The integer value, if the field has an integer type.
    pub fn int(&self) -> Option<i64> {
        match self.typed() {
            AuxValue::Int(i) => Some(i),
            _ => None,
        }
    }
}

/// Appends an integer aux field with the smallest type, as htslib's `bam_aux_update_int` does.
pub fn push_int(out: &mut Vec<u8>, tag: [u8; 2], v: i64) {
    out.extend_from_slice(&tag);
    if v < 0 {
        if v >= i8::MIN as i64 {
            out.push(b'c');
            out.push(v as i8 as u8);
        } else if v >= i16::MIN as i64 {
            out.push(b's');
            out.extend_from_slice(&(v as i16).to_le_bytes());
        } else {
            out.push(b'i');
            out.extend_from_slice(&(v as i32).to_le_bytes());
        }
    } else if v <= u8::MAX as i64 {
        out.push(b'C');
        out.push(v as u8);
    } else if v <= u16::MAX as i64 {
        out.push(b'S');
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else {
        out.push(b'I');
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_every_type() {
        let mut b = Vec::new();
        b.extend_from_slice(b"XAAq");
        push_int(&mut b, *b"NM", 300);
        b.extend_from_slice(b"RGZgrp1\0");
        b.extend_from_slice(b"XBBs\x02\0\0\0\x01\0\xff\xff");
        let f: Vec<_> = AuxIter::new(&b).collect();
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].typed(), AuxValue::Char(b'q'));
        assert_eq!(f[1].int(), Some(300));
        assert_eq!(f[2].value, b"grp1");
        assert_eq!(f[3].typed(), AuxValue::Array(b's', b"\x01\0\xff\xff"));
        assert!(validate(&b).is_ok());
    }

    #[test]
    fn rejects_truncated_fields() {
        assert_eq!(validate(b"RGZab"), Err(0));
        assert_eq!(validate(b"NMC"), Err(0));
        assert_eq!(validate(b"XBBi\x05\0\0\0\x01\0"), Err(0));
        assert_eq!(validate(b"XXQ\x01"), Err(0));
    }
}
