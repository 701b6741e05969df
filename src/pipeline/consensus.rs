//! `samtools consensus` (samtools 1.24 `pileup_loop_serial` in bam_consensus.c): the input read
//! in order (whole, one `-r` region, or each `--regions-file` interval through the index),
//! filtered, piled up and called by [`crate::ops::consensus`]. Command line:
//! [`crate::cli::consensus`].
//!
//! `-@` (1 and up) on an indexed BAM or CRAM takes samtools' threaded path instead
//! ([`crate::pipeline::consensus_chunks`]); elsewhere (no index, SAM) the one walk decodes on
//! that many threads.
//! A failure (a reference `-T` lacks) still writes what came before it, as samtools does.

use crate::io::input_spec::InputSpec;
use std::io::Write;
use std::sync::Arc;

use crate::error::Error;
use crate::io::fasta::Fasta;
use crate::io::index::Region;
use crate::ops::consensus::bayes::BayesCaller;
use crate::ops::consensus::calibration::{self, Calibration, Source};
use crate::ops::consensus::column_counts::BaseCounts;
use crate::ops::consensus::emit::{BaseCaller, Emitter, ReferenceSequences, Span};
use crate::ops::consensus::pileup::PileupRead;
use crate::ops::consensus::{
    ConsensusError, Format, Mode, Options, SimpleCaller, bed_order, read_scores,
};
use crate::pipeline::checked_open::{LEAN_PIECE, Wording, open_sequence_input_in_pieces};
use crate::pipeline::consensus_chunks::Blocks;
use crate::pipeline::sorted_input::{RegionIndex, SortedInput};
use crate::record::Header;

pub struct ConsensusRun {
    pub options: Options,
    /// `-t`/`-X`'s quality calibration.
    pub calibration: Source,
    pub input: String,
    pub output: Option<String>,
    pub region: Option<String>,
    pub bed: Option<String>,
    /// `-T`: the consensus' own reference (`--show-ins`, `-a`).
    pub reference: Option<String>,
    /// `--input-fmt-option reference=`: the FASTA a CRAM input is decoded against (samtools
    /// keeps `-T` for the consensus alone).
    pub cram_reference: Option<String>,
    pub threads: usize,
    /// `-Z`: the bases of each block the threads share out.
    pub block_size: i64,
}

pub(crate) const WORDING: Wording = Wording {
    cannot_open: "samtools consensus: Cannot open input file",
    no_header: "Failed to read header for",
};

fn failed(msg: String) -> Error {
    Error::Bare(format!("{msg}\nsamtools consensus: failed"))
}

pub fn run(run: &ConsensusRun) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(run.threads);
    pool.install(|| consensus(run))
}

/// `-T`: the FASTA's sequences by the header's reference ids, read at their offsets through
/// the `.fai` (samtools' `fai_load`, which builds and writes a missing `.fai`). The blocks of
/// the threaded path share the one reader.
struct ByTid {
    fasta: Arc<Fasta>,
    names: Arc<Vec<Vec<u8>>>,
}

impl ReferenceSequences for ByTid {
    fn fetch(&mut self, tid: i32) -> Option<Vec<u8>> {
        let name = self.names.get(usize::try_from(tid).ok()?)?;
        // `fai_fetch64`: an unknown name is htslib's warning and no sequence.
        if !self.fasta.has(name) {
            eprintln!(
                "[W::fai_get_val] Reference {} not found in FASTA file, returning empty sequence",
                String::from_utf8_lossy(name)
            );
            return None;
        }
        self.fasta.sequence(name).filter(|s| !s.is_empty())
    }
}

/// `-T` opened as samtools' `fai_load` opens it; htslib's lines and samtools' own on failure
/// (`optarg` is NULL by then, hence "(null)").
fn load_reference(path: &str) -> Result<Fasta, Error> {
    Fasta::load(path, None, None, crate::io::fasta::Format::Fasta)
        .map_err(|lines| Error::Bare(format!("{lines}\nFailed to load fai for (null)")))
}

/// `-t FILE`'s table (samtools reads it while parsing options).
fn load_calibration(source: &Source) -> Result<Calibration, Error> {
    match source {
        Source::Table(table) => Ok(table.as_ref().clone()),
        Source::File(path) => {
            let parsed = std::fs::read(path).ok().map(|text| calibration::parse(&text));
            match parsed {
                Some(Ok(table)) => Ok(table),
                failure => {
                    if let Some(Err(calibration::BadCalibration::NotAscending)) = failure {
                        eprintln!("Qual calibration file is not in ascending order");
                    }
                    Err(Error::Bare(format!(
                        "samtools consensus: failed to load quality calibration '{path}'"
                    )))
                }
            }
        }
    }
}

/// `--regions-file`, read before the input is opened as samtools reads it while parsing options.
fn read_bed(path: &str) -> Result<Vec<crate::io::bed::BedInterval>, Error> {
    crate::io::bed::read_bed(path)
        .map_err(|e| e.report(&format!("samtools consensus: Could not read file \"{path}\""), true))
}

/// The BED intervals in samtools' order, on the header's references.
fn bed_spans(
    intervals: &[crate::io::bed::BedInterval],
    header: &Header,
) -> Result<Vec<Span>, Error> {
    let names: Vec<Vec<u8>> = intervals.iter().map(|(n, _, _)| n.clone()).collect();
    let mut spans = Vec::new();
    for first in bed_order::khash_order(&names) {
        let name = &names[first];
        let Some(tid) = header.tid(name) else {
            eprintln!(
                "[W::fill_reglist_tid] Region '{}' specifies an unknown reference name",
                String::from_utf8_lossy(name)
            );
            continue;
        };
        let mut ivs: Vec<(i64, i64)> =
            intervals.iter().filter(|(n, _, _)| n == name).map(|&(_, b, e)| (b, e)).collect();
        ivs.sort_unstable();
        spans.extend(ivs.into_iter().map(|(beg, end)| Span { tid, beg, end }));
    }
    if spans.is_empty() {
        return Err(failed(String::new()).trim_start());
    }
    Ok(spans)
}

trait TrimStart {
    fn trim_start(self) -> Error;
}

impl TrimStart for Error {
    /// A failure with no message of its own: only samtools' closing line.
    fn trim_start(self) -> Error {
        match self {
            Error::Bare(m) => Error::Bare(m.trim_start().to_string()),
            e => e,
        }
    }
}

fn consensus(run: &ConsensusRun) -> Result<(), Error> {
    let calibration = load_calibration(&run.calibration)?;
    let bed = run.bed.as_deref().map(read_bed).transpose()?;
    let out_path = run.output.as_deref().unwrap_or("-");
    let (mut out, file) = crate::io::output::create_lean(out_path)
        .map_err(|e| Error::Bare(format!("{out_path}: {}", crate::error::c_message(&e))))?;
    if let Err(e) = write_consensus(run, &calibration, bed, out_path, &mut out) {
        // samtools writes each line as it makes it, so what came before a failure (a reference
        // `-T` lacks) is still on standard output; an `-o` file is dropped uncommitted.
        let _ = out.flush();
        return Err(e);
    }
    out.flush().map_err(|e| Error::io(out_path, e))?;
    drop(out);
    file.map_or(Ok(()), |f| f.commit().map_err(|e| Error::io(out_path, e)))
}

/// The consensus of `run` written to `out` (named `out_path` in messages).
fn write_consensus(
    run: &ConsensusRun,
    calibration: &Calibration,
    bed: Option<Vec<crate::io::bed::BedInterval>>,
    out_path: &str,
    out: &mut Box<dyn Write + Send>,
) -> Result<(), Error> {
    let o = &run.options;
    let opened = open_sequence_input_in_pieces(
        &run.input,
        InputSpec::new(run.threads, run.cram_reference.as_deref()),
        &WORDING,
        LEAN_PIECE * run.threads.max(1),
        // Regions are read through the index; the whole file front to back.
        run.region.is_none() && run.bed.is_none(),
    )
    .map_err(|e| match e {
        Error::Bare(m) => failed(m),
        e => e,
    })?;
    let fasta = run.reference.as_deref().map(load_reference).transpose()?.map(Arc::new);
    let header = opened.header.clone();
    let spans = bed.map(|intervals| bed_spans(&intervals, &header)).transpose()?;
    let names: Vec<Vec<u8>> = header.refs().iter().map(|r| r.name.clone()).collect();
    let shared_names = Arc::new(names.clone());
    let lens: Vec<i64> = header.refs().iter().map(|r| r.len as i64).collect();
    let index = if run.region.is_some() || run.bed.is_some() {
        let no_index = || {
            failed(format!(
                "samtools consensus: Cannot load index for input file \"{}\"",
                run.input
            ))
        };
        Some(RegionIndex::load_logged(&run.input, None, &opened).ok_or_else(no_index)?)
    } else if run.threads > 1 {
        let index = RegionIndex::load_logged(&run.input, None, &opened);
        if index.is_none() {
            eprintln!("No index: multi-threading is limited to decompression only");
        }
        index
    } else {
        None
    };
    // samtools' threaded path: blocks called on the pool (an indexed BAM or CRAM).
    let in_blocks = run.threads > 1
        && matches!(
            opened.reader,
            crate::io::open::RecordReader::Bam(_) | crate::io::open::RecordReader::Cram(_)
        );
    // A block's own `-T` reader (pileup lines), on the shared FASTA.
    let new_reference = || -> Option<Box<dyn ReferenceSequences>> {
        let fasta = Arc::clone(fasta.as_ref()?);
        Some(Box::new(ByTid { fasta, names: Arc::clone(&shared_names) }))
    };
    let new_caller = || -> Box<dyn BaseCaller> {
        match o.mode {
            Mode::Simple => Box::new(SimpleCaller::new(o)),
            _ => Box::new(BayesCaller::new(o, calibration)),
        }
    };
    let blocks = index.as_ref().filter(|_| in_blocks).map(|index| Blocks {
        options: o,
        path: &run.input,
        cram_reference: run.cram_reference.as_deref(),
        index,
        threads: run.threads,
        wording: &WORDING,
        new_caller: &new_caller,
        names: &names,
        lens: &lens,
        new_reference: &new_reference,
        readers: Default::default(),
    });
    let mut reference =
        fasta.clone().map(|fasta| ByTid { fasta, names: Arc::clone(&shared_names) });
    let mut caller = new_caller();
    let mut emitter = Emitter::new(
        o,
        &names,
        &lens,
        reference.as_mut().map(|r| r as &mut dyn ReferenceSequences),
    );
    let write_failed = |e: std::io::Error| Error::io(out_path, e);
    let mut opened = Some(opened);
    let mut source: Option<SortedInput> = None;
    let walk_failed = |e| match e {
        WalkError::Consensus(ConsensusError::NotSorted) => {
            failed("BAM/SAM file is not sorted by position. Aborting".into())
        }
        WalkError::Consensus(ConsensusError::Reference) => failed(String::new()).trim_start(),
        WalkError::Consensus(ConsensusError::Write(e)) => write_failed(e),
        WalkError::Io(e) => write_failed(e),
        WalkError::Other(e) => e,
    };
    // The input walked in order, or (`blocks`) the calls of the blocks of `span`.
    let mut walk = |input: Option<&mut SortedInput>,
                    spans: Option<&[Span]>,
                    emitter: &mut Emitter<'_>,
                    out: &mut Box<dyn Write + Send>|
     -> Result<(), Error> {
        let walked = match (input, &blocks) {
            (Some(input), _) => walk_input(input, o, caller.as_mut(), emitter, out),
            (None, Some(blocks)) => {
                let jobs = blocks.jobs(spans, run.block_size);
                // The blocks wrote every line, `-a`'s and the sequences' included.
                return blocks.run(&jobs, out).map_err(walk_failed);
            }
            (None, None) => unreachable!("a walk has an input or blocks"),
        }
        .map_err(walk_failed)
        .and_then(|()| {
            match o.format {
                Format::Pileup => emitter.finish_pileup(),
                _ => emitter.finish_fasta(&mut |piece| out.write_all(piece)),
            }
            .map_err(|e| match e {
                ConsensusError::Write(e) => write_failed(e),
                _ => failed(String::new()).trim_start(),
            })
        });
        // The lines made before a failure are written too, as samtools writes them.
        let wrote = out.write_all(&emitter.out);
        emitter.out.clear();
        walked?;
        wrote.map_err(write_failed)
    };
    match (&spans, &run.region) {
        (Some(spans), _) => {
            let index = index.as_ref().expect("index loaded for regions");
            let mut valid = Vec::new();
            for span in spans {
                let tlen = lens[span.tid as usize];
                if span.beg > span.end || span.beg > tlen {
                    eprintln!(
                        "[consensus] Warning: Invalid region \"{}:{}-{}\"",
                        String::from_utf8_lossy(&names[span.tid as usize]),
                        span.beg,
                        span.end
                    );
                    continue;
                }
                let span = Span { tid: span.tid, beg: span.beg.max(0), end: span.end.min(tlen) };
                if blocks.is_some() {
                    valid.push(span);
                    continue;
                }
                let region = Region { tid: span.tid, beg: span.beg, end: span.end };
                let input = query(&mut source, &mut opened, &run.input, index, region)?;
                emitter.start_region(span);
                walk(Some(input), None, &mut emitter, out)?;
            }
            if blocks.is_some() {
                walk(None, Some(&valid), &mut emitter, out)?;
            }
        }
        (None, Some(text)) => {
            let index = index.as_ref().expect("index loaded for a region");
            let parse_failed =
                || failed(format!("samtools consensus: Failed to parse region \"{text}\""));
            let region = crate::io::index::parse_region(text, header.refs())
                .filter(|r| r.tid >= 0)
                .ok_or_else(parse_failed)?;
            let end = region.end.min(Region::END_OF_REFERENCE);
            let span = Span { tid: region.tid, beg: region.beg, end };
            emitter.iter = Some(span);
            if blocks.is_some() {
                let end = end.min(lens[region.tid as usize]);
                walk(None, Some(&[Span { end, ..span }]), &mut emitter, out)?;
            } else {
                let input = query(&mut source, &mut opened, &run.input, index, region)?;
                walk(Some(input), None, &mut emitter, out)?;
            }
        }
        (None, None) if blocks.is_some() => walk(None, None, &mut emitter, out)?,
        (None, None) => {
            let opened = opened.take().expect("input opened once");
            let mut input = SortedInput::whole(&run.input, opened, run.threads);
            walk(Some(&mut input), None, &mut emitter, out)?;
        }
    }
    Ok(())
}

/// The input queried for `region`: opened on the first call, re-pointed after.
fn query<'s>(
    source: &'s mut Option<SortedInput>,
    opened: &mut Option<crate::io::open::Opened>,
    path: &str,
    index: &RegionIndex,
    region: Region,
) -> Result<&'s mut SortedInput, Error> {
    match source {
        Some(input) => index.requery(input, region),
        None => {
            let o = opened.take().expect("input opened once");
            let input = index.query(path, o, region).ok_or_else(|| {
                failed(format!("samtools consensus: Cannot load index for input file \"{path}\""))
            })?;
            *source = Some(input);
        }
    }
    Ok(source.as_mut().expect("just set"))
}

pub enum WalkError {
    Consensus(ConsensusError),
    Io(std::io::Error),
    Other(Error),
}

impl From<ConsensusError> for WalkError {
    fn from(e: ConsensusError) -> Self {
        WalkError::Consensus(e)
    }
}

impl From<crate::ops::consensus::pileup::NotSorted> for WalkError {
    fn from(_: crate::ops::consensus::pileup::NotSorted) -> Self {
        WalkError::Consensus(ConsensusError::NotSorted)
    }
}

/// Every kept record of `input` through the pileup, each column into `emitter`, its text
/// written out as it grows.
fn walk_input(
    input: &mut SortedInput,
    o: &Options,
    caller: &mut dyn BaseCaller,
    emitter: &mut Emitter<'_>,
    out: &mut Box<dyn Write + Send>,
) -> Result<(), WalkError> {
    let mut pileup = crate::ops::consensus::new_pileup(o);
    let pileup_format = o.format == Format::Pileup;
    let mut column = |reads: &mut [Box<PileupRead>],
                      counts: Option<&BaseCounts>,
                      pos: i64,
                      nth: i32|
     -> Result<(), WalkError> {
        let tid = reads[0].record().ref_id();
        if pileup_format {
            emitter.pileup_column(caller, reads, tid, pos, nth)?;
        } else {
            let write = &mut |piece: &[u8]| out.write_all(piece);
            emitter.fasta_column(caller, reads, counts, (tid, pos, nth), write)?;
        }
        if emitter.out.len() >= 1 << 16 {
            out.write_all(&emitter.out).map_err(WalkError::Io)?;
            emitter.out.clear();
        }
        Ok(())
    };
    let mut keep =
        |p: &mut PileupRead| -> Result<bool, WalkError> { Ok(read_scores::init_read(o, p)) };
    while let Some(r) = input.current().map_err(WalkError::Other)? {
        if o.keeps(r.flag(), r.mapq()) {
            pileup.add(r, &mut keep, &mut column)?;
        }
        input.advance();
    }
    pileup.finish(&mut column)
}
