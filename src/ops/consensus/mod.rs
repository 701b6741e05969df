//! `samtools consensus` (samtools 1.24's bam_consensus.c): a consensus sequence from the reads'
//! pileup, by counting (`-m simple`) or by the bayesian model with calibrated tables (the
//! default). The pileup is samtools' own ([`pileup`]), not the one mpileup uses.

pub mod bayes;
pub mod bed_order;
pub mod blocks;
pub mod calibration;
pub mod column_counts;
pub mod emit;
pub mod pileup;
pub mod read_scores;
pub mod simple;
mod tables;
mod vote_sums;

/// `-f`: the output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Fasta,
    Fastq,
    Pileup,
}

/// `-m`: how a column's base is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    Simple,
    /// samtools 1.16's bayesian model (`bayesian_116`).
    Bayes116,
    /// The default (`bayesian`, `bayesian_r`).
    #[default]
    Recall,
    /// `bayesian_p`.
    Precise,
    /// `bayesian_m`.
    Mixed,
}

/// What the command line asks for (the meaning of samtools' `consensus_opts`).
#[derive(Clone, Debug)]
pub struct Options {
    pub mode: Mode,
    pub format: Format,
    pub use_qual: bool,
    pub min_qual: i32,
    pub adj_qual: bool,
    pub use_mqual: bool,
    pub scale_mqual: f64,
    pub nm_adjust: bool,
    pub nm_halo: i32,
    pub sc_cost: i32,
    pub low_mqual: i32,
    pub high_mqual: i32,
    pub min_depth: i32,
    pub call_fract: f64,
    pub het_fract: f64,
    pub cons_cutoff: i32,
    pub ambig: bool,
    pub line_len: usize,
    pub default_qual: i32,
    pub het_only: bool,
    /// `-a` given once (1) or twice (2).
    pub all_bases: u8,
    pub show_del: bool,
    pub show_ins: bool,
    pub mark_ins: bool,
    pub excl_flags: u16,
    pub incl_flags: u16,
    pub min_mqual: i32,
    pub p_het: f64,
    pub p_indel: f64,
    pub het_scale: f64,
    pub homopoly_fix: f64,
    pub homopoly_redux: f64,
    pub ref_qual: i32,
}

impl Default for Options {
    /// samtools' defaults (`main_consensus`).
    fn default() -> Self {
        use crate::record::layout::flags;
        Options {
            mode: Mode::Recall,
            format: Format::Fasta,
            use_qual: false,
            min_qual: 0,
            adj_qual: true,
            use_mqual: true,
            scale_mqual: 1.0,
            nm_adjust: true,
            nm_halo: 50,
            sc_cost: 60,
            low_mqual: 1,
            high_mqual: 60,
            min_depth: 1,
            call_fract: 0.75,
            het_fract: 0.5,
            cons_cutoff: 10,
            ambig: false,
            line_len: 70,
            default_qual: 10,
            het_only: false,
            all_bases: 0,
            show_del: false,
            show_ins: true,
            mark_ins: false,
            excl_flags: flags::UNMAP | flags::SECONDARY | flags::QCFAIL | flags::DUP,
            incl_flags: 0,
            min_mqual: 0,
            p_het: 1e-3,
            p_indel: 2e-4,
            het_scale: 1.0,
            homopoly_fix: 0.0,
            homopoly_redux: 0.01,
            ref_qual: 0,
        }
    }
}

impl Options {
    /// `readaln2`'s filters: the flags asked for and not excluded, mapping quality high enough.
    #[inline]
    pub fn keeps(&self, flag: u16, mapq: u8) -> bool {
        (self.incl_flags == 0 || flag & self.incl_flags != 0)
            && flag & self.excl_flags == 0
            && i32::from(mapq) >= self.min_mqual
    }
}

/// The pileup the options need: the simple mode's FASTA and FASTQ need only each column's
/// counts ([`column_counts`]).
pub fn new_pileup(o: &Options) -> pileup::Pileup {
    if o.mode == Mode::Simple && o.format != Format::Pileup {
        pileup::Pileup::counting(column_counts::QualWeight {
            min_qual: o.min_qual,
            use_qual: o.use_qual,
        })
    } else {
        pileup::Pileup::new()
    }
}

/// Why the consensus cannot go on.
#[derive(Debug)]
pub enum ConsensusError {
    NotSorted,
    /// A `-T` reference lacks a sequence the alignments name.
    Reference,
    /// The output refused a sequence written straight to it.
    Write(std::io::Error),
}

impl From<pileup::NotSorted> for ConsensusError {
    fn from(_: pileup::NotSorted) -> Self {
        ConsensusError::NotSorted
    }
}

/// The simple mode as a column caller.
pub struct SimpleCaller(pub simple::SimpleParams);

impl emit::BaseCaller for SimpleCaller {
    fn call(
        &mut self,
        reads: &mut [Box<pileup::PileupRead>],
        counts: Option<&column_counts::BaseCounts>,
        _pos: i64,
    ) -> (u8, i32) {
        match counts {
            Some(counts) => simple::call_counted(counts, &self.0),
            None => simple::call(reads, &self.0),
        }
    }
}

impl SimpleCaller {
    pub fn new(o: &Options) -> Self {
        SimpleCaller(simple::SimpleParams {
            min_qual: o.min_qual,
            use_qual: o.use_qual,
            ambig: o.ambig,
            het_fract: o.het_fract,
            call_fract: o.call_fract,
            min_depth: o.min_depth,
        })
    }
}
