//! The decide phase: samtools' duplicate hashes, moving window and duplicate chains, replayed in
//! input order on one thread so that every tie, replacement and window deletion happens exactly as
//! in `bam_mark_duplicates`. Records are not touched here: the result is one [`Outcome`] per record
//! (frozen when the record leaves the window, as samtools writes it then), applied later in
//! parallel by [`super::finalize`].

use std::collections::HashMap;

use super::keys::Key;
use super::optical::Coords;
use super::stats::Stats;
use super::{BarcodeWarning, KeyError, MarkdupOptions, ReadInfo};
use crate::record::layout::flags;

mod chains;
pub mod stream;
mod windowed;

pub use windowed::{Decider, WINDOW_MIN, decide_in, windows};

pub const NONE: u32 = u32::MAX;
const WARNING_MAX: i64 = 10;

/// The key tables' map: FxHash (rustc's hasher) suits their plain integer keys.
type FastMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// What happens to one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// The name of `orig` when names are captured (see [`Engine::captured`]).
    orig_name: Option<Vec<u8>>,
    optical: bool,
    rg: u32,
}

/// Where the engine finds a record's [`ReadInfo`] and QNAME by index.
pub trait Source {
    fn info(&self, i: usize) -> &ReadInfo;
    fn name(&self, i: usize) -> &[u8];
}

/// One window's records: `infos` from index 0, names from `name(base + i)`.
struct WindowSource<'a, 'n> {
    infos: &'a [ReadInfo],
    name: &'a (dyn Fn(usize) -> &'n [u8] + Sync + 'n),
    base: usize,
}

impl Source for WindowSource<'_, '_> {
    fn info(&self, i: usize) -> &ReadInfo {
        &self.infos[i]
    }
    fn name(&self, i: usize) -> &[u8] {
        (self.name)(i + self.base)
    }
}

/// Per-record state indexed from `first` on: a window's records (`first` = 0), or the records
/// still held by the streaming decider (older ones leave at the front).
#[derive(Clone, Debug, Default)]
pub struct Slots<T> {
    first: usize,
    items: std::collections::VecDeque<T>,
}

impl<T: Clone> Slots<T> {
    /// `n` copies of `value` from index 0, in the memory these slots already hold.
    fn refill(&mut self, n: usize, value: T) {
        self.first = 0;
        self.items.clear();
        self.items.resize(n, value);
    }

    fn capacity(&self) -> usize {
        self.items.capacity()
    }
}

impl<T> Slots<T> {
    /// One past the last index.
    pub fn end(&self) -> usize {
        self.first + self.items.len()
    }
    pub fn push(&mut self, value: T) {
        self.items.push_back(value);
    }
    /// Removes the front item.
    pub fn pop(&mut self) -> Option<T> {
        let v = self.items.pop_front();
        if v.is_some() {
            self.first += 1;
        }
        v
    }
}

impl<T> std::ops::Index<usize> for Slots<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.items[i - self.first]
    }
}

impl<T> std::ops::IndexMut<usize> for Slots<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i - self.first]
    }
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
    src: &'a dyn Source,
    opts: &'a MarkdupOptions,
    log: &'a mut dyn FnMut(String),
    nodes: Slots<Node>,
    out: Slots<Outcome>,
    stats: Vec<Stats>,
    pair_hash: FastMap<Key, u32>,
    single_hash: FastMap<Key, u32>,
    dup_hash: HashMap<Vec<u8>, DupEntry>,
    /// Names whose `dup_hash` entry a chain check made optical (merged across windows).
    retagged: Vec<Vec<u8>>,
    opt_warnings: i64,
    bc_warnings: i64,
    check_chain: bool,
    /// When set (streaming), the name each `do_from` points to, by the duplicate's index, taken
    /// when it is set: the record named may have left memory by the time the duplicate is written.
    captured: Option<FastMap<u32, Vec<u8>>>,
    /// When set (streaming), each (new record, chain member) link as it is made.
    links: Option<Vec<(u32, u32)>>,
    /// When set (a window of a split pass), the names a chain check retagged that were not in
    /// this engine's `dup_hash`: an earlier window may hold them, which the merge checks.
    missing: Option<Vec<Vec<u8>>>,
}

fn fail(msg: &str) -> Failure {
    Failure { message: msg.to_string() }
}

impl Engine<'_> {
    fn warn(&mut self, msg: &str) {
        (self.log)(format!("samtools markdup: {msg}\n"));
    }

    fn paired(&self, i: u32) -> bool {
        self.src.info(i as usize).paired
    }

    fn coords(&mut self, i: u32) -> CoordCall {
        match &self.src.info(i as usize).coords {
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
        let Some(w) = self.src.info(i).barcode_warning.clone() else { return };
        self.bc_warnings += 1;
        if self.bc_warnings <= WARNING_MAX {
            let name = String::from_utf8_lossy(self.src.name(i)).into_owned();
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
        let (on, dn) = (self.src.name(ori as usize), self.src.name(dup as usize));
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
            if let Some(c) = &mut self.captured {
                c.insert(dup, self.src.name(ori as usize).to_vec());
            }
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
        if self.opts.supp && self.src.info(d).supp_candidate {
            let orig = if self.opts.tag { ori } else { NONE };
            let orig_name = match (&self.captured, orig) {
                (Some(_), o) if o != NONE => Some(self.src.name(o as usize).to_vec()),
                _ => None,
            };
            self.dup_hash.entry(self.src.name(d).to_vec()).or_insert(DupEntry {
                orig,
                orig_name,
                optical,
                rg,
            });
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
        if self.opts.supp && self.src.info(b as usize).supp_candidate {
            let name = self.src.name(b as usize);
            match (self.dup_hash.get_mut(name), &mut self.missing) {
                (Some(e), _) => {
                    e.optical = true;
                    self.retagged.push(name.to_vec());
                }
                (None, Some(missing)) => missing.push(name.to_vec()),
                (None, None) => {
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
        let info = &self.src.info(h);
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

    /// Notes that record `a` joins `b`'s duplicate chain (streaming keeps chains in memory).
    fn link(&mut self, a: u32, b: u32) {
        if let Some(l) = &mut self.links {
            l.push((a, b));
        }
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
        let info = &self.src.info(i);
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
        // samtools reads the barcode once for the single key and once for the pair key, so a
        // paired read with a bad barcode warns twice; the warning count must match.
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
                    self.link(me, h);
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
                if chain {
                    self.link(me, h);
                }
                let (fo, fi) =
                    (self.src.info(hi).flag & flags::QCFAIL, self.src.info(i).flag & flags::QCFAIL);
                let (old, new) = if fo != fi {
                    if fo != 0 { (0, 1) } else { (1, 0) }
                } else {
                    let Some(mo) = self.src.info(hi).mate_score else { return Err(self.no_ms()) };
                    let old = self.src.info(hi).score + mo;
                    let Some(mi) = self.src.info(i).mate_score else { return Err(self.no_ms()) };
                    (old, self.src.info(i).score + mi)
                };
                let tie = if new == old {
                    if self.src.name(i) < self.src.name(hi) { 1 } else { -1 }
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
        let info = &self.src.info(i);
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
                if chain {
                    self.link(me, h);
                }
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
                    if self.src.info(i).score > self.src.info(hi).score {
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

/// Where the single pass stands between records: the last record's reference and position, and
/// the oldest record still in the moving window (every earlier one is flushed).
#[derive(Clone, Copy, Debug)]
pub struct Cursor {
    pub prev_tid: i32,
    pub prev_coord: i64,
    pub head: usize,
}

impl Engine<'_> {
    /// Reads record `i` (the next in input order) and flushes the records it pushes out of the
    /// moving window.
    fn step(&mut self, i: usize, at: &mut Cursor, list: &mut Vec<Check>) -> Result<(), Failure> {
        let info = self.src.info(i);
        if info.tid >= 0
            && (info.tid < at.prev_tid || (info.tid == at.prev_tid && info.pos < at.prev_coord))
        {
            return Err(fail("error, not in coordinate sorted order.\n"));
        }
        at.prev_coord = info.pos;
        at.prev_tid = info.tid;
        self.nodes[i].bufpos = info.pos;
        let rg = info.rg as usize;
        self.stats[rg].reading += 1;
        if info.examined {
            self.stats[rg].examined += 1;
            if info.paired {
                self.paired_read(i)?;
            } else {
                self.single_read(i);
            }
        } else {
            self.stats[rg].excluded += 1;
            // Picard's split of the excluded reads (`--metrics`).
            if info.flag & flags::UNMAP != 0 {
                self.stats[rg].unmapped += 1;
            } else if info.flag & (flags::SECONDARY | flags::SUPPLEMENTARY) != 0 {
                self.stats[rg].secondary_or_supplementary += 1;
            }
        }
        while at.head <= i {
            let h = &self.nodes[at.head];
            if h.bufpos + self.opts.max_length > at.prev_coord
                && self.src.info(at.head).tid == at.prev_tid
                && (at.prev_tid != -1 || at.prev_coord != -1)
            {
                break;
            }
            self.flush(at.head, false, list)?;
            at.head += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
