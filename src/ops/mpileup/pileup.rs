//! One input's pileup, as htslib's `bam_plp_push` / `bam_plp64_next` build it (sam.c): reads
//! come in coordinate order, each column lists the reads covering a position in the order they
//! arrived, with where each read is at that position (`resolve_cigar2`). The quirks kept are
//! htslib's: the depth cap counts the list's spare node and applies only to reads starting at
//! the position the pileup stands at; where the list empties, the next position comes from the
//! spare node's stale record.

use std::collections::{HashMap, VecDeque};

use crate::record::RecordRef;
use crate::record::cigar;
use crate::record::layout::flags;

use super::basemod::ReadMods;
use super::overlap::tweak_overlap_quality;

/// A read held by the pileup, with its CIGAR walk (`cstate_t`).
pub struct Read {
    pub rec: Vec<u8>,
    /// `-M`: its base modifications.
    pub mods: Option<ReadMods>,
    pub ops: Vec<u32>,
    /// Where the packed bases and the qualities start in `rec`, its base count, strand and
    /// mapping quality: read once here, not re-parsed for every column the read is in.
    seq_at: usize,
    qual_at: usize,
    l_seq: usize,
    pub is_reverse: bool,
    pub mapq: u8,
    tid: i32,
    beg: i64,
    /// Exclusive end from the raw CIGAR length.
    end: i64,
    id: u64,
    /// The start of the read pushed before this one (-1 on another reference).
    prev_beg: i64,
    k: i64,
    x: i64,
    y: i64,
}

/// One read at one position (`bam_pileup1_t`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Entry {
    /// Index of the read in [`Pileup::reads`].
    pub read: usize,
    pub qpos: i64,
    pub indel: i64,
    pub is_del: bool,
    pub is_refskip: bool,
    pub is_head: bool,
    pub is_tail: bool,
    pub cigar_ind: usize,
}

fn is_match(op: u8) -> bool {
    matches!(op, cigar::MATCH | cigar::EQUAL | cigar::DIFF)
}

fn advances_ref(op: u8) -> bool {
    is_match(op) || op == cigar::DEL || op == cigar::REF_SKIP
}

fn consumes_query(op: u8) -> bool {
    op == cigar::INS || op == cigar::SOFT_CLIP
}

impl Read {
    /// The quality at query position `i` (0 outside the read's bases).
    #[inline]
    pub fn qual_at(&self, i: i64) -> i32 {
        if i >= 0 && (i as usize) < self.l_seq {
            i32::from(self.rec[self.qual_at + i as usize])
        } else {
            0
        }
    }

    /// The 4-bit base code at query position `i` (15, `N`, outside the read's bases).
    #[inline]
    pub fn base_at(&self, i: i64) -> u8 {
        if i < 0 || i as usize >= self.l_seq {
            return 15;
        }
        let b = self.rec[self.seq_at + i as usize / 2];
        if i & 1 == 0 { b >> 4 } else { b & 0xf }
    }

    /// The number of bases.
    pub fn l_seq(&self) -> usize {
        self.l_seq
    }

    /// `resolve_cigar2`: where the read is at `pos`.
    fn resolve(&mut self, pos: i64, index: usize) -> Entry {
        let ops = &self.ops;
        let n = ops.len() as i64;
        let op_at = |k: i64| cigar::op(ops[k as usize]);
        let len_at = |k: i64| i64::from(cigar::len(ops[k as usize]));
        if self.k == -1 {
            (self.x, self.y) = (self.beg, 0);
            let mut k = 0;
            if n > 1 {
                while k < n && !advances_ref(op_at(k)) {
                    if consumes_query(op_at(k)) {
                        self.y += len_at(k);
                    }
                    k += 1;
                }
            }
            self.k = k;
        } else {
            let l = len_at(self.k);
            if pos - self.x >= l && self.k + 1 < n {
                if is_match(op_at(self.k)) {
                    self.y += l;
                }
                self.x += l;
                let mut k = self.k + 1;
                while k < n && !advances_ref(op_at(k)) {
                    if consumes_query(op_at(k)) {
                        self.y += len_at(k);
                    }
                    k += 1;
                }
                self.k = k;
            }
        }
        let mut e = Entry { read: index, cigar_ind: self.k.max(0) as usize, ..Entry::default() };
        if self.k >= n {
            return e;
        }
        let (op, l) = (op_at(self.k), len_at(self.k));
        if self.x + l - 1 == pos && self.k + 1 < n {
            let (op2, l2) = (op_at(self.k + 1), len_at(self.k + 1));
            if op2 == cigar::DEL && op != cigar::DEL {
                // A deletion starting next, runs of D merged (1D2D is 3D).
                e.indel = -l2;
                let mut k = self.k + 2;
                while k < n && op_at(k) == cigar::DEL {
                    e.indel -= len_at(k);
                    k += 1;
                }
            } else if op2 == cigar::INS {
                e.indel = l2;
                let mut k = self.k + 2;
                while k < n {
                    match op_at(k) {
                        cigar::INS => e.indel += len_at(k),
                        cigar::PAD => {}
                        _ => break,
                    }
                    k += 1;
                }
            } else if op2 == cigar::PAD && self.k + 2 < n {
                let mut inserted = 0;
                let mut k = self.k + 2;
                while k < n {
                    let o = op_at(k);
                    if o == cigar::INS {
                        inserted += len_at(k);
                    } else if advances_ref(o) {
                        break;
                    }
                    k += 1;
                }
                if inserted > 0 {
                    e.indel = inserted;
                }
            }
        }
        if is_match(op) {
            e.qpos = self.y + (pos - self.x);
        } else if op == cigar::DEL || op == cigar::REF_SKIP {
            e.is_del = true;
            e.qpos = self.y;
            e.is_refskip = op == cigar::REF_SKIP;
        }
        e.is_head = pos == self.beg;
        e.is_tail = pos == self.end - 1;
        e
    }
}

/// One input's pileup (`bam_plp_t`).
pub struct Pileup {
    pub reads: VecDeque<Read>,
    pub column: Vec<Entry>,
    tid: i32,
    pos: i64,
    max_tid: i32,
    max_pos: i64,
    eof: bool,
    max_count: i64,
    next_id: u64,
    /// Read names waiting for their overlapping mate, with the first mate's id.
    overlaps: Option<HashMap<Vec<u8>, u64>>,
    /// `-M`: reads get their modifications parsed as they enter.
    with_mods: bool,
    /// Reference id and start left in the list's spare node (a dropped read, or a recycled
    /// node's old read), which decide where the pileup jumps once the list is empty.
    spare: (i32, i64),
    /// What freed nodes held, most recent last (htslib's node pool hands them out again).
    freed: Vec<(i32, i64)>,
    /// The lowest (reference id, end) of the reads in the list: no read leaves it before the
    /// pileup reaches that point, so the sweep over the list is skipped until then.
    first_gone: (i32, i64),
    /// A block's start ([`Pileup::guard`]), and the id of the first read that came after the
    /// pileup reached it (`u64::MAX` before).
    guard: Option<Guard>,
    guard_passed_at: u64,
    /// Whether this pileup may differ from one fed every read of the input from the start.
    pub unsure: bool,
    /// The most reads the list held.
    pub max_reads: usize,
}

impl Pileup {
    pub fn new(max_count: i64, overlaps: bool, with_mods: bool) -> Self {
        Pileup {
            reads: VecDeque::new(),
            column: Vec::new(),
            tid: 0,
            pos: 0,
            max_tid: -1,
            max_pos: -1,
            eof: false,
            max_count,
            next_id: 0,
            overlaps: overlaps.then(HashMap::new),
            with_mods,
            spare: (0, 0),
            freed: Vec::new(),
            first_gone: (i32::MAX, i64::MAX),
            guard: None,
            guard_passed_at: u64::MAX,
            unsure: false,
            max_reads: 0,
        }
    }

    /// Marks this pileup as a block's, fed only the reads that overlap the block (from `beg`
    /// on): its columns from `beg` on equal the whole input's unless [`Pileup::unsure`] is
    /// set, or [`Pileup::max_reads`] comes near the depth cap.
    ///
    /// The reads before the block matter in one way the block cannot see: in the whole input a
    /// read may have been paired in the mate-overlap hash with an earlier alignment of its
    /// name that the block lacks, and then not left waiting for a later one. Only reads that
    /// arrive before the pileup reaches `beg` can be (an earlier read still in the list by
    /// then overlaps `beg`, and the block has it). When such a read pairs in the block, the
    /// pair's other alignments are looked up: the two must be each other's primary mates, with
    /// every part their `SA` tags name (on `name`, the block's reference) in the block's view
    /// or gone from the list before the read came; else `unsure` is set. `first_on_reference`: reads of the reference
    /// before may still be in the list (a block at a reference's start, whole-file walk).
    pub fn guard(&mut self, tid: i32, beg: i64, name: &[u8], first_on_reference: bool) {
        self.guard = Some(Guard { at: (tid, beg), name: name.to_vec(), first_on_reference });
    }

    fn forget_mate(&mut self, name: &[u8]) {
        if let Some(h) = &mut self.overlaps {
            h.remove(name);
        }
    }

    /// Whether [`Pileup::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.eof
    }

    /// `bam_plp_push(iter, NULL)`: no more reads.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// `bam_plp_push`: adds a read (already filtered). The error is htslib's log line.
    pub fn push(&mut self, rec: Vec<u8>) -> Result<(), String> {
        let r = RecordRef::new(&rec);
        let (tid, pos, flag) = (r.ref_id(), r.pos(), r.flag());
        if tid < 0 || flag & flags::UNMAP != 0 {
            let name = r.read_name().to_vec();
            self.forget_mate(&name);
            return Ok(());
        }
        self.max_reads = self.max_reads.max(self.reads.len() + 1);
        if self.tid == tid && self.pos == pos && self.reads.len() as i64 + 1 > self.max_count {
            self.unsure = true;
            let name = r.read_name().to_vec();
            self.forget_mate(&name);
            return Ok(());
        }
        let ops: Vec<u32> = r.cigar().collect();
        let end = pos + cigar::ref_len(ops.iter().copied());
        if tid < self.max_tid {
            return Err(
                "[E::bam_plp_push] The input is not sorted (chromosomes out of order)".into()
            );
        }
        if tid == self.max_tid && pos < self.max_pos {
            return Err("[E::bam_plp_push] The input is not sorted (reads out of order)".into());
        }
        let prev_beg = if self.max_tid == tid { self.max_pos } else { -1 };
        (self.max_tid, self.max_pos) = (tid, pos);
        if end > self.pos || tid > self.tid {
            self.spare = self.freed.pop().unwrap_or((0, 0));
            let mods = if self.with_mods { ReadMods::parse(&rec)? } else { None };
            let l_seq = r.l_seq();
            let qual_at = r.aux_offset() - l_seq;
            let (is_reverse, mapq) = (flag & flags::REVERSE != 0, r.mapq());
            let mut read = Read {
                rec,
                mods,
                ops,
                seq_at: qual_at - l_seq.div_ceil(2),
                qual_at,
                l_seq,
                is_reverse,
                mapq,
                tid,
                beg: pos,
                end,
                id: self.next_id,
                prev_beg,
                k: -1,
                x: 0,
                y: 0,
            };
            self.first_gone = self.first_gone.min((tid, end));
            self.next_id += 1;
            self.overlap_push(&mut read)?;
            self.reads.push_back(read);
        } else {
            self.spare = (tid, pos);
        }
        Ok(())
    }

    /// `overlap_push`: pairs a read with its mate already in the pileup.
    fn overlap_push(&mut self, read: &mut Read) -> Result<(), String> {
        let Some(waiting) = &mut self.overlaps else { return Ok(()) };
        let r = RecordRef::new(&read.rec);
        let flag = r.flag();
        if flag & flags::MUNMAP != 0 || flag & flags::PROPER_PAIR == 0 {
            return Ok(());
        }
        let (mtid, mpos) = (r.next_ref_id(), r.next_pos());
        if (mtid >= 0 && read.tid != mtid)
            || (r.tlen().abs() >= 2 * r.l_seq() as i64 && mpos >= read.end)
        {
            return Ok(());
        }
        let name = r.read_name();
        match waiting.remove(name) {
            None => {
                if mpos >= read.beg || (flag & flags::PAIRED != 0 && mpos == -1) {
                    waiting.insert(name.to_vec(), read.id);
                }
                Ok(())
            }
            Some(id) => {
                let Ok(i) = self.reads.binary_search_by_key(&id, |r| r.id) else { return Ok(()) };
                if let Some(guard) = &self.guard
                    && id < self.guard_passed_at
                    && !guard.no_namesake_missed(&self.reads[i], &read.rec)
                {
                    self.unsure = true;
                }
                tweak_overlap_quality(&mut self.reads[i].rec, &mut read.rec)
                    .map_err(|_| "[E::tweak_overlap_quality] overlap failed".to_string())
            }
        }
    }

    /// Whether the pileup has a column to give without more reads (`bam_plp64_next`'s loop
    /// condition).
    fn can_move(&self) -> bool {
        self.eof || self.max_tid > self.tid || (self.max_tid == self.tid && self.max_pos > self.pos)
    }

    /// `bam_plp64_next`: the next column into [`Pileup::column`] with its position, or `None`
    /// when more reads are needed (or none are left).
    pub fn next_column(&mut self) -> Result<Option<(i32, i64)>, String> {
        if self.eof && self.reads.is_empty() {
            return Ok(None);
        }
        while self.can_move() {
            let (tid, pos) = (self.tid, self.pos);
            self.column.clear();
            // Reads passed leave the list (and free their nodes).
            let Pileup { reads, freed, overlaps, column, first_gone, .. } = self;
            if *first_gone <= (tid, pos) {
                *first_gone = (i32::MAX, i64::MAX);
                let is_gone = |r: &Read| r.tid < tid || (r.tid == tid && r.end <= pos);
                let mut leave = |r: &Read| {
                    freed.push((r.tid, r.beg));
                    if let Some(h) = overlaps.as_mut() {
                        h.remove(RecordRef::new(&r.rec).read_name());
                    }
                };
                // Reads mostly end in the order they start: those at the front are popped,
                // where `retain` moved every read behind them (a sixth of deep pileups' time).
                while let Some(r) = reads.pop_front_if(|r| is_gone(r)) {
                    leave(&r);
                }
                if reads.iter().any(is_gone) {
                    reads.retain(|r| {
                        let gone = is_gone(r);
                        if gone {
                            leave(r);
                        }
                        !gone
                    });
                }
                for r in reads.iter() {
                    *first_gone = (*first_gone).min((r.tid, r.end));
                }
            }
            for (i, r) in reads.iter_mut().enumerate() {
                // The list is in coordinate order: the rest start later.
                if r.tid > tid || (r.tid == tid && r.beg > pos) {
                    break;
                }
                if r.tid == tid {
                    column.push(r.resolve(pos, i));
                }
            }
            let head = self.reads.front().map_or(self.spare, |r| (r.tid, r.beg));
            if !self.reads.is_empty() && tid > head.0 {
                return Err("[E::bam_plp64_next] Unsorted input. Pileup aborts".into());
            }
            if tid < head.0 {
                (self.tid, self.pos) = head;
            } else if pos < head.1 {
                self.pos = head.1;
            } else {
                self.pos += 1;
            }
            if !self.column.is_empty() {
                if self.guard.as_ref().is_some_and(|g| (tid, pos) >= g.at)
                    && self.guard_passed_at == u64::MAX
                {
                    self.guard_passed_at = self.next_id;
                }
                return Ok(Some((tid, pos)));
            }
            if self.eof && self.reads.is_empty() {
                break;
            }
        }
        Ok(None)
    }
}

/// A block's start, for [`Pileup::guard`].
struct Guard {
    /// The block's reference and start.
    at: (i32, i64),
    name: Vec<u8>,
    first_on_reference: bool,
}

impl Guard {
    /// Whether the read `waiting` in the overlap hash and its mate `b` have no other alignment
    /// the block lacks that was still in the whole input's list when `waiting` came: they are
    /// each other's primary mates, and each part their `SA` tags list either reaches the
    /// block (`beg`), or ends before the read that came before `waiting` started.
    fn no_namesake_missed(&self, waiting: &Read, b: &[u8]) -> bool {
        let (a, b) = (RecordRef::new(&waiting.rec), RecordRef::new(b));
        let mates = flags::READ1 | flags::READ2;
        let primary = |f: u16| f & (flags::SECONDARY | flags::SUPPLEMENTARY) == 0;
        if !primary(a.flag()) || !primary(b.flag()) || (a.flag() ^ b.flag()) & mates != mates {
            return false;
        }
        [a, b].iter().all(|r| match r.aux_get(*b"SA") {
            None => true,
            Some(sa) if sa.ty != b'Z' => false,
            Some(sa) => sa.value.split(|&c| c == b';').filter(|e| !e.is_empty()).all(|entry| {
                let mut fields = entry.split(|&c| c == b',');
                let (Some(rname), Some(pos), _, Some(cigar)) =
                    (fields.next(), fields.next(), fields.next(), fields.next())
                else {
                    return false;
                };
                let pos = std::str::from_utf8(pos).ok().and_then(|p| p.parse::<i64>().ok());
                match (pos, text_ref_len(cigar)) {
                    (Some(pos), Some(len)) if rname == self.name.as_slice() => {
                        let end = pos - 1 + len;
                        end > self.at.1 || end < waiting.prev_beg
                    }
                    (Some(_), Some(_)) => !self.first_on_reference,
                    _ => false,
                }
            }),
        })
    }
}

/// The reference bases a text CIGAR (`SA`'s) covers; `None` when it does not parse.
fn text_ref_len(cigar: &[u8]) -> Option<i64> {
    let (mut len, mut n) = (0i64, 0i64);
    for &c in cigar {
        match c {
            b'0'..=b'9' => n = n.checked_mul(10)?.checked_add(i64::from(c - b'0'))?,
            b'M' | b'D' | b'N' | b'=' | b'X' => (len, n) = (len + n, 0),
            b'I' | b'S' | b'H' | b'P' => n = 0,
            _ => return None,
        }
    }
    Some(len)
}
