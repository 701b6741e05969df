//! Builds the SAM records of one template from its plan: names, sequences, qualities, CIGARs, mate
//! fields and tags.
//!
//! Algorithm for a mapped read (everything in sequencing order first, then turned to SAM order):
//! 1. Qualities for each cycle ([`QualityModel`]).
//! 2. Clips: rarely a 1–8 base junk 5' clip; the 3' tail is the chimeric part when the plan has one,
//!    else sometimes 5–40 adapter bases.
//! 3. The aligned middle: `M` with, in 5 % of reads, one or two 1–4 base insertions or deletions at
//!    least 10 bases from either end. Its position follows from the unclipped 5' end and the span.
//! 4. The read is the junk, then the reference bases under the CIGAR (reverse-complemented for a
//!    reverse read), then the tail (adapter, or the reference at the chimeric location in its
//!    orientation); then come the sequencing errors the qualities predict.
//! 5. SAM `SEQ`/`QUAL` are the read, reversed and complemented for a reverse alignment.
//!    The supplementary record holds only the tail, with the rest hard-clipped.
//! 6. `MD`, `NM` and `AS` come from comparing each record with the reference
//!    ([`compare_with_reference`]), never from bookkeeping, so they are right by construction.
//! 7. Inside a repeat source the read also aligns in the copy: a secondary record (`SEQ`/`QUAL` `*`,
//!    as bwa writes them) and a primary `MAPQ` near 0 with `XS` = the secondary's score.
//!
//! Mate fields follow SAMv1 § 1.4 and bwa: an unmapped read with a mapped mate takes the mate's
//! `RNAME`, `POS` and strand; `TLEN` is signed by leftmost position and 0 across references;
//! supplementary and secondary records copy their primary's mate fields and have `TLEN` 0.

use super::alignment::{
    Comparison, Op, compare_with_reference, format_cigar, push_op, reference_span,
    reverse_complement_into,
};
use super::fragment::{Chimera, DuplicateKind, Placement, TemplatePlan};
use super::genome::{Genome, substitute};
use super::names::{ClusterGrid, ClusterSpot, ReadGroup, read_group_of_rank};
use super::qualities::{PHRED_OFFSET, QualityClass, QualityModel};
use super::rng::{Rng, Stream};
use super::tags::write_extra_tags;

/// SAM flag bits.
pub mod flag {
    pub const PAIRED: u16 = 0x1;
    pub const PROPER_PAIR: u16 = 0x2;
    pub const UNMAPPED: u16 = 0x4;
    pub const MATE_UNMAPPED: u16 = 0x8;
    pub const REVERSE: u16 = 0x10;
    pub const MATE_REVERSE: u16 = 0x20;
    pub const READ1: u16 = 0x40;
    pub const READ2: u16 = 0x80;
    pub const SECONDARY: u16 = 0x100;
    pub const QC_FAIL: u16 = 0x200;
    pub const SUPPLEMENTARY: u16 = 0x800;
}

/// The Illumina TruSeq adapter, read through at the 3' end of short inserts.
const ADAPTER: &[u8] = b"AGATCGGAAGAGCACACGTCTGAACTCCAGTCACATCTCGTATGCCGTCTTCTGCTTG";

/// One SAM record under construction. Positions are 0-based; −1 means none.
#[derive(Clone, Debug, Default)]
pub struct SimRecord {
    pub flag: u16,
    pub tid: i32,
    pub pos: i64,
    pub mapq: u8,
    pub cigar: Vec<Op>,
    pub next_tid: i32,
    pub next_pos: i64,
    pub tlen: i64,
    /// Empty means `*`.
    pub seq: Vec<u8>,
    /// Phred + 33; empty means `*`.
    pub qual: Vec<u8>,
    /// Whether `NM`, `MD`, `AS` and `XS` are written (mapped records).
    pub has_alignment_tags: bool,
    pub edit_distance: u32,
    pub md: Vec<u8>,
    pub score: i32,
    pub suboptimal_score: i32,
    /// The `SA:Z:` value; empty means no tag.
    pub supplementary_alignments: Vec<u8>,
    /// Extra tags as SAM text, each with its leading tab ([`write_extra_tags`]).
    pub extra_tags: Vec<u8>,
}

impl SimRecord {
    fn reset(&mut self) {
        self.flag = 0;
        self.tid = -1;
        self.pos = -1;
        self.mapq = 0;
        self.cigar.clear();
        self.next_tid = -1;
        self.next_pos = -1;
        self.tlen = 0;
        self.seq.clear();
        self.qual.clear();
        self.has_alignment_tags = false;
        self.edit_distance = 0;
        self.md.clear();
        self.score = 0;
        self.suboptimal_score = 0;
        self.supplementary_alignments.clear();
        self.extra_tags.clear();
    }

    /// One past the last reference base covered.
    pub fn end(&self) -> i64 {
        self.pos + i64::from(reference_span(&self.cigar))
    }

    pub fn is_reverse(&self) -> bool {
        self.flag & flag::REVERSE != 0
    }
}

/// The records of one template, in aligner order: read 1's primary, supplementary, secondary, then
/// read 2's. Buffers are reused from template to template.
#[derive(Clone, Debug, Default)]
pub struct Template {
    pub name: Vec<u8>,
    pub read_group: usize,
    pub barcode: Vec<u8>,
    pub umi: [u8; 8],
    pool: Vec<SimRecord>,
    len: usize,
}

impl Template {
    /// The records in output order.
    pub fn records(&self) -> &[SimRecord] {
        &self.pool[..self.len]
    }

    fn push_record(&mut self) -> usize {
        if self.len == self.pool.len() {
            self.pool.push(SimRecord::default());
        }
        self.pool[self.len].reset();
        self.len += 1;
        self.len - 1
    }
}

/// Which records of a template belong to one read.
#[derive(Clone, Copy, Debug)]
struct ReadRecords {
    primary: usize,
    supplementary: Option<usize>,
    secondary: Option<usize>,
}

/// The rates and tables that shape reads, fixed for a run.
#[derive(Clone, Debug)]
pub struct ReadSettings {
    pub seed: u64,
    pub read_len: u32,
    pub templates: u64,
    pub qc_fail_rate: f64,
    pub secondary_rate: f64,
    pub extra_tag_rate: f64,
}

/// Turns plans into records; owns the scratch buffers.
pub struct TemplateBuilder<'a> {
    genome: &'a Genome,
    read_groups: &'a [ReadGroup],
    grid: ClusterGrid,
    settings: ReadSettings,
    qualities: QualityModel,
    cycle_qualities: Vec<u8>,
    aligned: Vec<u8>,
    read: Vec<u8>,
    scratch: Vec<u8>,
    ops: Vec<Op>,
}

impl<'a> TemplateBuilder<'a> {
    pub fn new(
        genome: &'a Genome,
        read_groups: &'a [ReadGroup],
        settings: ReadSettings,
    ) -> TemplateBuilder<'a> {
        TemplateBuilder {
            genome,
            read_groups,
            grid: ClusterGrid::new(settings.templates),
            qualities: QualityModel::new(settings.read_len as usize),
            settings,
            cycle_qualities: Vec::new(),
            aligned: Vec::new(),
            read: Vec::new(),
            scratch: Vec::new(),
            ops: Vec::new(),
        }
    }

    /// Fills `template` with the records of `plan`.
    pub fn build(&mut self, plan: &TemplatePlan, template: &mut Template) {
        template.len = 0;
        self.write_identity(plan, template);
        let mut rng = Rng::for_stream(self.settings.seed, plan.id, Stream::Reads);
        self.write_barcode(&mut rng, template);
        let qc_fail = rng.chance(self.settings.qc_fail_rate);
        let fragment = &plan.fragment;
        let mut reads = [None, None];
        for (index, read) in reads.iter_mut().enumerate() {
            *read = Some(match fragment.reads[index] {
                Some(placement) => {
                    self.build_mapped_read(&mut rng, placement, fragment.chimeras[index], template)
                }
                None => {
                    let mate_reverse = fragment.reads[1 - index].is_some_and(|mate| !mate.forward);
                    self.build_unmapped_read(&mut rng, mate_reverse, template)
                }
            });
        }
        let reads = reads.map(|read| read.expect("both reads built"));
        link_mates(template, &reads, fragment.proper, qc_fail);
    }

    /// Name, read group and UMI.
    fn write_identity(&self, plan: &TemplatePlan, template: &mut Template) {
        let groups = self.read_groups.len();
        template.read_group = read_group_of_rank(plan.origin_rank, self.settings.templates, groups);
        template.name.clear();
        template
            .name
            .extend_from_slice(self.read_groups[template.read_group].name_prefix.as_bytes());
        let seed = self.settings.seed;
        match plan.duplicate {
            DuplicateKind::Optical => self.grid.write_coordinates(
                seed,
                plan.origin_rank,
                plan.origin,
                plan.id,
                ClusterSpot::OpticalDuplicate { k: plan.id - plan.origin },
                &mut template.name,
            ),
            DuplicateKind::None | DuplicateKind::Pcr => self.grid.write_coordinates(
                seed,
                plan.rank,
                plan.id,
                plan.id,
                ClusterSpot::Original,
                &mut template.name,
            ),
        }
        let mut molecule = Rng::for_stream(seed, plan.origin, Stream::Molecule);
        for base in &mut template.umi {
            *base = molecule.base();
        }
    }

    /// The library's sample index, with one miscalled base in 2 % of reads.
    fn write_barcode(&self, rng: &mut Rng, template: &mut Template) {
        template.barcode.clear();
        template
            .barcode
            .extend_from_slice(self.read_groups[template.read_group].barcode.as_bytes());
        if rng.chance(0.02) {
            let at = rng.below(8) as usize;
            template.barcode[at] = substitute(rng, template.barcode[at]);
        }
    }

    /// Builds the primary (and any supplementary and secondary) records of a mapped read.
    fn build_mapped_read(
        &mut self,
        rng: &mut Rng,
        placement: Placement,
        chimera: Option<Chimera>,
        template: &mut Template,
    ) -> ReadRecords {
        let read_len = self.settings.read_len;
        let class = QualityClass::draw(rng);
        self.qualities.fill_qualities(rng, read_len as usize, class, &mut self.cycle_qualities);
        let layout = self.draw_layout(rng, placement, chimera);
        self.sequence_read(rng, placement, chimera, layout);
        let primary = self.push_primary(rng, placement, layout, template);
        let secondary = self.push_secondary(rng, placement, layout, primary, template);
        let supplementary =
            chimera.map(|chimera| self.push_supplementary(rng, chimera, primary, template));

        // Output order: primary, supplementary, secondary.
        if let (Some(supplementary_index), Some(secondary_index)) = (supplementary, secondary) {
            template.pool.swap(supplementary_index, secondary_index);
            return ReadRecords {
                primary,
                supplementary: Some(secondary_index),
                secondary: Some(supplementary_index),
            };
        }
        ReadRecords { primary, supplementary, secondary }
    }

    /// Draws the clips and the aligned middle (into `self.ops`) of a mapped read.
    fn draw_layout(
        &mut self,
        rng: &mut Rng,
        placement: Placement,
        chimera: Option<Chimera>,
    ) -> ReadLayout {
        let junk_clip = if rng.chance(0.01) { rng.between(1, 8) } else { 0 };
        let tail_len = match chimera {
            Some(chimera) => chimera.tail_len,
            None if rng.chance(0.03) => rng.between(5, 40),
            None => 0,
        };
        let aligned_len = self.settings.read_len - junk_clip - tail_len;
        draw_aligned_ops(rng, aligned_len, &mut self.ops);
        let span = reference_span(&self.ops);
        let pos = if placement.forward {
            placement.five_prime + junk_clip
        } else {
            placement.five_prime + 1 - junk_clip - span
        };
        ReadLayout { junk_clip, tail_len, pos, span }
    }

    /// The read in sequencing order (into `self.read`), sequencing errors included.
    fn sequence_read(
        &mut self,
        rng: &mut Rng,
        placement: Placement,
        chimera: Option<Chimera>,
        layout: ReadLayout,
    ) {
        let reference = self.genome.sequence(placement.tid);
        self.aligned.clear();
        let mut ref_at = layout.pos as usize;
        for op in &self.ops {
            let len = op.len as usize;
            match op.code {
                b'M' => {
                    self.aligned.extend_from_slice(&reference[ref_at..ref_at + len]);
                    ref_at += len;
                }
                b'I' => self.aligned.extend((0..len).map(|_| rng.base())),
                _ => ref_at += len,
            }
        }
        self.read.clear();
        self.read.extend((0..layout.junk_clip).map(|_| rng.base()));
        if placement.forward {
            self.read.extend_from_slice(&self.aligned);
        } else {
            reverse_complement_into(&self.aligned, &mut self.scratch);
            self.read.extend_from_slice(&self.scratch);
        }
        let tail_len = layout.tail_len;
        match chimera {
            Some(chimera) => {
                let part = &self.genome.sequence(chimera.tid)
                    [chimera.pos as usize..(chimera.pos + tail_len) as usize];
                if chimera.forward {
                    self.read.extend_from_slice(part);
                } else {
                    reverse_complement_into(part, &mut self.scratch);
                    self.read.extend_from_slice(&self.scratch);
                }
            }
            None => self.read.extend(ADAPTER.iter().cycle().take(tail_len as usize)),
        }
        self.qualities.apply_errors(rng, &self.cycle_qualities, &mut self.read);
    }

    /// The primary record of the read; returns its index in the template.
    fn push_primary(
        &mut self,
        rng: &mut Rng,
        placement: Placement,
        layout: ReadLayout,
        template: &mut Template,
    ) -> usize {
        let primary = template.push_record();
        let record = &mut template.pool[primary];
        record.tid = placement.tid as i32;
        record.pos = i64::from(layout.pos);
        let (junk_clip, tail_len) = (layout.junk_clip, layout.tail_len);
        let (left_clip, right_clip) =
            if placement.forward { (junk_clip, tail_len) } else { (tail_len, junk_clip) };
        push_op(&mut record.cigar, Op::new(left_clip, b'S'));
        for &op in &self.ops {
            push_op(&mut record.cigar, op);
        }
        push_op(&mut record.cigar, Op::new(right_clip, b'S'));
        orient(
            &self.read,
            &self.cycle_qualities,
            placement.forward,
            &mut record.seq,
            &mut record.qual,
        );
        if !placement.forward {
            record.flag |= flag::REVERSE;
        }
        compare_record(record, self.genome.sequence(placement.tid));
        write_extra_tags(rng, self.settings.extra_tag_rate, &mut record.extra_tags);
        primary
    }

    /// A secondary alignment in the copy of a repeat, sometimes; else the primary's mapping
    /// quality is drawn as for a unique placement. Returns the secondary's index.
    fn push_secondary(
        &mut self,
        rng: &mut Rng,
        placement: Placement,
        layout: ReadLayout,
        primary: usize,
        template: &mut Template,
    ) -> Option<usize> {
        let reference = self.genome.sequence(placement.tid);
        let repeat_copy =
            self.genome.repeat_copy_of(placement.tid, layout.pos, layout.pos + layout.span);
        let Some(copy_pos) = repeat_copy.filter(|_| rng.chance(self.settings.secondary_rate))
        else {
            draw_mapping_quality(rng, &mut template.pool[primary]);
            return None;
        };
        let index = template.push_record();
        let (primary_record, record) = two_records(template, primary, index);
        record.flag = flag::SECONDARY | (primary_record.flag & flag::REVERSE);
        record.tid = primary_record.tid;
        record.pos = i64::from(copy_pos);
        record.cigar.extend_from_slice(&primary_record.cigar);
        record.has_alignment_tags = true;
        let comparison = compare_with_reference(
            &record.cigar,
            &primary_record.seq,
            reference,
            copy_pos as usize,
            &mut record.md,
        );
        record.edit_distance = comparison.edit_distance;
        record.score = comparison.score;
        record.suboptimal_score = primary_record.score;
        write_extra_tags(rng, self.settings.extra_tag_rate, &mut record.extra_tags);
        primary_record.mapq = if rng.below(10) < 7 { 0 } else { rng.between(1, 3) as u8 };
        primary_record.suboptimal_score = record.score;
        Some(index)
    }

    /// The supplementary alignment of a chimeric tail; returns its index.
    fn push_supplementary(
        &mut self,
        rng: &mut Rng,
        chimera: Chimera,
        primary: usize,
        template: &mut Template,
    ) -> usize {
        let (read_len, tail_len) = (self.settings.read_len, chimera.tail_len);
        let index = template.push_record();
        let (primary_record, record) = two_records(template, primary, index);
        record.flag = flag::SUPPLEMENTARY | if chimera.forward { 0 } else { flag::REVERSE };
        record.tid = chimera.tid as i32;
        record.pos = i64::from(chimera.pos);
        let hard_clip = Op::new(read_len - tail_len, b'H');
        let tail_op = Op::new(tail_len, b'M');
        if chimera.forward {
            record.cigar.extend([hard_clip, tail_op]);
        } else {
            record.cigar.extend([tail_op, hard_clip]);
        }
        let tail_start = (read_len - tail_len) as usize;
        orient(
            &self.read[tail_start..],
            &self.cycle_qualities[tail_start..],
            chimera.forward,
            &mut record.seq,
            &mut record.qual,
        );
        compare_record(record, self.genome.sequence(chimera.tid));
        draw_mapping_quality(rng, record);
        write_extra_tags(rng, self.settings.extra_tag_rate, &mut record.extra_tags);
        write_supplementary_alignment(
            self.genome,
            record,
            &mut primary_record.supplementary_alignments,
        );
        write_supplementary_alignment(
            self.genome,
            primary_record,
            &mut record.supplementary_alignments,
        );
        index
    }

    /// Builds an unmapped read: random bases at poor quality, in the mate's orientation if it has one.
    fn build_unmapped_read(
        &mut self,
        rng: &mut Rng,
        mate_reverse: bool,
        template: &mut Template,
    ) -> ReadRecords {
        let read_len = self.settings.read_len as usize;
        self.qualities.fill_qualities(rng, read_len, QualityClass::Poor, &mut self.cycle_qualities);
        self.read.clear();
        self.read.extend((0..read_len).map(|_| rng.base()));
        self.qualities.apply_errors(rng, &self.cycle_qualities, &mut self.read);
        let index = template.push_record();
        let record = &mut template.pool[index];
        record.flag = flag::UNMAPPED | if mate_reverse { flag::REVERSE } else { 0 };
        orient(&self.read, &self.cycle_qualities, !mate_reverse, &mut record.seq, &mut record.qual);
        write_extra_tags(rng, self.settings.extra_tag_rate, &mut record.extra_tags);
        ReadRecords { primary: index, supplementary: None, secondary: None }
    }
}

/// Where a mapped read's bases lie: a junk clip, the aligned middle (`span` reference bases from
/// `pos`) and a tail (adapter or chimeric part), in sequencing order.
#[derive(Clone, Copy)]
struct ReadLayout {
    junk_clip: u32,
    tail_len: u32,
    pos: u32,
    span: u32,
}

/// Mutable access to two different records of a template.
fn two_records(
    template: &mut Template,
    first: usize,
    second: usize,
) -> (&mut SimRecord, &mut SimRecord) {
    debug_assert!(first < second);
    let (head, tail) = template.pool.split_at_mut(second);
    (&mut head[first], &mut tail[0])
}

/// The CIGAR of an aligned middle of `aligned_len` read bases.
fn draw_aligned_ops(rng: &mut Rng, aligned_len: u32, ops: &mut Vec<Op>) {
    ops.clear();
    let indels = match rng.below(100) {
        0..4 => 1,
        4 => 2,
        _ => 0,
    };
    let mut remaining = aligned_len;
    for _ in 0..indels {
        // Keep 10 bases of M on both sides of every indel.
        if remaining < 2 * 10 + 4 + 10 {
            break;
        }
        let before = rng.between(10, remaining - 10 - 4 - 10);
        push_op(ops, Op::new(before, b'M'));
        remaining -= before;
        let len = rng.between(1, 4);
        if rng.chance(0.5) {
            push_op(ops, Op::new(len, b'I'));
            remaining -= len;
        } else {
            push_op(ops, Op::new(len, b'D'));
        }
    }
    push_op(ops, Op::new(remaining, b'M'));
}

/// Writes `SEQ`/`QUAL` of an alignment from a read in sequencing order.
fn orient(
    read: &[u8],
    cycle_qualities: &[u8],
    forward: bool,
    seq: &mut Vec<u8>,
    qual: &mut Vec<u8>,
) {
    qual.clear();
    if forward {
        seq.clear();
        seq.extend_from_slice(read);
        qual.extend(cycle_qualities.iter().map(|q| q + PHRED_OFFSET));
    } else {
        reverse_complement_into(read, seq);
        qual.extend(cycle_qualities.iter().rev().map(|q| q + PHRED_OFFSET));
    }
}

/// Sets `NM`, `MD` and `AS` of a record that has its position, CIGAR and `SEQ`.
fn compare_record(record: &mut SimRecord, reference: &[u8]) {
    let Comparison { edit_distance, score } = compare_with_reference(
        &record.cigar,
        &record.seq,
        reference,
        record.pos as usize,
        &mut record.md,
    );
    record.has_alignment_tags = true;
    record.edit_distance = edit_distance;
    record.score = score;
}

/// MAPQ mostly 60, sometimes 0, else anywhere between; `XS` to match.
fn draw_mapping_quality(rng: &mut Rng, record: &mut SimRecord) {
    let score = record.score.max(0) as u32;
    (record.mapq, record.suboptimal_score) = match rng.below(100) {
        0..88 => (60, rng.below(u64::from(score / 2 + 1)) as i32),
        88..93 => (0, score as i32),
        _ => (rng.between(1, 59) as u8, rng.between(score / 2, score) as i32),
    };
}

/// Appends `rname,pos,strand,CIGAR,mapQ,NM;` describing `other` (bwa writes clips as `S`).
fn write_supplementary_alignment(genome: &Genome, other: &SimRecord, out: &mut Vec<u8>) {
    let mut number = itoa::Buffer::new();
    out.extend_from_slice(genome.references[other.tid as usize].name.as_bytes());
    out.push(b',');
    out.extend_from_slice(number.format(other.pos + 1).as_bytes());
    out.extend_from_slice(if other.is_reverse() { b",-," } else { b",+," });
    format_cigar(&other.cigar, true, out);
    out.push(b',');
    out.extend_from_slice(number.format(other.mapq).as_bytes());
    out.push(b',');
    out.extend_from_slice(number.format(other.edit_distance).as_bytes());
    out.push(b';');
}

/// Sets pair flags, mate fields and `TLEN` on every record of the template.
fn link_mates(template: &mut Template, reads: &[ReadRecords; 2], proper: bool, qc_fail: bool) {
    let primaries = [reads[0].primary, reads[1].primary];
    let mapped = primaries.map(|index| template.pool[index].flag & flag::UNMAPPED == 0);
    let snapshot = primaries.map(|index| {
        let record = &template.pool[index];
        (record.tid, record.pos, record.end(), record.is_reverse())
    });
    for (read, records) in reads.iter().enumerate() {
        let mate = 1 - read;
        let (mate_tid, mate_pos, mate_end, mate_reverse) = snapshot[mate];
        let (own_tid, own_pos, own_end, own_reverse) = snapshot[read];
        let record = &mut template.pool[records.primary];
        record.flag |= flag::PAIRED
            | if read == 0 { flag::READ1 } else { flag::READ2 }
            | if qc_fail { flag::QC_FAIL } else { 0 };
        match (mapped[read], mapped[mate]) {
            (true, true) => {
                record.next_tid = mate_tid;
                record.next_pos = mate_pos;
                if mate_reverse {
                    record.flag |= flag::MATE_REVERSE;
                }
                if proper {
                    record.flag |= flag::PROPER_PAIR;
                }
                if own_tid == mate_tid {
                    let length = own_end.max(mate_end) - own_pos.min(mate_pos);
                    let leftmost = own_pos < mate_pos || (own_pos == mate_pos && read == 0);
                    record.tlen = if leftmost { length } else { -length };
                }
            }
            (true, false) => {
                record.flag |=
                    flag::MATE_UNMAPPED | if own_reverse { flag::MATE_REVERSE } else { 0 };
                record.next_tid = own_tid;
                record.next_pos = own_pos;
            }
            (false, true) => {
                record.tid = mate_tid;
                record.pos = mate_pos;
                record.next_tid = mate_tid;
                record.next_pos = mate_pos;
                if mate_reverse {
                    record.flag |= flag::MATE_REVERSE;
                }
            }
            (false, false) => record.flag |= flag::MATE_UNMAPPED,
        }
        let inherited = record.flag
            & (flag::PAIRED
                | flag::PROPER_PAIR
                | flag::MATE_UNMAPPED
                | flag::MATE_REVERSE
                | flag::READ1
                | flag::READ2
                | flag::QC_FAIL);
        let (next_tid, next_pos) = (record.next_tid, record.next_pos);
        for index in [records.supplementary, records.secondary].into_iter().flatten() {
            let other = &mut template.pool[index];
            other.flag |= inherited;
            other.next_tid = next_tid;
            other.next_pos = next_pos;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::alignment::query_len;
    use super::*;

    #[test]
    fn aligned_ops_have_the_requested_query_length() {
        let mut rng = Rng::new(8);
        let mut ops = Vec::new();
        let mut with_indels = 0;
        for _ in 0..2_000 {
            let len = rng.between(40, 150);
            draw_aligned_ops(&mut rng, len, &mut ops);
            assert_eq!(query_len(&ops), len);
            assert_eq!(ops.first().unwrap().code, b'M');
            assert_eq!(ops.last().unwrap().code, b'M');
            let deleted: u32 = ops.iter().filter(|op| op.code == b'D').map(|op| op.len).sum();
            assert!(deleted <= super::super::fragment::MAX_DELETED_BASES);
            with_indels += usize::from(ops.len() > 1);
        }
        assert!((50..200).contains(&with_indels), "{with_indels}");
    }

    #[test]
    fn orient_reverses_and_complements() {
        let (mut seq, mut qual) = (Vec::new(), Vec::new());
        orient(b"AACG", &[30, 31, 32, 33], false, &mut seq, &mut qual);
        assert_eq!(seq, b"CGTT");
        assert_eq!(qual, b"BA@?");
    }
}
