//! `samtools targetcut` (samtools 1.24 `cut_target.c`): the input's reads in file order, filtered
//! and (with `-f`) BAQ-adjusted as its `read_aln` does, piled up as htslib's `bam_plp_auto`
//! (depth cap 8000), each column's consensus ([`crate::ops::targetcut::column_consensus`]) kept
//! per reference, whose target regions are printed when the next reference starts
//! ([`crate::ops::targetcut::segments`]). Command line: [`crate::cli::targetcut`].

use std::io::Write;

use crate::error::Error;
use crate::io::fasta::Fasta;
use crate::ops::baq::{BaqFlags, prob_realn};
use crate::ops::drand48::Drand48;
use crate::ops::errmod::{ErrorModel, packed_column};
use crate::ops::mpileup::pileup::Pileup;
use crate::ops::targetcut::{ERR_DEP, ScoreParams, column_consensus, segments};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::sorted_input::{SortedInput, create_text_output};
use crate::record::layout::flags;
use crate::record::{Header, RecordRef};

#[derive(Clone, Debug)]
pub struct TargetcutOptions {
    /// `None`: the usage is shown, after `-f` was tried as samtools tries it.
    pub input: Option<String>,
    /// `-f`/`--reference`: BAQ against this FASTA.
    pub reference: Option<String>,
    /// The FASTA a CRAM input is decoded against.
    pub cram_reference: Option<String>,
    /// `-Q`: bases under this quality are left out.
    pub min_baseq: i32,
    pub params: ScoreParams,
}

/// `bam_plp_init`'s depth cap.
const PILEUP_MAX_DEPTH: i64 = 8000;

const WORDING: Wording = Wording {
    cannot_open: "samtools targetcut: can't open",
    no_header: "samtools targetcut: couldn't read header for",
};

/// The reads `read_aln` passes on: mapped primary reads, neither QC-failed nor duplicates, with
/// BAQ applied (extended) where a reference is loaded.
struct Reads {
    input: SortedInput,
    fasta: Option<Fasta>,
    /// The reference sequence loaded last, by id.
    loaded: Option<(i32, Vec<u8>)>,
}

impl Reads {
    fn next(&mut self, header: &Header) -> Result<Option<Vec<u8>>, Error> {
        loop {
            let Some(r) = self.input.current()? else { return Ok(None) };
            let skip = flags::UNMAP | flags::SECONDARY | flags::QCFAIL | flags::DUP;
            if r.flag() & skip != 0 {
                self.input.advance();
                continue;
            }
            let mut rec = r.bytes().to_vec();
            self.input.advance();
            let tid = RecordRef::new(&rec).ref_id();
            if let Some(fasta) = &self.fasta
                && tid >= 0
            {
                if self.loaded.as_ref().is_none_or(|l| l.0 != tid) {
                    let name = header.ref_name(tid).unwrap_or_default();
                    // htslib realigns against an empty sequence where the FASTA lacks one.
                    let seq = fasta.sequence(name).unwrap_or_else(|| {
                        eprintln!(
                            "[W::fai_get_val] Reference {} not found in FASTA file, returning empty sequence",
                            String::from_utf8_lossy(name)
                        );
                        Vec::new()
                    });
                    self.loaded = Some((tid, seq));
                }
                if let Some((_, seq)) = &self.loaded {
                    let mut warnings = Vec::new();
                    let baq = BaqFlags { apply: true, extend: true };
                    let _ = prob_realn(&mut rec, seq, baq, &mut warnings);
                    for w in warnings {
                        eprintln!("{w}");
                    }
                }
            }
            return Ok(Some(rec));
        }
    }
}

/// `bam_plp_auto`: the next column, reading as many reads as it needs; `Err` with htslib's line
/// when the input fails or is out of order.
fn next_column(
    reads: &mut Reads,
    plp: &mut Pileup,
    header: &Header,
) -> Result<Option<(i32, i64)>, String> {
    if let Some(p) = plp.next_column()? {
        return Ok(Some(p));
    }
    if plp.is_finished() {
        return Ok(None);
    }
    while let Some(rec) = reads.next(header).map_err(|e| e.to_string())? {
        plp.push(rec)?;
        if let Some(p) = plp.next_column()? {
            return Ok(Some(p));
        }
    }
    plp.finish();
    plp.next_column()
}

pub fn run(o: &TargetcutOptions) -> Result<(), Error> {
    // samtools loads the index before anything else, and carries on without it.
    let fasta = o.reference.as_deref().and_then(|path| match Fasta::read_whole(path) {
        Ok(f) => Some(f),
        Err(m) => {
            eprintln!("{}", m.lines().next().unwrap_or_default());
            eprintln!("[main_cut_target] fail to load the fasta index.");
            None
        }
    });
    let Some(input) = o.input.as_deref() else { return Err(Error::ShowUsage(None)) };
    let spec = crate::io::input_spec::InputSpec::new(1, o.cram_reference.as_deref());
    let opened = open_sequence_input(input, spec, &WORDING)?;
    let header = opened.header.clone();
    // No `-@`: the main thread and one of rayon's global pool, which reads the next group.
    let sorted = SortedInput::whole(input, opened, 2);
    let mut reads = Reads { input: sorted, fasta, loaded: None };
    let (mut out, file) = create_text_output("-", "targetcut")?;
    let em = ErrorModel::new(1.0 - ERR_DEP);
    let mut rng = Drand48::default();
    let mut plp = Pileup::new(PILEUP_MAX_DEPTH, false, false);
    let mut cns: Vec<u16> = Vec::new();
    let mut last_tid: Option<i32> = None;
    let mut bases: Vec<u16> = Vec::new();
    let mut text: Vec<u8> = Vec::new();
    let write_failed = |e: std::io::Error| Error::io("-", e);
    let name_of = |tid: i32| header.ref_name(tid).unwrap_or_default().to_vec();
    let failure = loop {
        let (tid, pos) = match next_column(&mut reads, &mut plp, &header) {
            Ok(Some(p)) => p,
            Ok(None) => break None,
            Err(m) => break Some(m),
        };
        if tid < 0 {
            break None;
        }
        if last_tid != Some(tid) {
            if let Some(last) = last_tid {
                segments::write_targets(&mut text, &name_of(last), &cns, &o.params);
                out.write_all(&text).map_err(write_failed)?;
                text.clear();
            }
            let len = header.refs().get(tid as usize).map_or(0, |r| r.len as usize);
            cns.clear();
            cns.resize(len, 0);
            last_tid = Some(tid);
        }
        packed_column(&plp, o.min_baseq, &mut bases);
        let c = column_consensus(&em, &mut bases, &mut rng);
        // A read past the reference's end: samtools writes beyond its array, never read back.
        if let Some(slot) = usize::try_from(pos).ok().and_then(|p| cns.get_mut(p)) {
            *slot = c;
        }
    };
    if let Some(last) = last_tid {
        segments::write_targets(&mut text, &name_of(last), &cns, &o.params);
    }
    out.write_all(&text).and_then(|_| out.flush()).map_err(write_failed)?;
    drop(out);
    if let Some(f) = file {
        f.commit().map_err(write_failed)?;
    }
    match failure {
        None => Ok(()),
        Some(m) => {
            Err(Error::Bare(format!("{m}\nsamtools targetcut: error reading from \"{input}\"")))
        }
    }
}
