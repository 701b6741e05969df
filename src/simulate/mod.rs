//! A fast, deterministic generator of realistic paired-end aligned SAM, for tests and benchmarks.
//!
//! It writes what `bwa mem -C` would write for simulated Illumina reads of a simulated genome: read
//! groups with several libraries, Illumina names, PCR and optical duplicates, soft and hard clips,
//! indels, chimeric reads with supplementary records and `SA` tags, secondary alignments in repeats,
//! unmapped reads and pairs, QC failures, every aux type, and `MD`/`NM` that match the reference
//! [`write_fasta`] writes. It is a test tool: it uses no other part of mdsam.
//!
//! Layout: [`rng`] (seeded streams), [`permutation`] (name order), [`genome`] (references, repeats),
//! [`fragment`] (molecules, duplicates, placements), [`names`] (read groups, read names),
//! [`qualities`], [`alignment`] (CIGAR, `MD`/`NM`), [`reads`] (records of a template), [`tags`]
//! (extra aux fields), [`sam_text`] (formatting), [`coordinate`] (the sorted sweep), [`parallel`]
//! (ordered worker chunks).
//!
//! Algorithm:
//! 1. Template ids `0..placed` are molecules in genome order (see [`fragment`]); the rest are
//!    unmapped pairs. Every template is a pure function of `(seed, id)`.
//! 2. Name order visits ranks `0..pairs` and writes template `permutation.inverse(rank)` whole.
//! 3. Coordinate order sweeps ids upwards, keeping records in a heap keyed like `samtools sort`
//!    (tid, pos+1, strand) and then by name-order rank and place in the template; a record leaves the
//!    heap once the next anchor lies past it. Unmapped pairs follow in name order. So the coordinate
//!    output is exactly `samtools sort` of the name-order output, byte for byte in the records.
//!
//! Performance (release, 150 bp, default options, `examples/simulate.rs` writing to `/dev/null`,
//! on 2 shared cores with a load average of about 2.5 from other builds): 10 M pairs (21.2 M
//! records, 9.8 GB) in name order took 33.8 s with 1 thread (296 k pairs/s) and 21.3 s with 2
//! (470 k pairs/s); in coordinate order 35.8 s and 30.7 s (its heap runs on the calling thread).
//! About a third of the time goes to qualities and errors, a fifth to reading the reference at
//! random places (cache misses), an eighth to `MD`/`NM`.

pub mod alignment;
pub mod coordinate;
pub mod fragment;
pub mod genome;
pub mod names;
pub mod parallel;
pub mod permutation;
pub mod qualities;
pub mod reads;
pub mod rng;
pub mod sam_text;
pub mod tags;

use std::io::{self, Write};
use std::ops::Range;

use fragment::{FragmentShape, Planner, TemplatePlan};
use genome::Genome;
use names::ReadGroup;
use permutation::Permutation;
use reads::{ReadSettings, SimRecord, Template, TemplateBuilder, flag};
use sam_text::Dictionary;

/// Bytes gathered before each write to the output.
const OUTPUT_CHUNK_BYTES: usize = 1 << 20;
/// Templates per unit of parallel work.
const TEMPLATES_PER_CHUNK: u64 = 4096;

/// The order of the records written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Aligner order: each template's records together (`@HD SO:unsorted GO:query`).
    Name,
    /// `samtools sort` order (`@HD SO:coordinate`).
    Coordinate,
}

/// What to simulate. Rates are per template (pair) unless they say per read.
#[derive(Clone, Debug)]
pub struct SimulateOptions {
    /// Read pairs (templates) to write.
    pub pairs: u64,
    pub seed: u64,
    /// Bases per read, 75 to 1000.
    pub read_len: u32,
    /// References `chr1..chrN`.
    pub n_refs: u32,
    /// Length of the longest reference; the others shrink to 40 % of it.
    pub ref_len: u32,
    pub order: Order,
    /// Fraction of pairs that are PCR duplicates of an earlier molecule.
    pub dup_rate: f64,
    /// Fraction of pairs that are optical duplicates (same tile, within 100 in x and y).
    pub optical_dup_rate: f64,
    /// `@RG` lines; with two or more there are at least two libraries.
    pub read_groups: u32,
    pub insert_mean: u32,
    pub insert_sd: u32,
    /// Fraction of pairs with neither read mapped (`*` 0, written last in coordinate order).
    pub unmapped_pair_rate: f64,
    /// Fraction of pairs with one read unmapped, placed at its mate.
    pub mate_unmapped_rate: f64,
    /// Fraction of pairs whose second read maps far away or to another reference (not proper).
    pub distant_mate_rate: f64,
    /// Per read: fraction with a chimeric 3' tail, aligned as a supplementary record.
    pub chimeric_rate: f64,
    /// Per read inside a repeat: chance of a secondary record in the repeat's copy.
    pub secondary_rate: f64,
    /// Fraction of pairs failing the platform's quality check (0x200).
    pub qc_fail_rate: f64,
    /// Per record and extra tag (`XT XI XF XH XB XC XD`): the chance it is present.
    pub extra_tag_rate: f64,
    /// Worker threads; the output is the same for any count.
    pub threads: usize,
}

impl Default for SimulateOptions {
    fn default() -> Self {
        SimulateOptions {
            pairs: 10_000,
            seed: 1,
            read_len: 150,
            n_refs: 8,
            ref_len: 2_000_000,
            order: Order::Name,
            dup_rate: 0.08,
            optical_dup_rate: 0.02,
            read_groups: 4,
            insert_mean: 350,
            insert_sd: 80,
            unmapped_pair_rate: 0.01,
            mate_unmapped_rate: 0.02,
            distant_mate_rate: 0.01,
            chimeric_rate: 0.02,
            secondary_rate: 0.7,
            qc_fail_rate: 0.005,
            extra_tag_rate: 0.05,
            threads: 1,
        }
    }
}

impl SimulateOptions {
    fn validate(&self) -> io::Result<()> {
        let invalid = |what: String| Err(io::Error::new(io::ErrorKind::InvalidInput, what));
        if !(75..=1000).contains(&self.read_len) {
            return invalid(format!("read length {} is outside 75..=1000", self.read_len));
        }
        if self.n_refs == 0 {
            return invalid("at least one reference is needed".to_string());
        }
        let reach = FragmentShape::new(self).reach;
        let shortest =
            genome::reference_lengths(self.n_refs, self.ref_len).into_iter().min().unwrap_or(0);
        if shortest < 4 * reach {
            return invalid(format!(
                "the shortest reference ({shortest} bp) must be at least {} bp",
                4 * reach
            ));
        }
        let rates = [
            self.dup_rate,
            self.optical_dup_rate,
            self.unmapped_pair_rate,
            self.mate_unmapped_rate,
            self.distant_mate_rate,
            self.chimeric_rate,
            self.secondary_rate,
            self.qc_fail_rate,
            self.extra_tag_rate,
        ];
        if rates.iter().any(|rate| !(0.0..=1.0).contains(rate))
            || self.dup_rate + self.optical_dup_rate > 0.9
            || self.mate_unmapped_rate + self.distant_mate_rate > 1.0
        {
            return invalid(
                "rates must lie in 0..=1 (duplicates at most 0.9 together)".to_string(),
            );
        }
        Ok(())
    }
}

/// What was written, counted per record as `samtools flagstat` counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimulationSummary {
    pub pairs: u64,
    pub records: u64,
    pub primary: u64,
    pub secondary: u64,
    pub supplementary: u64,
    /// Records without 0x4 (secondary and supplementary included).
    pub mapped: u64,
    /// Records with 0x200.
    pub qc_fail: u64,
    /// Primary mapped records with 0x2.
    pub properly_paired: u64,
    /// Primary records mapped with their mate mapped.
    pub with_mate_mapped: u64,
    /// Primary mapped records whose mate is unmapped.
    pub singletons: u64,
    /// Primary mapped records whose mate maps to another reference.
    pub mate_on_other_reference: u64,
    pub pcr_duplicate_pairs: u64,
    pub optical_duplicate_pairs: u64,
}

impl SimulationSummary {
    fn count_record(&mut self, record: &SimRecord) {
        let flags = record.flag;
        self.records += 1;
        let mapped = flags & flag::UNMAPPED == 0;
        self.mapped += u64::from(mapped);
        self.qc_fail += u64::from(flags & flag::QC_FAIL != 0);
        if flags & flag::SECONDARY != 0 {
            self.secondary += 1;
        } else if flags & flag::SUPPLEMENTARY != 0 {
            self.supplementary += 1;
        } else {
            self.primary += 1;
            if mapped {
                let mate_mapped = flags & flag::MATE_UNMAPPED == 0;
                self.properly_paired += u64::from(flags & flag::PROPER_PAIR != 0);
                self.with_mate_mapped += u64::from(mate_mapped);
                self.singletons += u64::from(!mate_mapped);
                self.mate_on_other_reference +=
                    u64::from(mate_mapped && record.next_tid != record.tid);
            }
        }
    }

    fn add(&mut self, other: &SimulationSummary) {
        self.pairs += other.pairs;
        self.records += other.records;
        self.primary += other.primary;
        self.secondary += other.secondary;
        self.supplementary += other.supplementary;
        self.mapped += other.mapped;
        self.qc_fail += other.qc_fail;
        self.properly_paired += other.properly_paired;
        self.with_mate_mapped += other.with_mate_mapped;
        self.singletons += other.singletons;
        self.mate_on_other_reference += other.mate_on_other_reference;
        self.pcr_duplicate_pairs += other.pcr_duplicate_pairs;
        self.optical_duplicate_pairs += other.optical_duplicate_pairs;
    }

    fn count_template(&mut self, plan: &TemplatePlan, template: &Template) {
        self.pairs += 1;
        match plan.duplicate {
            fragment::DuplicateKind::Pcr => self.pcr_duplicate_pairs += 1,
            fragment::DuplicateKind::Optical => self.optical_duplicate_pairs += 1,
            fragment::DuplicateKind::None => {}
        }
        for record in template.records() {
            self.count_record(record);
        }
    }
}

/// Everything fixed for one run: the genome, read groups, orders and planners.
struct Simulation {
    options: SimulateOptions,
    genome: Genome,
    read_groups: Vec<ReadGroup>,
    permutation: Permutation,
    planner: Planner,
    placed: u64,
}

impl Simulation {
    fn new(options: &SimulateOptions) -> io::Result<Simulation> {
        options.validate()?;
        let shape = FragmentShape::new(options);
        let genome = Genome::generate(options.seed, options.n_refs, options.ref_len, shape.reach);
        let read_groups = names::read_groups(options.seed, options.read_groups);
        let unplaced =
            ((options.pairs as f64 * options.unmapped_pair_rate).round() as u64).min(options.pairs);
        let placed = options.pairs - unplaced;
        Ok(Simulation {
            options: options.clone(),
            permutation: Permutation::new(options.pairs.max(1), options.seed),
            planner: Planner::new(options, placed),
            genome,
            read_groups,
            placed,
        })
    }

    fn builder(&self) -> TemplateBuilder<'_> {
        let settings = ReadSettings {
            seed: self.options.seed,
            read_len: self.options.read_len,
            templates: self.options.pairs,
            qc_fail_rate: self.options.qc_fail_rate,
            secondary_rate: self.options.secondary_rate,
            extra_tag_rate: self.options.extra_tag_rate,
        };
        TemplateBuilder::new(&self.genome, &self.read_groups, settings)
    }

    fn dictionary(&self) -> Dictionary<'_> {
        Dictionary { genome: &self.genome, read_groups: &self.read_groups }
    }

    fn plan(&self, id: u64) -> TemplatePlan {
        self.planner.plan(&self.genome, id, |i| self.permutation.forward(i))
    }

    /// The SAM text of the templates at name-order `ranks` (only the unplaced ones if asked).
    fn name_chunk(&self, ranks: Range<u64>, only_unplaced: bool) -> (Vec<u8>, SimulationSummary) {
        let mut builder = self.builder();
        let dictionary = self.dictionary();
        let mut template = Template::default();
        let mut summary = SimulationSummary::default();
        // About 2.1 records of 500 bytes per template.
        let mut text = Vec::with_capacity((ranks.end - ranks.start) as usize * 1100);
        for rank in ranks {
            let id = self.permutation.inverse(rank);
            if only_unplaced && id < self.placed {
                continue;
            }
            let plan = self.plan(id);
            builder.build(&plan, &mut template);
            summary.count_template(&plan, &template);
            for record in template.records() {
                sam_text::write_record(&dictionary, &template, record, &mut text);
            }
        }
        (text, summary)
    }

    /// Writes templates in name order (only the unplaced ones if asked), in parallel chunks.
    fn write_name_order(
        &self,
        only_unplaced: bool,
        summary: &mut SimulationSummary,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let pairs = self.options.pairs;
        parallel::for_each_ordered(
            self.options.threads,
            pairs.div_ceil(TEMPLATES_PER_CHUNK),
            |chunk| self.name_chunk(chunk_range(chunk, pairs), only_unplaced),
            |(text, chunk_summary)| {
                summary.add(&chunk_summary);
                out.write_all(&text)
            },
        )
    }
}

/// The ids or ranks of chunk `chunk` of `0..total`.
fn chunk_range(chunk: u64, total: u64) -> Range<u64> {
    chunk * TEMPLATES_PER_CHUNK..((chunk + 1) * TEMPLATES_PER_CHUNK).min(total)
}

/// Writes the whole buffer out once it holds a chunk.
fn flush_if_full(buffer: &mut Vec<u8>, out: &mut dyn Write) -> io::Result<()> {
    if buffer.len() >= OUTPUT_CHUNK_BYTES {
        out.write_all(buffer)?;
        buffer.clear();
    }
    Ok(())
}

/// Writes the simulated SAM to `out`.
pub fn write_sam(opts: &SimulateOptions, out: &mut dyn Write) -> io::Result<()> {
    write_sam_with_summary(opts, out).map(|_| ())
}

/// Writes the simulated SAM to `out` and says what it wrote.
pub fn write_sam_with_summary(
    opts: &SimulateOptions,
    out: &mut dyn Write,
) -> io::Result<SimulationSummary> {
    let simulation = Simulation::new(opts)?;
    let mut summary = SimulationSummary::default();
    let mut header = Vec::new();
    sam_text::write_header(&simulation.dictionary(), opts.order, opts.read_len, &mut header);
    out.write_all(&header)?;
    match opts.order {
        Order::Name => simulation.write_name_order(false, &mut summary, out)?,
        Order::Coordinate => {
            coordinate::write_placed(&simulation, &mut summary, out)?;
            if simulation.placed < opts.pairs {
                simulation.write_name_order(true, &mut summary, out)?;
            }
        }
    }
    out.flush()?;
    Ok(summary)
}

/// Writes the reference the reads were simulated from, as FASTA (60 bases per line).
pub fn write_fasta(opts: &SimulateOptions, out: &mut dyn Write) -> io::Result<()> {
    opts.validate()?;
    let reach = FragmentShape::new(opts).reach;
    Genome::generate(opts.seed, opts.n_refs, opts.ref_len, reach).write_fasta(out)?;
    out.flush()
}
