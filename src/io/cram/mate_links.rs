//! Which records of a slice are stored as linked mates (spec §10.4.1), decided exactly as
//! htslib's encoder decides (`process_one_read` in `cram_encode.c`, CRAM 3): a paired record
//! whose name was seen earlier in the slice links to that record when a decoder would derive
//! its mate fields and `TLEN` back unchanged; every other record is stored detached, its mate
//! fields written out. A linked pair stores neither `MF`, `NS`, `NP` nor `TS`, only the
//! distance to the next record of the template (`NF`): 4–5 % of a typical file.

use std::collections::HashMap;

use crate::record::RecordRef;

const PAIRED: u16 = 0x1;
const UNMAPPED: u16 = 0x4;
const MATE_UNMAPPED: u16 = 0x8;
const REVERSE: u16 = 0x10;
const MATE_REVERSE: u16 = 0x20;
const READ1: u16 = 0x40;
const READ2: u16 = 0x80;
const SECONDARY: u16 = 0x100;
const SUPPLEMENTARY: u16 = 0x800;

/// htslib's `CRAM_M_REVERSE` and `CRAM_M_UNMAP` (the `MF` bits).
const M_REVERSE: u8 = 1;
const M_UNMAP: u8 = 2;

/// How one record is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MateLink {
    /// Its mate fields are stored (`CF` 0x2).
    pub detached: bool,
    /// The next record of its template lies this many records further on (`NF`; `CF` 0x4).
    pub downstream: Option<u32>,
}

/// What htslib keeps of a record for the decision (`cram_record`'s fields).
struct Seen {
    flags: u16,
    ref_id: i32,
    /// 1-based start and inclusive end.
    apos: i64,
    aend: i64,
    /// The mate fields as the record is (or would be) stored.
    mate_pos: i64,
    mate_flags: u8,
    tlen: i64,
}

/// The links of a slice's records (raw BAM records, in slice order); `reference_length`
/// gives a reference's length by id (an unmapped read ends where it starts, within it).
pub fn link(records: &[&[u8]], reference_length: &dyn Fn(i32) -> i64) -> Vec<MateLink> {
    let mut links = vec![MateLink { detached: true, downstream: None }; records.len()];
    let mut seen: Vec<Seen> = Vec::with_capacity(records.len());
    // Name → the template's last record, with bit 30/31 set once a READ1/READ2 was seen;
    // secondary records form templates of their own.
    let mut templates: [HashMap<&[u8], u32>; 2] = [HashMap::new(), HashMap::new()];
    for (rnum, raw) in records.iter().enumerate() {
        let r = RecordRef::new(raw);
        let flags = r.flag();
        let apos = r.pos() + 1;
        let aend = if flags & UNMAPPED == 0 {
            apos + r.ref_len() - 1
        } else {
            apos.min(reference_length(r.ref_id()).max(0))
        };
        let mut me = Seen {
            flags,
            ref_id: r.ref_id(),
            apos,
            aend,
            mate_pos: (r.next_pos() + 1).max(0),
            mate_flags: mate_flags_of(flags),
            tlen: r.tlen(),
        };
        let read12 = (u32::from(flags & READ1 != 0) << 30) | (u32::from(flags & READ2 != 0) << 31);
        let rnum = rnum as u32;
        if flags & PAIRED != 0 {
            let table = &mut templates[usize::from(flags & SECONDARY != 0)];
            match table.get(r.read_name()).copied() {
                None => {
                    table.insert(r.read_name(), rnum | read12);
                }
                Some(entry) => {
                    let at = (entry & ((1 << 30) - 1)) as usize;
                    if let Some(tlen) = linked_tlen(&me, &r, &seen[at], entry) {
                        let p = &seen[at];
                        me.mate_pos = p.apos;
                        me.tlen = tlen;
                        me.mate_flags = mate_flags_of(p.flags);
                        links[rnum as usize].detached = false;
                        links[at] =
                            MateLink { detached: false, downstream: Some(rnum - at as u32 - 1) };
                        table.insert(r.read_name(), rnum | (entry & (3 << 30)) | read12);
                    }
                }
            }
        }
        seen.push(me);
    }
    links
}

fn mate_flags_of(flags: u16) -> u8 {
    (if flags & MATE_UNMAPPED != 0 { M_UNMAP } else { 0 })
        | (if flags & MATE_REVERSE != 0 { M_REVERSE } else { 0 })
}

/// The `TLEN` a decoder would give `me` linked to the template's previous record `p`, when
/// linking loses nothing (htslib's checks, without its lossy options); else `None`.
fn linked_tlen(me: &Seen, r: &RecordRef<'_>, p: &Seen, entry: u32) -> Option<i64> {
    let aleft = me.apos.min(p.apos);
    let aright = me.aend.max(p.aend);
    let sign = match me.apos.cmp(&p.apos) {
        std::cmp::Ordering::Less => 1,
        std::cmp::Ordering::Greater => -1,
        std::cmp::Ordering::Equal if me.flags & READ1 != 0 => 1,
        std::cmp::Ordering::Equal => -1,
    };
    // Several READ1s (or READ2s) of a name: which is whose mate cannot be told.
    let has_read1 = entry & (1 << 30) != 0;
    let has_read2 = entry & (1 << 31) != 0;
    if (has_read1 && me.flags & READ1 != 0) || (has_read2 && me.flags & READ2 != 0) {
        return None;
    }
    // This record against p: mate position and flags.
    let same = (r.next_pos() + 1).max(0) == p.apos
        && (me.flags & MATE_UNMAPPED != 0) == (p.flags & UNMAPPED != 0)
        && (me.flags & MATE_REVERSE != 0) == (p.flags & REVERSE != 0)
        // p against this record.
        && p.ref_id == me.ref_id
        && p.mate_pos == me.apos
        && (p.flags & MATE_UNMAPPED != 0) == (p.mate_flags & M_UNMAP != 0)
        && (p.flags & MATE_REVERSE != 0) == (p.mate_flags & M_REVERSE != 0)
        && (me.flags | p.flags) & SUPPLEMENTARY == 0;
    if !same {
        return None;
    }
    let span = aright - aleft + 1;
    // TLEN last: both must be what a decoder computes, and not 0.
    if me.tlen == 0 || me.tlen != sign * span || p.tlen == 0 || p.tlen != -sign * span {
        return None;
    }
    Some(sign * span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    /// A 10-base read on reference 0 (`pos`, `mate_pos` 0-based).
    fn record(name: &str, flag: u16, pos: i32, mate_pos: i32, tlen: i32) -> Vec<u8> {
        let b = RecordBuilder::new(name.as_bytes()).flag(flag).tid(0).pos(pos).mapq(60);
        b.cigar(&[10 << 4]).mate(0, mate_pos).tlen(tlen).seq(b"ACGTACGTAC").build()
    }

    fn links(records: &[Vec<u8>]) -> Vec<MateLink> {
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        link(&refs, &|_| 1_000_000)
    }

    const DETACHED: MateLink = MateLink { detached: true, downstream: None };

    #[test]
    fn a_proper_pair_links_and_the_first_points_at_the_second() {
        // r1 at 100 (forward), r2 at 150 (reverse): TLEN ±60.
        let got = links(&[
            record("a", 0x1 | 0x2 | 0x20 | 0x40, 99, 149, 60),
            record("x", 0x0, 120, -1, 0),
            record("a", 0x1 | 0x2 | 0x10 | 0x80, 149, 99, -60),
        ]);
        assert_eq!(got[0], MateLink { detached: false, downstream: Some(1) });
        assert_eq!(got[1], DETACHED);
        assert_eq!(got[2], MateLink { detached: false, downstream: None });
    }

    #[test]
    fn a_tlen_a_decoder_would_not_derive_stays_detached() {
        let got = links(&[
            record("a", 0x1 | 0x20 | 0x40, 99, 149, 61),
            record("a", 0x1 | 0x10 | 0x80, 149, 99, -60),
        ]);
        assert_eq!(got, [DETACHED, DETACHED]);
        let zero =
            links(&[record("a", 0x1 | 0x40, 99, 149, 0), record("a", 0x1 | 0x80, 149, 99, 0)]);
        assert_eq!(zero, [DETACHED, DETACHED]);
    }

    #[test]
    fn wrong_mate_fields_two_read1s_and_supplementaries_stay_detached() {
        let moved = links(&[
            record("a", 0x1 | 0x20 | 0x40, 99, 150, 60),
            record("a", 0x1 | 0x10 | 0x80, 149, 99, -60),
        ]);
        assert_eq!(moved, [DETACHED, DETACHED]);
        let two_read1 = links(&[
            record("a", 0x1 | 0x20 | 0x40, 99, 149, 60),
            record("a", 0x1 | 0x10 | 0x40, 149, 99, -60),
        ]);
        assert_eq!(two_read1, [DETACHED, DETACHED]);
        let supplementary = links(&[
            record("a", 0x1 | 0x20 | 0x40, 99, 149, 60),
            record("a", 0x1 | 0x10 | 0x80 | 0x800, 149, 99, -60),
        ]);
        assert_eq!(supplementary, [DETACHED, DETACHED]);
    }
}
