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

    /// The `@HD` tags the order sets: `SO`, `GO` and `SS`.
    fn hd_tags(&self, placed: bool) -> (&'static str, Option<&'static str>, Option<String>) {
        match self {
            SortOrder::Coordinate => ("coordinate", None, None),
            SortOrder::Name(n) => ("queryname", None, Some(n.label().to_string())),
            SortOrder::MinHash(_) => {
                if placed {
                    ("coordinate", None, Some("coordinate:minhash".into()))
                } else {
                    ("unsorted", None, Some("unsorted:minhash".into()))
                }
            }
            SortOrder::Tag { tag, then } => {
                let ss = format!(
                    "unsorted:{}{}:{}",
                    tag[0] as char,
                    tag[1] as char,
                    then.map_or("coordinate", NameOrder::label)
                );
                ("unsorted", None, Some(ss))
            }
            SortOrder::TemplateCoordinate => {
                ("unsorted", Some("query"), Some("unsorted:template-coordinate".into()))
            }
        }
    }

    /// The tags as samtools' `set_sort_order` names them when it cannot set them
    /// (`SO:x GO:y SS:z`).
    pub fn hd_description(&self, placed: bool) -> String {
        let (so, go, ss) = self.hd_tags(placed);
        let mut text = format!("SO:{so}");
        if let Some(go) = go {
            text.push_str(&format!(" GO:{go}"));
        }
        if let Some(ss) = ss {
            text.push_str(&format!(" SS:{ss}"));
        }
        text
    }

    /// Updates `@HD` as `set_sort_order`: `placed` says whether any record had `tid >= 0`.
    pub fn update_header(&self, header: &mut Header, placed: bool) {
        let (so, go, ss) = self.hd_tags(placed);
        let ss = ss.as_deref();
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
