//! One input's translation into the merged header, applied to each of its records as samtools
//! 1.24's `bam_translate` does: reference ids mapped, and the `RG` and `PG` tags replaced by their
//! output IDs. A replaced tag moves to the end of the aux fields (samtools deletes it and appends
//! the new one, even when the ID is unchanged); a tag naming no line of the input's header is
//! dropped, with a warning the first time per input and ID.

use std::collections::HashMap;

use crate::record::RecordRef;
use crate::record::edit;
use crate::record::layout::{NEXT_REF_ID, REF_ID};

/// Input ID → output ID; `None` for an unknown ID already reported (the tag is dropped).
pub type IdMap = HashMap<Vec<u8>, Option<Vec<u8>>>;

pub struct Translation {
    tids: Vec<i32>,
    read_groups: IdMap,
    programs: IdMap,
    lost_order: bool,
}

impl Translation {
    pub fn new(tids: Vec<i32>, read_groups: IdMap, programs: IdMap, lost_order: bool) -> Self {
        Translation { tids, read_groups, programs, lost_order }
    }

    /// Whether this input's references come in another order in the output (a coordinate merge
    /// then loses its sort order).
    pub fn lost_order(&self) -> bool {
        self.lost_order
    }

    /// The output tid of this input's `tid`, if the input has it.
    pub fn tid(&self, tid: i32) -> Option<i32> {
        usize::try_from(tid).ok().and_then(|t| self.tids.get(t)).copied()
    }

    /// The input tid whose output tid is `out_tid` (samtools' `rtrans`).
    pub fn input_tid(&self, out_tid: i32) -> Option<i32> {
        self.tids.iter().position(|&t| t == out_tid).map(|i| i as i32)
    }

    /// What read group `id` becomes: `Some(None)` when it is dropped.
    pub fn read_group_for(&self, id: &[u8]) -> Option<Option<&[u8]>> {
        self.read_groups.get(id).map(Option::as_deref)
    }

    /// Rewrites `record` (without its length prefix); returns the warnings to print.
    pub fn apply(&mut self, record: &mut Vec<u8>) -> Vec<String> {
        let r = RecordRef::new(record);
        let (tid, mtid) = (r.ref_id(), r.next_ref_id());
        if let Some(t) = self.tid(tid) {
            edit::set_i32(record, REF_ID, t);
        }
        if let Some(t) = self.tid(mtid) {
            edit::set_i32(record, NEXT_REF_ID, t);
        }
        let mut warnings = Vec::new();
        for (tag, label) in [(*b"RG", "RG"), (*b"PG", "PG")] {
            let map = if label == "RG" { &mut self.read_groups } else { &mut self.programs };
            if let Some(w) = translate_tag(record, tag, label, map) {
                warnings.push(w);
            }
        }
        warnings
    }
}

/// Replaces the string tag `tag` through `map` (see the module comment).
fn translate_tag(
    record: &mut Vec<u8>,
    tag: [u8; 2],
    label: &str,
    map: &mut IdMap,
) -> Option<String> {
    let r = RecordRef::new(record);
    let field = r.aux_get(tag)?;
    // bam_aux2Z reads Z and H values only.
    if field.ty != b'Z' && field.ty != b'H' {
        return None;
    }
    let value = field.value.to_vec();
    let name = r.read_name().to_vec();
    match map.get(&value) {
        Some(new) => {
            let new = new.clone();
            edit::delete_tag(record, tag);
            if let Some(new) = new {
                edit::append_str(record, tag, &new);
            }
            None
        }
        None => {
            edit::delete_tag(record, tag);
            let warning = format!(
                "[bam_translate] {label} tag \"{}\" on read \"{}\" encountered with no corresponding entry in header, tag lost. Unknown tags are only reported once per input file for each tag ID.",
                String::from_utf8_lossy(&value),
                String::from_utf8_lossy(&name)
            );
            map.insert(value, None);
            Some(warning)
        }
    }
}

/// `-r`: the record's `RG` replaced by `group` at the end of its aux fields.
pub fn attach_read_group(record: &mut Vec<u8>, group: &[u8]) {
    edit::delete_tag(record, *b"RG");
    edit::append_str(record, *b"RG", group);
}

/// `-r`'s read group of input `path`: its file name without directories and without `.bam`,
/// `.sam` or `.cram`.
pub fn read_group_of_path(path: &str) -> Vec<u8> {
    let s = path.as_bytes();
    let mut l = s.len();
    // samtools compares each suffix with the end of the whole name, so only one comes off.
    if l > 4 && (s.ends_with(b".bam") || s.ends_with(b".sam")) {
        l -= 4;
    } else if l > 5 && s.ends_with(b".cram") {
        l -= 5;
    }
    let start = s[..l].iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    s[start..l].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    #[test]
    fn tags_move_to_the_end_and_unknown_ones_are_dropped_once() {
        let mut rg = IdMap::new();
        rg.insert(b"a".to_vec(), Some(b"a-1".to_vec()));
        let mut t = Translation::new(vec![1, 0], rg, IdMap::new(), true);
        let mut rec = RecordBuilder::new(b"r").tid(0).pos(5).mate(1, 9).build();
        edit::append_str(&mut rec, *b"RG", b"a");
        edit::append_str(&mut rec, *b"XX", b"y");
        edit::append_str(&mut rec, *b"PG", b"p");
        let w = t.apply(&mut rec);
        assert_eq!(w.len(), 1);
        let r = RecordRef::new(&rec);
        assert_eq!((r.ref_id(), r.next_ref_id()), (1, 0));
        let tags: Vec<[u8; 2]> = r.aux().map(|f| f.tag).collect();
        assert_eq!(tags, [*b"XX", *b"RG"]);
        let mut again = RecordBuilder::new(b"s").tid(-1).pos(-1).mate(-1, -1).build();
        edit::append_str(&mut again, *b"PG", b"p");
        assert!(t.apply(&mut again).is_empty());
    }

    #[test]
    fn read_group_names_from_paths() {
        assert_eq!(read_group_of_path("dir/x.y.bam"), b"x.y");
        assert_eq!(read_group_of_path("a.cram"), b"a");
        assert_eq!(read_group_of_path("/p/q.sam.gz"), b"q.sam.gz");
        assert_eq!(read_group_of_path(".bam"), b".bam");
        assert_eq!(read_group_of_path("x.cram.bam"), b"x.cram");
    }
}
