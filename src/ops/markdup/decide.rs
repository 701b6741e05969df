//! The decide phase: samtools' duplicate hashes, moving window and duplicate chains, replayed in
//! input order on one thread so that every tie, replacement and window deletion happens exactly as
//! in `bam_mark_duplicates`. Records are not touched here: the result is one [`Outcome`] per record
//! (frozen when the record leaves the window, as samtools writes it then), applied later in
//! parallel by [`super::finalize`].

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::keys::Key;
use super::optical::Coords;
use super::stats::Stats;
use super::{BarcodeWarning, KeyError, MarkdupOptions, ReadInfo};
use crate::record::layout::flags;

pub const NONE: u32 = u32::MAX;
const WARNING_MAX: i64 = 10;

/// A small multiplicative hasher for the key tables (keys are plain integers).
#[derive(Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_i32(&mut self, i: i32) {
        self.write_u64(i as u32 as u64);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// What happens to one record.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Written in the first pass (counted in WRITTEN).
    pub written: bool,
    /// Marked duplicate in the first pass.
    pub dup: bool,
    /// Record whose name goes in `do` (`NONE`: no `do`).
    pub do_from: u32,
    /// `dt`: 0 none, `b'L'` LB, `b'S'` SQ.
    pub dt: u8,
    /// `dc` set when the record left the window.
    pub dc: Option<i64>,
    /// Left the window at end of input (samtools moves UMIs only then, and in the `-S` pass).
    pub eof: bool,
    /// Marked in the supplementary pass.
    pub np: bool,
    pub np_do: u32,
    pub np_dt: u8,
}

impl Default for Outcome {
    fn default() -> Self {
        Outcome {
            written: false,
            dup: false,
            do_from: NONE,
            dt: 0,
            dc: None,
            eof: false,
            np: false,
            np_do: NONE,
            np_dt: 0,
        }
    }
}

#[derive(Clone, Copy)]
struct Node {
    original: u32,
    duplicate: u32,
    dup_checked: bool,
    dc: i64,
    ins_pair: bool,
    ins_single: bool,
    flushed: bool,
    bufpos: i64,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            original: NONE,
            duplicate: NONE,
            dup_checked: false,
            dc: 1,
            ins_pair: false,
            ins_single: false,
            flushed: false,
            bufpos: 0,
        }
    }
}

struct DupEntry {
    orig: u32,
    optical: bool,
    rg: u32,
}

struct Check {
    idx: u32,
    score: i64,
    mate_score: i64,
    x: i64,
    y: i64,
    opt: bool,
    beg: usize,
    len: usize,
}

/// The result of the decide phase.
pub struct Decision {
    pub outcomes: Vec<Outcome>,
    /// Counters by read group (index 0: ungrouped, or everything without `--use-read-groups`).
    pub stats: Vec<Stats>,
    pub opt_warnings: i64,
    pub bc_warnings: i64,
}

/// A fatal error: what was logged before it, and the final message.
pub struct Failure {
    pub message: String,
}

enum CoordCall {
    Ok(usize, usize, i64, i64),
    /// `get_coordinates` returned 1 (after a warning) or -1 (regex without match).
    Fail(i32),
}

struct Engine<'a> {
    infos: &'a [ReadInfo],
    name: &'a (dyn Fn(usize) -> &'a [u8] + Sync),
    opts: &'a MarkdupOptions,
    log: &'a mut dyn FnMut(String),
    nodes: Vec<Node>,
    out: Vec<Outcome>,
    stats: Vec<Stats>,
    pair_hash: FastMap<Key, u32>,
    single_hash: FastMap<Key, u32>,
    dup_hash: HashMap<Vec<u8>, DupEntry>,
    opt_warnings: i64,
    bc_warnings: i64,
    check_chain: bool,
}

fn fail(msg: &str) -> Failure {
    Failure { message: msg.to_string() }
}

impl Engine<'_> {
    fn warn(&mut self, msg: &str) {
        (self.log)(format!("samtools markdup: {msg}\n"));
    }

    fn paired(&self, i: u32) -> bool {
        self.infos[i as usize].paired
    }

    fn coords(&mut self, i: u32) -> CoordCall {
        match &self.infos[i as usize].coords {
            Some(Coords::Ok { t_beg, t_end, x, y }) => CoordCall::Ok(*t_beg, *t_end, *x, *y),
            Some(Coords::Warn(msg)) => {
                self.opt_warnings += 1;
                if self.opt_warnings <= WARNING_MAX {
                    let m = msg.clone();
                    self.warn(&m);
                }
                CoordCall::Fail(1)
            }
            Some(Coords::NoMatch) => CoordCall::Fail(-1),
            None => CoordCall::Fail(1),
        }
    }

    fn bc_warn(&mut self, i: usize) {
        let Some(w) = self.infos[i].barcode_warning.clone() else { return };
        self.bc_warnings += 1;
        if self.bc_warnings <= WARNING_MAX {
            let name = String::from_utf8_lossy((self.name)(i)).into_owned();
            let msg = match w {
                BarcodeWarning::WrongType => {
                    let tag = match &self.opts.barcode {
                        super::Barcode::Tag(t) => String::from_utf8_lossy(t).into_owned(),
                        _ => String::new(),
                    };
                    format!("warning, {tag} tag wrong type. Aux tag needs to be a string type.\n")
                }
                BarcodeWarning::NoSubstring => {
                    format!("warning, barcode regex unable to match substring on {name}.\n")
                }
                BarcodeWarning::NoMatch => {
                    format!("warning, barcode regex match error \"No match\" on {name}.\n")
                }
            };
            self.warn(&msg);
        }
        if self.bc_warnings == WARNING_MAX {
            let msg = format!(
                "warning, {} barcode read warnings.  New warnings will not be reported.\n",
                self.bc_warnings
            );
            self.warn(&msg);
        }
    }

    /// `is_optical_duplicate`.
    fn is_optical(&mut self, ori: u32, dup: u32) -> bool {
        let CoordCall::Ok(ob, oe, ox, oy) = self.coords(ori) else { return false };
        let CoordCall::Ok(db, de, dx, dy) = self.coords(dup) else { return false };
        let (on, dn) = ((self.name)(ori as usize), (self.name)(dup as usize));
        oe - ob == de - db
            && on[ob..oe] == dn[db..de]
            && (ox - dx).abs() <= self.opts.opt_dist
            && (oy - dy).abs() <= self.opts.opt_dist
    }

    fn mark_duplicates(&mut self, ori: u32, dup: u32, rg: u32, paired_counter: bool) {
        let incoming = self.opt_warnings;
        let d = dup as usize;
        self.out[d].dup = true;
        if self.opts.tag {
            self.out[d].do_from = ori;
        }
        let mut optical = false;
        if self.opts.opt_dist > 0 {
            if self.is_optical(ori, dup) {
                self.out[d].dt = b'S';
                optical = true;
                let s = &mut self.stats[rg as usize];
                if paired_counter {
                    s.optical += 1;
                } else {
                    s.single_optical += 1;
                }
            } else {
                self.out[d].dt = b'L';
            }
        }
        if self.opt_warnings == WARNING_MAX && incoming != self.opt_warnings {
            let msg = format!(
                "warning, {} decipher read name warnings.  New warnings will not be reported.\n",
                self.opt_warnings
            );
            self.warn(&msg);
        }
        if self.opts.supp && self.infos[d].supp_candidate {
            let orig = if self.opts.tag { ori } else { NONE };
            self.dup_hash.entry((self.name)(d).to_vec()).or_insert(DupEntry { orig, optical, rg });
        }
    }

    fn optical_retag(&mut self, b: u32, paired: bool, rg: u32) -> Result<(), Failure> {
        if !self.nodes[b as usize].flushed {
            self.out[b as usize].dt = b'S';
        }
        let s = &mut self.stats[rg as usize];
        if paired {
            s.optical += 1;
        } else {
            s.single_optical += 1;
        }
        if self.opts.supp && self.infos[b as usize].supp_candidate {
            let name = (self.name)(b as usize);
            match self.dup_hash.get_mut(name) {
                Some(e) => e.optical = true,
                None => {
                    let n = String::from_utf8_lossy(name).into_owned();
                    self.warn(&format!("error, duplicate name {n} not found in hash.\n"));
                    return Err(fail(""));
                }
            }
        }
        Ok(())
    }

    fn no_ms(&mut self) -> Failure {
        let msg = "error, no ms score tag. Please run samtools fixmate on file first.\n";
        self.warn(msg);
        self.warn(msg);
        fail("")
    }

    /// `check_chain_against_original`: `Ok(coord_fail)`.
    fn check_against_original(&mut self, root: u32, list: &mut Vec<Check>) -> Result<i32, Failure> {
        let rg = self.infos[root as usize].rg;
        let mut coord_fail = 0;
        let mut oc = (0, 0, 0, 0);
        if self.opts.opt_dist > 0 {
            match self.coords(root) {
                CoordCall::Ok(b, e, x, y) => oc = (b, e, x, y),
                CoordCall::Fail(v) => coord_fail = v,
            }
        }
        list.clear();
        let root_name = (self.name)(root as usize);
        let mut cur = self.nodes[root as usize].duplicate;
        let mut result = Ok(());
        let mut guard = 0usize;
        while cur != NONE && guard <= self.infos.len() {
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
                if d != NONE && (self.name)(d as usize) != root_name && !self.nodes[c_idx].flushed {
                    self.out[c_idx].do_from = root;
                }
            }
            if self.opts.opt_dist > 0 && coord_fail == 0 {
                c.opt = self.out[c_idx].dt == b'S';
                let mut is_opt = false;
                if let CoordCall::Ok(db, de, dx, dy) = self.coords(cur) {
                    let dn = (self.name)(c_idx);
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
                c.score = self.infos[c_idx].score;
                if paired {
                    match self.infos[c_idx].mate_score {
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
        let name = self.name;
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
                            self.infos[ci].flag & flags::QCFAIL,
                            self.infos[ki].flag & flags::QCFAIL,
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

    fn find_duplicate_chains(&mut self, start: u32, list: &mut Vec<Check>) -> Result<(), Failure> {
        let mut root = start;
        let mut guard = 0usize;
        while self.nodes[root as usize].original != NONE && guard <= self.infos.len() {
            root = self.nodes[root as usize].original;
            guard += 1;
        }
        let rg = self.infos[root as usize].rg;
        match self.check_against_original(root, list)? {
            0 if self.opts.opt_dist > 0 => self.check_chain(list, rg),
            v if v < 0 => Err(fail("")),
            _ => Ok(()),
        }
    }

    fn flush(&mut self, h: usize, eof: bool, list: &mut Vec<Check>) -> Result<(), Failure> {
        let node = self.nodes[h];
        if self.check_chain
            && !node.dup_checked
            && (node.original != NONE || node.duplicate != NONE)
            && let Err(e) = self.find_duplicate_chains(h as u32, list)
        {
            {
                if !e.message.is_empty() {
                    return Err(e);
                }
                return Err(fail("error, duplicate checking failed.\n"));
            }
        }
        let info = &self.infos[h];
        let is_dup = info.flag & flags::DUP != 0 || self.out[h].dup;
        if !self.opts.remove || !is_dup {
            if self.opts.dup_count && !is_dup {
                self.out[h].dc = Some(self.nodes[h].dc);
            }
            self.out[h].written = true;
            self.stats[info.rg as usize].writing += 1;
        }
        if !eof {
            if node.ins_pair
                && let Ok(k) = &info.pair_key
            {
                self.pair_hash.remove(k);
            }
            if node.ins_single {
                self.single_hash.remove(&info.single_key);
            }
        }
        self.nodes[h].flushed = true;
        self.out[h].eof = eof;
        Ok(())
    }

    /// Appends `extra` (a list head) to the end of `at`'s duplicate list.
    fn append_chain(&mut self, at: u32, extra: u32) {
        let mut cur = at;
        while self.nodes[cur as usize].duplicate != NONE {
            cur = self.nodes[cur as usize].duplicate;
        }
        self.nodes[cur as usize].duplicate = extra;
    }

    fn paired_read(&mut self, i: usize) -> Result<(), Failure> {
        let info = &self.infos[i];
        let rg = info.rg;
        let pk = match info.pair_key {
            Ok(k) => k,
            Err(e) => {
                self.warn(match e {
                    KeyError::NoMc => "error, no MC tag. Please run samtools fixmate on file first.\n",
                    KeyError::McType => {
                        "error, MC tag wrong type. Please use the MC tag provided by samtools fixmate.\n"
                    }
                });
                return Err(fail("error, unable to assign pair hash key.\n"));
            }
        };
        let sk = info.single_key;
        self.bc_warn(i);
        self.bc_warn(i);
        self.stats[rg as usize].pair += 1;
        self.nodes[i].bufpos = sk.this_coord;
        let me = i as u32;
        let chain = self.check_chain;
        match self.single_hash.get(&sk).copied() {
            None => {
                self.single_hash.insert(sk, me);
                self.nodes[i].ins_single = true;
            }
            Some(h) if !self.paired(h) => {
                if chain {
                    self.nodes[i].duplicate = h;
                    self.nodes[h as usize].original = me;
                }
                self.single_hash.insert(sk, me);
                self.nodes[i].dc += 1;
                self.mark_duplicates(me, h, rg, false);
                self.stats[rg as usize].single_dup += 1;
            }
            Some(_) => {}
        }
        match self.pair_hash.get(&pk).copied() {
            None => {
                self.pair_hash.insert(pk, me);
                self.nodes[i].ins_pair = true;
            }
            Some(h) => {
                let hi = h as usize;
                let (fo, fi) =
                    (self.infos[hi].flag & flags::QCFAIL, self.infos[i].flag & flags::QCFAIL);
                let (old, new) = if fo != fi {
                    if fo != 0 { (0, 1) } else { (1, 0) }
                } else {
                    let Some(mo) = self.infos[hi].mate_score else { return Err(self.no_ms()) };
                    let old = self.infos[hi].score + mo;
                    let Some(mi) = self.infos[i].mate_score else { return Err(self.no_ms()) };
                    (old, self.infos[i].score + mi)
                };
                let tie = if new == old {
                    if (self.name)(i) < (self.name)(hi) { 1 } else { -1 }
                } else {
                    0
                };
                let dup;
                if new + tie > old {
                    dup = h;
                    self.nodes[i].dc += self.nodes[hi].dc;
                    if chain {
                        if self.nodes[i].duplicate != NONE {
                            self.append_chain(me, h);
                        } else {
                            self.nodes[i].duplicate = h;
                        }
                        self.nodes[hi].original = me;
                    }
                    self.pair_hash.insert(pk, me);
                } else {
                    if chain {
                        let hd = self.nodes[hi].duplicate;
                        if hd != NONE {
                            let id = self.nodes[i].duplicate;
                            if id != NONE {
                                self.append_chain(hd, id);
                            }
                            self.nodes[i].duplicate = hd;
                        }
                        self.nodes[hi].duplicate = me;
                        self.nodes[i].original = h;
                    }
                    dup = me;
                    self.nodes[hi].dc += 1;
                }
                let holder = self.pair_hash[&pk];
                self.mark_duplicates(holder, dup, rg, true);
                self.stats[rg as usize].duplicate += 1;
            }
        }
        Ok(())
    }

    fn single_read(&mut self, i: usize) {
        let info = &self.infos[i];
        let rg = info.rg;
        let sk = info.single_key;
        self.bc_warn(i);
        self.stats[rg as usize].single += 1;
        self.nodes[i].bufpos = sk.this_coord;
        let me = i as u32;
        let chain = self.check_chain;
        match self.single_hash.get(&sk).copied() {
            None => {
                self.single_hash.insert(sk, me);
                self.nodes[i].ins_single = true;
            }
            Some(h) => {
                let hi = h as usize;
                if self.paired(h) {
                    if chain {
                        let hd = self.nodes[hi].duplicate;
                        if hd != NONE {
                            self.nodes[i].duplicate = hd;
                        }
                        self.nodes[hi].duplicate = me;
                        self.nodes[i].original = h;
                    }
                    self.nodes[hi].dc += 1;
                    self.mark_duplicates(h, me, rg, false);
                } else {
                    let dup;
                    if self.infos[i].score > self.infos[hi].score {
                        dup = h;
                        self.nodes[i].dc += self.nodes[hi].dc;
                        if chain {
                            self.nodes[i].duplicate = h;
                            self.nodes[hi].original = me;
                        }
                        self.single_hash.insert(sk, me);
                    } else {
                        if chain {
                            let hd = self.nodes[hi].duplicate;
                            if hd != NONE {
                                self.nodes[i].duplicate = hd;
                            }
                            self.nodes[hi].duplicate = me;
                            self.nodes[i].original = h;
                        }
                        self.nodes[hi].dc += 1;
                        dup = me;
                    }
                    let holder = self.single_hash[&sk];
                    self.mark_duplicates(holder, dup, rg, false);
                }
                self.stats[rg as usize].single_dup += 1;
            }
        }
    }
}

/// Runs the decide phase over records in input order. `name(i)` is record `i`'s QNAME;
/// `pass2_name(i)` its QNAME as the `-S` pass sees it (after an end-of-input UMI move);
/// `groups` the number of read groups (stats get `groups + 1` blocks); `log` receives stderr
/// lines in order.
#[allow(clippy::needless_range_loop)]
pub fn decide<'a>(
    infos: &'a [ReadInfo],
    name: &'a (dyn Fn(usize) -> &'a [u8] + Sync),
    pass2_name: &dyn Fn(usize, bool) -> Vec<u8>,
    opts: &'a MarkdupOptions,
    groups: usize,
    log: &'a mut dyn FnMut(String),
) -> Result<Decision, Failure> {
    let n = infos.len();
    let mut e = Engine {
        infos,
        name,
        opts,
        log,
        nodes: vec![Node::default(); n],
        out: vec![Outcome::default(); n],
        stats: vec![Stats::default(); groups + 1],
        pair_hash: FastMap::default(),
        single_hash: FastMap::default(),
        dup_hash: HashMap::new(),
        opt_warnings: 0,
        bc_warnings: 0,
        check_chain: opts.check_chain && (opts.tag || opts.opt_dist > 0),
    };
    let mut list = Vec::new();
    let (mut prev_tid, mut prev_coord) = (0i32, 0i64);
    let mut head = 0usize;
    for i in 0..n {
        let info = &infos[i];
        if info.tid >= 0 && (info.tid < prev_tid || (info.tid == prev_tid && info.pos < prev_coord))
        {
            return Err(fail("error, not in coordinate sorted order.\n"));
        }
        prev_coord = info.pos;
        prev_tid = info.tid;
        e.nodes[i].bufpos = info.pos;
        let rg = info.rg as usize;
        e.stats[rg].reading += 1;
        if info.examined {
            e.stats[rg].examined += 1;
            if info.paired {
                e.paired_read(i)?;
            } else {
                e.single_read(i);
            }
        } else {
            e.stats[rg].excluded += 1;
        }
        while head <= i {
            let h = &e.nodes[head];
            if h.bufpos + opts.max_length > prev_coord
                && infos[head].tid == prev_tid
                && (prev_tid != -1 || prev_coord != -1)
            {
                break;
            }
            e.flush(head, false, &mut list)?;
            head += 1;
        }
    }
    for h in head..n {
        e.flush(h, true, &mut list)?;
    }
    if opts.supp {
        let np = flags::SUPPLEMENTARY | flags::UNMAP | flags::SECONDARY;
        for i in 0..n {
            if !e.out[i].written || infos[i].flag & np == 0 {
                continue;
            }
            let key = pass2_name(i, e.out[i].eof);
            if let Some(d) = e.dup_hash.get(&key) {
                let o = &mut e.out[i];
                o.np = true;
                e.stats[d.rg as usize].np_duplicate += 1;
                if opts.tag && d.orig != NONE {
                    o.np_do = d.orig;
                }
                if opts.opt_dist > 0 {
                    if d.optical {
                        o.np_dt = b'S';
                        e.stats[d.rg as usize].np_opt_duplicate += 1;
                    } else {
                        o.np_dt = b'L';
                    }
                }
            }
        }
    }
    Ok(Decision {
        outcomes: e.out,
        stats: e.stats,
        opt_warnings: e.opt_warnings,
        bc_warnings: e.bc_warnings,
    })
}
