//! What `mplp_func` does to each read before the pileup sees it: the filters, `-6`, BAQ and
//! `-C`, with the reference sequences it needs; shared by the serial walk and the blocks.

use std::sync::{Arc, Mutex};

use crate::error::Error;
use crate::io::fasta::Fasta;
use crate::ops::baq::{BaqFlags, cap_mapq::cap_mapq, prob_realn};
use crate::ops::depth::BedMask;
use crate::ops::mpileup::pileup::Pileup;
use crate::pipeline::sorted_input::SortedInput;
use crate::record::layout::flags;
use crate::record::{Header, RecordRef, edit};

use super::MpileupOptions;

/// Where a read's reference sequence comes from.
pub trait ReferenceSource {
    fn get(&mut self, tid: i32) -> Option<Arc<Vec<u8>>>;
}

/// The serial walk's sequences by id, the last three kept (`mplp_get_ref`).
pub struct References<'a> {
    pub fasta: Option<&'a Fasta>,
    pub header: &'a Header,
    pub cache: Vec<(i32, Arc<Vec<u8>>)>,
}

impl ReferenceSource for References<'_> {
    fn get(&mut self, tid: i32) -> Option<Arc<Vec<u8>>> {
        let fasta = self.fasta?;
        if let Some(i) = self.cache.iter().position(|c| c.0 == tid) {
            let hit = self.cache.remove(i);
            self.cache.insert(0, hit.clone());
            return Some(hit.1);
        }
        let name = self.header.ref_name(tid)?;
        // A failed fetch is not kept (`mplp_get_ref`): it is tried, and htslib's line
        // printed, again at the next read.
        let seq = Arc::new(fasta.fetch(name, 0, i64::MAX - 1)?);
        self.cache.insert(0, (tid, seq.clone()));
        self.cache.truncate(3);
        Some(seq)
    }
}

/// The blocks' sequences: one cache for every worker (a block is far shorter than its
/// reference, which is read once, not once a block). The blocks run only where the FASTA has
/// every reference, so a fetch does not fail but on a read error.
pub struct SharedReferences<'a> {
    pub fasta: Option<&'a Fasta>,
    pub header: &'a Header,
    pub cache: Mutex<Vec<(i32, Arc<Vec<u8>>)>>,
    /// Set when a fetch failed: the blocks then give way to the serial walk.
    pub failed: std::sync::atomic::AtomicBool,
}

impl ReferenceSource for &SharedReferences<'_> {
    fn get(&mut self, tid: i32) -> Option<Arc<Vec<u8>>> {
        let fasta = self.fasta?;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = cache.iter().find(|c| c.0 == tid) {
            return Some(hit.1.clone());
        }
        let Some(seq) = self.header.ref_name(tid).and_then(|n| fasta.fetch(n, 0, i64::MAX - 1))
        else {
            self.failed.store(true, std::sync::atomic::Ordering::Relaxed);
            return None;
        };
        let seq = Arc::new(seq);
        cache.insert(0, (tid, seq.clone()));
        // Blocks of two references are in flight at most where one ends.
        cache.truncate(3);
        Some(seq)
    }
}

/// One input: read as it goes, or (a CRAM region) the region's reads decoded up front.
pub enum Source {
    Sorted(SortedInput),
    Loaded(std::collections::VecDeque<Vec<u8>>),
}

impl Source {
    fn next_record(&mut self) -> Result<Option<Vec<u8>>, Error> {
        match self {
            Source::Sorted(input) => {
                let Some(r) = input.current()? else { return Ok(None) };
                let rec = r.bytes().to_vec();
                input.advance();
                Ok(Some(rec))
            }
            Source::Loaded(records) => Ok(records.pop_front()),
        }
    }
}

/// Where a read's messages go: the reference id and start of the read, and the line.
pub type Log<'l> = dyn FnMut(i32, i64, &str) + 'l;

/// The per-read state `mplp_func` keeps across calls.
pub struct Reader<'a> {
    pub o: &'a MpileupOptions,
    pub bed: Option<&'a BedMask>,
}

impl Reader<'_> {
    /// `mplp_func`: the next read that passes the filters, BAQ and `-C` applied.
    pub fn next(
        &self,
        src: &mut Source,
        refs: &mut dyn ReferenceSource,
        log: &mut Log<'_>,
    ) -> Result<Option<Vec<u8>>, Error> {
        let o = self.o;
        loop {
            let Some(mut rec) = src.next_record()? else { return Ok(None) };
            let r = RecordRef::new(&rec);
            let (tid, flag, pos) = (r.ref_id(), r.flag(), r.pos());
            if tid < 0 || flag & flags::UNMAP != 0 {
                continue;
            }
            if o.require_flags != 0 && o.require_flags & flag == 0 {
                continue;
            }
            if o.filter_flags & flag != 0 {
                continue;
            }
            if let Some(bed) = self.bed
                && o.all == 0
                && !bed.overlaps(tid, pos, r.end_pos())
            {
                continue;
            }
            if let Some(rgs) = &o.exclude_rg
                && let Some(rg) = r.aux_get(*b"RG")
                && matches!(rg.ty, b'Z' | b'H')
                && rgs.contains(rg.value)
            {
                continue;
            }
            if o.illumina13 {
                let at = r.aux_offset() - r.l_seq();
                let n = r.l_seq();
                for q in &mut rec[at..at + n] {
                    *q = q.saturating_sub(31);
                }
            }
            let reference = refs.get(tid);
            if let Some(seq) = &reference
                && (seq.len() as i64) <= pos
            {
                let line = format!(
                    "[mplp_func] Skipping because {pos} is outside of {} [ref:{tid}]",
                    seq.len()
                );
                log(tid, pos, &line);
                continue;
            }
            if let Some(seq) = &reference {
                if o.baq {
                    if o.redo_baq {
                        edit::delete_tag(&mut rec, *b"BQ");
                    }
                    let mut warnings = Vec::new();
                    let baq = BaqFlags { apply: true, extend: true };
                    let _ = prob_realn(&mut rec, seq, baq, &mut warnings);
                    for w in warnings {
                        log(tid, pos, &w);
                    }
                }
                if o.cap_q > 10 {
                    let q = cap_mapq(&rec, seq, o.cap_q);
                    if q < 0 {
                        continue;
                    }
                    let mapq = &mut rec[crate::record::layout::MAPQ];
                    if i32::from(*mapq) > q {
                        *mapq = q as u8;
                    }
                }
            }
            let r = RecordRef::new(&rec);
            if i32::from(r.mapq()) < o.min_mapq {
                continue;
            }
            let flag = r.flag();
            if !o.count_orphans && flag & flags::PAIRED != 0 && flag & flags::PROPER_PAIR == 0 {
                continue;
            }
            return Ok(Some(rec));
        }
    }
}

/// `bam_plp64_auto` for one input: its next column, reading as many reads as it needs.
pub fn next_column(
    reader: &Reader<'_>,
    src: &mut Source,
    plp: &mut Pileup,
    refs: &mut dyn ReferenceSource,
    log: &mut Log<'_>,
) -> Result<Option<(i32, i64)>, Error> {
    let failed =
        |m: String| Error::Bare(format!("{m}\nsamtools mpileup: error reading from input file"));
    if let Some(p) = plp.next_column().map_err(failed)? {
        return Ok(Some(p));
    }
    if plp.is_finished() {
        return Ok(None);
    }
    while let Some(rec) = reader.next(src, refs, log)? {
        plp.push(rec).map_err(failed)?;
        if let Some(p) = plp.next_column().map_err(failed)? {
            return Ok(Some(p));
        }
    }
    plp.finish();
    plp.next_column().map_err(failed)
}
