//! `samtools fastq`/`fasta` on records (samtools 1.24 `bam_fastq.c`): which records are kept
//! ([`Selection`]), how a kept record is changed before it is written (`-O`, `--no-sc`:
//! [`prepare`]), and which copies of a name go to which output ([`pairing`]).

pub mod index_reads;
pub mod pairing;
pub mod softclip;

use std::borrow::Cow;
use std::collections::HashSet;

use crate::record::RecordRef;
use crate::record::aux::AuxValue;
use crate::record::layout::flags;

/// `-d TAG[:VAL]` / `-D TAG:FILE`: the tag a record must carry, with one of `values` if any.
#[derive(Clone, Debug, Default)]
pub struct TagFilter {
    pub tag: [u8; 2],
    /// `None`: any value.
    pub values: Option<HashSet<Vec<u8>>>,
}

/// The records `fastq` keeps: its tag filter and flag filters.
#[derive(Clone, Debug)]
pub struct Selection {
    pub tag: Option<TagFilter>,
    /// `-f`: all of these.
    pub require: u32,
    /// `-F`: none of these.
    pub exclude: u32,
    /// `--rf`: any of these (0: no condition).
    pub any_of: u32,
    /// `-G`: not all of these (0: no condition).
    pub not_all_of: u32,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            tag: None,
            require: 0,
            exclude: u32::from(flags::SECONDARY | flags::SUPPLEMENTARY),
            any_of: 0,
            not_all_of: 0,
        }
    }
}

impl Selection {
    /// htslib's `filter_it_out`, negated.
    pub fn keeps(&self, r: &RecordRef<'_>) -> bool {
        if let Some(filter) = &self.tag {
            let Some(field) = r.aux_get(filter.tag) else { return false };
            if let Some(values) = &filter.values {
                let text: Vec<u8> = match (field.ty, field.typed()) {
                    (b'f', AuxValue::Float(v)) => format!("{:.6}", v as f32 as f64).into_bytes(),
                    (b'd' | b'B', _) => return false,
                    (_, AuxValue::Int(v)) => v.to_string().into_bytes(),
                    (_, AuxValue::Char(c)) => vec![c],
                    (_, AuxValue::Str(s)) => s.to_vec(),
                    _ => return false,
                };
                if !values.contains(&text) {
                    return false;
                }
            }
        }
        let flag = u32::from(r.flag());
        flag & self.require == self.require
            && flag & self.exclude == 0
            && (self.any_of == 0 || flag & self.any_of != 0)
            && !(flag & self.not_all_of != 0 && flag & self.not_all_of == self.not_all_of)
    }
}

/// How each kept record is changed before it is written.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// `-O`: qualities from the `OQ` tag where it has them.
    pub use_oq: bool,
    /// `--no-sc`: soft-clipped bases removed; the inner `Some(tag)` keeps them in that tag.
    pub remove_soft_clips: Option<Option<[u8; 2]>>,
}

/// The record as it is written, or `None` when it is dropped (filtered out, or nothing left
/// after its soft clips went). Unchanged records are borrowed.
pub fn prepare<'a>(
    bytes: &'a [u8],
    selection: &Selection,
    changes: &Changes,
) -> Option<Cow<'a, [u8]>> {
    let r = RecordRef::new(bytes);
    if !selection.keeps(&r) {
        return None;
    }
    let mut record = Cow::Borrowed(bytes);
    if changes.use_oq
        && let Some(oq) = r.aux_get(*b"OQ").filter(|f| f.ty == b'Z')
    {
        let qual_at = r.aux_offset() - r.l_seq();
        let owned = record.to_mut();
        for (q, &c) in owned[qual_at..qual_at + r.l_seq()].iter_mut().zip(oq.value) {
            *q = c.wrapping_sub(b'!');
        }
    }
    if let Some(backup) = changes.remove_soft_clips {
        if let Some(clipped) = softclip::remove(&record, backup) {
            record = Cow::Owned(clipped);
        }
        if RecordRef::new(&record).l_seq() == 0 {
            return None;
        }
    }
    Some(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    #[test]
    fn flag_filters_combine_as_samtools() {
        let rec = |flag| RecordBuilder::new(b"r").flag(flag).seq(b"AC").qual(&[1, 2]).build();
        let s = Selection::default();
        assert!(s.keeps(&RecordRef::new(&rec(0x41))));
        assert!(!s.keeps(&RecordRef::new(&rec(0x141))));
        let g = Selection { not_all_of: 0x41, ..Selection::default() };
        assert!(!g.keeps(&RecordRef::new(&rec(0x41))));
        assert!(g.keeps(&RecordRef::new(&rec(0x40))));
    }

    #[test]
    fn oq_replaces_the_qualities() {
        let b = RecordBuilder::new(b"r").seq(b"ACG").qual(&[1, 2, 3]).aux(b"OQZ+,-\0").build();
        let changes = Changes { use_oq: true, ..Changes::default() };
        let out = prepare(&b, &Selection::default(), &changes).unwrap();
        assert_eq!(RecordRef::new(&out).qual(), &[10, 11, 12]);
    }
}
