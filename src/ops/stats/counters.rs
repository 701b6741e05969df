//! The order-independent sums of a report (most of samtools' `collect_stats` and
//! `collect_orig_read_stats`): counted per record range on the pool and added up.

use super::insert_sizes::{INWARD, InsertSizes, OTHER, OUTWARD};
use super::{ReadOrder, Settings, is_original, is_paired_and_mapped, read_order, unclipped_length};
use crate::record::RecordRef;
use crate::record::cigar;
use crate::record::layout::flags;

/// Quality columns kept per cycle (every value a byte can hold).
pub const QUALITY_COLUMNS: usize = 256;
/// samtools' `ngc`: GC-content bins.
pub const GC_BINS: usize = 200;
/// samtools' `nindels`: the longest indel the length histogram counts.
pub const MAX_INDEL: usize = 300;
/// BWA's shortest read after trimming (samtools' `BWA_MIN_RDLEN`).
const BWA_MIN_READ_LEN: usize = 35;

/// A, C, G, T, N and other base counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseCounts {
    pub a: u64,
    pub c: u64,
    pub g: u64,
    pub t: u64,
    pub n: u64,
    pub other: u64,
}

impl BaseCounts {
    pub fn acgt(&self) -> u64 {
        self.a + self.c + self.g + self.t
    }
}

/// One cycle's base counts in slots: A, C, G, T, N, other, and a slot nothing reads (where the
/// read-oriented counts put N and the ambiguity codes), so counting needs no branch.
pub type CycleCounts = [u64; 8];

/// The slot of each base code (`=ACMGRSVTWYHKDBN`).
const SLOT: [usize; 16] = [5, 0, 1, 5, 2, 5, 5, 5, 3, 5, 5, 5, 5, 5, 5, 4];
/// The read-oriented slot of each base code of a forward and of a reverse read.
const FORWARD_SLOT: [usize; 16] = [6, 0, 1, 6, 2, 6, 6, 6, 3, 6, 6, 6, 6, 6, 6, 6];
const REVERSE_SLOT: [usize; 16] = [6, 3, 2, 6, 1, 6, 6, 6, 0, 6, 6, 6, 6, 6, 6, 6];

impl BaseCounts {
    /// The counts of a cycle's slots.
    pub fn from_slots(c: &CycleCounts) -> BaseCounts {
        BaseCounts { a: c[0], c: c[1], g: c[2], t: c[3], n: c[4], other: c[5] }
    }
}

/// First- and last-fragment values of one kind.
pub type ByFragment<T> = [T; 2];

#[derive(Clone, Debug)]
pub struct Counters {
    /// CRC32 sums of names, sequences and qualities.
    pub checksum: [u32; 3],
    pub secondary: u64,
    pub supplementary: u64,
    pub duplicates: u64,
    pub duplicate_bases: u64,
    /// Longest (unclipped) read: all, first and last fragments.
    pub max_len: usize,
    pub max_len_frag: ByFragment<usize>,
    pub mapping_qualities: Vec<u64>,
    /// Read-length histograms: all, then first and last fragments.
    pub read_lengths: Vec<u64>,
    pub read_lengths_frag: ByFragment<Vec<u64>>,
    pub total_len: u64,
    pub total_len_frag: ByFragment<u64>,
    pub reads_frag: ByFragment<u64>,
    pub reads_other: u64,
    pub qc_failed: u64,
    pub paired_tech: u64,
    /// Bases per cycle, as [`CycleCounts`].
    pub cycles: ByFragment<Vec<CycleCounts>>,
    /// Bases per cycle as the read was sequenced (reverse reads complemented).
    pub read_oriented: Vec<CycleCounts>,
    pub gc: ByFragment<Vec<u64>>,
    pub trimmed: u64,
    /// Per cycle, [`QUALITY_COLUMNS`] counts each.
    pub qualities: ByFragment<Vec<u64>>,
    pub quality_sum: u64,
    pub max_quality: i32,
    pub unmapped: u64,
    pub bases_mapped: u64,
    pub mq0: u64,
    pub single_mapped: u64,
    pub paired_and_mapped: u64,
    pub properly_paired: u64,
    pub anomalous: u64,
    pub insertions: Vec<u64>,
    pub deletions: Vec<u64>,
    pub insertion_cycles: ByFragment<Vec<u64>>,
    pub deletion_cycles: ByFragment<Vec<u64>>,
    pub insert_sizes: InsertSizes,
    pub mismatches: u64,
    /// samtools' message for a CIGAR it cannot place (the first one met).
    pub error: Option<String>,
}

/// Whether `v` can hold `len` items, reserving the room fallibly.
fn has_room<T>(v: &mut Vec<T>, len: usize) -> bool {
    len <= v.len() || v.try_reserve_exact(len - v.len()).is_ok()
}

fn grow<T: Clone + Default>(v: &mut Vec<T>, len: usize) {
    if v.len() < len {
        v.resize(len, T::default());
    }
}

/// Adds `b` into `a`, keeping the longer of the two tables: a sum over one read 1 Mb long
/// holds a 2 GB quality table, and growing the running sum to a second one doubled the peak.
fn add_owned<T: Clone + Default>(a: &mut Vec<T>, mut b: Vec<T>, add: impl Fn(&mut T, &T)) {
    if a.len() < b.len() {
        std::mem::swap(a, &mut b);
    }
    a.iter_mut().zip(&b).for_each(|(x, y)| add(x, y));
}

fn add_into(a: &mut Vec<u64>, b: &[u64]) {
    grow(a, b.len());
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

fn add_cycle(x: &mut CycleCounts, y: &CycleCounts) {
    x.iter_mut().zip(y).for_each(|(p, q)| *p += q);
}

/// samtools' `bwa_trim_read`: the bases BWA would trim from the read's 3' end.
fn bwa_trimmed(trim_quality: i32, quals: &[u8], reverse: bool) -> u64 {
    let len = quals.len();
    if len < BWA_MIN_READ_LEN {
        return 0;
    }
    let (mut sum, mut max_sum, mut max_l) = (0i32, 0i32, 0u64);
    for l in 0..len - BWA_MIN_READ_LEN + 1 {
        sum += trim_quality - i32::from(quals[if reverse { l } else { len - 1 - l }]);
        if sum < 0 {
            break;
        }
        if sum > max_sum {
            max_sum = sum;
            // BWA clips one base less than the sum says, and samtools follows it.
            max_l = l as u64;
        }
    }
    max_l
}

impl Counters {
    pub fn new(settings: &Settings) -> Counters {
        Counters {
            checksum: [0; 3],
            secondary: 0,
            supplementary: 0,
            duplicates: 0,
            duplicate_bases: 0,
            max_len: 0,
            max_len_frag: [0; 2],
            mapping_qualities: vec![0; 256],
            read_lengths: Vec::new(),
            read_lengths_frag: Default::default(),
            total_len: 0,
            total_len_frag: [0; 2],
            reads_frag: [0; 2],
            reads_other: 0,
            qc_failed: 0,
            paired_tech: 0,
            cycles: Default::default(),
            read_oriented: Vec::new(),
            gc: [vec![0; GC_BINS], vec![0; GC_BINS]],
            trimmed: 0,
            qualities: Default::default(),
            quality_sum: 0,
            max_quality: 0,
            unmapped: 0,
            bases_mapped: 0,
            mq0: 0,
            single_mapped: 0,
            paired_and_mapped: 0,
            properly_paired: 0,
            anomalous: 0,
            insertions: vec![0; MAX_INDEL],
            deletions: vec![0; MAX_INDEL],
            insertion_cycles: Default::default(),
            deletion_cycles: Default::default(),
            insert_sizes: InsertSizes::new(if settings.max_insert != 0 {
                settings.max_insert.wrapping_add(1)
            } else {
                0
            }),
            mismatches: 0,
            error: None,
        }
    }

    /// One record the report takes (it passed the tracker's filters).
    pub fn add(&mut self, r: &RecordRef<'_>, settings: &Settings) {
        let flag = r.flag();
        self.add_checksum(r);
        if flag & flags::SECONDARY != 0 {
            self.secondary += 1;
            return;
        }
        if flag & flags::SUPPLEMENTARY != 0 {
            self.supplementary += 1;
        }
        let seq_len = r.l_seq();
        if seq_len == 0 {
            return;
        }
        if flag & flags::DUP != 0 {
            self.duplicate_bases += seq_len as u64;
            self.duplicates += 1;
        }
        let order = read_order(flag);
        let read_len = unclipped_length(r);
        self.max_len = self.max_len.max(read_len);
        match order {
            ReadOrder::First => self.max_len_frag[0] = self.max_len_frag[0].max(read_len),
            ReadOrder::Last => self.max_len_frag[1] = self.max_len_frag[1].max(read_len),
            ReadOrder::Other => {}
        }
        let excluded = flags::UNMAP | flags::SECONDARY | flags::SUPPLEMENTARY | flags::QCFAIL;
        if flag & (excluded | flags::DUP) == 0 {
            self.mapping_qualities[r.mapq() as usize] += 1;
        }
        if is_original(flag) {
            grow(&mut self.read_lengths, read_len + 1);
            self.read_lengths[read_len] += 1;
            if let Some(f) = fragment(order) {
                grow(&mut self.read_lengths_frag[f], read_len + 1);
                self.read_lengths_frag[f][read_len] += 1;
            }
            self.add_original(r, order, settings);
        }
        if flag & flags::UNMAP != 0 {
            return;
        }
        self.add_indels(r, order);
        if is_paired_and_mapped(flag) && is_original(flag) {
            self.add_insert_size(r, settings);
        }
        if let Some(nm) = r.aux_get(*b"NM") {
            self.mismatches = self.mismatches.wrapping_add(nm.int().unwrap_or(0) as u64);
        }
    }

    fn add_checksum(&mut self, r: &RecordRef<'_>) {
        let name = r.read_name();
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        self.checksum[0] = self.checksum[0].wrapping_add(crc32fast::hash(name));
        let seq_len = r.l_seq();
        if seq_len == 0 {
            return;
        }
        self.checksum[1] = self.checksum[1].wrapping_add(crc32fast::hash(r.seq_packed()));
        self.checksum[2] = self.checksum[2].wrapping_add(crc32fast::hash(&r.qual()[..seq_len]));
    }

    /// samtools' `collect_orig_read_stats`, barcodes aside (they depend on the order).
    fn add_original(&mut self, r: &RecordRef<'_>, order: ReadOrder, settings: &Settings) {
        let flag = r.flag();
        let seq_len = r.l_seq();
        self.total_len += seq_len as u64;
        if flag & flags::QCFAIL != 0 {
            self.qc_failed += 1;
        }
        if flag & flags::PAIRED != 0 {
            self.paired_tech += 1;
        }
        let reverse = flag & flags::REVERSE != 0;
        let quals = &r.qual()[..seq_len];
        match fragment(order) {
            Some(f) => {
                if !self.reserve_for_read(seq_len, f) {
                    return;
                }
                let gc_count = self.add_cycles(r, f, reverse);
                self.reads_frag[f] += 1;
                self.total_len_frag[f] += seq_len as u64;
                let gc_min = gc_count * (GC_BINS - 1) / seq_len;
                let gc_max = ((gc_count + 1) * (GC_BINS - 1) / seq_len).min(GC_BINS - 1);
                self.gc[f][gc_min..gc_max.max(gc_min)].iter_mut().for_each(|c| *c += 1);
            }
            None => self.reads_other += 1,
        }
        if settings.trim_quality > 0 {
            self.trimmed += bwa_trimmed(settings.trim_quality, quals, reverse);
        }
        if let Some(f) = fragment(order) {
            self.add_qualities(quals, f, reverse);
        }
        if flag & flags::UNMAP != 0 {
            self.unmapped += 1;
            return;
        }
        self.bases_mapped += seq_len as u64;
        if r.mapq() == 0 {
            self.mq0 += 1;
        }
        if !is_paired_and_mapped(flag) {
            self.single_mapped += 1;
            return;
        }
        self.paired_and_mapped += 1;
        if flag & (flags::PAIRED | flags::PROPER_PAIR) == flags::PAIRED | flags::PROPER_PAIR {
            self.properly_paired += 1;
        }
        if r.ref_id() != r.next_ref_id() {
            self.anomalous += 1;
        }
    }

    /// Bases per cycle of a first or last fragment; returns its G and C count.
    fn add_cycles(&mut self, r: &RecordRef<'_>, f: usize, reverse: bool) -> usize {
        let seq_len = r.l_seq();
        grow(&mut self.cycles[f], seq_len);
        grow(&mut self.read_oriented, seq_len);
        let cycles = &mut self.cycles[f][..seq_len];
        let oriented = &mut self.read_oriented[..seq_len];
        let orient = if reverse { &REVERSE_SLOT } else { &FORWARD_SLOT };
        let mut count = |i: usize, code: u8| {
            let cycle = if reverse { seq_len - i - 1 } else { i };
            cycles[cycle][SLOT[code as usize]] += 1;
            oriented[cycle][orient[code as usize]] += 1;
        };
        let packed = r.seq_packed();
        for (j, &b) in packed[..seq_len / 2].iter().enumerate() {
            count(2 * j, b >> 4);
            count(2 * j + 1, b & 0xf);
        }
        if seq_len % 2 == 1 {
            count(seq_len - 1, packed[seq_len / 2] >> 4);
        }
        super::gc_bases(r)
    }

    /// Makes room in a fragment's per-cycle tables for a read of `seq_len` bases before any of
    /// them grows. samtools' `realloc_buffers` fails the run when a long read's tables cannot be
    /// allocated; a failed allocation here would abort instead, so every table is reserved
    /// fallibly first (the cycle tables alone of a 10 Mb read take 640 MB).
    fn reserve_for_read(&mut self, seq_len: usize, f: usize) -> bool {
        let ok = has_room(&mut self.cycles[f], seq_len)
            && has_room(&mut self.read_oriented, seq_len)
            && has_room(&mut self.qualities[f], seq_len * QUALITY_COLUMNS);
        if !ok {
            let bytes = seq_len * QUALITY_COLUMNS * std::mem::size_of::<u64>();
            self.fail(format!(
                "Could not realloc buffers, the sequence too long: {seq_len} ({bytes})"
            ));
        }
        ok
    }

    fn add_qualities(&mut self, quals: &[u8], f: usize, reverse: bool) {
        let len = quals.len();
        // Room was reserved by `reserve_for_read`.
        grow(&mut self.qualities[f], len * QUALITY_COLUMNS);
        let table = &mut self.qualities[f][..len * QUALITY_COLUMNS];
        let mut max = self.max_quality;
        for i in 0..len {
            let q = quals[if reverse { len - i - 1 } else { i }];
            max = max.max(i32::from(q));
            table[i * QUALITY_COLUMNS + q as usize] += 1;
            self.quality_sum += u64::from(q);
        }
        self.max_quality = max;
    }

    /// samtools' `count_indels`.
    fn add_indels(&mut self, r: &RecordRef<'_>, order: ReadOrder) {
        let forward = r.flag() & flags::REVERSE == 0;
        let f = fragment(order);
        let read_len = r.l_seq() as i64;
        let mut cycle = 0i64;
        for c in r.cigar() {
            let (op, n) = (cigar::op(c), i64::from(cigar::len(c)));
            if n == 0 {
                continue;
            }
            match op {
                cigar::INS => {
                    let idx = if forward { cycle } else { read_len - cycle - n };
                    if idx < 0 {
                        self.fail(format!("FIXME: read_len={read_len} vs icycle={cycle}"));
                        return;
                    }
                    if let Some(f) = f {
                        grow(&mut self.insertion_cycles[f], idx as usize + 1);
                        self.insertion_cycles[f][idx as usize] += 1;
                    }
                    cycle += n;
                    if n as usize <= MAX_INDEL {
                        self.insertions[n as usize - 1] += 1;
                    }
                }
                cigar::DEL => {
                    let idx = if forward { cycle - 1 } else { read_len - cycle - 1 };
                    // A deletion before the first base means nothing.
                    if idx < 0 {
                        continue;
                    }
                    if let Some(f) = f {
                        grow(&mut self.deletion_cycles[f], idx as usize + 1);
                        self.deletion_cycles[f][idx as usize] += 1;
                    }
                    if n as usize <= MAX_INDEL {
                        self.deletions[n as usize - 1] += 1;
                    }
                }
                cigar::REF_SKIP | cigar::HARD_CLIP | cigar::PAD => {}
                _ => cycle += n,
            }
        }
    }

    fn add_insert_size(&mut self, r: &RecordRef<'_>, settings: &Settings) {
        // samtools keeps the template length in 32 bits.
        let mut size = (r.tlen() as i32).wrapping_abs();
        if settings.max_insert > 0 && size > settings.max_insert {
            size = settings.max_insert;
        }
        if !(size > 0 || r.ref_id() == r.next_ref_id()) || size < 0 {
            return;
        }
        let flag = r.flag();
        let mate_offset = r.next_pos() - r.pos();
        let first = if flag & flags::READ1 != 0 { 1 } else { -1 };
        let fwd = if flag & flags::REVERSE != 0 { -1 } else { 1 };
        let mate_fwd = if flag & flags::MREVERSE != 0 { -1 } else { 1 };
        let orientation = if fwd * mate_fwd > 0 {
            OTHER
        } else if (first * mate_offset).signum() != 0 {
            let ahead = first * mate_offset > 0;
            if (first * fwd > 0) == ahead { INWARD } else { OUTWARD }
        } else {
            // Exactly overlapping reads count as inward.
            INWARD
        };
        self.insert_sizes.add(size, orientation);
    }

    fn fail(&mut self, message: String) {
        self.error.get_or_insert(message);
    }

    /// Adds `o`'s counts (of records after this one's) to these.
    pub fn merge(&mut self, mut o: Counters) {
        for k in 0..3 {
            self.checksum[k] = self.checksum[k].wrapping_add(o.checksum[k]);
        }
        self.secondary += o.secondary;
        self.supplementary += o.supplementary;
        self.duplicates += o.duplicates;
        self.duplicate_bases += o.duplicate_bases;
        self.max_len = self.max_len.max(o.max_len);
        add_into(&mut self.mapping_qualities, &o.mapping_qualities);
        add_into(&mut self.read_lengths, &o.read_lengths);
        self.total_len += o.total_len;
        self.reads_other += o.reads_other;
        self.qc_failed += o.qc_failed;
        self.paired_tech += o.paired_tech;
        add_owned(&mut self.read_oriented, std::mem::take(&mut o.read_oriented), add_cycle);
        self.trimmed += o.trimmed;
        self.quality_sum += o.quality_sum;
        self.max_quality = self.max_quality.max(o.max_quality);
        self.unmapped += o.unmapped;
        self.bases_mapped += o.bases_mapped;
        self.mq0 += o.mq0;
        self.single_mapped += o.single_mapped;
        self.paired_and_mapped += o.paired_and_mapped;
        self.properly_paired += o.properly_paired;
        self.anomalous += o.anomalous;
        add_into(&mut self.insertions, &o.insertions);
        add_into(&mut self.deletions, &o.deletions);
        for f in 0..2 {
            self.max_len_frag[f] = self.max_len_frag[f].max(o.max_len_frag[f]);
            add_into(&mut self.read_lengths_frag[f], &o.read_lengths_frag[f]);
            self.total_len_frag[f] += o.total_len_frag[f];
            self.reads_frag[f] += o.reads_frag[f];
            add_owned(&mut self.cycles[f], std::mem::take(&mut o.cycles[f]), add_cycle);
            add_into(&mut self.gc[f], &o.gc[f]);
            add_owned(&mut self.qualities[f], std::mem::take(&mut o.qualities[f]), |x, y| *x += y);
            add_into(&mut self.insertion_cycles[f], &o.insertion_cycles[f]);
            add_into(&mut self.deletion_cycles[f], &o.deletion_cycles[f]);
        }
        self.insert_sizes.merge(&o.insert_sizes);
        self.mismatches = self.mismatches.wrapping_add(o.mismatches);
        if self.error.is_none() {
            self.error = o.error;
        }
    }

    /// The quality count of `quality` at `cycle` for fragment `f`.
    pub fn quality(&self, f: usize, cycle: usize, quality: usize) -> u64 {
        self.qualities[f].get(cycle * QUALITY_COLUMNS + quality).copied().unwrap_or(0)
    }
}

/// 0 for first fragments, 1 for last ones, `None` for the others.
pub fn fragment(order: ReadOrder) -> Option<usize> {
    match order {
        ReadOrder::First => Some(0),
        ReadOrder::Last => Some(1),
        ReadOrder::Other => None,
    }
}
