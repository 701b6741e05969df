//! Duplicate chains (samtools' `find_duplicate_chains`, `check_chain_against_original` and
//! `check_duplicate_chain`, on by default, off with `--no-multi-dup`): before a record that is in a
//! chain is flushed, the chain is walked back to its original and every duplicate in it is checked
//! again against that original (and, with an optical distance, against each other), so that the
//! duplicates of duplicates are counted and tagged as samtools counts and tags them.

use super::{Check, CoordCall, Engine, Failure, NONE, fail};
use crate::record::layout::flags;

impl Engine<'_> {
    /// `check_chain_against_original`: `Ok(coord_fail)`.
    fn check_against_original(&mut self, root: u32, list: &mut Vec<Check>) -> Result<i32, Failure> {
        let rg = self.src.info(root as usize).rg;
        let mut coord_fail = 0;
        let mut oc = (0, 0, 0, 0);
        if self.opts.opt_dist > 0 {
            match self.coords(root) {
                CoordCall::Ok(b, e, x, y) => oc = (b, e, x, y),
                CoordCall::Fail(v) => coord_fail = v,
            }
        }
        list.clear();
        let root_name = self.src.name(root as usize);
        let mut cur = self.nodes[root as usize].duplicate;
        let mut result = Ok(());
        let mut guard = 0usize;
        while cur != NONE && guard <= self.nodes.end() {
            guard += 1;
            let c_idx = cur as usize;
            let mut c = Check {
                idx: cur,
                score: 0,
                mate_score: 0,
                x: -1,
                y: -1,
                opt: false,
                beg: 0,
                len: 0,
            };
            self.nodes[c_idx].dup_checked = true;
            if self.opts.tag {
                let d = self.out[c_idx].do_from;
                if d != NONE && self.src.name(d as usize) != root_name && !self.nodes[c_idx].flushed
                {
                    self.out[c_idx].do_from = root;
                    if let Some(c) = &mut self.captured {
                        c.insert(cur, root_name.to_vec());
                    }
                }
            }
            if self.opts.opt_dist > 0 && coord_fail == 0 {
                c.opt = self.out[c_idx].dt == b'S';
                let mut is_opt = false;
                if let CoordCall::Ok(db, de, dx, dy) = self.coords(cur) {
                    let dn = self.src.name(c_idx);
                    is_opt = oc.1 - oc.0 == de - db
                        && root_name[oc.0..oc.1] == dn[db..de]
                        && (oc.2 - dx).abs() <= self.opts.opt_dist
                        && (oc.3 - dy).abs() <= self.opts.opt_dist;
                    c.x = dx;
                    c.y = dy;
                    c.beg = db;
                    c.len = de - db;
                }
                let paired = self.paired(cur);
                if !c.opt && is_opt {
                    if let Err(e) = self.optical_retag(cur, paired, rg) {
                        result = Err(e);
                        break;
                    }
                    c.opt = true;
                }
                c.score = self.src.info(c_idx).score;
                if paired {
                    match self.src.info(c_idx).mate_score {
                        Some(m) => c.mate_score = m,
                        None => {
                            result = Err(self.no_ms());
                            break;
                        }
                    }
                }
            }
            cur = self.nodes[c_idx].duplicate;
            list.push(c);
        }
        self.nodes[root as usize].dup_checked = true;
        result.map(|()| coord_fail)
    }

    /// `check_duplicate_chain`: optical duplicates among the duplicates themselves.
    fn check_chain(&mut self, list: &mut [Check], rg: u32) -> Result<(), Failure> {
        let src = self.src;
        let name = |i: usize| src.name(i);
        list.sort_by(|a, b| {
            a.len
                .cmp(&b.len)
                .then_with(|| {
                    name(a.idx as usize)[a.beg..a.beg + a.len]
                        .cmp(&name(b.idx as usize)[b.beg..b.beg + a.len])
                })
                .then_with(|| a.x.cmp(&b.x))
        });
        let n = list.len();
        let d = self.opts.opt_dist;
        let mut curr = 0;
        while curr + 1 < n {
            let base = &list[curr];
            let base_part = &name(base.idx as usize)[base.beg..base.beg + base.len];
            let mut end = curr;
            loop {
                end += 1;
                if end >= n {
                    break;
                }
                let chk = &list[end];
                if base.len == chk.len
                    && name(chk.idx as usize)[chk.beg..chk.beg + chk.len] != *base_part
                {
                    break;
                }
            }
            while curr < end {
                let cur_paired = self.paired(list[curr].idx);
                let mut count = curr;
                loop {
                    count += 1;
                    if count >= end || list[count].x - list[curr].x > d {
                        break;
                    }
                    if list[curr].opt && list[count].opt {
                        continue;
                    }
                    if (list[curr].y - list[count].y).abs() > d {
                        continue;
                    }
                    let chk_paired = self.paired(list[count].idx);
                    let chk_dup = if cur_paired != chk_paired {
                        !chk_paired
                    } else {
                        let (ci, ki) = (list[curr].idx as usize, list[count].idx as usize);
                        let (cq, kq) = (
                            self.src.info(ci).flag & flags::QCFAIL,
                            self.src.info(ki).flag & flags::QCFAIL,
                        );
                        let (cur_score, mut chk_score) = if cq != kq {
                            if cq != 0 { (0, 1) } else { (1, 0) }
                        } else if cur_paired {
                            (
                                list[curr].score + list[curr].mate_score,
                                list[count].score + list[count].mate_score,
                            )
                        } else {
                            (list[curr].score, list[count].score)
                        };
                        if cur_score == chk_score {
                            if name(ki) < name(ci) {
                                chk_score += 1;
                            } else {
                                chk_score -= 1;
                            }
                        }
                        cur_score > chk_score
                    };
                    if chk_dup {
                        if !list[count].opt {
                            self.optical_retag(list[count].idx, chk_paired, rg)?;
                            list[count].opt = true;
                        }
                    } else if !list[curr].opt {
                        self.optical_retag(list[curr].idx, cur_paired, rg)?;
                        list[curr].opt = true;
                    }
                }
                curr += 1;
            }
        }
        Ok(())
    }

    pub(super) fn find_duplicate_chains(
        &mut self,
        start: u32,
        list: &mut Vec<Check>,
    ) -> Result<(), Failure> {
        let mut root = start;
        let mut guard = 0usize;
        while self.nodes[root as usize].original != NONE && guard <= self.nodes.end() {
            root = self.nodes[root as usize].original;
            guard += 1;
        }
        let rg = self.src.info(root as usize).rg;
        match self.check_against_original(root, list)? {
            0 if self.opts.opt_dist > 0 => self.check_chain(list, rg),
            v if v < 0 => Err(fail("")),
            _ => Ok(()),
        }
    }
}
