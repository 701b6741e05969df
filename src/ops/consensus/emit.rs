//! The consensus columns turned into text: pileup lines (`basic_pileup`) or one FASTA/FASTQ
//! sequence per reference or region (`basic_fasta` and the tail of `pileup_loop_serial` in
//! samtools' bam_consensus.c), with `-a` filling uncovered positions from the reference or Ns.

use super::column_counts::BaseCounts;
use super::pileup::PileupRead;
use super::{ConsensusError, Format, Options};

/// The reference sequences (`-T`), fetched by reference id.
pub trait ReferenceSequences {
    fn fetch(&mut self, tid: i32) -> Option<Vec<u8>>;
}

/// Where a finished FASTA/FASTQ sequence goes, a piece at a time (the output, past the
/// emitter's `out`: a whole reference formatted at once was 2 MB more of a serial walk's peak).
pub type Sink<'s> = dyn FnMut(&[u8]) -> std::io::Result<()> + 's;

/// What calls one column's base: the simple or the bayesian mode.
pub trait BaseCaller {
    /// The base and its quality, from the column's reads (or their `counts`, where the
    /// pileup counted them).
    fn call(
        &mut self,
        reads: &mut [Box<PileupRead>],
        counts: Option<&BaseCounts>,
        pos: i64,
    ) -> (u8, i32);
}

/// The region being walked (htslib's iterator: 0-based `beg`, exclusive `end`).
#[derive(Clone, Copy)]
pub struct Span {
    pub tid: i32,
    pub beg: i64,
    pub end: i64,
}

pub struct Emitter<'a> {
    o: &'a Options,
    names: &'a [Vec<u8>],
    lens: &'a [i64],
    reference: Option<&'a mut dyn ReferenceSequences>,
    pub iter: Option<Span>,
    last_tid: i32,
    last_pos: i64,
    /// The reference of `ref_tid` (samtools' `c->ref`), when `-T` is given and it was found.
    refseq: Option<Vec<u8>>,
    ref_tid: i32,
    seq: Vec<u8>,
    qual: Vec<u8>,
    /// A threaded block's first column (1-based; samtools' `first_pos`) and where in `seq`
    /// its first called base went (`ks_ins_start`), for joining the blocks.
    first_pos: i64,
    first_base: Option<usize>,
    /// Text ready to be written.
    pub out: Vec<u8>,
}

/// What one of samtools' threaded blocks made (`basic_fasta` run on the block alone): its
/// sequence from its first covered column on, and where it starts and ends.
pub struct BlockSequence {
    pub seq: Vec<u8>,
    pub qual: Vec<u8>,
    pub first_base: Option<usize>,
    pub first_pos: i64,
    pub last_pos: i64,
}

impl<'a> Emitter<'a> {
    pub fn new(
        o: &'a Options,
        names: &'a [Vec<u8>],
        lens: &'a [i64],
        reference: Option<&'a mut dyn ReferenceSequences>,
    ) -> Self {
        Emitter {
            o,
            names,
            lens,
            reference,
            iter: None,
            last_tid: -1,
            last_pos: -1,
            refseq: None,
            ref_tid: -1,
            seq: Vec::new(),
            qual: Vec::new(),
            first_pos: i64::MAX,
            first_base: None,
            out: Vec::new(),
        }
    }

    /// Starts a BED interval afresh (`pileup_loop_serial`'s reset).
    pub fn start_region(&mut self, span: Span) {
        self.seq.clear();
        self.qual.clear();
        self.last_tid = -1;
        self.iter = Some(span);
        self.last_pos = span.beg;
    }

    fn name(&self, tid: i32) -> &[u8] {
        self.names.get(tid as usize).map_or(&[][..], |n| &n[..])
    }

    fn len(&self, tid: i32) -> i64 {
        if tid < 0 { 0 } else { self.lens.get(tid as usize).copied().unwrap_or(0) }
    }

    /// `update_ref`: makes `refseq` the sequence of `tid`.
    fn update_ref(&mut self, tid: i32) -> Result<(), ConsensusError> {
        let Some(reference) = self.reference.as_deref_mut() else { return Ok(()) };
        if tid == self.ref_tid && self.refseq.is_some() {
            return Ok(());
        }
        self.ref_tid = tid;
        self.refseq = reference.fetch(tid);
        match self.refseq {
            Some(_) => Ok(()),
            None => Err(ConsensusError::Reference),
        }
    }

    fn ref_base(&self, i: i64) -> Option<u8> {
        self.refseq.as_ref().map(|r| r.get(i as usize).copied().unwrap_or(b'N'))
    }

    /// `empty_pileup2`: pileup lines for the uncovered positions `[start, end)`. A reference
    /// `-T` lacks still gets its lines (Ns) before the failure, as samtools writes them.
    fn empty_pileup(&mut self, tid: i32, start: i64, end: i64) -> Result<(), ConsensusError> {
        let with_ref = self.reference.is_some();
        let fetched = if with_ref { self.update_ref(tid) } else { Ok(()) };
        for i in start..end {
            let base = if with_ref { self.ref_base(i).unwrap_or(b'N') } else { b'N' };
            self.out.extend_from_slice(self.names.get(tid as usize).map_or(&[][..], |n| &n[..]));
            self.out.extend_from_slice(format!("\t{}\t0\t0\t", i + 1).as_bytes());
            self.out.push(base);
            self.out.extend_from_slice(b"\t0\t*\t*\n");
        }
        fetched
    }

    /// Whether `pos` (1-based) lies outside the region walked.
    fn outside(&self, pos: i64) -> bool {
        self.iter.is_some_and(|it| it.beg >= pos || it.end < pos)
    }

    /// `basic_pileup`: one pileup line for the column.
    pub fn pileup_column(
        &mut self,
        caller: &mut dyn BaseCaller,
        reads: &mut [Box<PileupRead>],
        tid: i32,
        pos: i64,
        nth: i32,
    ) -> Result<(), ConsensusError> {
        if (!self.o.show_ins && nth != 0) || self.outside(pos) {
            return Ok(());
        }
        if self.o.all_bases > 0 {
            if tid != self.last_tid {
                if self.last_tid >= 0 {
                    let mut len = self.len(self.last_tid);
                    if let Some(it) = self.iter {
                        len = len.min(it.end);
                    }
                    self.empty_pileup(self.last_tid, self.last_pos, len)?;
                }
                self.last_pos = self.iter.map_or(0, |it| it.beg);
            }
            if self.iter.is_none() && tid > self.last_tid && self.o.all_bases > 1 {
                loop {
                    self.last_tid += 1;
                    if self.last_tid >= tid {
                        break;
                    }
                    self.empty_pileup(self.last_tid, 0, self.len(self.last_tid))?;
                }
            }
            if self.last_pos >= 0 && pos > self.last_pos + 1 {
                self.empty_pileup(tid, self.last_pos, pos - 1)?;
            } else if self.last_pos < 0 {
                self.empty_pileup(tid, self.iter.map_or(0, |it| it.beg), pos - 1)?;
            }
        }
        let (cb, cq) = caller.call(reads, None, pos);
        if !self.o.show_del && cb == b'*' {
            return Ok(());
        }
        let out = &mut self.out;
        out.extend_from_slice(self.names.get(tid as usize).map_or(&[][..], |n| &n[..]));
        out.extend_from_slice(format!("\t{pos}\t{nth}\t{}\t", reads.len()).as_bytes());
        out.push(cb);
        out.extend_from_slice(format!("\t{cq}\t").as_bytes());
        for p in reads.iter() {
            out.push(match (p.is_rev, p.base) {
                (true, b'*') => b'#',
                (true, b) => b.to_ascii_lowercase(),
                (false, b) => b,
            });
        }
        out.push(b'\t');
        out.extend(reads.iter().map(|p| (p.qual.min(93) + 33) as u8));
        out.push(b'\n');
        self.last_pos = pos;
        self.last_tid = tid;
        Ok(())
    }

    /// The end of one of samtools' threaded blocks in pileup format: with `-a` the lines of
    /// its positions after the last one written (`pileup_job`).
    pub fn finish_block_pileup(&mut self, block: Span) -> Result<(), ConsensusError> {
        if self.o.all_bases > 0 && self.last_pos < block.end {
            self.empty_pileup(block.tid, block.beg.max(self.last_pos), block.end)?;
        }
        Ok(())
    }

    /// `-aa` in pileup format: the lines of a reference no read is on.
    pub fn empty_reference_pileup(&mut self, tid: i32) -> Result<(), ConsensusError> {
        self.empty_pileup(tid, 0, self.len(tid))
    }

    /// One base of the sequence and (FASTQ only: FASTA never writes them) its quality.
    #[inline]
    fn push(&mut self, base: u8, qual: u8) {
        self.seq.push(base);
        if self.o.format == Format::Fastq {
            self.qual.push(qual);
        }
    }

    /// Room for the sequence of `tid` (or of the region walked) at once, a quarter more for
    /// insertions: grown by doubling, a 2 Mb reference's sequence peaked at 8 MiB (the old and
    /// new buffers both live at the last move). Pages never written stay unmapped, so room a
    /// sparse sequence does not use costs no memory.
    fn reserve_for(&mut self, tid: i32) {
        let len = match self.iter {
            Some(it) => it.end.min(self.len(tid)) - it.beg,
            None => self.len(tid),
        };
        let len = with_room_for_insertions(usize::try_from(len).unwrap_or(0));
        self.seq.reserve_exact(len);
        if self.o.format == Format::Fastq {
            self.qual.reserve_exact(len);
        }
    }

    /// Appends `n` uncovered positions from `from` (0-based): the reference's bases at `-T`'s
    /// quality, else Ns of quality 0.
    fn fill(&mut self, from: i64, n: i64) {
        for i in 0..n.max(0) {
            match self.ref_base(from + i) {
                Some(b) => self.push(b, (self.o.ref_qual + 33) as u8),
                None => self.push(b'N', b'!'),
            }
        }
    }

    /// `basic_fasta`: the column's call appended to the sequence being built.
    pub fn fasta_column(
        &mut self,
        caller: &mut dyn BaseCaller,
        reads: &mut [Box<PileupRead>],
        counts: Option<&BaseCounts>,
        at: (i32, i64, i32),
        sink: &mut Sink<'_>,
    ) -> Result<(), ConsensusError> {
        let (tid, pos, nth) = at;
        if !self.wants_column(pos, nth) {
            return Ok(());
        }
        let (cb, cq) = caller.call(reads, counts, pos);
        self.fasta_call(tid, pos, nth, cb, cq, sink)
    }

    /// Whether the column at `pos` (1-based), its `nth` inserted base, is output at all.
    pub fn wants_column(&self, pos: i64, nth: i32) -> bool {
        (self.o.show_ins || nth == 0) && !self.outside(pos)
    }

    /// `basic_fasta` once the column's base `cb` and quality `cq` are called (the call needs
    /// only the column's reads, so region chunks can make it on other threads).
    pub fn fasta_call(
        &mut self,
        tid: i32,
        pos: i64,
        nth: i32,
        cb: u8,
        cq: i32,
        sink: &mut Sink<'_>,
    ) -> Result<(), ConsensusError> {
        if !self.wants_column(pos, nth) {
            return Ok(());
        }
        self.first_pos = self.first_pos.min(pos);
        while tid != self.last_tid {
            if self.last_tid != -1 {
                if self.o.all_bases > 0 {
                    let n = match self.iter {
                        Some(it) => {
                            self.last_pos = self.last_pos.max(it.beg - 1);
                            it.end
                        }
                        None => i64::MAX,
                    };
                    let n = n.min(self.len(self.last_tid)) - self.last_pos;
                    if n > 0 {
                        if self.refseq.is_some() {
                            self.update_ref(self.last_tid)?;
                        }
                        self.fill(self.last_pos, n);
                    }
                }
                let name = self.name(self.last_tid).to_vec();
                self.dump(&name, sink)?;
            }
            self.update_ref(tid)?;
            self.seq.clear();
            self.qual.clear();
            self.reserve_for(tid);
            if self.iter.is_none() && self.o.all_bases > 1 {
                self.last_tid += 1;
                if self.last_tid < tid {
                    self.last_pos = 0;
                    continue;
                }
            }
            self.last_tid = tid;
            self.last_pos = match self.iter {
                Some(it) if self.o.all_bases > 0 => it.beg,
                None if self.o.all_bases > 0 => 0,
                _ => pos - 1,
            };
        }
        if !self.o.show_del && cb == b'*' {
            self.last_pos = pos;
            self.last_tid = tid;
            return Ok(());
        }
        if self.o.mark_ins && nth != 0 && cb != b'*' {
            self.push(b'_', b'_');
        }
        if pos > self.last_pos && (self.last_pos > 0 || self.o.all_bases > 0) {
            self.update_ref(tid)?;
            self.fill(self.last_pos, pos - (self.last_pos + 1));
        }
        // samtools also names inserted bases here; `cb != '*'` already covers them.
        if cb != b'*' || (pos > self.last_pos && self.o.show_del) {
            self.first_base.get_or_insert(self.seq.len());
            self.push(cb, (cq.min(93) + 33) as u8);
        }
        self.last_pos = pos;
        self.last_tid = tid;
        Ok(())
    }

    /// The end of the input or region in pileup format: `-a`'s uncovered tail, and with `-aa`
    /// the references no read reached.
    pub fn finish_pileup(&mut self) -> Result<(), ConsensusError> {
        if self.o.all_bases > 0 {
            let tid = self.iter.map_or(self.last_tid, |it| it.tid);
            let mut len = self.len(tid);
            let mut pos = self.last_pos;
            if let Some(it) = self.iter {
                len = len.min(it.end);
                pos = pos.max(it.beg);
            }
            self.empty_pileup(tid, pos, len)?;
        }
        if self.iter.is_none() && self.o.all_bases > 1 {
            loop {
                self.last_tid += 1;
                if self.last_tid as usize >= self.lens.len() {
                    break;
                }
                self.empty_pileup(self.last_tid, 0, self.len(self.last_tid))?;
            }
        }
        Ok(())
    }

    /// The end of the input or region in FASTA/FASTQ: the last sequence written, with `-a`'s
    /// tail, then with `-aa` every reference no read reached.
    pub fn finish_fasta(&mut self, sink: &mut Sink<'_>) -> Result<(), ConsensusError> {
        loop {
            if self.o.all_bases > 0 {
                let tid = self.iter.map_or(self.last_tid, |it| it.tid);
                let mut len = self.len(tid);
                let mut pos = self.last_pos;
                if let Some(it) = self.iter {
                    len = len.min(it.end);
                    pos = pos.max(it.beg);
                    self.last_tid = it.tid;
                }
                if pos < len {
                    self.update_ref(self.last_tid)?;
                    self.fill(pos, len - pos);
                }
            }
            if self.last_tid >= 0 {
                let tid = self.iter.map_or(self.last_tid, |it| it.tid);
                let len = self.len(tid) as i32 as i64;
                let mut name = self.name(self.last_tid).to_vec();
                if let Some(it) = self.iter.filter(|it| it.beg > 0 || it.end < len) {
                    name.extend_from_slice(
                        format!(":{}-{}", it.beg + 1, it.end.min(len)).as_bytes(),
                    );
                }
                self.dump(&name, sink)?;
            }
            if self.iter.is_some() || self.o.all_bases < 2 {
                return Ok(());
            }
            self.last_tid += 1;
            if self.last_tid as usize >= self.lens.len() {
                return Ok(());
            }
            self.last_pos = 0;
            self.seq.clear();
            self.qual.clear();
        }
    }

    /// `dump_fastq`: the sequence built, wrapped at `-l`'s length, to `sink` after the text
    /// `out` holds.
    fn dump(&mut self, name: &[u8], sink: &mut Sink<'_>) -> Result<(), ConsensusError> {
        if !self.out.is_empty() {
            sink(&self.out).map_err(ConsensusError::Write)?;
            self.out.clear();
        }
        dump_fastq_to(self.o, name, &self.seq, &self.qual, sink).map_err(ConsensusError::Write)
    }

    /// The threaded block this emitter walked alone (its `iter` the block).
    pub fn take_block(&mut self) -> BlockSequence {
        BlockSequence {
            seq: std::mem::take(&mut self.seq),
            qual: std::mem::take(&mut self.qual),
            first_base: self.first_base,
            first_pos: self.first_pos,
            last_pos: self.last_pos,
        }
    }
}

/// `len` bases and a quarter more (`--show-ins` columns): what a sequence buffer reserves.
pub fn with_room_for_insertions(len: usize) -> usize {
    len + len / 4
}

/// Text handed to [`dump_fastq_to`]'s sink at a time.
const DUMP_PIECE: usize = 64 << 10;

/// `dump_fastq`: `seq` (and for FASTQ `qual`) named `name`, wrapped at `-l`'s length, handed
/// to `sink` a piece of about [`DUMP_PIECE`] bytes at a time, so a whole reference's sequence
/// is never formatted at once.
pub fn dump_fastq_to<E>(
    o: &Options,
    name: &[u8],
    seq: &[u8],
    qual: &[u8],
    sink: &mut dyn FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    if seq.is_empty() {
        return Ok(());
    }
    let fastq = o.format == Format::Fastq;
    let mut out = Vec::with_capacity(DUMP_PIECE + o.line_len.clamp(1, DUMP_PIECE) + 1);
    out.push(if fastq { b'@' } else { b'>' });
    out.extend_from_slice(name);
    out.push(b'\n');
    let width = o.line_len.max(1);
    let mut lines = |text: &[u8], out: &mut Vec<u8>| -> Result<(), E> {
        for line in text.chunks(width) {
            out.extend_from_slice(line);
            out.push(b'\n');
            if out.len() >= DUMP_PIECE {
                sink(out)?;
                out.clear();
            }
        }
        Ok(())
    };
    lines(seq, &mut out)?;
    if fastq {
        out.extend_from_slice(b"+\n");
        lines(qual, &mut out)?;
    }
    if out.is_empty() { Ok(()) } else { sink(&out) }
}
