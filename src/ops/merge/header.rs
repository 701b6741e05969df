//! The merged header, built input by input as samtools 1.24's `trans_tbl_init` builds it: the
//! first `@HD` seen, every reference once (in order of first appearance), then each input's
//! `@RG`, `@PG` and `@CO` lines. An `@RG`/`@PG` ID already in the output gets a random suffix
//! (`ID-1A2B3C4D`, from `lrand48`) unless `-c`/`-p` combine equal IDs; `@RG PG:` and `@PG PP:`
//! follow their input's `@PG` renames. Each input gets a [`Translation`] for its records.

use std::collections::{HashMap, HashSet};

use super::translate::{IdMap, Translation};
use crate::ops::drand48::Drand48;
use crate::record::Header;
use crate::record::header::{Reference, line_field};

/// `-c` and `-p`: combine `@RG` / `@PG` lines whose IDs clash instead of renaming them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Combine {
    pub read_groups: bool,
    pub programs: bool,
}

/// The output header so far.
pub struct MergedHeader {
    hd: Option<Vec<u8>>,
    sq: Vec<Vec<u8>>,
    refs: Vec<Reference>,
    tids: HashMap<Vec<u8>, i32>,
    rg_lines: Vec<Vec<u8>>,
    pg_lines: Vec<Vec<u8>>,
    co_lines: Vec<Vec<u8>>,
    rg_ids: HashSet<Vec<u8>>,
    pg_ids: HashSet<Vec<u8>>,
    random: Drand48,
}

/// A header's lines as htslib holds them once parsed: `@SQ` lines made from the reference list
/// when the text has none.
fn parsed_lines(input: &Header) -> Vec<Vec<u8>> {
    let mut h = input.clone();
    h.rebuild_text();
    h.lines().map(<[u8]>::to_vec).collect()
}

/// The line with `ID` replaced by `id` (samtools replaces the value after the first `\tID:`).
fn with_id(line: &[u8], id: &[u8]) -> Vec<u8> {
    let Some(at) = line.windows(4).position(|w| w == b"\tID:") else { return line.to_vec() };
    let start = at + 4;
    let end = start + line[start..].iter().take_while(|&&b| b >= b'\n').count();
    [&line[..start], id, &line[end..]].concat()
}

/// The line with the value of its first `search` (`\tPG:` or `\tPP:`) tag renamed through
/// `programs`, and a warning when that value names no `@PG` of the input (`finish_rg_pg`).
fn with_program_link(line: &[u8], search: &[u8; 4], programs: &IdMap) -> (Vec<u8>, Option<String>) {
    let Some(at) = line.windows(4).position(|w| w == search) else { return (line.to_vec(), None) };
    let start = at + 4;
    let end = start + line[start..].iter().position(|&b| b == b'\t').unwrap_or(line.len() - start);
    let value = &line[start..end];
    match programs.get(value) {
        Some(Some(new)) => ([&line[..start], new.as_slice(), &line[end..]].concat(), None),
        _ => (
            line.to_vec(),
            Some(format!(
                "[W::finish_rg_pg] Tag {}{} not found in @PG records",
                String::from_utf8_lossy(&search[1..]),
                String::from_utf8_lossy(value)
            )),
        ),
    }
}

impl MergedHeader {
    /// An empty header; `seed` is `-s` (samtools' default is the time).
    pub fn new(seed: i64) -> MergedHeader {
        MergedHeader {
            hd: None,
            sq: Vec::new(),
            refs: Vec::new(),
            tids: HashMap::new(),
            rg_lines: Vec::new(),
            pg_lines: Vec::new(),
            co_lines: Vec::new(),
            rg_ids: HashSet::new(),
            pg_ids: HashSet::new(),
            random: Drand48::seeded(seed),
        }
    }

    /// Whether some input had an `@HD` line.
    pub fn has_hd(&self) -> bool {
        self.hd.is_some()
    }

    /// `gen_unique_id`: `prefix` itself when unused and `!always`, else `prefix-XXXXXXXX`.
    fn unique_id(&mut self, prefix: &[u8], rg: bool, always: bool) -> Vec<u8> {
        let known = if rg { &self.rg_ids } else { &self.pg_ids };
        if !always && !known.contains(prefix) {
            return prefix.to_vec();
        }
        loop {
            let mut id = prefix.to_vec();
            id.extend_from_slice(format!("-{:08X}", self.random.next_u31()).as_bytes());
            let known = if rg { &self.rg_ids } else { &self.pg_ids };
            if !known.contains(&id) {
                return id;
            }
        }
    }

    /// `trans_rg_pg`: the input's `@RG` (or `@PG`) lines with their output IDs, to be added, and
    /// the map from the input's IDs to the output's.
    fn translate_ids(
        &mut self,
        lines: &[Vec<u8>],
        rg: bool,
        combine: bool,
        rename_to: Option<&[u8]>,
    ) -> (Vec<Vec<u8>>, IdMap) {
        let kind: &[u8] = if rg { b"@RG\t" } else { b"@PG\t" };
        let mut new_lines = Vec::new();
        let mut map = HashMap::new();
        for line in lines.iter().filter(|l| l.starts_with(kind)) {
            let Some(orig) = line_field(line, b"ID") else { continue };
            // htslib keeps the first of lines with one ID.
            if map.contains_key(orig) {
                continue;
            }
            let (id, new_in_output) = match rename_to {
                Some(new) => {
                    let known = if rg { &self.rg_ids } else { &self.pg_ids };
                    (new.to_vec(), !known.contains(new))
                }
                None => {
                    let known = if rg { &self.rg_ids } else { &self.pg_ids };
                    if !known.contains(orig) || combine {
                        (orig.to_vec(), !known.contains(orig))
                    } else {
                        (self.unique_id(orig, rg, true), true)
                    }
                }
            };
            if new_in_output {
                new_lines.push(if id == orig { line.clone() } else { with_id(line, &id) });
                let known = if rg { &mut self.rg_ids } else { &mut self.pg_ids };
                known.insert(id.clone());
            }
            map.insert(orig.to_vec(), Some(id));
        }
        // `-r` when no `@RG` line was added (samtools tests the lines to add, not the input's):
        // one is made, and reads without RG map to it.
        if rg
            && new_lines.is_empty()
            && let Some(new) = rename_to
        {
            let id = self.unique_id(new, true, false);
            new_lines.push([b"@RG\tID:".as_slice(), &id].concat());
            self.rg_ids.insert(id.clone());
            map.insert(Vec::new(), Some(id));
        }
        (new_lines, map)
    }

    /// Adds one input's header; returns the translation for its records and any warnings.
    /// `rename_rg` is `-r`'s read group for this input (its file name).
    pub fn add(
        &mut self,
        input: &Header,
        combine: Combine,
        copy_comments: bool,
        rename_rg: Option<&[u8]>,
    ) -> (Translation, Vec<String>) {
        let lines = parsed_lines(input);
        if self.hd.is_none()
            && let Some(hd) = lines.iter().find(|l| l.starts_with(b"@HD\t") || *l == b"@HD")
        {
            self.hd = Some(hd.clone());
        }
        let mut tids = Vec::with_capacity(input.refs().len());
        let mut lost_order = false;
        let mut highest = -1;
        for r in input.refs() {
            let tid = match self.tids.get(&r.name) {
                Some(&t) => t,
                None => {
                    let t = self.refs.len() as i32;
                    let line = lines
                        .iter()
                        .find(|l| l.starts_with(b"@SQ\t") && line_field(l, b"SN") == Some(&r.name))
                        .cloned()
                        .unwrap_or_else(|| {
                            let mut l = b"@SQ\tSN:".to_vec();
                            l.extend_from_slice(&r.name);
                            l.extend_from_slice(format!("\tLN:{}", r.len).as_bytes());
                            l
                        });
                    self.sq.push(line);
                    self.refs.push(r.clone());
                    self.tids.insert(r.name.clone(), t);
                    t
                }
            };
            if tid > highest {
                highest = tid;
            } else {
                lost_order = true;
            }
            tids.push(tid);
        }
        let (rg_lines, rg_map) = self.translate_ids(&lines, true, combine.read_groups, rename_rg);
        let (pg_lines, pg_map) = self.translate_ids(&lines, false, combine.programs, None);
        let mut warnings = Vec::new();
        for (line, search, out) in
            [(rg_lines, b"\tPG:", &mut self.rg_lines), (pg_lines, b"\tPP:", &mut self.pg_lines)]
        {
            for l in line {
                let (fixed, warning) = with_program_link(&l, search, &pg_map);
                out.push(fixed);
                warnings.extend(warning);
            }
        }
        if copy_comments {
            self.co_lines.extend(lines.iter().filter(|l| l.starts_with(b"@CO")).cloned());
        }
        (Translation::new(tids, rg_map, pg_map, lost_order), warnings)
    }

    /// The header: `@HD`, `@SQ`, `@RG`, `@PG`, `@CO`. `reset_order` (a coordinate merge whose
    /// inputs disagree on the reference order) makes `@HD` `SO:unsorted` without `GO`/`SS`.
    pub fn finish(self, reset_order: bool) -> Header {
        let mut text = Vec::new();
        let all = self
            .hd
            .iter()
            .chain(&self.sq)
            .chain(&self.rg_lines)
            .chain(&self.pg_lines)
            .chain(&self.co_lines);
        for line in all {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        let mut header = Header::from_parts(text, self.refs);
        if reset_order && self.hd.is_some() {
            header.update_hd(&[("SO", "unsorted")], &["SS", "GO"]);
        }
        header
    }
}

/// htslib's warnings when it links the `@PG` chains of a header it has changed
/// (`sam_hdr_link_pg`, as it adds samtools' line or writes the header): a `PP` naming no `@PG`,
/// or the line itself.
pub fn program_link_warnings(header: &Header) -> Vec<String> {
    let programs: Vec<&[u8]> = header.lines().filter(|l| l.starts_with(b"@PG\t")).collect();
    let ids: Vec<&[u8]> = programs.iter().filter_map(|l| line_field(l, b"ID")).collect();
    let mut warnings = Vec::new();
    for line in &programs {
        let (Some(id), Some(pp)) = (line_field(line, b"ID"), line_field(line, b"PP")) else {
            continue;
        };
        let (id_text, pp_text) = (String::from_utf8_lossy(id), String::from_utf8_lossy(pp));
        if !ids.contains(&pp) {
            warnings.push(format!(
                "[W::sam_hdr_link_pg] PG line with ID:{id_text} has a PP link to missing program '{pp_text}'"
            ));
        } else if pp == id {
            warnings.push(format!(
                "[W::sam_hdr_link_pg] PG line with ID:{id_text} has a PP link to itself"
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Header {
        Header::from_sam_text(text.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn clashing_ids_get_suffixes_and_links_follow() {
        let mut m = MergedHeader::new(1);
        let a =
            header("@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:9\n@RG\tID:g\tPG:p\n@PG\tID:p\n");
        let b = header("@SQ\tSN:c2\tLN:5\n@SQ\tSN:c1\tLN:9\n@RG\tID:g\tPG:p\n@PG\tID:p\n");
        let (ta, _) = m.add(&a, Combine::default(), true, None);
        let (tb, w) = m.add(&b, Combine::default(), true, None);
        assert!(w.is_empty());
        assert!(!ta.lost_order() && tb.lost_order());
        let text = String::from_utf8(m.finish(false).text().to_vec()).unwrap();
        assert_eq!(
            text,
            "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:9\n@SQ\tSN:c2\tLN:5\n@RG\tID:g\tPG:p\n\
             @RG\tID:g-055424A4\tPG:p-3A2CCEF5\n@PG\tID:p\n@PG\tID:p-3A2CCEF5\n"
        );
    }

    #[test]
    fn dangling_and_self_links_are_reported() {
        let h = header("@PG\tID:a\tPP:zz\n@PG\tID:b\tPP:b\n@PG\tID:c\tPP:a\n");
        let w = program_link_warnings(&h);
        assert_eq!(w.len(), 2);
        assert!(w[0].ends_with("ID:a has a PP link to missing program 'zz'"), "{}", w[0]);
        assert!(w[1].ends_with("ID:b has a PP link to itself"), "{}", w[1]);
    }

    #[test]
    fn combined_ids_are_kept_once() {
        let mut m = MergedHeader::new(1);
        let a = header("@RG\tID:g\n@PG\tID:p\n");
        let c = Combine { read_groups: true, programs: true };
        m.add(&a, c, true, None);
        m.add(&a, c, true, None);
        let text = String::from_utf8(m.finish(true).text().to_vec()).unwrap();
        assert_eq!(text, "@RG\tID:g\n@PG\tID:p\n");
    }

    #[test]
    fn rename_makes_a_read_group_when_there_is_none() {
        let mut m = MergedHeader::new(1);
        let (t, _) = m.add(&header("@CO\tx\n"), Combine::default(), true, Some(b"in1"));
        assert_eq!(t.read_group_for(b""), Some(Some(b"in1".as_slice())));
        let text = String::from_utf8(m.finish(false).text().to_vec()).unwrap();
        assert_eq!(text, "@RG\tID:in1\n@CO\tx\n");
    }
}
