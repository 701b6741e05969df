//! Duplicate keys (samtools `make_single_key` / `make_pair_key`): 1-based unclipped 5' positions
//! (soft *and* hard clips), strand orientation, and for pairs the mate's position from `MC`.

use crate::record::cigar::{self, HARD_CLIP, SOFT_CLIP};
use crate::record::layout::flags;
use crate::record::view::RecordRef;

pub const O_FF: i8 = 2;
pub const O_RR: i8 = 3;
pub const O_FR: i8 = 5;
pub const O_RF: i8 = 7;
pub const R_LE: i8 = 11;
pub const R_RI: i8 = 13;

/// A hash key. Single keys leave the `other_*`/`leftmost` fields zero so derived equality matches
/// samtools' `key_equal`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    pub single: bool,
    pub this_ref: i32,
    pub this_coord: i64,
    pub other_ref: i32,
    pub other_coord: i64,
    pub leftmost: i8,
    pub orientation: i8,
    pub barcode: i32,
    pub read_group: i32,
}

/// Bob Jenkins' one-at-a-time hash (samtools reduces barcodes to it).
pub fn jenkins(key: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &b in key {
        h = h.wrapping_add(b as u32);
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h.wrapping_add(h << 15)
}

pub fn unclipped_start(r: &RecordRef<'_>) -> i64 {
    let mut clipped = 0i64;
    for c in r.cigar() {
        match cigar::op(c) {
            SOFT_CLIP | HARD_CLIP => clipped += cigar::len(c) as i64,
            _ => break,
        }
    }
    r.pos() - clipped + 1
}

pub fn unclipped_end(r: &RecordRef<'_>) -> i64 {
    let mut clipped = 0i64;
    for c in r.cigar().rev() {
        match cigar::op(c) {
            SOFT_CLIP | HARD_CLIP => clipped += cigar::len(c) as i64,
            _ => break,
        }
    }
    r.end_pos() + clipped
}

/// `strtol(c, &c, 10)` on a CIGAR string: the number and the rest.
fn number(s: &[u8]) -> (i64, &[u8]) {
    if s.first().is_some_and(u8::is_ascii_digit) {
        let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
        let v = s[..n]
            .iter()
            .fold(0i64, |v, &d| v.saturating_mul(10).saturating_add((d - b'0') as i64));
        (v, &s[n..])
    } else {
        (1, s)
    }
}

pub fn unclipped_other_start(mpos: i64, mc: &[u8]) -> i64 {
    let mut c = mc;
    let mut clipped = 0;
    while let Some(&first) = c.first() {
        if first == b'*' {
            break;
        }
        let (num, rest) = number(c);
        c = rest;
        match c.first() {
            Some(b'S') | Some(b'H') => clipped += num,
            _ => break,
        }
        c = &c[1..];
    }
    mpos - clipped + 1
}

pub fn unclipped_other_end(mpos: i64, mc: &[u8]) -> i64 {
    let mut c = mc;
    let mut refpos = 0;
    let mut skip = true;
    while let Some(&first) = c.first() {
        if first == b'*' {
            break;
        }
        let (num, rest) = number(c);
        c = rest;
        match c.first() {
            Some(b'M' | b'D' | b'N' | b'=' | b'X') => {
                refpos += num;
                skip = false;
            }
            Some(b'S' | b'H') if !skip => refpos += num,
            _ => {}
        }
        if c.is_empty() {
            break;
        }
        c = &c[1..];
    }
    mpos + refpos
}

pub fn single_key(r: &RecordRef<'_>, barcode: i32, rg: i32) -> Key {
    let rev = r.flag() & flags::REVERSE != 0;
    Key {
        single: true,
        this_ref: r.ref_id() + 1,
        this_coord: if rev { unclipped_end(r) } else { unclipped_start(r) },
        orientation: if rev { O_RR } else { O_FF },
        barcode,
        read_group: rg,
        ..Key::default()
    }
}

/// The pair key of `r`, whose mate's CIGAR is `mc`; `sequence` is `--mode s`.
pub fn pair_key(r: &RecordRef<'_>, mc: &[u8], sequence: bool, barcode: i32, rg: i32) -> Key {
    let f = r.flag();
    let rev = f & flags::REVERSE != 0;
    let mrev = f & flags::MREVERSE != 0;
    let read1 = f & flags::READ1 != 0;
    let this_ref = r.ref_id() + 1;
    let other_ref = r.next_ref_id() + 1;
    let mpos = r.next_pos();
    let (s, e) = (unclipped_start(r), unclipped_end(r));
    let (ms, me) = (unclipped_other_start(mpos, mc), unclipped_other_end(mpos, mc));
    let (mut this_coord, mut other_coord) = (s, ms);
    let leftmost;
    let orientation;
    if !sequence {
        leftmost = if this_ref != other_ref {
            this_ref < other_ref
        } else if rev == mrev {
            if !rev { s <= ms } else { e <= me }
        } else if rev {
            e <= ms
        } else {
            s <= me
        };
        if leftmost {
            if rev == mrev {
                other_coord = me;
                orientation = if rev != read1 { O_FF } else { O_RR };
            } else if !rev {
                orientation = O_FR;
                other_coord = me;
            } else {
                orientation = O_RF;
                this_coord = e;
            }
        } else if rev == mrev {
            this_coord = e;
            orientation = if rev != read1 { O_RR } else { O_FF };
        } else if !rev {
            orientation = O_RF;
            other_coord = me;
        } else {
            orientation = O_FR;
            this_coord = e;
        }
    } else {
        let d = if this_ref != other_ref {
            (this_ref - other_ref) as i64
        } else if rev == mrev {
            if !rev { s - ms } else { e - me }
        } else if rev {
            e - ms
        } else {
            s - me
        };
        leftmost = match d {
            d if d < 0 => true,
            d if d > 0 => false,
            _ => {
                let pos = r.pos();
                if pos == mpos { read1 } else { pos < mpos }
            }
        };
        orientation = match (leftmost, rev == mrev, rev) {
            (true, true, false) => O_FF,
            (true, true, true) => O_RR,
            (true, false, false) => O_FR,
            (true, false, true) => O_RF,
            (false, true, false) => O_RR,
            (false, true, true) => O_FF,
            (false, false, false) => O_RF,
            (false, false, true) => O_FR,
        };
        this_coord = if rev { e } else { s };
        other_coord = if mrev { me } else { ms };
    }
    Key {
        single: false,
        this_ref,
        this_coord,
        other_ref,
        other_coord,
        leftmost: if leftmost { R_LE } else { R_RI },
        orientation,
        barcode,
        read_group: rg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_cigar_positions() {
        assert_eq!(unclipped_other_start(99, b"5S10M"), 95);
        assert_eq!(unclipped_other_start(99, b"3H2S10M"), 95);
        assert_eq!(unclipped_other_end(99, b"5S10M3S2H"), 114);
        assert_eq!(unclipped_other_end(99, b"10M2I5D"), 114);
        assert_eq!(unclipped_other_end(99, b"*"), 99);
        assert_eq!(jenkins(b""), 0);
        assert_ne!(jenkins(b"ACGT"), jenkins(b"ACGA"));
    }
}
