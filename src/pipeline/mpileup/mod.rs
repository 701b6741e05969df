//! `samtools mpileup` (samtools 1.24 `bam_plcmd.c`): each input read in coordinate order (or
//! through its index for `-r`), filtered and BAQ-adjusted as `mplp_func` does, piled up
//! ([`crate::ops::mpileup::pileup`]) and merged by position as `bam_mplp64_auto` merges, one
//! text line a position ([`crate::ops::mpileup::format`]). Command line: [`crate::cli::mpileup`].

mod blocks;
mod reads;

use crate::io::input_spec::InputSpec;
use std::collections::HashSet;
use std::io::Write;
use std::sync::Arc;

use crate::error::Error;
use crate::io::bed::BedInterval;
use crate::io::fasta::Fasta;
use crate::io::index::Region;
use crate::ops::depth::BedMask;
use crate::ops::mpileup::format::{self, FormatOptions, LineContext};
use crate::ops::mpileup::pileup::Pileup;
use crate::pipeline::checked_open::{LEAN_PIECE, Wording, open_sequence_input_in_pieces};
use crate::pipeline::sorted_input::{SortedInput, load_index_logged};
use crate::record::Header;
use reads::{Reader, References, Source, next_column};

#[derive(Clone, Debug)]
pub struct MpileupOptions {
    pub inputs: Vec<String>,
    pub index_files: Option<Vec<String>>,
    pub output: Option<String>,
    pub reference: Option<String>,
    pub region: Option<String>,
    /// `-l`: BED intervals or positions.
    pub positions: Option<String>,
    /// `-G`: read groups left out (loaded from `exclude_rg_file` when the run starts).
    pub exclude_rg: Option<HashSet<Vec<u8>>>,
    /// `-G FILE`: the file of read groups to leave out.
    pub exclude_rg_file: Option<String>,
    /// `-b FILE`: a file listing the inputs (read when the run starts, into `inputs`).
    pub input_list: Option<String>,
    pub all: u8,
    pub min_mapq: i32,
    pub cap_q: i32,
    pub max_depth: i32,
    pub baq: bool,
    pub redo_baq: bool,
    pub illumina13: bool,
    pub ignore_rg: bool,
    pub count_orphans: bool,
    pub overlaps: bool,
    /// `-M`: base modifications after each base.
    pub mods: bool,
    pub require_flags: u16,
    pub filter_flags: u16,
    pub format: FormatOptions,
    pub threads: usize,
    /// `--input-fmt-option reference=`: a CRAM input's FASTA when `-f` names none.
    pub input_reference: Option<String>,
}

impl MpileupOptions {
    /// The FASTA a CRAM input is decoded against: `-f`, else `reference=`.
    fn cram_reference(&self) -> Option<&str> {
        self.reference.as_deref().or(self.input_reference.as_deref())
    }
}

/// The reads of `region` in a CRAM input, through its `.crai`.
fn load_cram_region(
    path: &str,
    reader: &mut crate::io::cram::Reader,
    explicit: Option<&str>,
    region: Region,
) -> Result<Source, Error> {
    let crai = crate::pipeline::cram_region::load_crai(path, explicit)
        .map_err(|_| Error::Bare(format!("[mpileup] fail to load index for {path}")))?;
    let mut records = std::collections::VecDeque::new();
    crate::pipeline::cram_region::for_each_region_batch(
        reader,
        &crai,
        path,
        std::slice::from_ref(&region),
        false,
        &mut |batch| {
            records.extend(batch.iter().map(|r| r.bytes().to_vec()));
            Ok(())
        },
    )?;
    Ok(Source::Loaded(records))
}

/// `bam_smpl_add`: how many distinct samples the inputs' `@RG` lines name.
fn count_samples(names_and_texts: &[(String, Option<Vec<u8>>)]) -> usize {
    let mut samples: Vec<Vec<u8>> = Vec::new();
    let mut rgs: HashSet<Vec<u8>> = HashSet::new();
    let mut add = |key: Vec<u8>, val: &[u8], samples: &mut Vec<Vec<u8>>| {
        if rgs.insert(key) && !samples.iter().any(|s| s == val) {
            samples.push(val.to_vec());
        }
    };
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
    };
    let field_end = |t: &[u8], at: usize| {
        t[at..].iter().position(|&c| c == b'\t' || c == b'\n').map_or(t.len(), |i| at + i)
    };
    for (name, text) in names_and_texts {
        let Some(t) = text else {
            add(name.as_bytes().to_vec(), name.as_bytes(), &mut samples);
            continue;
        };
        let (mut p, mut n, mut first_sm) = (0usize, 0, None);
        while let Some(q0) = find(t, b"@RG", p) {
            p = q0 + 3;
            let q = find(t, b"\tID:", p).map(|i| i + 4);
            let r = find(t, b"\tSM:", p).map(|i| i + 4);
            let (Some(q), Some(r)) = (q, r) else { break };
            let id = &t[q..field_end(t, q)];
            let sm = &t[r..field_end(t, r)];
            let mut key = name.as_bytes().to_vec();
            key.push(b'/');
            key.extend_from_slice(id);
            add(key, sm, &mut samples);
            first_sm.get_or_insert(sm.to_vec());
            p = q.max(r);
            n += 1;
        }
        if n == 0 {
            add(name.as_bytes().to_vec(), name.as_bytes(), &mut samples);
        } else if let (1, Some(sm)) = (n, first_sm) {
            add(name.as_bytes().to_vec(), &sm, &mut samples);
        }
    }
    samples.len()
}

pub fn run(options: &MpileupOptions) -> Result<(), Error> {
    let mut options = options.clone();
    // samtools reads `-l` while parsing its options: its failure comes before any input opens.
    let positions = options.positions.as_deref().map(read_positions).transpose()?;
    // The list files named on the command line are read here: cli opens no files.
    if let Some(list) = options.input_list.take() {
        options.inputs = crate::io::lists::read_mpileup_file_list(&list)?;
    }
    if let Some(path) = options.exclude_rg_file.take() {
        options.exclude_rg = Some(crate::io::lists::read_mpileup_read_groups(&path)?);
    }
    // samtools mpileup has no -@; a second worker inflates and parses the input ahead of the
    // pileup (ReadAhead), which otherwise waits on every batch (decoding is ~10% of the work).
    // On an indexed input the blocks ([`blocks`]) take two workers, and this thread only joins
    // them and writes: it waits on a pool thread of its own.
    let workers = options.threads.max(2);
    let pool = crate::pipeline::threads::pool(workers + 1);
    pool.install(|| mpileup(&options, positions, workers))
}

const WORDING: Wording = Wording {
    cannot_open: "[mpileup] failed to open",
    no_header: "[mpileup] fail to read the header of",
};

/// Opens every input (queried for `-r` through its index); the first header and the region.
fn open_inputs(o: &MpileupOptions) -> Result<(Vec<Source>, Header, Option<Region>), Error> {
    let mut sources = Vec::new();
    let mut header: Option<Header> = None;
    let mut region = None;
    let mut texts = Vec::new();
    for (i, name) in o.inputs.iter().enumerate() {
        // htslib opens `file://` URLs as the local file.
        let path = name.strip_prefix("file://").unwrap_or(name);
        if path != "-"
            && let Err(e) = std::fs::metadata(path)
        {
            crate::pipeline::sorted_input::log_open_failure(path);
            let reason = crate::error::c_message(&e);
            return Err(Error::Bare(format!("[mpileup] failed to open {name}: {reason}")));
        }
        let opened = open_sequence_input_in_pieces(
            path,
            InputSpec::new(o.threads, o.cram_reference()),
            &WORDING,
            LEAN_PIECE * o.threads.max(1),
            o.region.is_none(),
        )?;
        let h = opened.header.clone();
        texts.push((name.clone(), (!o.ignore_rg).then(|| h.text().to_vec())));
        let input = match &o.region {
            None => Source::Sorted(SortedInput::whole(path, opened, o.threads)),
            Some(text) => {
                let explicit = o.index_files.as_ref().map(|x| x[i].as_str());
                if let crate::io::open::RecordReader::Cram(mut reader) = opened.reader {
                    let r = parse_mpileup_region(text, &h, path)?;
                    region.get_or_insert(r);
                    sources.push(load_cram_region(path, &mut reader, explicit, r)?);
                    header.get_or_insert(h);
                    continue;
                }
                let no_index = || Error::Bare(format!("[mpileup] fail to load index for {path}"));
                let index = load_index_logged(path, explicit).ok_or_else(no_index)?;
                let r = parse_mpileup_region(text, &h, path)?;
                region.get_or_insert(r);
                Source::Sorted(SortedInput::region(path, opened, &index, r).ok_or_else(no_index)?)
            }
        };
        sources.push(input);
        header.get_or_insert(h);
    }
    eprintln!("[mpileup] {} samples in {} input files", count_samples(&texts), o.inputs.len());
    let header = header.ok_or_else(|| Error::Bare("[mpileup] no input file/data given".into()))?;
    Ok((sources, header, region))
}

/// `-r` as `sam_itr_querys` parses it, with htslib's line where it logs one.
fn parse_mpileup_region(text: &str, h: &Header, path: &str) -> Result<Region, Error> {
    if let Some(r) = crate::io::index::parse_region(text, h.refs()) {
        return Ok(r);
    }
    let mut msg = String::new();
    if let Err(e) = crate::io::index::parse_region_detailed(text, |name| h.tid(name))
        && e.is_logged()
    {
        msg = format!("[E::hts_parse_region] {e}\n");
    }
    Err(Error::Bare(format!("{msg}[E::mpileup] fail to parse region '{text}' with {path}")))
}

/// `-l`: the BED file's intervals (`bed_read`, with samtools' messages).
fn read_positions(path: &str) -> Result<Vec<BedInterval>, Error> {
    crate::io::bed::read_bed(path)
        .map_err(|e| e.report(&format!("samtools mpileup: Could not read file \"{path}\""), true))
}

/// The intervals on the header's references.
fn positions_mask(intervals: Vec<BedInterval>, header: &Header) -> BedMask {
    let tids = intervals.into_iter().filter_map(|(name, b, e)| Some((header.tid(&name)?, b, e)));
    BedMask::new(header.refs().len(), tids)
}

/// What the serial walk and the blocks share.
pub(crate) struct Walk<'a> {
    o: &'a MpileupOptions,
    header: &'a Header,
    bed: Option<&'a BedMask>,
    region: Option<Region>,
    max_depth: i64,
}

impl Walk<'_> {
    fn name_of(&self, tid: i64) -> &[u8] {
        self.header.ref_name(tid as i32).unwrap_or(b"")
    }

    fn len_of(&self, tid: i64) -> i64 {
        self.header.refs().get(tid as usize).map_or(0, |r| r.len as i64)
    }

    fn in_bed(&self, tid: i64, pos: i64) -> bool {
        self.bed.is_none_or(|b| b.contains(tid as i32, pos))
    }

    /// `-a`: the lines of the positions `from..to` of `tid` that no read covers.
    fn empty_lines(&self, buf: &mut Vec<u8>, tid: i64, (from, to): (i64, i64), r: Option<&[u8]>) {
        for pos in from..to {
            if self.in_bed(tid, pos) {
                format::empty_line(buf, self.name_of(tid), pos, 1, r, &self.o.format);
            }
        }
    }
}

/// Where the serial walk takes over from the blocks: it writes no line before `lines` and no
/// read's message before `messages` (the blocks wrote those).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gate {
    lines: (i64, i64),
    messages: (i32, i64),
}

impl Gate {
    const OPEN: Gate = Gate { lines: (i64::MIN, i64::MIN), messages: (i32::MIN, i64::MIN) };
}

fn mpileup(
    o: &MpileupOptions,
    positions: Option<Vec<BedInterval>>,
    workers: usize,
) -> Result<(), Error> {
    let fasta = match &o.reference {
        // samtools prints htslib's line only.
        Some(path) => Some(
            Fasta::load(path, None, None, crate::io::fasta::Format::Fasta).map_err(Error::Bare)?,
        ),
        None => None,
    };
    let (mut sources, header, region) = open_inputs(o)?;
    let bed = positions.map(|p| positions_mask(p, &header));
    let max_depth = if o.max_depth == 0 { i64::from(i32::MAX) } else { i64::from(o.max_depth) };
    let walk = Walk { o, header: &header, bed: bed.as_ref(), region, max_depth };
    let plan = blocks::Plan::new(&walk, fasta.as_ref(), workers);
    let out_path = o.output.as_deref().unwrap_or("-");
    let create = match plan {
        Some(_) => crate::io::output::create_lean_unbuffered,
        None => crate::io::output::create_lean,
    };
    let (mut out, file) = create(out_path).map_err(|e| {
        let reason = crate::error::c_message(&e);
        Error::Bare(format!("[mpileup] failed to write to {out_path}: {reason}"))
    })?;
    let write_failed = |e: std::io::Error| Error::io(out_path, e);
    if o.max_depth == 0 {
        eprintln!("[mpileup] Max depth set to maximum value ({})", i32::MAX);
    } else if i64::from(o.max_depth) * sources.len() as i64 > 1 << 20 {
        eprintln!("[mpileup] Combined max depth is above 1M. Potential memory hog!");
    }
    let mut gate = Gate::OPEN;
    let mut done = false;
    if let Some(plan) = plan {
        match plan.run(&walk, fasta.as_ref(), &mut out).map_err(write_failed)? {
            None => done = true,
            Some(g) => gate = g,
        }
    }
    if !done {
        let mut refs = References { fasta: fasta.as_ref(), header: &header, cache: Vec::new() };
        serial(&walk, &mut sources, &mut refs, gate, &mut out)?;
    }
    out.flush().map_err(write_failed)?;
    drop(out);
    file.map_or(Ok(()), |f| f.commit().map_err(write_failed))
}

/// `bam_mplp64_auto`'s walk over every input at once, one line a position (`-a`'s empty ones
/// included), from `gate` on.
fn serial(
    walk: &Walk<'_>,
    sources: &mut [Source],
    refs: &mut References<'_>,
    gate: Gate,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let Walk { o, header, bed, region, max_depth } = *walk;
    let out_path = o.output.as_deref().unwrap_or("-");
    let write_failed = |e: std::io::Error| Error::io(out_path, e);
    let n = sources.len();
    let reader = Reader { o, bed };
    let mut log = |tid: i32, pos: i64, line: &str| {
        if (tid, pos) >= gate.messages {
            eprintln!("{line}");
        }
    };
    let shown = |tid: i64, pos: i64| (tid, pos) >= gate.lines;
    let mut pileups: Vec<Pileup> =
        (0..n).map(|_| Pileup::new(max_depth, o.overlaps, o.mods)).collect();
    // `bam_mplp64_auto`'s state: each input's column position, and whether it has one.
    let mut at: Vec<(i64, i64)> = vec![(-1, i64::MAX); n];
    let mut has: Vec<bool> = vec![false; n];
    let mut min: (i64, i64) = (-1, i64::MAX);
    let (beg0, end0, tid0) = region.map_or((0, i64::MAX, 0), |r| (r.beg, r.end, r.tid));
    let (mut last_tid, mut last_pos): (i64, i64) = (-1, -1);
    let mut one_seq = false;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 17);
    let (mut seq, mut qual) = (Vec::new(), Vec::new());
    let name_of = |tid: i64| walk.name_of(tid);
    let len_of = |tid: i64| walk.len_of(tid);
    let in_bed = |tid: i64, pos: i64| walk.in_bed(tid, pos) && shown(tid, pos);
    let mut reference: Option<Arc<Vec<u8>>> = None;
    loop {
        // bam_mplp64_auto: the inputs at the last column move on; the lowest position is next.
        let mut new_min: (u32, i64) = (u32::MAX, i64::MAX);
        for i in 0..n {
            if at[i] == min {
                let moved = next_column(&reader, &mut sources[i], &mut pileups[i], refs, &mut log);
                let moved = match moved {
                    Ok(m) => m,
                    Err(e) => {
                        // samtools has written every line before the failure.
                        out.write_all(&buf).and_then(|_| out.flush()).map_err(write_failed)?;
                        return Err(e);
                    }
                };
                match moved {
                    Some((t, p)) => (at[i], has[i]) = ((i64::from(t), p), true),
                    None => (at[i], has[i]) = ((0, 0), false),
                }
            }
            if has[i] {
                let key = (at[i].0 as u32, at[i].1);
                if key < new_min {
                    new_min = key;
                }
            }
        }
        if new_min.1 == i64::MAX {
            break;
        }
        min = (i64::from(new_min.0 as i32), new_min.1);
        let (tid, pos) = min;
        one_seq = true;
        if region.is_some() && (pos < beg0 || pos >= end0) {
            continue;
        }
        if o.all > 0 {
            while tid > last_tid {
                if last_tid >= 0 && region.is_none() {
                    loop {
                        last_pos += 1;
                        if last_pos >= len_of(last_tid) {
                            break;
                        }
                        if in_bed(last_tid, last_pos) {
                            let r = reference.as_deref().map(|v| &v[..]);
                            format::empty_line(
                                &mut buf,
                                name_of(last_tid),
                                last_pos,
                                n,
                                r,
                                &o.format,
                            );
                        }
                    }
                }
                last_tid += 1;
                last_pos = -1;
                reference = None;
                if o.all < 2 {
                    break;
                }
                if tid > last_tid {
                    reference = reads::ReferenceSource::get(refs, last_tid as i32);
                }
            }
        }
        if last_tid != tid || reference.is_none() {
            reference = reads::ReferenceSource::get(refs, tid as i32);
            last_tid = tid;
        }
        let r = reference.as_deref().map(|v| &v[..]);
        if o.all > 0 {
            loop {
                last_pos += 1;
                if last_pos >= pos {
                    break;
                }
                if region.is_some() && last_pos < beg0 {
                    continue;
                }
                if in_bed(tid, last_pos) {
                    format::empty_line(&mut buf, name_of(tid), last_pos, n, r, &o.format);
                }
            }
            last_pos = pos;
        }
        if !in_bed(tid, pos) {
            continue;
        }
        format::line_start(&mut buf, name_of(tid), pos, r);
        let line = LineContext { pos, reference: r, header, options: &o.format };
        for i in 0..n {
            let here = has[i] && at[i] == min;
            let column = if here { &pileups[i].column[..] } else { &[] };
            format::input_columns(
                &mut buf,
                &pileups[i].reads,
                column,
                &line,
                (&mut seq, &mut qual),
            );
        }
        buf.push(b'\n');
        if buf.len() >= 1 << 16 {
            out.write_all(&buf).map_err(write_failed)?;
            buf.clear();
        }
    }
    if o.all > 0 {
        if last_tid < 0 && region.is_some() && o.all > 1 {
            last_tid = i64::from(tid0);
            last_pos = beg0 - 1;
        } else if last_tid < 0 && !one_seq && o.all > 1 {
            last_tid = 0;
        }
        while last_tid >= 0 && last_tid < header.refs().len() as i64 {
            reference = reads::ReferenceSource::get(refs, last_tid as i32);
            let r = reference.as_deref().map(|v| &v[..]);
            loop {
                last_pos += 1;
                if last_pos >= len_of(last_tid) || last_pos >= end0 {
                    break;
                }
                if in_bed(last_tid, last_pos) {
                    format::empty_line(&mut buf, name_of(last_tid), last_pos, n, r, &o.format);
                }
            }
            last_tid += 1;
            last_pos = -1;
            if o.all < 2 || region.is_some() {
                break;
            }
        }
    }
    out.write_all(&buf).map_err(write_failed)
}
