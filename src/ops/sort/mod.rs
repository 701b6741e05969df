//! `sort`: the orders samtools 1.24 knows, their keys ([`keys`], [`minhash`]) and the `@HD`
//! changes each order makes. Sorting permutes record handles by these keys; ties keep input
//! order, because every samtools sort is stable (radix or merge sort, then a merge that breaks
//! ties by block and arrival).

pub mod keys;
pub mod merge;
pub mod minhash;

use std::cmp::Ordering;

use crate::record::{Header, RecordRef};

/// How names compare: `-n` (natural, numbers by value) or `-N` (plain bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameOrder {
    Natural,
    Lexicographic,
}

impl NameOrder {
    fn label(self) -> &'static str {
        match self {
            NameOrder::Natural => "queryname:natural",
            NameOrder::Lexicographic => "queryname:lexicographical",
        }
    }

    /// The bytes whose lexicographic order is this name order.
    pub fn key(self, name: &[u8], out: &mut Vec<u8>) {
        match self {
            NameOrder::Natural => keys::natural_key(name, out),
            NameOrder::Lexicographic => out.extend_from_slice(name),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortOrder {
    Coordinate,
    Name(NameOrder),
    /// `-t TAG`, then coordinate (`None`) or names.
    Tag {
        tag: [u8; 2],
        then: Option<NameOrder>,
    },
    TemplateCoordinate,
    MinHash(minhash::Minimiser),
}

impl SortOrder {
    /// Whether `--write-index` applies (position-sorted output).
    pub fn is_positional(&self) -> bool {
        matches!(self, SortOrder::Coordinate | SortOrder::MinHash(_))
    }

    /// Updates `@HD` as `set_sort_order`: `placed` says whether any record had `tid >= 0`.
    pub fn update_header(&self, header: &mut Header, placed: bool) {
        let ss_tag;
        let (so, go, ss): (&str, Option<&str>, Option<&str>) = match self {
            SortOrder::Coordinate => ("coordinate", None, None),
            SortOrder::Name(n) => ("queryname", None, Some(n.label())),
            SortOrder::MinHash(_) => {
                if placed {
                    ("coordinate", None, Some("coordinate:minhash"))
                } else {
                    ("unsorted", None, Some("unsorted:minhash"))
                }
            }
            SortOrder::Tag { tag, then } => {
                ss_tag = format!(
                    "unsorted:{}{}:{}",
                    tag[0] as char,
                    tag[1] as char,
                    then.map_or("coordinate", NameOrder::label)
                );
                ("unsorted", None, Some(ss_tag.as_str()))
            }
            SortOrder::TemplateCoordinate => {
                ("unsorted", Some("query"), Some("unsorted:template-coordinate"))
            }
        };
        let mut set = vec![("SO", so)];
        set.extend(go.map(|g| ("GO", g)));
        set.extend(ss.map(|s| ("SS", s)));
        let mut remove = Vec::new();
        if go.is_none() {
            remove.push("GO");
        }
        if ss.is_none() {
            remove.push("SS");
        }
        header.update_hd(&set, &remove);
    }
}

/// A name-order key for one record: prefix for quick comparisons, the full key's location in an
/// arena, and the flag rank for equal names.
#[derive(Clone, Copy, Debug)]
pub struct NameKey {
    pub prefix: u64,
    pub start: u32,
    pub len: u16,
    pub rank: u32,
}

impl NameKey {
    /// Appends `r`'s key bytes to `arena` and describes them.
    pub fn build(r: &RecordRef<'_>, order: NameOrder, arena: &mut Vec<u8>) -> NameKey {
        let start = arena.len();
        order.key(r.read_name(), arena);
        let key = &arena[start..];
        NameKey {
            prefix: keys::key_prefix(key),
            start: start as u32,
            len: key.len() as u16,
            rank: keys::flag_rank(r.flag()),
        }
    }

    /// Name then flag rank, with each key's bytes in its own arena.
    pub fn cmp(&self, arena: &[u8], other: &NameKey, other_arena: &[u8]) -> Ordering {
        self.prefix
            .cmp(&other.prefix)
            .then_with(|| {
                let a = &arena[self.start as usize..self.start as usize + self.len as usize];
                let b =
                    &other_arena[other.start as usize..other.start as usize + other.len as usize];
                a.cmp(b)
            })
            .then(self.rank.cmp(&other.rank))
    }
}
