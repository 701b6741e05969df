//! samtools consensus' own pileup engine (`consensus_pileup.c`, not htslib's `bam_plp_*`): one
//! column per reference position and one more per inserted base, every read in the column
//! (deletions and pads as `*`, reference skips as `.`), reads in the order they were added.

use super::column_counts::{BaseCounts, CountsAhead, QualWeight};
use crate::record::RecordRef;

const M: i32 = 0;
const INS: i32 = 1;
const DEL: i32 = 2;
const SKIP: i32 = 3;
const SOFT: i32 = 4;
const HARD: i32 = 5;
const PAD: i32 = 6;
const EQ: i32 = 7;
const DIFF: i32 = 8;

fn is_match(op: i32) -> bool {
    op == M || op == EQ || op == DIFF
}

/// One read in the pileup, with the walk state `get_next_base` keeps.
pub struct PileupRead {
    pub bytes: Vec<u8>,
    cigar: Vec<u32>,
    seq_start: usize,
    qual_start: usize,
    pub l_qseq: i64,
    /// 1: this read ends at this column; 2/3: inside a reference skip.
    pub eof: u8,
    /// The base's quality (deletions: the lower of the bases either side).
    pub qual: i32,
    pub start: i8,
    /// ASCII base, `*` for deletion/pad, `.` for a reference skip.
    pub base: u8,
    pub ref_skip: bool,
    pub padding: bool,
    /// 4-bit base code; 16 for a deletion or pad.
    pub base4: u8,
    pub pos: i64,
    pub nth: i32,
    pub is_rev: bool,
    pub seq_offset: i64,
    cigar_ind: usize,
    pub cigar_op: i32,
    cigar_len: i64,
    pub first_del: bool,
    /// The bayesian mode's per-read data (`nm_init`).
    pub extra: Option<super::read_scores::ReadScores>,
    /// A buffer for `extra` from a read that left the pileup (empty for a new one).
    pub spare_scores: super::read_scores::ReadScores,
    /// In counting mode, the position from which the read was counted ahead.
    counted_from: i64,
}

impl PileupRead {
    pub fn record(&self) -> RecordRef<'_> {
        RecordRef::new(&self.bytes)
    }

    /// The quality samtools reads for base `i`. Padding and deletions read the base after
    /// the read's position, which may be past its qualities (a read ending in a deletion beside
    /// an insertion, or one without bases, `SEQ *`): samtools then reads on into the record's
    /// aux fields, and past the record stale memory, taken here as no bound at all (mdsam once
    /// indexed past the record and panicked).
    #[inline]
    pub fn qual_at(&self, i: i64) -> i32 {
        self.bytes.get(self.qual_start.wrapping_add(i as usize)).map_or(i32::MAX, |&q| i32::from(q))
    }

    /// The read's buffers (record, CIGAR, scores), taken for a later read.
    fn take_buffers(&mut self) -> Buffers {
        let scores = self.extra.take().unwrap_or_else(|| std::mem::take(&mut self.spare_scores));
        (std::mem::take(&mut self.bytes), std::mem::take(&mut self.cigar), scores)
    }

    /// The read's CIGAR operations.
    pub fn cigar(&self) -> &[u32] {
        &self.cigar
    }

    /// The read's qualities, for the bayesian mode's homopolymer fix.
    pub fn quals_mut(&mut self) -> &mut [u8] {
        let (a, b) = (self.qual_start, self.qual_start + self.l_qseq as usize);
        &mut self.bytes[a..b]
    }

    #[inline]
    fn base_code(&self, i: i64) -> u8 {
        let b = self.bytes[self.seq_start + i as usize / 2];
        if i & 1 == 0 { b >> 4 } else { b & 0xf }
    }

    fn next_op(&mut self) -> bool {
        if self.cigar_ind >= self.cigar.len() {
            return false;
        }
        let c = self.cigar[self.cigar_ind];
        self.cigar_op = (c & 0xf) as i32;
        self.cigar_len = i64::from(c >> 4);
        self.cigar_ind += 1;
        true
    }

    /// `get_next_base`: moves to the `nth` base at `pos`; `None` past the end of the read,
    /// else the length of an insertion that follows (0 when none).
    #[inline(always)]
    fn next_base(&mut self, pos: i64, nth: i32) -> Option<i64> {
        // Most steps move one base along a match that goes on past it: the walk reduced to
        // what it does then (no insertion, deletion, clip or read end to look at), inlined into
        // the column's loop; the rest is a call.
        if nth == 0
            && self.nth == 0
            && self.pos + 1 == pos
            && self.cigar_len >= 2
            && is_match(self.cigar_op)
            && self.start == 0
            && self.eof == 0
            && !self.first_del
        {
            self.seq_offset += 1;
            self.pos = pos;
            self.cigar_len -= 1;
            // `fill_base` of a match, inline.
            self.ref_skip = false;
            self.padding = false;
            self.fill_match_base();
            return Some(0);
        }
        self.next_base_walk(pos, nth)
    }

    /// [`Self::next_base`] past its shortcut: samtools' walk.
    #[inline(never)]
    fn next_base_walk(&mut self, pos: i64, nth: i32) -> Option<i64> {
        let mut op = self.cigar_op;
        self.start -= i8::from(self.start > 0);
        if self.first_del && op != PAD {
            self.first_del = false;
        }
        while self.pos < pos {
            self.nth = 0;
            if self.cigar_len == 0 {
                if !self.next_op() {
                    self.eof = 1;
                    return None;
                }
                op = self.cigar_op;
            }
            if is_match(op) && self.cigar_len <= pos - self.pos {
                self.seq_offset += self.cigar_len;
                self.pos += self.cigar_len;
                self.cigar_len = 0;
            } else {
                match op {
                    M | EQ | DIFF | DEL | SKIP => {
                        if is_match(op) {
                            self.seq_offset += 1;
                        }
                        self.pos += 1;
                        self.cigar_len -= 1;
                    }
                    INS | SOFT => {
                        self.seq_offset += self.cigar_len;
                        self.cigar_len = 0;
                    }
                    _ => self.cigar_len = 0,
                }
            }
        }
        while self.nth < nth {
            if self.cigar_len == 0 {
                if !self.next_op() {
                    self.eof = 1;
                    return None;
                }
                op = self.cigar_op;
            }
            match op {
                M | EQ | DIFF | SOFT | DEL | SKIP => break,
                INS | PAD => {
                    if op == INS {
                        self.seq_offset += 1;
                    }
                    self.cigar_len -= 1;
                    self.nth += 1;
                }
                _ => self.cigar_len = 0,
            }
        }
        self.fill_base(op, nth);
        if self.eof != 0 && self.base != b'.' {
            self.start = 1;
            self.ref_skip = true;
            self.eof = 0;
        }
        if self.start != 0 && self.cigar_op == DEL {
            self.first_del = true;
        }
        if self.cigar_len == 0 {
            if self.next_op() {
                op = self.cigar_op;
                if op == SKIP {
                    self.eof = 3;
                    self.ref_skip = true;
                }
            } else {
                self.eof = 1;
            }
        }
        let mut is_insert = 0;
        match op {
            PAD | INS => is_insert = self.cigar_len,
            SOFT => {
                let n = self.cigar.len();
                let last = self.cigar_ind == n
                    || (self.cigar_ind + 1 == n
                        && (self.cigar[self.cigar_ind] & 0xf) as i32 == HARD);
                self.eof = u8::from(last);
            }
            HARD => self.eof = 1,
            _ => {}
        }
        Some(is_insert)
    }

    /// The base, code and quality of the position reached (`at_nth` in samtools).
    fn fill_base(&mut self, op: i32, nth: i32) {
        self.ref_skip = false;
        let next_qual = |p: &Self| {
            if p.seq_offset + 1 < p.l_qseq {
                p.qual_at(p.seq_offset + 1)
            } else {
                p.qual_at(p.seq_offset)
            }
        };
        if self.nth < nth && op != INS {
            self.base = b'*';
            self.base4 = 16;
            self.padding = true;
            self.qual = if self.seq_offset < self.l_qseq {
                self.qual.min(self.qual_at(self.seq_offset + 1))
            } else {
                0
            };
            return;
        }
        self.padding = false;
        match op {
            DEL | PAD => {
                self.base = b'*';
                self.base4 = 16;
                self.qual = self.qual.min(next_qual(self));
            }
            SKIP => {
                self.base = b'.';
                self.base4 = 0;
                self.qual = 0;
                self.eof = if self.eof != 0 { 2 } else { 3 };
                self.ref_skip = true;
            }
            _ => self.fill_match_base(),
        }
    }

    /// A match's base, code and quality (past the read's bases: N of quality 255).
    #[inline(always)]
    fn fill_match_base(&mut self) {
        if self.seq_offset < self.l_qseq {
            self.qual = self.qual_at(self.seq_offset);
            self.base4 = self.base_code(self.seq_offset);
            self.base = b"NACMGRSVTWYHKDBN"[self.base4 as usize];
        } else {
            self.base = b'N';
            self.base4 = 15;
            self.qual = 0xff;
        }
    }

    /// A match's base code and quality at `offset` in the read, as [`Self::fill_match_base`].
    #[inline(always)]
    fn match_at(&self, offset: i64) -> (u8, i32) {
        if offset < self.l_qseq {
            (self.base_code(offset), self.qual_at(offset))
        } else {
            (15, 0xff)
        }
    }

    /// In counting mode, right after the read stepped to `pos` (no inserted base): when it is
    /// in a match that goes on for a while, counts the bases the steps through it would count,
    /// and returns the position where it must step again (until then [`Pileup`] skips it).
    /// Only the steps [`Self::next_base`]'s shortcut takes are counted so: one base a position.
    fn count_ahead(&mut self, pos: i64, ahead: &mut CountsAhead) -> Option<i64> {
        if !(self.pos == pos
            && self.nth == 0
            && self.start == 0
            && self.eof == 0
            && !self.first_del
            && is_match(self.cigar_op)
            && self.cigar_len >= MIN_COUNTED_AHEAD)
        {
            return None;
        }
        // The shortcut steps while at least two bases of the match are left.
        let steps = self.cigar_len.min(CountsAhead::SPAN);
        if ahead.by_count() {
            for k in 1..steps {
                let code = self.match_at(self.seq_offset + k).0;
                ahead.add_code(pos + k, code);
            }
        } else {
            for k in 1..steps {
                let (code, qual) = self.match_at(self.seq_offset + k);
                ahead.add_base(pos + k, code, qual);
            }
        }
        self.counted_from = pos;
        Some(pos + steps)
    }

    /// What a read counted ahead shows in an inserted column after `pos`: a pad, of the lower
    /// quality of its bases either side (`fill_base`), the one at `pos` as the read took it.
    fn counted_gap(&self, pos: i64) -> i32 {
        let offset = self.seq_offset + (pos - self.counted_from);
        let qual = if pos == self.counted_from { self.qual } else { self.match_at(offset).1 };
        if offset < self.l_qseq { qual.min(self.qual_at(offset + 1)) } else { 0 }
    }

    /// The state the shortcut's steps up to `wake - 1` would have left (the inserted columns
    /// between leave nothing the next step reads).
    fn wake_up(&mut self, wake: i64) {
        let steps = wake - 1 - self.counted_from;
        self.seq_offset += steps;
        self.pos += steps;
        self.cigar_len -= steps;
        self.ref_skip = false;
        self.padding = false;
        self.fill_match_base();
    }
}

/// The shortest rest of a match worth counting ahead.
const MIN_COUNTED_AHEAD: i64 = 4;

/// The column callback: the reads, their counts in counting mode (where the reads counted
/// ahead keep stale bases), the 1-based position, and the insertion index there.
pub type Column<'c, E> =
    dyn FnMut(&mut [Box<PileupRead>], Option<&BaseCounts>, i64, i32) -> Result<(), E> + 'c;

/// The pileup: reads added in file order, columns handed to a callback as they complete.
#[derive(Default)]
pub struct Pileup {
    /// Boxed: a read that ends leaves from the middle of the list, and the reads after it move
    /// up in order; moving pointers, not 170-byte reads, was 7 % of a deep pileup's time.
    #[allow(clippy::vec_box)]
    reads: Vec<Box<PileupRead>>,
    col: i64,
    nth: i32,
    last_ref: i32,
    started: bool,
    /// The quality the next read starts with: samtools reuses freed read structs (last freed
    /// first) without clearing them, so a read whose first column is a deletion takes the
    /// minimum with that stale value.
    free_quals: Vec<i32>,
    next_qual: i32,
    /// Reads that left, their boxes and buffers kept for the next reads: three allocations a
    /// read were most of the threaded path's page churn.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<PileupRead>>,
    /// Counting mode (`-m simple` FASTA and FASTQ, [`Pileup::counting`]): reads in a long
    /// match are counted ahead and skipped until the position in `wake` (one per read in
    /// `reads`; 0 for a read stepped every column).
    ahead: Option<CountsAhead>,
    wake: Vec<i64>,
    /// Scratch: the column's counts, the reads that ended in it.
    counts: BaseCounts,
    dead: Vec<usize>,
}

/// A read's own buffers: its record, CIGAR and scores.
type Buffers = (Vec<u8>, Vec<u32>, super::read_scores::ReadScores);

/// The input is not sorted by position.
#[derive(Debug)]
pub struct NotSorted;

impl Pileup {
    pub fn new() -> Self {
        Pileup { last_ref: -1, ..Default::default() }
    }

    /// A pileup whose columns come with their counts ([`super::column_counts`]), for a caller
    /// that needs nothing else of the reads.
    pub fn counting(weight: QualWeight) -> Self {
        Pileup { ahead: Some(CountsAhead::new(weight)), ..Pileup::new() }
    }

    /// Adds one read that passed the caller's filters (unmapped ones are skipped here, as in
    /// `pileup_loop`), first emitting every column before it. `keep` decides whether the read
    /// joins the pileup (`seq_init`); it may attach data to the read.
    pub fn add<E: From<NotSorted>>(
        &mut self,
        r: RecordRef<'_>,
        keep: &mut dyn FnMut(&mut PileupRead) -> Result<bool, E>,
        column: &mut Column<'_, E>,
    ) -> Result<(), E> {
        if r.flag() & crate::record::layout::flags::UNMAP != 0 || r.ref_id() == -1 {
            return Ok(());
        }
        let tid = r.ref_id();
        let pos = if self.started && tid == self.last_ref { r.pos() + 1 } else { i64::MAX };
        if self.col > pos {
            return Err(NotSorted.into());
        }
        self.columns_before(pos, column)?;
        self.col = pos;
        if !self.started || tid != self.last_ref {
            self.started = true;
            self.last_ref = tid;
            self.nth = 0;
            self.col = r.pos() + 1;
        }
        let mut p = self.new_read(r);
        if keep(&mut p)? {
            self.reads.push(p);
            if self.ahead.is_some() {
                self.wake.push(0);
            }
        } else {
            self.free_quals.push(p.qual);
            self.spare.push(p);
        }
        self.next_qual = self.free_quals.pop().unwrap_or(0);
        Ok(())
    }

    /// Emits every remaining column (end of input).
    pub fn finish<E>(&mut self, column: &mut Column<'_, E>) -> Result<(), E> {
        self.columns_before(i64::MAX, column)
    }

    fn new_read(&mut self, r: RecordRef<'_>) -> Box<PileupRead> {
        let mut recycled = self.spare.pop();
        let (mut bytes, mut cigar, spare_scores) =
            recycled.as_mut().map(|p| p.take_buffers()).unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(r.bytes());
        cigar.clear();
        cigar.extend(r.cigar());
        let l_qseq = r.l_seq();
        let (seq_start, qual_start) = (r.seq_start(), r.qual_start());
        let read = PileupRead {
            is_rev: r.flag() & crate::record::layout::flags::REVERSE != 0,
            pos: r.pos(),
            bytes,
            cigar,
            seq_start,
            qual_start,
            l_qseq: l_qseq as i64,
            eof: 0,
            qual: self.next_qual,
            start: 2,
            base: 0,
            ref_skip: false,
            padding: false,
            base4: 0,
            nth: 0,
            seq_offset: -1,
            cigar_ind: 0,
            cigar_op: -1,
            cigar_len: 0,
            first_del: false,
            extra: None,
            spare_scores,
            counted_from: 0,
        };
        match recycled {
            Some(mut boxed) => {
                *boxed = read;
                boxed
            }
            None => Box::new(read),
        }
    }

    fn columns_before<E>(&mut self, pos: i64, column: &mut Column<'_, E>) -> Result<(), E> {
        while self.col < pos && !self.reads.is_empty() {
            let (col, nth) = (self.col, self.nth);
            let is_insert = if self.ahead.is_some() {
                let is_insert = self.step_counting(col, nth);
                column(&mut self.reads, Some(&self.counts), col, nth)?;
                self.drop_dead_counted();
                is_insert
            } else {
                let mut is_insert = 0;
                for p in self.reads.iter_mut() {
                    match p.next_base(col, nth) {
                        Some(ins) => is_insert = is_insert.max(ins),
                        None => p.eof = 1,
                    }
                }
                column(&mut self.reads, None, col, nth)?;
                self.drop_dead();
                is_insert
            };
            if is_insert > 0 {
                self.nth += 1;
            } else {
                if let Some(ahead) = self.ahead.as_mut() {
                    ahead.clear(col);
                }
                self.nth = 0;
                self.col += 1;
            }
        }
        Ok(())
    }

    /// Dead reads leave in list order (samtools pushes each on its free list), the living
    /// keep theirs, and the dead ones' buffers are kept for the next reads.
    fn drop_dead(&mut self) {
        if let Some(first_dead) = self.reads.iter().position(|p| p.eof == 1) {
            let Pileup { reads, free_quals, spare, .. } = self;
            for p in reads.extract_if(first_dead.., |p| p.eof == 1) {
                free_quals.push(p.qual);
                spare.push(p);
            }
        }
    }

    /// Counting mode's step of the column: the reads not counted ahead step and are counted
    /// into `counts` with what was counted ahead for the column; those that end are noted in
    /// `dead`. Returns the longest insertion that follows.
    fn step_counting(&mut self, col: i64, nth: i32) -> i64 {
        let Pileup { reads, wake, ahead, counts, dead, .. } = self;
        let Some(ahead) = ahead.as_mut() else { return 0 };
        let mut is_insert = 0;
        *counts = BaseCounts::default();
        if nth == 0 {
            ahead.add_to(col, counts);
        }
        dead.clear();
        for (i, (p, wake)) in reads.iter_mut().zip(wake.iter_mut()).enumerate() {
            if col < *wake {
                if nth > 0 {
                    counts.add(16, p.counted_gap(col), ahead.weight);
                }
                continue;
            }
            if *wake != 0 {
                p.wake_up(*wake);
                *wake = 0;
            }
            match p.next_base(col, nth) {
                Some(ins) => is_insert = is_insert.max(ins),
                None => p.eof = 1,
            }
            counts.add(p.base4, p.qual, ahead.weight);
            if p.eof == 1 {
                dead.push(i);
            } else if nth == 0 {
                *wake = p.count_ahead(col, ahead).unwrap_or(0);
            }
        }
        is_insert
    }

    /// [`Self::drop_dead`] for counting mode, where the dead are known without looking at
    /// every read; `wake` loses the same entries.
    fn drop_dead_counted(&mut self) {
        let Pileup { reads, wake, free_quals, spare, dead, .. } = self;
        let Some(&first_dead) = dead.first() else { return };
        let mut is_dead = listed_in(dead, first_dead);
        for p in reads.extract_if(first_dead.., |_| is_dead()) {
            free_quals.push(p.qual);
            spare.push(p);
        }
        let mut is_dead = listed_in(dead, 0);
        wake.retain(|_| !is_dead());
    }
}

/// Whether each index from `first` on, asked in turn, is in `listed` (ascending).
fn listed_in(listed: &[usize], first: usize) -> impl FnMut() -> bool + '_ {
    let (mut at, mut next) = (first, 0);
    move || {
        let hit = listed.get(next) == Some(&at);
        next += usize::from(hit);
        at += 1;
        hit
    }
}
