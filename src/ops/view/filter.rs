//! `view`'s record filter: which records pass, in samtools' order of tests (`sam_view.c`,
//! `process_aln`): expression, query length, MAPQ and flags, BED targets, subsampling, read groups,
//! tag values, read names, library.

use std::collections::{HashMap, HashSet};

use super::expr::Expr;
use super::subsample::Subsample;
use crate::record::{Header, RecordRef, cigar};

/// BED intervals per reference, 0-based half-open, sorted by start.
#[derive(Default, Debug, Clone)]
pub struct Targets {
    pub by_ref: HashMap<i32, Vec<(i64, i64)>>,
}

impl Targets {
    /// Sorts intervals and merges overlapping ones so a lookup is one binary search.
    pub fn finish(&mut self) {
        for v in self.by_ref.values_mut() {
            v.sort_unstable();
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(v.len());
            for &(b, e) in v.iter() {
                match merged.last_mut() {
                    Some(last) if b <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((b, e)),
                }
            }
            *v = merged;
        }
    }

    /// True if [beg, end) overlaps an interval of `tid`.
    pub fn overlaps(&self, tid: i32, beg: i64, end: i64) -> bool {
        let Some(v) = self.by_ref.get(&tid) else { return false };
        let i = v.partition_point(|&(_, e)| e <= beg);
        i < v.len() && v[i].0 < end
    }
}

/// A set of strings with samtools' optional `^` negation.
#[derive(Default, Debug, Clone)]
pub struct NameSet {
    pub names: HashSet<Vec<u8>>,
    pub negate: bool,
}

impl NameSet {
    fn accepts(&self, v: &[u8]) -> bool {
        self.names.contains(v) != self.negate
    }
}

/// `-d TAG[:VAL]` / `-D TAG:FILE`.
#[derive(Default, Debug, Clone)]
pub struct TagFilter {
    pub tag: [u8; 2],
    /// `None`: the tag only has to be present.
    pub values: Option<HashSet<Vec<u8>>>,
}

#[derive(Default)]
pub struct Filter {
    pub expr: Option<Expr>,
    pub min_qlen: i64,
    pub min_mapq: i32,
    pub require_flags: u16,
    pub exclude_flags: u16,
    pub reject_all_flags: u16,
    pub include_any_flags: u16,
    pub targets: Option<Targets>,
    pub subsample: Option<Subsample>,
    pub read_groups: Option<NameSet>,
    pub exclude_no_read_group: bool,
    pub tag: Option<TagFilter>,
    pub read_names: Option<NameSet>,
    /// Read groups whose `LB` is the `-l` library.
    pub library_groups: Option<HashSet<Vec<u8>>>,
}

/// The text samtools compares `-d` values against: integers in decimal, `A` as its character,
/// strings as themselves.
fn tag_value_text(f: &crate::record::aux::AuxField<'_>) -> Vec<u8> {
    match f.ty {
        b'c' | b'C' | b's' | b'S' | b'i' | b'I' => f.int().unwrap_or(0).to_string().into_bytes(),
        _ => f.value.to_vec(),
    }
}

impl Filter {
    /// Builds the `-l` lookup from the header.
    pub fn set_library(&mut self, library: &[u8], header: &Header) {
        let groups = header
            .lines()
            .filter(|l| l.starts_with(b"@RG\t"))
            .filter(|l| crate::record::header::line_field(l, b"LB") == Some(library))
            .filter_map(|l| crate::record::header::line_field(l, b"ID").map(<[u8]>::to_vec))
            .collect();
        self.library_groups = Some(groups);
    }

    /// Whether `r` passes every test.
    pub fn accepts(&self, r: &RecordRef<'_>, header: &Header) -> Result<bool, String> {
        if let Some(e) = &self.expr
            && !e.eval(r, header)?
        {
            return Ok(false);
        }
        if self.min_qlen > 0 {
            let qlen: i64 = r
                .cigar()
                .filter(|&c| {
                    cigar::consumes_query(cigar::op(c)) || cigar::op(c) == cigar::HARD_CLIP
                })
                .map(|c| cigar::len(c) as i64)
                .sum();
            if qlen < self.min_qlen {
                return Ok(false);
            }
        }
        let flag = r.flag();
        if i32::from(r.mapq()) < self.min_mapq
            || flag & self.require_flags != self.require_flags
            || flag & self.exclude_flags != 0
            || (self.reject_all_flags != 0 && flag & self.reject_all_flags == self.reject_all_flags)
            || (self.include_any_flags != 0 && flag & self.include_any_flags == 0)
        {
            return Ok(false);
        }
        if let Some(t) = &self.targets
            && (r.ref_id() < 0 || !t.overlaps(r.ref_id(), r.pos(), r.end_pos()))
        {
            return Ok(false);
        }
        if let Some(s) = &self.subsample
            && !s.keeps(r.read_name())
        {
            return Ok(false);
        }
        if self.read_groups.is_some() || self.exclude_no_read_group || self.library_groups.is_some()
        {
            let rg = r.aux_get(*b"RG").filter(|f| f.ty == b'Z').map(|f| f.value);
            if let (Some(set), Some(rg)) = (&self.read_groups, rg)
                && !set.accepts(rg)
            {
                return Ok(false);
            }
            if self.exclude_no_read_group && rg.is_none() {
                return Ok(false);
            }
            if let Some(groups) = &self.library_groups
                && !rg.is_some_and(|g| groups.contains(g))
            {
                return Ok(false);
            }
        }
        if let Some(tf) = &self.tag {
            let Some(f) = r.aux_get(tf.tag) else { return Ok(false) };
            if let Some(values) = &tf.values
                && !values.contains(&tag_value_text(&f))
            {
                return Ok(false);
            }
        }
        if let Some(names) = &self.read_names
            && !names.accepts(r.read_name())
        {
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_merge_and_overlap() {
        let mut t = Targets::default();
        t.by_ref.insert(0, vec![(50, 60), (10, 20), (15, 30)]);
        t.finish();
        assert_eq!(t.by_ref[&0], vec![(10, 30), (50, 60)]);
        assert!(t.overlaps(0, 29, 31));
        assert!(!t.overlaps(0, 30, 50));
        assert!(t.overlaps(0, 0, 11));
        assert!(!t.overlaps(1, 0, 100));
    }
}
