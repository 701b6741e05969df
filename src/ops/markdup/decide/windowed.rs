//! The decide phase in windows, decided in parallel as the records' infos arrive.
//!
//! samtools' single pass forgets a record once it leaves the moving window and its keys can no
//! longer be met. [`Cutter`] finds the points where every earlier record has been forgotten (a
//! *clean* cut): the stretch after one is decided on its own. Such points need `max_length`
//! bases in which no read starts, which dense data (30× WGS) almost never has, so a window that
//! finds none is cut anyway after twice its minimum length (a *forced* cut). The window after a
//! forced cut starts with a warm-up: it replays the records of the few `max_length`s before the
//! cut, keeping none of their results, to rebuild the moving window the single pass has there.
//! That it did is checked, not assumed: the state after the warm-up ([`CutState`]: the moving
//! window's records, the chain records they reach, both hash tables) must equal the state the
//! previous window ended in. When it does not, the window is decided again from that state itself,
//! which is the single pass continued. Every window thus replays the single pass exactly; the
//! results are merged in input order.
//!
//! The [`Decider`] takes the infos a block at a time and keeps only those the open window can
//! still need, so the per-record key info of the whole input (about 160 bytes a record) never has
//! to be in memory at once.

use std::collections::HashMap;

use rayon::prelude::*;

use super::{
    Cursor, Decision, DupEntry, Engine, Failure, FastMap, NONE, Node, Outcome, Slots, WindowSource,
};
use crate::ops::markdup::keys::Key;
use crate::ops::markdup::stats::Stats;
use crate::ops::markdup::{MarkdupOptions, ReadInfo};
use crate::record::layout::flags;

/// Fewest records in a window before a cut is taken (fixed, so the windows never depend on the
/// thread count or on how the infos are handed in).
pub const WINDOW_MIN: usize = 4 * 1024;

/// A window with no clean cut is cut by force once it holds this many times [`WINDOW_MIN`]
/// records (the minimum given to the [`Cutter`]); clean cuts get the stretch in between.
const FORCE_AFTER_MINS: usize = 2;

/// How far before a forced cut the warm-up starts, in `max_length`s. A record stays in the moving
/// window until reads start `max_length` past its 5' end, which is up to a read length (and its
/// clips) past its position; records the warm-up misses must have left by the cut, and so must
/// the records they met.
const WARM_UP_LENGTHS: i64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    /// Every earlier record has left the moving window.
    Clean,
    /// The window was long enough: the next one starts with a warm-up.
    Forced,
}

/// How a window ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// At a clean cut: the next record pushes every record out of the moving window.
    Clean,
    /// At a forced cut: records still in the moving window are the next window's to finish.
    Forced,
    /// At end of input: records still in the moving window leave it at end of input.
    Last,
}

/// The smallest and largest `this_coord` of a record's hash keys.
fn key_span(info: &ReadInfo) -> (i64, i64) {
    let s = info.single_key.this_coord;
    match (info.paired, &info.pair_key) {
        (true, Ok(k)) => (s.min(k.this_coord), s.max(k.this_coord)),
        _ => (s, s),
    }
}

/// Finds window starts record by record. A clean cut goes before record `b` (mapped) when every
/// earlier record on its reference leaves the moving window as `b` is read
/// (`bufpos + max_length <= pos(b)`), and none of their hash keys can equal one of `b`'s (keys
/// hold the reference and the unclipped 5' coordinate; `b`'s are all larger). Records after `b`
/// meet earlier ones only after those left the hashes, so deciding each window on its own, in
/// order, replays the single pass exactly. Windows hold at least `min_len` records; one that
/// reaches [`FORCE_AFTER_MINS`] times that is cut by force before a record that starts further
/// right on the same reference.
struct Cutter {
    max_length: i64,
    min_len: usize,
    /// Where the open window starts.
    start: usize,
    /// Per reference id: largest bufpos and largest key coordinate so far (`i64::MIN`: none).
    seen: Vec<(i64, i64)>,
    /// Reference and position of the last record.
    last: (i32, i64),
}

impl Cutter {
    fn new(max_length: i64, min_len: usize) -> Self {
        Cutter { max_length, min_len: min_len.max(1), start: 0, seen: Vec::new(), last: (-1, -1) }
    }

    /// Whether a window starts at record `i`, whose info is `info` (records come in order).
    fn cut_before(&mut self, i: usize, info: &ReadInfo) -> Option<Cut> {
        if info.tid < 0 {
            self.last = (info.tid, info.pos);
            return None;
        }
        let tid = info.tid as usize;
        if tid >= self.seen.len() {
            self.seen.resize(tid + 1, (i64::MIN, i64::MIN));
        }
        let len = i - self.start;
        let (buf, key) = self.seen[tid];
        let clean = || {
            buf.saturating_add(self.max_length) <= info.pos
                && (!info.examined || key < key_span(info).0)
        };
        let cut = if len < self.min_len {
            None
        } else if clean() {
            Some(Cut::Clean)
        } else if len >= self.min_len.saturating_mul(FORCE_AFTER_MINS)
            && self.last.0 == info.tid
            && self.last.1 < info.pos
        {
            Some(Cut::Forced)
        } else {
            None
        };
        if cut.is_some() {
            self.start = i;
        }
        let bufpos = if info.examined { info.single_key.this_coord } else { info.pos };
        let e = &mut self.seen[tid];
        e.0 = e.0.max(bufpos);
        if info.examined {
            e.1 = e.1.max(key_span(info).1);
        }
        self.last = (info.tid, info.pos);
        cut
    }
}

/// Cuts the input into windows as the [`Decider`] does (see [`Cutter`]).
pub fn windows(infos: &[ReadInfo], max_length: i64, min_len: usize) -> Vec<std::ops::Range<usize>> {
    let mut cutter = Cutter::new(max_length, min_len);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, info) in infos.iter().enumerate() {
        if cutter.cut_before(i, info).is_some() {
            out.push(start..i);
            start = i;
        }
    }
    if start < infos.len() || out.is_empty() {
        out.push(start..infos.len());
    }
    out
}

/// The first record of the warm-up before a forced cut at record `cut`: the earliest record on
/// the same reference less than `reach` bases before it, but not before `floor` (`infos[0]` is
/// record `floor`'s).
fn warm_up_start(infos: &[ReadInfo], floor: usize, cut: usize, reach: i64) -> usize {
    let c = &infos[cut - floor];
    let from = c.pos.saturating_sub(reach);
    let mut w = cut;
    while w > floor {
        let p = &infos[w - 1 - floor];
        if p.tid != c.tid || p.pos < from {
            break;
        }
        w -= 1;
    }
    w
}

/// What the single pass holds between two records that later records can still change or meet,
/// with record indices counted from the start of the input. Two runs in the same state before the
/// same record continue identically.
#[derive(Debug, PartialEq)]
struct CutState {
    /// The oldest record still in the moving window.
    head: usize,
    /// The nodes of the moving window's records and of the records their chains reach.
    nodes: Vec<(usize, Node)>,
    /// The outcomes so far of the moving window's records, `head` on.
    out: Vec<Outcome>,
    pair_hash: FastMap<Key, u32>,
    single_hash: FastMap<Key, u32>,
}

/// Record index `i` moved by `by`: `+base` counts an engine's index from the start of the input,
/// `-base` back (`NONE` stays).
fn moved(i: u32, by: i64) -> u32 {
    if i == NONE { NONE } else { (i as i64 + by) as u32 }
}

/// `n` with the record indices it holds [`moved`].
fn moved_node(mut n: Node, by: i64) -> Node {
    n.original = moved(n.original, by);
    n.duplicate = moved(n.duplicate, by);
    n
}

/// `o` with the record indices it holds [`moved`].
fn moved_outcome(mut o: Outcome, by: i64) -> Outcome {
    o.do_from = moved(o.do_from, by);
    o.np_do = moved(o.np_do, by);
    o
}

/// A hash table with its holders [`moved`].
fn moved_table(t: &FastMap<Key, u32>, by: i64) -> FastMap<Key, u32> {
    t.iter().map(|(k, &v)| (*k, moved(v, by))).collect()
}

impl CutState {
    /// The state of `e`, whose record 0 is record `base`, before its record `cut`, with the
    /// moving window starting at its record `head`.
    fn of(e: &Engine<'_>, base: usize, cut: usize, head: usize) -> Self {
        let mut keep: Vec<usize> = (head..cut).collect();
        let mut stack = keep.clone();
        let mut reached = std::collections::HashSet::new();
        while let Some(i) = stack.pop() {
            for p in [e.nodes[i].original, e.nodes[i].duplicate] {
                if p != NONE && (p as usize) < head && reached.insert(p) {
                    stack.push(p as usize);
                    keep.push(p as usize);
                }
            }
        }
        keep.sort_unstable();
        let by = base as i64;
        CutState {
            head: head + base,
            nodes: keep.into_iter().map(|i| (i + base, moved_node(e.nodes[i], by))).collect(),
            out: (head..cut).map(|i| moved_outcome(e.out[i], by)).collect(),
            pair_hash: moved_table(&e.pair_hash, by),
            single_hash: moved_table(&e.single_hash, by),
        }
    }

    /// The first record the state refers to.
    fn lowest(&self) -> usize {
        self.nodes.first().map_or(self.head, |n| n.0.min(self.head))
    }

    /// Puts the state into `e`, whose record 0 is record `base` (at most [`CutState::lowest`]).
    fn load(&self, e: &mut Engine<'_>, base: usize) {
        let by = -(base as i64);
        for &(i, n) in &self.nodes {
            e.nodes[i - base] = moved_node(n, by);
        }
        for (k, &o) in self.out.iter().enumerate() {
            e.out[self.head - base + k] = moved_outcome(o, by);
        }
        e.pair_hash = moved_table(&self.pair_hash, by);
        e.single_hash = moved_table(&self.single_hash, by);
    }
}

/// How a window's engine starts.
#[derive(Clone, Copy)]
enum Start<'a> {
    /// Empty, at a clean cut or at the start of the input.
    Fresh,
    /// After replaying its first `n` records (a forced cut).
    WarmUp(usize),
    /// In the given state before its record `n`, which the state's records precede.
    Exact(&'a CutState, usize),
}

/// One window to decide.
#[derive(Clone, Copy)]
struct Span<'a> {
    /// The infos of the engine's records, the first being record `base`'s.
    infos: &'a [ReadInfo],
    base: usize,
    start: Start<'a>,
    /// Reference and position of record `base - 1` (`(0, 0)` for the first).
    prev: (i32, i64),
    end: End,
    /// One of several windows: a chain check's name missing from this window's `-S` table is
    /// left for the merge to look up in the earlier windows'.
    split: bool,
}

/// One window's result, with record indices counted from the start of the input; or windows'
/// results merged in input order ([`Window::append`]).
struct Window {
    /// The record of `out[0]`.
    base: usize,
    /// The outcomes of the records that left the moving window in this window.
    out: Vec<Outcome>,
    stats: Vec<Stats>,
    dup_hash: HashMap<Vec<u8>, DupEntry>,
    retagged: Vec<Vec<u8>>,
    /// Names retagged here that this window's `dup_hash` did not hold.
    missing: Vec<Vec<u8>>,
    opt_warnings: i64,
    bc_warnings: i64,
    /// The state after the warm-up, and the state at a forced end.
    start_state: Option<CutState>,
    end_state: Option<CutState>,
}

/// A window's per-record state and hash tables, kept by each thread for its next window: fresh
/// ones for every window were a quarter of markdup-pipeline's page faults (memory freed is given
/// back to the OS at once there, so each window faulted its pages in and cleared them again).
#[derive(Default)]
struct Scratch {
    nodes: Slots<Node>,
    out: Slots<Outcome>,
    pair_hash: FastMap<Key, u32>,
    single_hash: FastMap<Key, u32>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// Windows are a few thousand records; the single pass over a whole input is not kept.
const SCRATCH_MOST_RECORDS: usize = 1 << 20;

/// Runs samtools' single pass over one window.
fn run_window<'n>(
    span: Span<'_>,
    name: &NameFn<'n>,
    opts: &MarkdupOptions,
    groups: usize,
    log: &mut dyn FnMut(String),
) -> Result<Window, Failure> {
    let Span { infos, base, start, prev, end, split } = span;
    let n = infos.len();
    let src = WindowSource { infos, name, base };
    let mut mute = |_: String| {};
    let mut scratch = SCRATCH.take();
    scratch.nodes.refill(n, Node::default());
    scratch.out.refill(n, Outcome::default());
    scratch.pair_hash.clear();
    scratch.single_hash.clear();
    let mut e = Engine {
        src: &src,
        opts,
        log: &mut mute,
        nodes: scratch.nodes,
        out: scratch.out,
        stats: vec![Stats::default(); groups + 1],
        pair_hash: scratch.pair_hash,
        single_hash: scratch.single_hash,
        dup_hash: HashMap::new(),
        retagged: Vec::new(),
        opt_warnings: 0,
        bc_warnings: 0,
        check_chain: opts.check_chain && (opts.tag || opts.opt_dist > 0),
        captured: None,
        links: None,
        missing: split.then(Vec::new),
    };
    let mut list = Vec::new();
    let mut at = Cursor { prev_tid: prev.0, prev_coord: prev.1, head: 0 };
    let mut start_state = None;
    let first_own = match start {
        Start::Fresh => 0,
        Start::WarmUp(k) => {
            // Nothing the warm-up does is kept but its state; what it logs belongs to the
            // previous window.
            for i in 0..k {
                e.step(i, &mut at, &mut list)?;
            }
            start_state = Some(CutState::of(&e, base, k, at.head));
            e.stats = vec![Stats::default(); groups + 1];
            e.dup_hash.clear();
            e.retagged.clear();
            e.missing = split.then(Vec::new);
            (e.opt_warnings, e.bc_warnings) = (0, 0);
            k
        }
        Start::Exact(state, k) => {
            state.load(&mut e, base);
            at.head = state.head - base;
            (at.prev_tid, at.prev_coord) = (infos[k - 1].tid, infos[k - 1].pos);
            k
        }
    };
    e.log = log;
    let own_from = at.head;
    for i in first_own..n {
        e.step(i, &mut at, &mut list)?;
    }
    let (own_to, end_state) = match end {
        End::Forced => (at.head, Some(CutState::of(&e, base, n, at.head))),
        End::Clean | End::Last => {
            for h in at.head..n {
                e.flush(h, end == End::Last, &mut list)?;
            }
            (n, None)
        }
    };
    let by = base as i64;
    let out = (own_from..own_to).map(|i| moved_outcome(e.out[i], by)).collect();
    if e.nodes.capacity() <= SCRATCH_MOST_RECORDS {
        SCRATCH.set(Scratch {
            nodes: std::mem::take(&mut e.nodes),
            out: std::mem::take(&mut e.out),
            pair_hash: std::mem::take(&mut e.pair_hash),
            single_hash: std::mem::take(&mut e.single_hash),
        });
    }
    let mut dup_hash = e.dup_hash;
    for v in dup_hash.values_mut() {
        v.orig = moved(v.orig, by);
    }
    Ok(Window {
        base: base + own_from,
        out,
        stats: e.stats,
        dup_hash,
        retagged: e.retagged,
        missing: e.missing.unwrap_or_default(),
        opt_warnings: e.opt_warnings,
        bc_warnings: e.bc_warnings,
        start_state,
        end_state,
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
            missing: Vec::new(),
            opt_warnings: 0,
            bc_warnings: 0,
            start_state: None,
            end_state: None,
        }
    }

    /// Adds the result of the window that follows.
    fn append(&mut self, w: Window) {
        self.out.extend(w.out);
        for (t, s) in self.stats.iter_mut().zip(&w.stats) {
            t.add(s);
        }
        for (k, v) in w.dup_hash {
            self.dup_hash.entry(k).or_insert(v);
        }
        self.retagged.extend(w.retagged);
        self.opt_warnings += w.opt_warnings;
        self.bc_warnings += w.bc_warnings;
    }
}

/// Record `i`'s QNAME, by index in input order.
pub type NameFn<'a> = dyn Fn(usize) -> &'a [u8] + Sync + 'a;

/// A window's place: its own records are `start..end`; after a forced cut its engine starts at
/// `warm`, before `start`, for the warm-up.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    warm: usize,
    start: usize,
    end: usize,
    forced_start: bool,
    end_kind: End,
}

/// The decide phase over records handed in order, a block of infos at a time
/// ([`Decider::push`]); windows the block completes are decided in parallel at once, and the
/// infos no window can still need are dropped. When a window fails or has anything to log
/// (warnings are counted across the whole input), [`Decider::finish`] runs the single pass over
/// every record instead, so results and messages never depend on the windows, the blocks or the
/// thread count.
pub struct Decider<'o> {
    opts: &'o MarkdupOptions,
    groups: usize,
    cutter: Cutter,
    /// Infos of the records from `held_from` on.
    held: Vec<ReadInfo>,
    held_from: usize,
    /// The records the cutter has seen.
    scanned: usize,
    /// Reference and position of record `held_from - 1`.
    held_prev: (i32, i64),
    /// The open window: its warm-up start, its start, and whether a forced cut began it.
    open: (usize, usize, bool),
    /// The state the last merged window ended in, when a forced cut ended it.
    last_end: Option<CutState>,
    merged: Window,
    /// A window failed or logged: the single pass decides at the end.
    single_pass: bool,
    /// Windows begun by a forced cut, and those of them decided again from the previous
    /// window's state because the warm-up did not rebuild it.
    forced: usize,
    replayed: usize,
    /// How far before a forced cut the warm-up starts, in bases.
    reach: i64,
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
            scanned: 0,
            held_prev: (0, 0),
            open: (0, 0, false),
            last_end: None,
            merged: Window::empty(groups),
            single_pass: false,
            forced: 0,
            replayed: 0,
            reach: WARM_UP_LENGTHS.saturating_mul(opts.max_length.max(1)),
        }
    }

    /// Makes room for the outcomes of `records` records in all: the merged outcomes otherwise
    /// grow by doubling, each step a copy into fresh pages (a fifth of markdup-pipeline's page
    /// faults).
    pub fn expect_records(&mut self, records: usize) {
        let out = &mut self.merged.out;
        out.reserve(records.saturating_sub(out.len()));
    }

    /// Takes (empties) the infos of the next records in input order and decides the windows they
    /// complete.
    pub fn push<'n>(&mut self, infos: &mut Vec<ReadInfo>, name: &NameFn<'n>) {
        self.buffer().append(infos);
        self.decide_added(name);
    }

    /// Where the next records' infos go, in input order, for [`Decider::decide_added`]: filling
    /// it in place saves copying them in.
    pub fn buffer(&mut self) -> &mut Vec<ReadInfo> {
        &mut self.held
    }

    /// Decides the windows completed by the infos added to [`Decider::buffer`] since the last
    /// call.
    pub fn decide_added<'n>(&mut self, name: &NameFn<'n>) {
        let first = self.scanned;
        let new = first - self.held_from;
        self.scanned = self.held_from + self.held.len();
        let cutter = &mut self.cutter;
        let cuts: Vec<(usize, Cut)> = self.held[new..]
            .iter()
            .enumerate()
            .filter_map(|(k, info)| cutter.cut_before(first + k, info).map(|c| (first + k, c)))
            .collect();
        if cuts.is_empty() {
            return;
        }
        let mut done = Vec::with_capacity(cuts.len());
        for (at, cut) in cuts {
            let (warm, start, forced_start) = self.open;
            let end_kind = if cut == Cut::Forced { End::Forced } else { End::Clean };
            done.push(Bounds { warm, start, end: at, forced_start, end_kind });
            let warm = match cut {
                Cut::Forced => warm_up_start(&self.held, self.held_from, at, self.reach),
                Cut::Clean => at,
            };
            self.open = (warm, at, cut == Cut::Forced);
        }
        if !self.single_pass {
            let results: Vec<Option<Window>> =
                done.par_iter().map(|b| self.decide_quietly(b, None, name)).collect();
            for (b, w) in done.iter().zip(results) {
                self.merge(b, w, name);
            }
        }
        // Keep what the open window may need: its warm-up, and the records of the state a replay
        // would start from.
        let keep = match (&self.last_end, self.single_pass) {
            (Some(s), false) => s.lowest().min(self.open.0),
            _ => self.open.0,
        };
        if keep > self.held_from {
            let k = keep - self.held_from;
            self.held_prev = (self.held[k - 1].tid, self.held[k - 1].pos);
            self.held.drain(..k);
            self.held_from = keep;
        }
    }

    /// Reference and position of record `i - 1`, which is held or is the last one dropped.
    fn prev_of(&self, i: usize) -> (i32, i64) {
        match i - self.held_from {
            0 => self.held_prev,
            k => (self.held[k - 1].tid, self.held[k - 1].pos),
        }
    }

    /// Decides window `b` with its log lines counted, not printed, starting in state `exact`
    /// when given: `None` when it failed or had anything to say (the single pass then runs and
    /// says it in order).
    fn decide_quietly<'n>(
        &self,
        b: &Bounds,
        exact: Option<&CutState>,
        name: &NameFn<'n>,
    ) -> Option<Window> {
        let from = match exact {
            Some(s) => s.lowest().min(b.start),
            None => b.warm,
        };
        if from < self.held_from {
            return None;
        }
        let start = match (exact, b.forced_start) {
            (Some(s), _) => Start::Exact(s, b.start - from),
            (None, true) => Start::WarmUp(b.start - from),
            (None, false) => Start::Fresh,
        };
        let span = Span {
            infos: &self.held[from - self.held_from..b.end - self.held_from],
            base: from,
            start,
            prev: self.prev_of(from),
            end: b.end_kind,
            split: true,
        };
        let mut lines = 0usize;
        let mut quiet = |_: String| lines += 1;
        match run_window(span, name, self.opts, self.groups, &mut quiet) {
            Ok(w) if lines == 0 => Some(w),
            _ => None,
        }
    }

    /// Adds window `b`'s result `w` to the merged result, after checking it took up where the
    /// previous window left off (deciding it again from that state when not).
    fn merge<'n>(&mut self, b: &Bounds, w: Option<Window>, name: &NameFn<'n>) {
        if self.single_pass {
            return;
        }
        let Some(mut w) = w else {
            self.single_pass = true;
            return;
        };
        if b.forced_start {
            self.forced += 1;
            let Some(prev) = self.last_end.take() else {
                self.single_pass = true;
                return;
            };
            if w.start_state.as_ref() != Some(&prev) {
                self.replayed += 1;
                match self.decide_quietly(b, Some(&prev), name) {
                    Some(again) => w = again,
                    None => {
                        self.single_pass = true;
                        return;
                    }
                }
            }
        }
        // A name the chain check missed here must be in an earlier window's table, as it was in
        // the single pass's when the check ran; otherwise the single pass reports it.
        let missing = std::mem::take(&mut w.missing);
        if w.base != self.merged.out.len()
            || missing.iter().any(|n| !self.merged.dup_hash.contains_key(n))
        {
            self.single_pass = true;
            return;
        }
        self.merged.retagged.extend(missing);
        self.last_end = w.end_state.take();
        self.merged.append(w);
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
        let single = |infos: &[ReadInfo], log: &mut dyn FnMut(String)| {
            let whole = Span {
                infos,
                base: 0,
                start: Start::Fresh,
                prev: (0, 0),
                end: End::Last,
                split: false,
            };
            run_window(whole, name, opts, groups, log)
        };
        if self.open.1 == 0 {
            // One window: it is the single pass.
            let w = single(&self.held, log)?;
            self.merged.append(w);
        } else {
            let (warm, start, forced_start) = self.open;
            let b = Bounds { warm, start, end: n, forced_start, end_kind: End::Last };
            if !self.single_pass {
                let w = self.decide_quietly(&b, None, name);
                self.merge(&b, w, name);
            }
            if self.single_pass {
                self.held = Vec::new();
                let w = single(&all_infos(), log)?;
                self.merged = Window::empty(groups);
                self.merged.append(w);
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

#[cfg(test)]
mod tests;
