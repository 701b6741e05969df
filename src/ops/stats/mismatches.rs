//! The reference a report reads with `-r`: a window of it as base codes (samtools' `rseq_buf`),
//! its GC content, and the mismatches per cycle and quality of reads against it (`MPC`).

use super::{QUALITY_SLOTS, ReferenceSource};
use crate::record::layout::flags;
use crate::record::{Header, RecordRef, cigar};

#[derive(Default)]
pub struct ReferenceWindow {
    /// Base codes 1, 2, 4, 8 for A, C, G, T; 0 for anything else and past the fetched part.
    bases: Vec<u8>,
    /// samtools' `mrseq_buf`: how many bases a fetch asks for.
    capacity: i64,
    /// samtools' `rseq_pos`: reference position of `bases[0]` (-1: nothing fetched yet).
    pub start: i64,
    /// samtools' `nrseq_buf`: the bases the last fetch returned.
    pub fetched: i64,
}

fn base_code(b: u8) -> u8 {
    match b {
        b'A' | b'a' => 1,
        b'C' | b'c' => 2,
        b'G' | b'g' => 4,
        b'T' | b't' => 8,
        _ => 0,
    }
}

impl ReferenceWindow {
    pub fn new() -> ReferenceWindow {
        ReferenceWindow { start: -1, ..ReferenceWindow::default() }
    }

    /// samtools' `realloc_rseq_buffer`: room for ten reads' worth or a GC-depth bin.
    pub fn reserve(&mut self, cycles: usize, bin_size: i32) {
        let n = (cycles as i64 * 10).max(i64::from(bin_size));
        if self.capacity < n {
            self.capacity = n;
        }
    }

    /// samtools' `read_ref_seq`: the window from `pos`, long enough to reach `end`.
    pub fn fetch(
        &mut self,
        source: &dyn ReferenceSource,
        header: &Header,
        tid: i32,
        pos: i64,
        end: i64,
    ) -> Result<(), String> {
        if end >= pos + self.capacity - 1 && self.capacity < end - pos {
            self.capacity = end - pos;
        }
        let name = header.ref_name(tid).unwrap_or_default();
        let seq = source.fetch(name, pos, pos + self.capacity - 1).ok_or_else(|| {
            format!("Failed to fetch the sequence \"{}\"", String::from_utf8_lossy(name))
        })?;
        self.bases.clear();
        self.bases.extend(seq.iter().map(|&b| base_code(b)));
        self.bases.resize(self.capacity.max(seq.len() as i64) as usize, 0);
        self.fetched = seq.len() as i64;
        self.start = pos;
        Ok(())
    }

    /// samtools' `fai_gc_content`: the GC share of the A/C/G/T bases of `[pos, pos + len)`.
    pub fn gc_content(&self, pos: i64, len: i64) -> f32 {
        let from = pos - self.start;
        let to = (from + len).min(self.fetched);
        let (mut gc, mut count) = (0u32, 0u32);
        for i in from.max(0)..to.max(from.max(0)) {
            match self.bases[i as usize] {
                2 | 4 => {
                    gc += 1;
                    count += 1;
                }
                1 | 8 => count += 1,
                _ => {}
            }
        }
        if count == 0 { 0.0 } else { gc as f32 / count as f32 }
    }

    /// samtools' `count_mismatches_per_cycle`: adds the read's Ns and mismatches to `table`
    /// (`QUALITY_SLOTS` per cycle: Ns in slot 0, mismatches at their quality plus one).
    pub fn count_mismatches(
        &self,
        r: &RecordRef<'_>,
        read_len: usize,
        table: &mut Vec<u64>,
        header: &Header,
    ) -> Result<(), String> {
        let forward = r.flag() & flags::REVERSE == 0;
        let (mut iread, mut icycle) = (0usize, 0usize);
        let mut iref = r.pos() - self.start;
        let quals = r.qual();
        let where_ = || {
            let name = header.ref_name(r.ref_id()).unwrap_or_default();
            format!("{}:{}", String::from_utf8_lossy(name), r.pos() + 1)
        };
        for c in r.cigar() {
            let (op, n) = (cigar::op(c), cigar::len(c) as usize);
            match op {
                cigar::INS | cigar::SOFT_CLIP => {
                    iread += n;
                    icycle += n;
                    continue;
                }
                cigar::DEL => {
                    iref += n as i64;
                    continue;
                }
                cigar::HARD_CLIP => {
                    icycle += n;
                    continue;
                }
                cigar::REF_SKIP | cigar::PAD => continue,
                cigar::MATCH | cigar::EQUAL | cigar::DIFF => {}
                _ => {
                    let name = String::from_utf8_lossy(r.read_name()).into_owned();
                    return Err(format!("TODO: cigar {op}, {} {name}", where_()));
                }
            }
            if n as i64 + iref > self.fetched {
                let qname = String::from_utf8_lossy(r.read_name()).into_owned();
                return Err(format!("FIXME: {n}+{iref} > {}, {qname}, {}", self.fetched, where_()));
            }
            for _ in 0..n {
                let read_base = r.base_code(iread);
                let ref_base = self.bases[iref as usize];
                let cycle =
                    if forward { icycle as i64 } else { read_len as i64 - icycle as i64 - 1 };
                // A CIGAR longer than the read has no cycle to count at.
                let Ok(cycle) = usize::try_from(cycle) else {
                    return Ok(());
                };
                if read_base == 15 {
                    slot(table, cycle * QUALITY_SLOTS);
                } else if ref_base != 0 && read_base != 0 && ref_base != read_base {
                    let q = quals[iread].wrapping_add(1) as usize;
                    slot(table, cycle * QUALITY_SLOTS + q);
                }
                iref += 1;
                iread += 1;
                icycle += 1;
            }
        }
        Ok(())
    }
}

fn slot(table: &mut Vec<u64>, i: usize) {
    if table.len() <= i {
        table.resize((i / QUALITY_SLOTS + 1) * QUALITY_SLOTS, 0);
    }
    table[i] += 1;
}
