//! One reference's (or region's) FASTA/FASTQ consensus joined from samtools' threaded blocks
//! (`append_cons` in samtools 1.24's bam_consensus.c): each block's sequence runs from its
//! first called base to its last column; the gaps before and after are the reference's bases or
//! Ns, kept in the output only where `-a` asks or more sequence follows.

use super::emit::{
    BlockSequence, ReferenceSequences, Span, dump_fastq_to, with_room_for_insertions,
};
use super::{ConsensusError, Format, Options};

/// `-T`'s sequence for the gaps between blocks (`update_ref` on samtools' main thread): fetched
/// when a gap is filled, kept until another reference is asked for.
pub struct GapReference {
    reader: Option<Box<dyn ReferenceSequences>>,
    cached: Option<(i32, Vec<u8>)>,
}

impl GapReference {
    pub fn new(reader: Option<Box<dyn ReferenceSequences>>) -> Self {
        GapReference { reader, cached: None }
    }

    /// The bases of `tid` (`None`: no `-T`). A reference `-T` lacks is asked for (and warned
    /// about) again each time, as samtools keeps no failed fetch.
    pub fn get(&mut self, tid: i32) -> Result<Option<&[u8]>, ConsensusError> {
        let Some(reader) = self.reader.as_deref_mut() else { return Ok(None) };
        if self.cached.as_ref().is_none_or(|c| c.0 != tid) {
            self.cached = Some((tid, reader.fetch(tid).ok_or(ConsensusError::Reference)?));
        }
        Ok(self.cached.as_ref().map(|c| &c.1[..]))
    }
}

pub struct Joined {
    seq: Vec<u8>,
    qual: Vec<u8>,
    /// samtools' `used_start` (-1 until something is kept) and `used_end` (the length written).
    used_start: i64,
    used_end: usize,
}

impl Default for Joined {
    fn default() -> Self {
        Joined { seq: Vec::new(), qual: Vec::new(), used_start: -1, used_end: 0 }
    }
}

impl Joined {
    /// `ref_or_Ns`: `n` positions from `pos` (0-based): the reference's bases at `-T`'s quality,
    /// else Ns of quality 0.
    fn ref_or_ns(&mut self, o: &Options, reference: Option<&[u8]>, pos: i64, n: i64) {
        // FASTA writes no qualities: none are kept.
        let fastq = o.format == Format::Fastq;
        for i in pos..pos + n.max(0) {
            match reference {
                Some(r) => {
                    self.seq.push(r.get(i as usize).copied().unwrap_or(b'N'));
                    if fastq {
                        self.qual.push((o.ref_qual + 33) as u8);
                    }
                }
                None => {
                    self.seq.push(b'N');
                    if fastq {
                        self.qual.push(b'!');
                    }
                }
            }
        }
    }

    /// `append_cons`: the sequence of `block` (the span it was walked on) appended. A gap of a
    /// reference `-T` lacks ends the append there (samtools' failed `ref_or_Ns`, whose failure
    /// goes unchecked).
    pub fn append(&mut self, o: &Options, block: Span, b: &BlockSequence, gaps: &mut GapReference) {
        let all = o.all_bases > 0;
        if all || self.used_start >= 0 {
            let n = match b.first_base {
                None => block.end - block.beg,
                Some(_) => b.first_pos - block.beg - 1,
            };
            if n != 0 {
                let Ok(reference) = gaps.get(block.tid) else { return };
                self.ref_or_ns(o, reference, block.beg, n);
                if self.used_start == -1 {
                    self.used_start = 0;
                }
                if all {
                    self.used_end = self.seq.len();
                }
            }
        }
        let from = b.first_base.unwrap_or(0);
        let called = &b.seq[from.min(b.seq.len())..];
        if !called.is_empty() {
            self.seq.extend_from_slice(called);
            self.qual.extend_from_slice(&b.qual[from.min(b.qual.len())..]);
            self.used_end = self.seq.len();
            self.used_start = 0;
            let n = block.end - b.last_pos;
            if n != 0 {
                let Ok(reference) = gaps.get(block.tid) else { return };
                self.ref_or_ns(o, reference, b.last_pos, n);
                if all {
                    self.used_end = self.seq.len();
                }
            }
        }
    }

    /// A reference without reads under `-aa`: its whole length from the reference or Ns.
    pub fn uncovered(o: &Options, len: i64, reference: Option<&[u8]>) -> Joined {
        let mut joined = Joined::default();
        joined.ref_or_ns(o, reference, 0, len);
        joined.used_end = joined.seq.len();
        joined
    }

    /// Room for `n` bases at once (a reference's length from its first block), and for
    /// insertions: grown by doubling, the joined sequence peaked at four times its length.
    pub fn reserve(&mut self, o: &Options, n: usize) {
        let n = with_room_for_insertions(n);
        if self.seq.capacity() == 0 {
            self.seq.reserve_exact(n);
            if o.format == Format::Fastq {
                self.qual.reserve_exact(n);
            }
        }
    }

    /// `dump_fastq` of what is kept, named `name`, handed to `sink` a piece at a time.
    pub fn dump_to<E>(
        &self,
        o: &Options,
        name: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = self.used_end.min(self.seq.len());
        let q = if o.format == Format::Fastq { &self.qual[..n.min(self.qual.len())] } else { &[] };
        dump_fastq_to(o, name, &self.seq[..n], q, sink)
    }
}
