//! Which input's current record `merge` writes next: samtools 1.24's `heap_lt` on the records
//! as translated into the output header, through the sort keys of [`crate::ops::sort::keys`].
//! Equal keys go to the earlier input (the heap then compares input numbers), which
//! [`crate::ops::sort::merge::RunHeap`] does when the comparison says `Equal`.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::ops::sort::SortOrder;
use crate::ops::sort::keys;
use crate::record::RecordRef;

/// The keys of one current record that are cheaper kept than recomputed per comparison.
#[derive(Default)]
pub struct MergeKey {
    coord: u128,
    name: Vec<u8>,
    rank: u32,
}

impl MergeKey {
    /// The keys of `r` under `order`, `n_refs` being the output header's reference count.
    pub fn set(&mut self, r: &RecordRef<'_>, order: SortOrder, n_refs: usize) {
        self.coord = keys::coordinate_key(r, n_refs);
        if let SortOrder::Name(n) | SortOrder::Tag { then: Some(n), .. } = order {
            self.name.clear();
            n.key(r.read_name(), &mut self.name);
            self.rank = keys::flag_rank(r.flag());
        }
    }
}

/// The order of two current records (`Equal`: the earlier input goes first).
pub fn cmp_current(
    order: SortOrder,
    libraries: &HashMap<&[u8], &[u8]>,
    (ra, ka): (&RecordRef<'_>, &MergeKey),
    (rb, kb): (&RecordRef<'_>, &MergeKey),
) -> Ordering {
    let names = || ka.name.cmp(&kb.name).then(ka.rank.cmp(&kb.rank));
    match order {
        SortOrder::Coordinate | SortOrder::MinHash(_) => ka.coord.cmp(&kb.coord),
        SortOrder::Name(_) => names(),
        SortOrder::Tag { tag, then } => {
            keys::cmp_tag(&keys::tag_value(ra, tag), &keys::tag_value(rb, tag)).then_with(|| {
                match then {
                    None => ka.coord.cmp(&kb.coord),
                    Some(_) => names(),
                }
            })
        }
        SortOrder::TemplateCoordinate => {
            match (keys::template_key(ra, libraries), keys::template_key(rb, libraries)) {
                (Ok(x), Ok(y)) => keys::cmp_template(&x, &y),
                _ => Ordering::Equal,
            }
        }
    }
}
