//! `reset` (samtools 1.24 `reset.c`) on one record: back to an unaligned read. Secondary and
//! supplementary records are dropped; the rest lose position, CIGAR, mate and template length,
//! get the unmapped flags, and a reverse-strand read gets its bases and qualities back in read
//! order. Aux fields are kept or removed by [`TagSets`].

use crate::record::aux::RawFields;
use crate::record::layout::{self, flags};
use crate::record::view::RecordRef;

/// Tags `reset` removes unless `--keep-tag`/`-x ^` is given.
const DEFAULT_REMOVED: [&[u8; 2]; 15] = [
    b"AS", b"CC", b"CG", b"CP", b"H1", b"H2", b"HI", b"H0", b"IH", b"MC", b"MD", b"MQ", b"NM",
    b"SA", b"TS",
];

/// Which aux fields survive: a keep list wins over a remove list (`update_aux_conf`).
#[derive(Clone, Debug, Default)]
pub struct TagSets {
    pub keep: Option<Vec<[u8; 2]>>,
    pub remove: Option<Vec<[u8; 2]>>,
}

impl TagSets {
    /// Completes the user's sets as samtools does: with `--no-RG` (`keep_read_groups` false) RG
    /// leaves the keep set and joins the remove set; the default tags join the remove set.
    pub fn complete(mut self, keep_read_groups: bool) -> TagSets {
        if self.keep.is_none() && self.remove.is_none() {
            self.remove = Some(Vec::new());
        }
        if let Some(keep) = &mut self.keep
            && !keep_read_groups
        {
            keep.retain(|t| t != b"RG");
        }
        if let Some(remove) = &mut self.remove {
            if !keep_read_groups && !remove.contains(b"RG") {
                remove.push(*b"RG");
            }
            for t in DEFAULT_REMOVED {
                if !remove.contains(t) {
                    remove.push(*t);
                }
            }
        }
        self
    }

    fn keeps(&self, tag: &[u8]) -> bool {
        match (&self.keep, &self.remove) {
            (Some(keep), _) => keep.iter().any(|t| t == tag),
            (None, Some(remove)) => !remove.iter().any(|t| t == tag),
            (None, None) => true,
        }
    }
}

/// The base code complementary to each 4-bit code (`=` stays `=`, `N` stays `N`).
const COMPLEMENT: [u8; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// Writes the reset form of `rec` into `out`; false when the record is dropped.
pub fn reset_record(
    rec: &RecordRef<'_>,
    tags: &TagSets,
    keep_dup: bool,
    out: &mut Vec<u8>,
) -> bool {
    let flag = rec.flag();
    if flag & (flags::SECONDARY | flags::SUPPLEMENTARY) != 0 {
        return false;
    }
    let mut new_flag = (flag & !flags::PROPER_PAIR) | flags::UNMAP;
    if flag & flags::PAIRED != 0 {
        new_flag |= flags::MUNMAP;
    }
    new_flag &= !flags::MREVERSE;
    if !keep_dup {
        new_flag &= !flags::DUP;
    }
    let reverse = flag & flags::REVERSE != 0;
    new_flag &= !flags::REVERSE;
    let name = rec.read_name();
    let l_seq = rec.l_seq();
    let mut fixed = [0u8; layout::FIXED_LEN];
    let mut put = |at: usize, v: &[u8]| fixed[at..at + v.len()].copy_from_slice(v);
    put(layout::REF_ID, &(-1i32).to_le_bytes());
    put(layout::POS, &(-1i32).to_le_bytes());
    put(layout::L_READ_NAME, &[name.len() as u8 + 1]);
    put(layout::BIN, &layout::reg2bin(-1, 0).to_le_bytes());
    put(layout::FLAG, &new_flag.to_le_bytes());
    put(layout::L_SEQ, &(l_seq as i32).to_le_bytes());
    put(layout::NEXT_REF_ID, &(-1i32).to_le_bytes());
    put(layout::NEXT_POS, &(-1i32).to_le_bytes());
    out.extend_from_slice(&fixed);
    out.extend_from_slice(name);
    out.push(0);
    if reverse {
        let seq_at = out.len();
        out.resize(seq_at + l_seq.div_ceil(2), 0);
        for i in 0..l_seq {
            let code = COMPLEMENT[rec.base_code(l_seq - 1 - i) as usize];
            out[seq_at + i / 2] |= if i.is_multiple_of(2) { code << 4 } else { code };
        }
        out.extend(rec.qual().iter().rev());
    } else {
        out.extend_from_slice(rec.seq_packed());
        out.extend_from_slice(rec.qual());
    }
    for field in RawFields::new(rec.aux_bytes()) {
        if tags.keeps(&field[..2]) {
            out.extend_from_slice(field);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    #[test]
    fn reverse_reads_come_back_in_read_order() {
        let b = RecordBuilder::new(b"r")
            .tid(0)
            .pos(5)
            .flag(flags::PAIRED | flags::REVERSE | flags::MREVERSE | flags::DUP)
            .cigar(&[3 << 4])
            .seq(b"ACN")
            .qual(&[1, 2, 3])
            .aux(b"NMC\x01XAC\x02")
            .build();
        let mut out = Vec::new();
        let tags = TagSets::default().complete(true);
        assert!(reset_record(&RecordRef::new(&b), &tags, false, &mut out));
        let r = RecordRef::new(&out);
        assert_eq!((r.ref_id(), r.pos(), r.n_cigar_op(), r.bin()), (-1, -1, 0, 4680));
        assert_eq!(r.flag(), flags::PAIRED | flags::UNMAP | flags::MUNMAP);
        assert_eq!((0..3).map(|i| r.base_code(i)).collect::<Vec<_>>(), [15, 4, 8]);
        assert_eq!(r.qual(), [3, 2, 1]);
        assert_eq!(r.aux_bytes(), b"XAC\x02");
    }

    #[test]
    fn a_keep_list_wins_and_loses_rg_without_read_groups() {
        let tags = TagSets { keep: Some(vec![*b"RG", *b"X0"]), remove: Some(vec![*b"X0"]) };
        let tags = tags.complete(false);
        assert!(tags.keeps(b"X0") && !tags.keeps(b"RG") && !tags.keeps(b"NM"));
    }
}
