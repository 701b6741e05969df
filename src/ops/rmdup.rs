//! `samtools rmdup` (samtools 1.24 `bam_rmdup.c`, `bam_rmdupse.c`): of reads at the same
//! place, keep the one of highest quality sum. No I/O: the driver
//! ([`crate::pipeline::rmdup`]) feeds coordinate-sorted records in, writes what comes out in
//! the order it comes, and prints the notes.
//!
//! Paired mode: a pair's leftmost read (TLEN > 0) is a duplicate of one with the same
//! position and TLEN in its library; the better stays (held until the position changes), the
//! other's name is remembered so its mate (TLEN ≤ 0) is dropped too. Single-end mode (`-s`,
//! `-S`): forward reads by start, reverse reads by end; reads wait in a queue until the
//! reference changes (or the queue passes a million reads).

use std::collections::{HashMap, HashSet, VecDeque};

use crate::record::RecordRef;
use crate::record::layout::flags;

/// A library's counts: reads checked and removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LibraryCounts {
    pub name: Vec<u8>,
    pub checked: u64,
    pub removed: u64,
}

/// The libraries met, in the order first met (the driver orders them as samtools' khash).
#[derive(Default)]
pub struct Libraries {
    pub counts: Vec<LibraryCounts>,
}

impl Libraries {
    /// The library of `name` (`None`: samtools' `"\t"`, reads without one).
    fn index(&mut self, name: Option<&[u8]>) -> usize {
        let name = name.unwrap_or(b"\t");
        match self.counts.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.counts.push(LibraryCounts { name: name.to_vec(), ..Default::default() });
                self.counts.len() - 1
            }
        }
    }
}

fn sum_qual(r: &RecordRef<'_>) -> i64 {
    r.qual().iter().map(|&q| i64::from(q)).sum()
}

/// samtools clears a library's best-pair table at a new position once it holds this many.
const BUFFER_SIZE: usize = 0x40000;

/// Paired-end state (`bam_rmdup_core`).
#[derive(Default)]
pub struct Paired {
    last_tid: i32,
    last_pos: i64,
    started: bool,
    /// Best leftmost reads at the current position, in first-seen order.
    held: Vec<Vec<u8>>,
    /// Per library: (position, TLEN) → index in `held` (stale after a flush, as samtools').
    best: Vec<HashMap<u64, usize>>,
    removed_names: HashSet<Vec<u8>>,
    pub libraries: Libraries,
    /// Everything after the first unmapped-reference record is copied as it is.
    copying: bool,
}

impl Paired {
    pub fn new() -> Self {
        Paired { last_tid: -1, last_pos: -1, ..Default::default() }
    }

    fn flush(&mut self, emit: &mut dyn FnMut(&[u8])) {
        for r in self.held.drain(..) {
            emit(&r);
        }
    }

    /// One record; `library` is its read group's LB.
    pub fn push(
        &mut self,
        bytes: &[u8],
        library: Option<&[u8]>,
        emit: &mut dyn FnMut(&[u8]),
        note: &mut dyn FnMut(String),
        reference_name: &dyn Fn(i32) -> String,
    ) {
        if self.copying {
            emit(bytes);
            return;
        }
        let r = RecordRef::new(bytes);
        let (tid, pos) = (r.ref_id(), r.pos());
        self.started = true;
        if tid != self.last_tid || pos != self.last_pos {
            self.flush(emit);
            for b in &mut self.best {
                if b.len() >= BUFFER_SIZE {
                    b.clear();
                }
            }
            if tid != self.last_tid {
                self.best.iter_mut().for_each(HashMap::clear);
                if !self.removed_names.is_empty() {
                    note(format!("[bam_rmdup_core] {} unmatched pairs", self.removed_names.len()));
                    self.removed_names.clear();
                }
                if tid == -1 {
                    self.copying = true;
                    emit(bytes);
                    return;
                }
                self.last_tid = tid;
                note(format!("[bam_rmdup_core] processing reference {}...", reference_name(tid)));
            }
        }
        let flag = r.flag();
        let mate_tid = r.next_ref_id();
        if flag & flags::PAIRED == 0
            || flag & (flags::UNMAP | flags::MUNMAP) != 0
            || (mate_tid >= 0 && tid != mate_tid)
        {
            emit(bytes);
        } else if r.tlen() > 0 {
            let key = ((pos as u64) << 32) | (r.tlen() as u32 as u64);
            let lib = self.libraries.index(library);
            if self.best.len() <= lib {
                self.best.resize_with(lib + 1, HashMap::new);
            }
            self.libraries.counts[lib].checked += 1;
            match self.best[lib].get(&key).copied().filter(|&i| i < self.held.len()) {
                Some(i) => {
                    self.libraries.counts[lib].removed += 1;
                    let kept = RecordRef::new(&self.held[i]);
                    let loser = if sum_qual(&kept) < sum_qual(&r) {
                        let name = kept.read_name().to_vec();
                        self.held[i] = bytes.to_vec();
                        name
                    } else {
                        r.read_name().to_vec()
                    };
                    if !self.removed_names.insert(loser.clone()) {
                        note(format!(
                            "[bam_rmdup_core] inconsistent BAM file for pair '{}'. Continue anyway.",
                            String::from_utf8_lossy(r.read_name())
                        ));
                    }
                }
                None => {
                    self.best[lib].insert(key, self.held.len());
                    self.held.push(bytes.to_vec());
                }
            }
        } else if !self.removed_names.remove(r.read_name()) {
            emit(bytes);
        }
        self.last_pos = pos;
    }

    /// The end of the input: what is held goes out.
    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8])) {
        self.flush(emit);
    }
}

/// One queued single-end read.
struct Queued {
    bytes: Vec<u8>,
    end: i64,
    score: i64,
    discarded: bool,
}

/// Single-end state (`bam_rmdupse_core`).
pub struct Single {
    force_se: bool,
    last_tid: i32,
    queue: VecDeque<Queued>,
    /// Reads that left the queue: a queue index is `shifted + position in queue`.
    shifted: usize,
    /// Per library: forward reads by start, reverse reads by end → queue index.
    left: Vec<HashMap<u32, usize>>,
    right: Vec<HashMap<u32, usize>>,
    pub libraries: Libraries,
}

/// samtools writes queued reads early once this many wait.
const QUEUE_CLEAR_SIZE: usize = 0x100000;
const MAX_POS: i64 = 0x7fff_ffff;

impl Single {
    pub fn new(force_se: bool) -> Self {
        Single {
            force_se,
            last_tid: -2,
            queue: VecDeque::new(),
            shifted: 0,
            left: Vec::new(),
            right: Vec::new(),
            libraries: Libraries::default(),
        }
    }

    fn queued_mut(&mut self, index: usize) -> Option<&mut Queued> {
        index.checked_sub(self.shifted).and_then(|i| self.queue.get_mut(i))
    }

    fn push_queue(&mut self, bytes: &[u8], end: i64, score: i64) -> usize {
        self.queue.push_back(Queued { bytes: bytes.to_vec(), end, score, discarded: false });
        self.shifted + self.queue.len() - 1
    }

    /// samtools' `dump_alignment`: at `MAX_POS` everything, else (over the queue limit) the
    /// reads before the first reverse read still reaching past `pos`.
    fn dump(&mut self, pos: i64, emit: &mut dyn FnMut(&[u8])) {
        if self.queue.len() <= QUEUE_CLEAR_SIZE && pos != MAX_POS {
            return;
        }
        while let Some(head) = self.queue.front() {
            if !head.discarded {
                let reverse = RecordRef::new(&head.bytes).flag() & flags::REVERSE != 0;
                if reverse && head.end > pos {
                    break;
                }
                emit(&head.bytes);
            }
            self.queue.pop_front();
            self.shifted += 1;
        }
        let (queue, shifted) = (&self.queue, self.shifted);
        let reaches_past = |i: &usize| {
            // A read that left the queue keeps its entry only if it reached past `pos`;
            // its end is gone with it, so it is dropped as samtools' freed element would be.
            i.checked_sub(shifted).and_then(|k| queue.get(k)).is_some_and(|q| q.end > pos)
        };
        for table in self.left.iter_mut().chain(self.right.iter_mut()) {
            table.retain(|_, i| reaches_past(i));
        }
    }

    pub fn push(&mut self, bytes: &[u8], library: Option<&[u8]>, emit: &mut dyn FnMut(&[u8])) {
        let r = RecordRef::new(bytes);
        let end = r.end_pos();
        let score = sum_qual(&r);
        if self.last_tid != r.ref_id() {
            if self.last_tid >= 0 {
                self.dump(MAX_POS, emit);
            }
            self.last_tid = r.ref_id();
        } else {
            self.dump(r.pos(), emit);
        }
        let flag = r.flag();
        if flag & flags::UNMAP != 0 || (flag & flags::PAIRED != 0 && !self.force_se) {
            self.push_queue(bytes, end, score);
            return;
        }
        let lib = self.libraries.index(library);
        if self.left.len() <= lib {
            self.left.resize_with(lib + 1, HashMap::new);
            self.right.resize_with(lib + 1, HashMap::new);
        }
        self.libraries.counts[lib].checked += 1;
        let reverse = flag & flags::REVERSE != 0;
        let key = if reverse { end as u32 } else { r.pos() as u32 };
        let found = if reverse { self.right[lib].get(&key) } else { self.left[lib].get(&key) };
        match found.copied() {
            Some(index) => {
                self.libraries.counts[lib].removed += 1;
                let better = self.queued_mut(index).is_some_and(|p| p.score < score);
                if !better {
                    return;
                }
                if reverse {
                    if let Some(p) = self.queued_mut(index) {
                        p.discarded = true;
                    }
                    let new = self.push_queue(bytes, end, score);
                    self.right[lib].insert(key, new);
                } else if let Some(p) = self.queued_mut(index) {
                    *p = Queued { bytes: bytes.to_vec(), end, score, discarded: false };
                }
            }
            None => {
                let new = self.push_queue(bytes, end, score);
                let table = if reverse { &mut self.right[lib] } else { &mut self.left[lib] };
                table.insert(key, new);
            }
        }
    }

    pub fn finish(&mut self, emit: &mut dyn FnMut(&[u8])) {
        self.dump(MAX_POS, emit);
    }
}
