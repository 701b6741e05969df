//! The decide phase in independent windows, decided in parallel as the records' infos arrive.
//!
//! samtools' single pass forgets a record once it leaves the moving window and its keys can no
//! longer be met. [`Cutter`] finds the points where every earlier record has been forgotten;
//! the stretch between two such points (a window) is decided on its own and the results are
//! merged in order. The [`Decider`] takes the infos a block at a time and keeps only those of
//! the open window, so the per-record key info of the whole input (about 160 bytes a record)
//! never has to be in memory at once.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use super::{
    Cursor, Decision, DupEntry, Engine, Failure, FastMap, NONE, Node, Outcome, Slots, WindowSource,
};
use crate::ops::markdup::stats::Stats;
use crate::ops::markdup::{MarkdupOptions, ReadInfo};
use crate::record::layout::flags;

/// Fewest records in a window before a cut is taken (fixed, so the windows never depend on the
/// thread count or on how the infos are handed in).
pub const WINDOW_MIN: usize = 4 * 1024;

/// One window's result, with record indices relative to its start; or windows' results merged
/// in input order ([`Window::append`]).
struct Window {
    base: usize,
    out: Vec<Outcome>,
    stats: Vec<Stats>,
    dup_hash: HashMap<Vec<u8>, DupEntry>,
    retagged: Vec<Vec<u8>>,
    opt_warnings: i64,
    bc_warnings: i64,
}

/// The smallest and largest `this_coord` of a record's hash keys.
fn key_span(info: &ReadInfo) -> (i64, i64) {
    let s = info.single_key.this_coord;
    match (info.paired, &info.pair_key) {
        (true, Ok(k)) => (s.min(k.this_coord), s.max(k.this_coord)),
        _ => (s, s),
    }
}

/// Finds window starts record by record. A cut goes before record `b` (mapped) when every
/// earlier record on its reference leaves the moving window as `b` is read
/// (`bufpos + max_length <= pos(b)`), and none of their hash keys can equal one of `b`'s (keys
/// hold the reference and the unclipped 5' coordinate; `b`'s are all larger). Records after `b`
/// meet earlier ones only after those left the hashes, so deciding each window on its own, in
/// order, replays the single pass exactly. Windows hold at least `min_len` records.
struct Cutter {
    max_length: i64,
    min_len: usize,
    /// Where the open window starts.
    start: usize,
    /// Per reference: largest bufpos and largest key coordinate so far.
    seen: HashMap<i32, (i64, i64)>,
}

impl Cutter {
    fn new(max_length: i64, min_len: usize) -> Self {
        Cutter { max_length, min_len: min_len.max(1), start: 0, seen: HashMap::new() }
    }

    /// Whether a window starts at record `i`, whose info is `info` (records come in order).
    fn cut_before(&mut self, i: usize, info: &ReadInfo) -> bool {
        let cut = i - self.start >= self.min_len
            && info.tid >= 0
            && match self.seen.get(&info.tid) {
                None => true,
                Some(&(buf, key)) => {
                    buf.saturating_add(self.max_length) <= info.pos
                        && (!info.examined || key < key_span(info).0)
                }
            };
        if cut {
            self.start = i;
        }
        let bufpos = if info.examined { info.single_key.this_coord } else { info.pos };
        let e = self.seen.entry(info.tid).or_insert((i64::MIN, i64::MIN));
        e.0 = e.0.max(bufpos);
        if info.examined {
            e.1 = e.1.max(key_span(info).1);
        }
        cut
    }
}

/// Cuts the input into the windows samtools' single pass treats independently (see [`Cutter`]).
pub fn windows(infos: &[ReadInfo], max_length: i64, min_len: usize) -> Vec<Range<usize>> {
    let mut cutter = Cutter::new(max_length, min_len);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, info) in infos.iter().enumerate() {
        if cutter.cut_before(i, info) {
            out.push(start..i);
            start = i;
        }
    }
    if start < infos.len() || out.is_empty() {
        out.push(start..infos.len());
    }
    out
}

/// One window to decide.
#[derive(Clone, Copy)]
struct Span<'a> {
    /// Its records' infos, the first being record `base`'s.
    infos: &'a [ReadInfo],
    base: usize,
    /// Reference and position of record `base - 1` (`(0, 0)` for the first).
    prev: (i32, i64),
    /// The window ends the input (records still in the moving window then leave it at end of
    /// input).
    last: bool,
}

/// Runs samtools' single pass over one window.
fn run_window<'n>(
    span: Span<'_>,
    name: &NameFn<'n>,
    opts: &MarkdupOptions,
    groups: usize,
    log: &mut dyn FnMut(String),
) -> Result<Window, Failure> {
    let Span { infos, base, prev, last } = span;
    let n = infos.len();
    let src = WindowSource { infos, name, base };
    let mut e = Engine {
        src: &src,
        opts,
        log,
        nodes: Slots::filled(n, Node::default()),
        out: Slots::filled(n, Outcome::default()),
        stats: vec![Stats::default(); groups + 1],
        pair_hash: FastMap::default(),
        single_hash: FastMap::default(),
        dup_hash: HashMap::new(),
        retagged: Vec::new(),
        opt_warnings: 0,
        bc_warnings: 0,
        check_chain: opts.check_chain && (opts.tag || opts.opt_dist > 0),
        captured: None,
        links: None,
    };
    let mut list = Vec::new();
    let mut at = Cursor { prev_tid: prev.0, prev_coord: prev.1, head: 0 };
    for i in 0..n {
        e.step(i, &mut at, &mut list)?;
    }
    // Not the last window: the next record pushes all of these out of the window (see `Cutter`).
    for h in at.head..n {
        e.flush(h, last, &mut list)?;
    }
    Ok(Window {
        base,
        out: e.out.into_vec(),
        stats: e.stats,
        dup_hash: e.dup_hash,
        retagged: e.retagged,
        opt_warnings: e.opt_warnings,
        bc_warnings: e.bc_warnings,
    })
}

impl Window {
    /// Nothing decided yet, from record 0 on.
    fn empty(groups: usize) -> Self {
        Window {
            base: 0,
            out: Vec::new(),
            stats: vec![Stats::default(); groups + 1],
            dup_hash: HashMap::new(),
            retagged: Vec::new(),
            opt_warnings: 0,
            bc_warnings: 0,
        }
    }

    /// Adds the result of the window that follows.
    fn append(&mut self, w: Window) {
        let base = w.base as u32;
        let shift = |i: u32| if i == NONE { NONE } else { i + base };
        self.out.extend(w.out.into_iter().map(|mut o| {
            o.do_from = shift(o.do_from);
            o
        }));
        for (t, s) in self.stats.iter_mut().zip(&w.stats) {
            t.add(s);
        }
        for (k, mut v) in w.dup_hash {
            v.orig = shift(v.orig);
            self.dup_hash.entry(k).or_insert(v);
        }
        self.retagged.extend(w.retagged);
        self.opt_warnings += w.opt_warnings;
        self.bc_warnings += w.bc_warnings;
    }
}

/// Record `i`'s QNAME, by index in input order.
pub type NameFn<'a> = dyn Fn(usize) -> &'a [u8] + Sync + 'a;

/// The decide phase over records handed in order, a block of infos at a time
/// ([`Decider::push`]); windows the block completes are decided in parallel at once, and their
/// infos dropped. When a window fails or has anything to log (warnings are counted across the
/// whole input), [`Decider::finish`] runs the single pass over every record instead, so results
/// and messages never depend on the windows, the blocks or the thread count.
pub struct Decider<'o> {
    opts: &'o MarkdupOptions,
    groups: usize,
    cutter: Cutter,
    /// Infos of the records from `held_from` on: the open window's.
    held: Vec<ReadInfo>,
    held_from: usize,
    /// Reference and position of record `held_from - 1`.
    prev: (i32, i64),
    merged: Window,
    /// A window failed or logged: the single pass decides at the end.
    single_pass: bool,
}

impl<'o> Decider<'o> {
    /// A decider with windows of at least `min_window` records (`usize::MAX`: one window).
    pub fn new(opts: &'o MarkdupOptions, groups: usize, min_window: usize) -> Self {
        Decider {
            opts,
            groups,
            cutter: Cutter::new(opts.max_length, min_window),
            held: Vec::new(),
            held_from: 0,
            prev: (0, 0),
            merged: Window::empty(groups),
            single_pass: false,
        }
    }

    /// Takes (empties) the infos of the next records in input order and decides the windows they
    /// complete.
    pub fn push<'n>(&mut self, infos: &mut Vec<ReadInfo>, name: &NameFn<'n>) {
        let first = self.held_from + self.held.len();
        let cuts: Vec<usize> = infos
            .iter()
            .enumerate()
            .filter_map(|(k, info)| self.cutter.cut_before(first + k, info).then_some(first + k))
            .collect();
        self.held.append(infos);
        let Some(&last_cut) = cuts.last() else { return };
        if !self.single_pass {
            let mut starts = vec![self.held_from];
            starts.extend(&cuts);
            let (held, held_from, (opts, groups)) =
                (&self.held, self.held_from, (self.opts, self.groups));
            let done: Vec<Option<Window>> = starts
                .par_windows(2)
                .map(|w| {
                    let (s, e) = (w[0] - held_from, w[1] - held_from);
                    let prev = match s {
                        0 => self.prev,
                        _ => (held[s - 1].tid, held[s - 1].pos),
                    };
                    let span = Span { infos: &held[s..e], base: w[0], prev, last: false };
                    quiet_window(span, name, opts, groups)
                })
                .collect();
            for w in done {
                match w {
                    Some(w) if !self.single_pass => self.merged.append(w),
                    _ => self.single_pass = true,
                }
            }
        }
        let k = last_cut - self.held_from;
        self.prev = (self.held[k - 1].tid, self.held[k - 1].pos);
        self.held.drain(..k);
        self.held_from = last_cut;
    }

    /// Decides the last window and merges. `all_infos` gives every record's info again when the
    /// single pass must run; `flag(i)` is record `i`'s flag and `pass2_name(i, eof)` its QNAME as
    /// the `-S` pass sees it (after an end-of-input UMI move); `log` receives stderr lines in
    /// order.
    pub fn finish<'n>(
        mut self,
        name: &NameFn<'n>,
        pass2_name: &dyn Fn(usize, bool) -> Vec<u8>,
        flag: &dyn Fn(usize) -> u16,
        all_infos: &dyn Fn() -> Vec<ReadInfo>,
        log: &mut dyn FnMut(String),
    ) -> Result<Decision, Failure> {
        let (opts, groups) = (self.opts, self.groups);
        let n = self.held_from + self.held.len();
        if self.held_from == 0 {
            // One window: it is the single pass.
            let whole = Span { infos: &self.held, base: 0, prev: (0, 0), last: true };
            let w = run_window(whole, name, opts, groups, log)?;
            self.merged.append(w);
        } else {
            let last = match self.single_pass {
                true => None,
                false => {
                    let (base, prev) = (self.held_from, self.prev);
                    let span = Span { infos: &self.held, base, prev, last: true };
                    quiet_window(span, name, opts, groups)
                }
            };
            match last {
                Some(w) => self.merged.append(w),
                None => {
                    self.held = Vec::new();
                    let infos = all_infos();
                    let whole = Span { infos: &infos, base: 0, prev: (0, 0), last: true };
                    let w = run_window(whole, name, opts, groups, log)?;
                    self.merged = Window::empty(groups);
                    self.merged.append(w);
                }
            }
        }
        let mut e = self.merged;
        for name in std::mem::take(&mut e.retagged) {
            if let Some(d) = e.dup_hash.get_mut(&name) {
                d.optical = true;
            }
        }
        if opts.supp {
            let np = flags::SUPPLEMENTARY | flags::UNMAP | flags::SECONDARY;
            for i in 0..n {
                if !e.out[i].written || flag(i) & np == 0 {
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
}

/// [`run_window`] with its log lines counted, not printed: `None` when it failed or had
/// anything to say (the single pass then runs and says it in order).
fn quiet_window<'n>(
    span: Span<'_>,
    name: &NameFn<'n>,
    opts: &MarkdupOptions,
    groups: usize,
) -> Option<Window> {
    let mut lines = 0usize;
    let mut quiet = |_: String| lines += 1;
    let res = run_window(span, name, opts, groups, &mut quiet);
    match res {
        Ok(w) if lines == 0 => Some(w),
        _ => None,
    }
}

/// The decide phase over `infos` in input order, with windows of at least `min_window` records
/// (`usize::MAX`: one window); see [`Decider`].
pub fn decide_in<'n>(
    infos: &[ReadInfo],
    name: &NameFn<'n>,
    pass2_name: &dyn Fn(usize, bool) -> Vec<u8>,
    opts: &MarkdupOptions,
    groups: usize,
    log: &mut dyn FnMut(String),
    min_window: usize,
) -> Result<Decision, Failure> {
    let mut d = Decider::new(opts, groups, min_window);
    d.push(&mut infos.to_vec(), name);
    d.finish(name, pass2_name, &|i| infos[i].flag, &|| infos.to_vec(), log)
}
