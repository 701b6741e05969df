//! `ampliconstats`' counts of one reference (samtools 1.24 `astats_t`): per file (local) and
//! over all files (global), with `accumulate_stats`, `stats_reset` and `append_lstats`.
//!
//! Template coordinates are counted in khash tables modelled bucket for bucket: the report
//! lists them in bucket order, and the local table is reset (not rebuilt) between files.

use crate::io::index::khash::BinTable;
use crate::ops::ampliconstats::{Amplicon, MAX_DEPTHS, PositionLookup};
use crate::record::RecordRef;
use crate::record::layout::flags;

/// The filters and adjustments of the command line that counting needs.
#[derive(Clone, Copy, Debug)]
pub struct CountOptions {
    pub flag_require: u32,
    pub flag_filter: u32,
    /// `-t`.
    pub tlen_adjust: i64,
}

pub struct AmpStats {
    pub nseq: i32,
    pub nfiltered: i32,
    pub nfailprimer: i32,
    pub max_amp_len: usize,
    pub nreads: Vec<i64>,
    pub nreads2: Vec<i64>,
    pub nfull_reads: Vec<f64>,
    pub nrperc: Vec<f64>,
    pub nrperc2: Vec<f64>,
    pub nbases: Vec<i64>,
    pub nbases2: Vec<i64>,
    /// Per amplicon, `max_amp_len` counts from its outer left end.
    pub coverage: Vec<i64>,
    pub covered_perc: Vec<[f64; MAX_DEPTHS]>,
    pub covered_perc2: Vec<[f64; MAX_DEPTHS]>,
    /// Per amplicon + 1 (0: no amplicon): start,end → frequency | status << 32.
    pub(crate) tcoord: Vec<BinTable<i64, u64>>,
    pub amp_dist: Vec<[i32; 3]>,
    pub depth_valid: Vec<i32>,
    pub depth_all: Vec<i32>,
    /// Read name → the first mate's start | end << 32, for overlap removal (FxHash: one
    /// lookup per read, SipHash cost 5 % of the run).
    qend: rustc_hash::FxHashMap<Vec<u8>, i64>,
}

impl AmpStats {
    pub fn new(len: i64, namp: usize, max_amp_len: usize) -> AmpStats {
        let len = len.max(0) as usize;
        AmpStats {
            nseq: 0,
            nfiltered: 0,
            nfailprimer: 0,
            max_amp_len,
            nreads: vec![0; namp],
            nreads2: vec![0; namp],
            nfull_reads: vec![0.0; namp],
            nrperc: vec![0.0; namp],
            nrperc2: vec![0.0; namp],
            nbases: vec![0; namp],
            nbases2: vec![0; namp],
            coverage: vec![0; namp * max_amp_len],
            covered_perc: vec![[0.0; MAX_DEPTHS]; namp],
            covered_perc2: vec![[0.0; MAX_DEPTHS]; namp],
            tcoord: (0..=namp).map(|_| BinTable::default()).collect(),
            amp_dist: vec![[0; 3]; namp],
            depth_valid: vec![0; len],
            depth_all: vec![0; len],
            qend: rustc_hash::FxHashMap::default(),
        }
    }

    /// The matching sequences: neither filtered nor failing the primer match.
    pub fn matching(&self) -> i32 {
        self.nseq - self.nfiltered - self.nfailprimer
    }

    /// `stats_reset`: zeroes the counts; common template coordinates (5 or more, or with a
    /// status) keep their buckets at 0, rare ones are deleted.
    pub fn reset(&mut self) {
        let namp = self.nreads.len();
        let len = self.depth_all.len();
        let tcoord = std::mem::take(&mut self.tcoord);
        *self = AmpStats { tcoord, ..AmpStats::new(len as i64, namp, self.max_amp_len) };
        for table in &mut self.tcoord {
            for (bucket, _) in table.live_buckets() {
                if *table.value(bucket) < 5 {
                    table.remove_bucket(bucket);
                } else {
                    *table.value_mut(bucket) = 0;
                }
            }
        }
    }

    /// `accumulate_stats` for one record of this reference.
    pub fn accumulate(
        &mut self,
        r: &RecordRef<'_>,
        amps: &[Amplicon],
        lookup: &PositionLookup,
        len: i64,
        opts: &CountOptions,
    ) {
        self.nseq += 1;
        let flag = u32::from(r.flag());
        if flag & opts.flag_require != opts.flag_require || flag & opts.flag_filter != 0 {
            self.nfiltered += 1;
            return;
        }
        let paired = flag & u32::from(flags::PAIRED) != 0;
        let reverse = flag & u32::from(flags::REVERSE) != 0;
        let (mut start, mut end) = (r.pos(), r.end_pos());
        let mut mstart = start;
        let (mut prev_start, mut prev_end) = (0i64, 0i64);
        if paired && flag & u32::from(flags::SUPPLEMENTARY | flags::SECONDARY) == 0 {
            match self.qend.remove(r.read_name()) {
                Some(v) => {
                    prev_start = i64::from(v as i32);
                    prev_end = i64::from((v >> 32) as i32);
                    mstart = mstart.max(prev_end);
                }
                None => {
                    self.qend.insert(r.read_name().to_vec(), start | (end << 32));
                }
            }
        }
        let mut i = mstart;
        while i < end && i < len {
            if i >= 0 {
                self.depth_all[i as usize] += 1;
            }
            i += 1;
        }
        if i < end {
            eprintln!(
                "samtools ampliconstats: record {} overhangs end of reference",
                String::from_utf8_lossy(r.read_name())
            );
        }
        let anum =
            if reverse || !paired { lookup.end(end - 1) } else { lookup.start(start) } as i64;
        if anum == -1 {
            self.nfailprimer += 1;
        }
        if anum >= 0 {
            let a = &amps[anum as usize];
            let c = end.min(a.min_right + 1) - start.max(a.max_left);
            if c > 0 {
                self.nreads[anum as usize] += 1;
                self.nbases[anum as usize] += c;
                start = start.max(0);
                end = end.min(len);
                let offset = a.min_left - 1;
                let row = anum as usize * self.max_amp_len;
                for i in start.max(a.min_left - 1)..end.min(a.max_right) {
                    self.coverage[row + (i - offset) as usize] += 1;
                }
            } else {
                self.nfailprimer += 1;
            }
        }
        let tlen = r.tlen();
        let mut oth_anum = -1;
        let mut t_end;
        if paired {
            t_end = if reverse { end } else { start } + tlen;
            t_end += if tlen > 0 { -opts.tlen_adjust } else { opts.tlen_adjust };
            if t_end > 0 && t_end < len && tlen != 0 {
                oth_anum = if reverse { lookup.start(t_end) } else { lookup.end(t_end) } as i64;
            }
        } else {
            oth_anum = lookup.start(start) as i64;
            t_end = end;
        }
        let mut astatus = 2usize;
        if anum != -1 && oth_anum != -1 {
            astatus = usize::from(oth_anum != anum);
            if start <= t_end {
                self.amp_dist[anum as usize][astatus] += 1;
            }
        } else if anum >= 0 {
            self.amp_dist[anum as usize][2] += 1;
        }
        if astatus == 0 && flag & u32::from(flags::UNMAP | flags::MUNMAP) == 0 {
            let share = if paired { 0.5 } else { 1.0 };
            if prev_end != 0 && mstart > prev_end {
                // The second mate leaves a gap after the first: undo the first's count.
                for i in prev_start.max(0)..prev_end.min(len) {
                    self.depth_valid[i as usize] -= 1;
                }
                self.nfull_reads[anum as usize] -= share;
            } else {
                for i in mstart.max(0)..end.min(len) {
                    self.depth_valid[i as usize] += 1;
                }
                self.nfull_reads[anum as usize] += share;
            }
        }
        // Templates are counted from their leftmost read only.
        if paired && tlen <= 0 {
            return;
        }
        let start = r.pos();
        let t_end = if paired { start + tlen - 1 } else { end };
        let key = ((start + 1).min(u32::MAX as i64) as u64)
            | (((t_end + 1).min(u32::MAX as i64) as u64) << 32);
        let value = self.tcoord[(anum + 1) as usize].entry(key);
        *value += 1;
        *value |= (astatus as i64) << 32;
    }

    /// `append_lstats`: adds this file's counts (`self`) to the global ones. `all_nseq`: the
    /// matching sequences of the file over all references.
    pub fn append_to(&self, global: &mut AmpStats, all_nseq: i32) {
        global.nseq += self.nseq;
        global.nfiltered += self.nfiltered;
        global.nfailprimer += self.nfailprimer;
        for (local, global) in self.tcoord.iter().zip(global.tcoord.iter_mut()) {
            for (bucket, key) in local.live_buckets() {
                let v = *local.value(bucket);
                if v == 0 {
                    continue;
                }
                let g = global.entry(key);
                *g = (*g & 0xFFFF_FFFF) + v;
            }
        }
        for a in 0..self.nreads.len() {
            global.nreads[a] += self.nreads[a];
            global.nreads2[a] += self.nreads[a] * self.nreads[a];
            global.nfull_reads[a] += self.nfull_reads[a];
            let nrperc = if all_nseq != 0 {
                100.0 * self.nreads[a] as f64 / f64::from(all_nseq)
            } else {
                0.0
            };
            global.nrperc[a] += nrperc;
            global.nrperc2[a] += nrperc * nrperc;
            global.nbases[a] += self.nbases[a];
            global.nbases2[a] += self.nbases[a] * self.nbases[a];
            for d in 0..MAX_DEPTHS {
                global.covered_perc[a][d] += self.covered_perc[a][d];
                global.covered_perc2[a][d] += self.covered_perc[a][d] * self.covered_perc[a][d];
            }
            for d in 0..3 {
                global.amp_dist[a][d] += self.amp_dist[a][d];
            }
        }
        for (g, l) in global.depth_valid.iter_mut().zip(&self.depth_valid) {
            *g += l;
        }
        for (g, l) in global.depth_all.iter_mut().zip(&self.depth_all) {
            *g += l;
        }
    }
}
