//! In-place edits of one owned record (BAM bytes without `block_size`), with htslib's exact
//! semantics: `bam_aux_update_str`/`bam_aux_update_int` replace a tag where it stands and append
//! it otherwise, `bam_aux_append` always appends, deleting closes the gap.

use super::aux::field_len;
use super::layout::{self, WideField, read_i32, read_u16};
use super::long_cigar::{self, NameTooLongForCigar};
use super::view::RecordRef;

#[inline]
pub fn flag(b: &[u8]) -> u16 {
    read_u16(b, layout::FLAG)
}

#[inline]
pub fn set_flag(b: &mut [u8], f: u16) {
    b[layout::FLAG..layout::FLAG + 2].copy_from_slice(&f.to_le_bytes());
}

#[inline]
pub fn get_i32(b: &[u8], at: usize) -> i32 {
    read_i32(b, at)
}

#[inline]
pub fn set_i32(b: &mut [u8], at: usize, v: i32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// A 64-bit value needs the name extension, but the read name leaves it no room in the u8
/// `l_read_name` (names of more than [`layout::MAX_EXTENDED_NAME_LEN`] characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("read name too long to hold a position beyond 32 bits")]
pub struct NameTooLong;

/// Sets POS, PNEXT or TLEN to a 64-bit value: writes the low half in the fixed part and the high
/// half in the name extension, adding the extension when the value needs it and removing it when
/// no value needs it any more (so a record whose values fit 32 bits is byte-identical to BAM).
/// Ordinary records with ordinary values take one branch beyond the 4-byte store.
#[inline]
pub fn set_wide(b: &mut Vec<u8>, field: WideField, v: i64) -> Result<(), NameTooLong> {
    let (low, high) = layout::split_wide(v);
    set_i32(b, field.low, low);
    match layout::name_ext_start(b) {
        None if high == 0 => Ok(()),
        None => add_name_ext(b, field, high),
        Some(at) => {
            set_i32(b, at + field.high, high);
            if !layout::uses_name_ext(b) {
                remove_name_ext(b, at);
            }
            Ok(())
        }
    }
}

pub fn set_pos(b: &mut Vec<u8>, v: i64) -> Result<(), NameTooLong> {
    set_wide(b, layout::WIDE_POS, v)
}

pub fn set_next_pos(b: &mut Vec<u8>, v: i64) -> Result<(), NameTooLong> {
    set_wide(b, layout::WIDE_NEXT_POS, v)
}

pub fn set_tlen(b: &mut Vec<u8>, v: i64) -> Result<(), NameTooLong> {
    set_wide(b, layout::WIDE_TLEN, v)
}

/// Sets POS, PNEXT or TLEN to a 32-bit value in place (for edits on borrowed bytes), clearing
/// the field's high half if the record has an extension.
#[inline]
pub fn set_narrow(b: &mut [u8], field: WideField, v: i32) {
    set_i32(b, field.low, v);
    if let Some(at) = layout::name_ext_start(b) {
        set_i32(b, at + field.high, 0);
    }
}

#[cold]
fn add_name_ext(b: &mut Vec<u8>, field: WideField, high: i32) -> Result<(), NameTooLong> {
    let l = b[layout::L_READ_NAME] as usize;
    if l + layout::NAME_EXT_LEN > 255 {
        return Err(NameTooLong);
    }
    let mut ext = [0u8; layout::NAME_EXT_LEN];
    ext[field.high..field.high + 4].copy_from_slice(&high.to_le_bytes());
    let at = layout::FIXED_LEN + l;
    b.splice(at..at, ext);
    b[layout::L_READ_NAME] = (l + layout::NAME_EXT_LEN) as u8;
    Ok(())
}

#[cold]
fn remove_name_ext(b: &mut Vec<u8>, at: usize) {
    b.drain(at..at + layout::NAME_EXT_LEN);
    b[layout::L_READ_NAME] -= layout::NAME_EXT_LEN as u8;
}

/// Sets flag bits.
#[inline]
pub fn add_flags(b: &mut [u8], bits: u16) {
    let f = flag(b);
    set_flag(b, f | bits);
}

/// Clears flag bits.
#[inline]
pub fn clear_flags(b: &mut [u8], bits: u16) {
    let f = flag(b);
    set_flag(b, f & !bits);
}

/// Offset of the aux block.
#[inline]
pub fn aux_offset(b: &[u8]) -> usize {
    RecordRef::new(b).aux_offset()
}

/// Start and length (tag included) of the first aux field `tag`.
pub fn find_tag(b: &[u8], tag: [u8; 2]) -> Option<(usize, usize)> {
    let mut at = aux_offset(b);
    while at < b.len() {
        let n = field_len(&b[at..])?;
        if b[at] == tag[0] && b[at + 1] == tag[1] {
            return Some((at, n));
        }
        at += n;
    }
    None
}

/// Removes the first field `tag`; true when there was one.
pub fn delete_tag(b: &mut Vec<u8>, tag: [u8; 2]) -> bool {
    match find_tag(b, tag) {
        Some((at, n)) => {
            b.drain(at..at + n);
            true
        }
        None => false,
    }
}

/// Removes the first field of each of `tags` (distinct tags, at most 32) in one walk over the aux
/// block: what one [`delete_tag`] each does, without a walk and a move of the rest per tag.
pub fn delete_tags(b: &mut Vec<u8>, tags: &[[u8; 2]]) {
    debug_assert!(tags.len() <= 32);
    let mut deleted = 0u32;
    let mut at = aux_offset(b);
    let mut kept_end = at;
    while at < b.len() {
        let Some(n) = field_len(&b[at..]) else { break };
        let hit = tags
            .iter()
            .enumerate()
            .position(|(i, t)| deleted & 1 << i == 0 && b[at] == t[0] && b[at + 1] == t[1]);
        match hit {
            Some(i) => deleted |= 1 << i,
            None => {
                // Until the first deletion every field is where it stays.
                if kept_end != at {
                    b.copy_within(at..at + n, kept_end);
                }
                kept_end += n;
            }
        }
        at += n;
    }
    // A malformed rest (which the walks stop at) stays as it is, after the kept fields.
    b.copy_within(at.., kept_end);
    b.truncate(b.len() - (at - kept_end));
}

/// `bam_aux_append(b, tag, 'Z', ...)`.
pub fn append_str(b: &mut Vec<u8>, tag: [u8; 2], value: &[u8]) {
    b.extend_from_slice(&tag);
    b.push(b'Z');
    b.extend_from_slice(value);
    b.push(0);
}

/// `bam_aux_append(b, tag, 'i', 4, &u32)`.
pub fn append_i32(b: &mut Vec<u8>, tag: [u8; 2], value: u32) {
    b.extend_from_slice(&tag);
    b.push(b'i');
    b.extend_from_slice(&value.to_le_bytes());
}

/// An update that htslib refuses: the tag exists with another type, or the value does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxUpdateError;

/// `bam_aux_update_str`: replaces a `Z` tag where it stands or appends it. Fails (as htslib)
/// when the tag exists with another type.
pub fn update_str(b: &mut Vec<u8>, tag: [u8; 2], value: &[u8]) -> Result<(), AuxUpdateError> {
    match find_tag(b, tag) {
        Some((at, n)) => {
            if b[at + 2] != b'Z' {
                return Err(AuxUpdateError);
            }
            let mut field = Vec::with_capacity(value.len() + 4);
            append_str(&mut field, tag, value);
            b.splice(at..at + n, field);
        }
        None => append_str(b, tag, value),
    }
    Ok(())
}

/// `bam_aux_update_int`: the smallest type for a new value (note: 255 and 65535 take the next
/// size up, as in htslib); an existing field keeps its size when that is large enough.
pub fn update_int(b: &mut Vec<u8>, tag: [u8; 2], v: i64) -> Result<(), AuxUpdateError> {
    if v < i32::MIN as i64 || v > u32::MAX as i64 {
        return Err(AuxUpdateError);
    }
    let (mut ty, mut sz) = if v < i16::MIN as i64 {
        (b'i', 4)
    } else if v < i8::MIN as i64 {
        (b's', 2)
    } else if v < 0 {
        (b'c', 1)
    } else if v < u8::MAX as i64 {
        (b'C', 1)
    } else if v < u16::MAX as i64 {
        (b'S', 2)
    } else {
        (b'I', 4)
    };
    let (at, old) = match find_tag(b, tag) {
        Some((at, _)) => {
            let old = match b[at + 2] {
                b'c' | b'C' => 1,
                b's' | b'S' => 2,
                b'i' | b'I' => 4,
                _ => return Err(AuxUpdateError),
            };
            (Some(at), old)
        }
        None => (None, 0),
    };
    let mut field = Vec::with_capacity(7);
    field.extend_from_slice(&tag);
    if at.is_some() && old >= sz {
        sz = old;
        ty = if v < 0 { [0, b'c', b's', 0, b'i'][old] } else { [0, b'C', b'S', 0, b'I'][old] };
    }
    field.push(ty);
    field.extend_from_slice(&v.to_le_bytes()[..sz]);
    match at {
        Some(at) => {
            b.splice(at..at + 3 + old, field);
        }
        None => b.extend_from_slice(&field),
    }
    Ok(())
}

/// Replaces the CIGAR with `ops` (moving everything after it). More than 65,535 operations need
/// the name extension, for which a name of over [`layout::MAX_EXTENDED_NAME_LEN`] characters
/// leaves no room: then the record is left as it was.
pub fn set_cigar(b: &mut Vec<u8>, ops: &[u32]) -> Result<(), NameTooLongForCigar> {
    let r = RecordRef::new(b);
    if ops.len() > layout::MAX_SHORT_CIGAR
        && layout::name_ext_start(b).is_none()
        && b[layout::L_READ_NAME] as usize + layout::NAME_EXT_LEN > 255
    {
        return Err(NameTooLongForCigar);
    }
    let start = layout::FIXED_LEN + b[layout::L_READ_NAME] as usize;
    let end = start + 4 * r.n_cigar_op();
    let bytes: Vec<u8> = ops.iter().flat_map(|o| o.to_le_bytes()).collect();
    b.splice(start..end, bytes);
    long_cigar::set_n_cigar(b, ops.len())
}

/// Replaces the read name (without NUL), keeping a name extension.
pub fn set_read_name(b: &mut Vec<u8>, name: &[u8]) {
    let old = b[layout::L_READ_NAME] as usize;
    let mut n = name.to_vec();
    n.push(0);
    if let Some(at) = layout::name_ext_start(b) {
        n.extend_from_slice(&b[at..at + layout::NAME_EXT_LEN]);
    }
    b[layout::L_READ_NAME] = n.len() as u8;
    b.splice(layout::FIXED_LEN..layout::FIXED_LEN + old, n);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(aux: &[u8]) -> Vec<u8> {
        crate::record::build::RecordBuilder::new(b"r").aux(aux).build()
    }

    #[test]
    fn update_in_place_and_append() {
        let mut b = rec(b"doZx\0NMC\x01");
        update_str(&mut b, *b"do", b"longer").unwrap();
        update_str(&mut b, *b"dt", b"SQ").unwrap();
        assert_eq!(&b[34..], b"doZlonger\0NMC\x01dtZSQ\0");
        assert!(update_str(&mut b, *b"NM", b"x").is_err());
        update_int(&mut b, *b"NM", 300).unwrap();
        assert_eq!(&b[44..48], b"NMS\x2c");
        update_int(&mut b, *b"NM", 2).unwrap();
        assert_eq!(&b[44..49], b"NMS\x02\0");
        update_int(&mut b, *b"dc", 255).unwrap();
        assert!(b.ends_with(b"dcS\xff\0"));
        assert!(delete_tag(&mut b, *b"do"));
        assert!(b[34..].starts_with(b"NMS"));
    }

    #[test]
    fn deleting_tags_in_one_walk_equals_one_delete_each() {
        let tags = [*b"MQ", *b"MC", *b"ms"];
        let mut blocks: Vec<&[u8]> = vec![
            b"NMC\x01MQC\x3cMCZ10M\0msi\x01\0\0\0XAZx\0",
            b"msi\x01\0\0\0MQC\x01MQC\x02MCZ5S5M\0MCZ*\0",
            b"NMC\x01",
            b"",
        ];
        // A malformed field (unknown type) ends the walk; what follows stays. Readers refuse
        // such records, so debug builds assert they never reach a `RecordRef`.
        if !cfg!(debug_assertions) {
            blocks.push(b"MQC\x01NMq\x01MCZ1M\0");
        }
        for aux in blocks {
            let mut one = rec(aux);
            delete_tags(&mut one, &tags);
            let mut each = rec(aux);
            for t in tags {
                delete_tag(&mut each, t);
            }
            assert_eq!(one, each, "{}", String::from_utf8_lossy(aux));
        }
        let mut b = rec(b"MQC\x01NMC\x01");
        delete_tags(&mut b, &[]);
        assert_eq!(b, rec(b"MQC\x01NMC\x01"));
    }

    #[test]
    fn wide_values_add_and_remove_the_extension() {
        let mut b = rec(b"NMC\x01");
        let ordinary = b.clone();
        set_pos(&mut b, 10_000_000_009).unwrap();
        assert_eq!(b.len(), ordinary.len() + layout::NAME_EXT_LEN);
        set_tlen(&mut b, -3_000_000_000).unwrap();
        set_next_pos(&mut b, 7).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!((r.pos(), r.next_pos(), r.tlen()), (10_000_000_009, 7, -3_000_000_000));
        assert_eq!(r.read_name(), b"r");
        assert_eq!(r.aux_get(*b"NM").and_then(|f| f.int()), Some(1));
        set_pos(&mut b, 0).unwrap();
        assert!(RecordRef::new(&b).has_wide_values());
        set_narrow(&mut b, layout::WIDE_TLEN, 0);
        assert_eq!(RecordRef::new(&b).tlen(), 0);
        assert!(!RecordRef::new(&b).has_wide_values());
        set_next_pos(&mut b, 0).unwrap();
        assert_eq!(b, ordinary, "the extension goes once no value needs it");
    }

    #[test]
    fn wide_value_needs_room_in_the_name_length() {
        let mut b = rec(b"");
        set_read_name(&mut b, &[b'n'; layout::MAX_EXTENDED_NAME_LEN + 1]);
        assert_eq!(set_pos(&mut b, 1 << 40), Err(NameTooLong));
        set_read_name(&mut b, &[b'n'; layout::MAX_EXTENDED_NAME_LEN]);
        set_pos(&mut b, 1 << 40).unwrap();
        set_read_name(&mut b, b"short");
        let r = RecordRef::new(&b);
        assert_eq!((r.read_name(), r.pos()), (&b"short"[..], 1 << 40));
    }

    #[test]
    fn name_and_cigar() {
        let mut b = rec(b"");
        set_read_name(&mut b, b"abc");
        set_cigar(&mut b, &[0x50]).unwrap();
        let r = RecordRef::new(&b);
        assert_eq!(r.read_name(), b"abc");
        assert_eq!(r.cigar().collect::<Vec<_>>(), vec![0x50]);
    }
}
