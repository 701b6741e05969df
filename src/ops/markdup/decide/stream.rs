//! The decide phase over a stream: samtools' single pass fed a few records at a time, holding only
//! what the pass can still look at, for inputs that do not fit in memory.
//!
//! [`decide`](super::decide) needs every record's [`ReadInfo`] at once. Here records arrive in
//! input (coordinate) order through [`Streamer::push`]; the same [`Engine`] reads each one and
//! flushes the records that leave the moving window, exactly as in the single pass. A record then
//! leaves memory (is *released*, with its final [`Outcome`]) once
//! - it is flushed: its outcome never changes after that (samtools writes it then), and
//! - no record still in the window can reach it through a duplicate chain. Chains only ever link
//!   a new record to a hash holder, which is always unflushed, so a chain whose members are all
//!   flushed never grows again; union-find over the links keeps each chain's newest member.
//!
//! Records are released in input order, so one long chain holds back the records after it.
//! `do` tags name another record, which may be released first: its name is captured when the
//! link is made (`Engine::captured`), as is the original's name in the `-S` table.
//!
//! What is kept for the whole input: the `-S` table (names of duplicates that have supplementary,
//! or mate-unmapped, relatives), as samtools keeps it.

use std::collections::VecDeque;

use super::{
    Check, Cursor, DupEntry, Engine, Failure, FastMap, Node, Outcome, Slots, Source, Stats,
};
use crate::ops::markdup::{MarkdupOptions, ReadInfo};
use crate::record::view::RecordRef;

/// The records held, from index `first` on: their infos and bytes (no `block_size`).
#[derive(Default)]
struct Held {
    first: usize,
    records: VecDeque<(ReadInfo, Vec<u8>)>,
}

impl Source for Held {
    fn info(&self, i: usize) -> &ReadInfo {
        &self.records[i - self.first].0
    }
    fn name(&self, i: usize) -> &[u8] {
        RecordRef::new(&self.records[i - self.first].1).read_name()
    }
}

/// Duplicate chains as union-find sets, each root knowing its newest member. Records that were
/// never linked are not here; released records are removed (a set with a released member is
/// complete, so losing the path to its root is harmless).
#[derive(Default)]
struct Chains {
    parent: FastMap<u32, u32>,
    newest: FastMap<u32, u32>,
}

impl Chains {
    /// The root of `x`'s set; `None` when `x` was never linked or its set is complete and
    /// partly released.
    fn find(&mut self, mut x: u32) -> Option<u32> {
        loop {
            let p = *self.parent.get(&x)?;
            if p == x {
                return Some(x);
            }
            let gp = *self.parent.get(&p)?;
            self.parent.insert(x, gp);
            x = p;
        }
    }

    fn root_or_new(&mut self, x: u32) -> u32 {
        match self.find(x) {
            Some(r) => r,
            None => {
                self.parent.insert(x, x);
                self.newest.insert(x, x);
                x
            }
        }
    }

    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.root_or_new(a), self.root_or_new(b));
        if ra != rb {
            let na = self.newest.remove(&ra).unwrap_or(ra);
            let nb = self.newest.get(&rb).copied().unwrap_or(rb);
            self.parent.insert(ra, rb);
            self.newest.insert(rb, na.max(nb));
        }
    }

    /// Whether `x`'s chain has a member at or after `head` (still in the window).
    fn open(&mut self, x: u32, head: usize) -> bool {
        match self.find(x) {
            Some(r) => self.newest.get(&r).is_some_and(|&n| n as usize >= head),
            None => false,
        }
    }

    fn forget(&mut self, x: u32) {
        self.parent.remove(&x);
        self.newest.remove(&x);
    }
}

/// A record leaving the decider, in input order.
pub struct Released {
    /// The record as read (no `block_size`).
    pub record: Vec<u8>,
    /// Its flag after `-c` (as the decide phase saw it).
    pub flag: u16,
    pub outcome: Outcome,
    /// The name for its `do` tag when `outcome.do_from` is set.
    pub do_name: Option<Vec<u8>>,
}

/// A `-S` table entry: a duplicate's original (its name, with `-t`), whether the duplicate is
/// optical, and its read group.
pub struct SuppEntry {
    pub orig_name: Option<Vec<u8>>,
    pub optical: bool,
    pub rg: u32,
}

/// What is left once every record is released.
pub struct Finished {
    pub stats: Vec<Stats>,
    /// The `-S` table by duplicate name.
    pub supp: std::collections::HashMap<Vec<u8>, SuppEntry>,
    pub opt_warnings: i64,
    pub bc_warnings: i64,
}

/// The engine's state between pushes.
#[derive(Default)]
struct State {
    nodes: Slots<Node>,
    out: Slots<Outcome>,
    stats: Vec<Stats>,
    pair_hash: FastMap<super::Key, u32>,
    single_hash: FastMap<super::Key, u32>,
    dup_hash: std::collections::HashMap<Vec<u8>, DupEntry>,
    opt_warnings: i64,
    bc_warnings: i64,
    captured: FastMap<u32, Vec<u8>>,
}

/// samtools' single pass over records pushed in input order; see the module doc.
pub struct Streamer<'a> {
    opts: &'a MarkdupOptions,
    held: Held,
    state: State,
    at: Cursor,
    list: Vec<Check>,
    chains: Chains,
}

impl<'a> Streamer<'a> {
    /// A decider for `groups` read groups (stats get `groups + 1` blocks).
    pub fn new(opts: &'a MarkdupOptions, groups: usize) -> Self {
        Streamer {
            opts,
            held: Held::default(),
            state: State { stats: vec![Stats::default(); groups + 1], ..State::default() },
            at: Cursor { prev_tid: 0, prev_coord: 0, head: 0 },
            list: Vec::new(),
            chains: Chains::default(),
        }
    }

    /// Records held now (read but not released).
    pub fn held(&self) -> usize {
        self.held.records.len()
    }

    /// Runs `f` on an engine over the held records, then keeps its state.
    fn with_engine<T>(
        &mut self,
        log: &mut dyn FnMut(String),
        f: impl FnOnce(&mut Engine<'_>, &mut Cursor, &mut Vec<Check>) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let st = std::mem::take(&mut self.state);
        let mut e = Engine {
            src: &self.held,
            opts: self.opts,
            log,
            nodes: st.nodes,
            out: st.out,
            stats: st.stats,
            pair_hash: st.pair_hash,
            single_hash: st.single_hash,
            dup_hash: st.dup_hash,
            retagged: Vec::new(),
            opt_warnings: st.opt_warnings,
            bc_warnings: st.bc_warnings,
            check_chain: self.opts.check_chain && (self.opts.tag || self.opts.opt_dist > 0),
            captured: Some(st.captured),
            links: Some(Vec::new()),
            missing: None,
        };
        let result = f(&mut e, &mut self.at, &mut self.list);
        for (a, b) in e.links.take().unwrap_or_default() {
            self.chains.union(a, b);
        }
        self.state = State {
            nodes: e.nodes,
            out: e.out,
            stats: e.stats,
            pair_hash: e.pair_hash,
            single_hash: e.single_hash,
            dup_hash: e.dup_hash,
            opt_warnings: e.opt_warnings,
            bc_warnings: e.bc_warnings,
            captured: e.captured.unwrap_or_default(),
        };
        result
    }

    /// Reads `records` (bytes without `block_size`, with their infos) in order; returns the
    /// records that may leave memory now, in input order. `log` receives stderr lines in order.
    pub fn push(
        &mut self,
        records: Vec<(ReadInfo, Vec<u8>)>,
        log: &mut dyn FnMut(String),
    ) -> Result<Vec<Released>, Failure> {
        let start = self.state.nodes.end();
        if start + records.len() >= super::NONE as usize {
            return Err(super::fail("error, too many records for one pass.\n"));
        }
        for r in records {
            self.held.records.push_back(r);
            self.state.nodes.push(Node::default());
            self.state.out.push(Outcome::default());
        }
        let end = self.state.nodes.end();
        self.with_engine(log, |e, at, list| {
            for i in start..end {
                e.step(i, at, list)?;
            }
            Ok(())
        })?;
        Ok(self.release(false))
    }

    /// The records still held leave the window at end of input; returns them, then the stats and
    /// the `-S` table.
    pub fn finish(
        mut self,
        log: &mut dyn FnMut(String),
    ) -> Result<(Vec<Released>, Finished), Failure> {
        let end = self.state.nodes.end();
        self.with_engine(log, |e, at, list| {
            for h in at.head..end {
                e.flush(h, true, list)?;
            }
            at.head = end;
            Ok(())
        })?;
        let last = self.release(true);
        let st = self.state;
        let supp = st
            .dup_hash
            .into_iter()
            .map(|(k, v)| (k, SuppEntry { orig_name: v.orig_name, optical: v.optical, rg: v.rg }))
            .collect();
        Ok((
            last,
            Finished {
                stats: st.stats,
                supp,
                opt_warnings: st.opt_warnings,
                bc_warnings: st.bc_warnings,
            },
        ))
    }

    /// Releases flushed records from the front while their chains are complete (all of them at
    /// end of input).
    fn release(&mut self, all: bool) -> Vec<Released> {
        let mut out = Vec::new();
        while self.held.first < self.at.head {
            let i = self.held.first;
            if !all && self.chains.open(i as u32, self.at.head) {
                break;
            }
            let Some((info, record)) = self.held.records.pop_front() else { break };
            self.held.first += 1;
            self.state.nodes.pop();
            let outcome = self.state.out.pop().unwrap_or_default();
            let do_name = self.state.captured.remove(&(i as u32));
            self.chains.forget(i as u32);
            out.push(Released { record, flag: info.flag, outcome, do_name });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::markdup::decide::tests::{input, outcome_text};

    /// The streaming decider gives every record the outcome of the whole-input decide, and the
    /// same stats, whatever the push sizes; it holds far fewer records than the input.
    #[test]
    fn streaming_matches_the_whole_input_pass() {
        let recs = input();
        let variants = [
            MarkdupOptions::default(),
            MarkdupOptions { tag: true, dup_count: true, ..Default::default() },
            MarkdupOptions { opt_dist: 100, tag: true, coords: None, ..Default::default() },
            MarkdupOptions { tag: true, check_chain: false, supp: true, ..Default::default() },
            MarkdupOptions { remove: true, supp: true, ..Default::default() },
        ];
        for opts in &variants {
            let infos: Vec<ReadInfo> =
                recs.iter().map(|b| ReadInfo::compute(&RecordRef::new(b), opts, 0)).collect();
            let name = |i: usize| RecordRef::new(&recs[i]).read_name();
            let pass2 = |i: usize, _| RecordRef::new(&recs[i]).read_name().to_vec();
            let mut silent = |_: String| {};
            let whole =
                super::super::decide_in(&infos, &name, &pass2, opts, 0, &mut silent, usize::MAX)
                    .ok()
                    .unwrap();
            let mut quiet = |_: String| {};
            for push in [1, 13, 500] {
                let mut s = Streamer::new(opts, 0);
                let mut got: Vec<Released> = Vec::new();
                let mut most_held = 0;
                for chunk in recs.chunks(push) {
                    let batch = chunk
                        .iter()
                        .map(|b| (ReadInfo::compute(&RecordRef::new(b), opts, 0), b.clone()))
                        .collect();
                    got.extend(s.push(batch, &mut quiet).ok().unwrap());
                    most_held = most_held.max(s.held());
                }
                let (last, fin) = s.finish(&mut quiet).ok().unwrap();
                got.extend(last);
                assert_eq!(got.len(), recs.len());
                assert!(most_held < push + recs.len() / 10, "held {most_held} of {}", recs.len());
                for (i, r) in got.iter().enumerate() {
                    assert_eq!(r.record, recs[i], "record {i} out of order");
                    let mut want = whole.outcomes[i];
                    // The -S marks are made by the caller from the table.
                    (want.np, want.np_do, want.np_dt) = (false, super::super::NONE, 0);
                    assert_eq!(outcome_text(&r.outcome), outcome_text(&want), "record {i}");
                    if want.do_from != super::super::NONE {
                        assert!(r.outcome.do_from != super::super::NONE);
                        assert_eq!(r.do_name.as_deref(), Some(name(want.do_from as usize)));
                    }
                }
                let mut stats = fin.stats.clone();
                stats[0].np_duplicate = whole.stats[0].np_duplicate;
                stats[0].np_opt_duplicate = whole.stats[0].np_opt_duplicate;
                assert_eq!(stats, whole.stats);
            }
        }
    }
}
