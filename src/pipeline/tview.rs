//! `samtools tview -d T|H` (samtools 1.24 `bam_tview.c`, `bam_tview_html.c`): the window of
//! `width` bases from the `-p` position (else the start of the first reference, or of the
//! first one the FASTA has), read through the input's index, piled up as htslib's
//! `bam_plp_push` does (every mapped read, no other filter), drawn by [`crate::ops::tview`] and
//! printed once. Command line: [`crate::cli::tview`].

use std::io::{IsTerminal, Write};

use crate::error::Error;
use crate::io::cram::index::CraiEntry;
use crate::io::detect::{self, Format};
use crate::io::fasta::Fasta;
use crate::io::index::{Index, Region, parse_region_detailed};
use crate::io::input::Input;
use crate::io::open::RecordReader;
use crate::ops::mpileup::pileup::Pileup;
use crate::ops::tview::draw::{Drawer, Piled};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::input_filter::{InputFilter, passes};
use crate::pipeline::{cram_region, region};
use crate::record::{Header, RecordRef};

#[derive(Clone, Debug)]
pub struct TviewOptions {
    pub input: String,
    /// `-X`: the index named after the input.
    pub index: Option<String>,
    pub reference: Option<String>,
    /// `-p chr:pos`.
    pub position: Option<String>,
    /// `-s`: only reads of this sample or read group.
    pub sample: Option<String>,
    /// Screen width in bases (`-w`, else `COLUMNS`, else 80).
    pub width: i64,
    pub html: bool,
    /// Not `-i`.
    pub show_inserts: bool,
    /// `--input-fmt-option filter=EXPR`: reads it rejects are never read.
    pub filter: Option<String>,
}

const WORDING: Wording =
    Wording { cannot_open: "samtools tview: can't open", no_header: "samtools tview: cannot read" };

/// htslib's default pileup depth cap (`bam_plp_init`).
const MAX_DEPTH: i64 = 8000;

/// The read groups whose ID or SM is `sample` (`get_rg_sample`).
fn read_groups_of(header: &Header, sample: &str) -> Vec<Vec<u8>> {
    let mut ids = Vec::new();
    for line in header.text().split(|&b| b == b'\n') {
        let Some(fields) = line.strip_prefix(b"@RG\t") else { continue };
        let tag = |t: &[u8]| {
            fields.split(|&b| b == b'\t').find_map(|f| f.strip_prefix(t)).map(<[u8]>::to_vec)
        };
        let Some(id) = tag(b"ID:") else { continue };
        if id == sample.as_bytes() || tag(b"SM:").is_some_and(|sm| sm == sample.as_bytes()) {
            ids.push(id);
        }
    }
    ids
}

/// What `path` holds, as htslib detects it.
fn detected_format(path: &str) -> Option<Format> {
    let mut input = Input::open(path).ok()?;
    let head = input.peek(detect::PEEK_COMPRESSED).ok()?;
    Some(detect::detect(head, path).format)
}

/// The input's index: a BAI/CSI, or a CRAM's `.crai`.
enum WindowIndex {
    Binned(Index),
    Crai(Vec<CraiEntry>),
}

/// `sam_index_load` (`sam_index_load2` with `-X`), which samtools calls right after the header.
fn load_window_index(
    path: &str,
    explicit_index: Option<&str>,
    reader: &RecordReader,
) -> Result<WindowIndex, Error> {
    let no_index = || {
        // htslib's own line: from the CRAM or the BAI/CSI lookup; FASTA/FASTQ get none.
        let logger = match detected_format(path) {
            _ if explicit_index.is_some() => None,
            Some(Format::Fasta | Format::Fastq) => None,
            Some(Format::Cram { .. }) => Some("cram_index_load"),
            _ => Some("idx_find_and_load"),
        };
        let line = logger.map_or(String::new(), |f| {
            format!("[E::{f}] Could not retrieve index file for '{path}'\n")
        });
        Error::Bare(format!("{line}samtools tview: cannot read index for \"{path}\""))
    };
    match reader {
        RecordReader::Cram(_) => cram_region::load_crai(path, explicit_index)
            .map(WindowIndex::Crai)
            .map_err(|_| no_index()),
        _ => region::load_index(path, explicit_index)
            .map(WindowIndex::Binned)
            .map_err(|_| no_index()),
    }
}

/// The window's reads, as `sam_itr_queryi` gives them, in file order.
fn read_window(
    path: &str,
    index: &WindowIndex,
    reader: &mut RecordReader,
    header: &Header,
    window: Region,
) -> Result<Vec<Vec<u8>>, Error> {
    let mut records = Vec::new();
    if window.tid < 0 {
        return Ok(records);
    }
    let mut keep = |batch: &crate::record::Batch| {
        records.extend(batch.iter().map(|r| r.bytes().to_vec()));
        Ok(())
    };
    let regions = std::slice::from_ref(&window);
    match (reader, index) {
        (RecordReader::Cram(cram), WindowIndex::Crai(crai)) => {
            cram_region::for_each_region_batch(cram, crai, path, regions, false, &mut keep)?
        }
        (RecordReader::Bam(bam), WindowIndex::Binned(index)) => {
            region::for_each_region_batch(bam, index, path, regions, false, &mut keep)?
        }
        (RecordReader::Sam(_), WindowIndex::Binned(index)) => {
            let input = Input::open(path).map_err(|e| Error::io(path, e))?;
            let mut sam_gz = crate::io::sam::range::RangeReader::new(input, header.clone(), 1);
            region::for_each_region_batch(&mut sam_gz, index, path, regions, false, &mut keep)?
        }
        _ => unreachable!("the index was loaded for this reader"),
    }
    Ok(records)
}

pub fn run(o: &TviewOptions) -> Result<(), Error> {
    let path = o.input.as_str();
    let spec = crate::io::input_spec::InputSpec::new(1, o.reference.as_deref());
    let mut opened = open_sequence_input(path, spec, &WORDING)?;
    let header = opened.header.clone();
    // samtools loads the index, the FASTA and the sample's read groups before the position.
    let index = load_window_index(path, o.index.as_deref(), &opened.reader)?;
    let fasta = match &o.reference {
        Some(fa) => match Fasta::read_whole(fa) {
            Ok(f) => Some(f),
            Err(message) => {
                // htslib's line only: samtools tview goes on without a reference.
                eprintln!("{}", message.lines().next().unwrap_or_default());
                None
            }
        },
        None => None,
    };
    let groups = match &o.sample {
        Some(s) => {
            let g = read_groups_of(&header, s);
            if g.is_empty() {
                return Err(Error::Bare(format!(
                    "samtools tview: The sample or read group \"{s}\" not present."
                )));
            }
            Some(g)
        }
        None => None,
    };
    let (mut tid, mut left) = (0, 0);
    if let Some(p) = &o.position {
        let lookup =
            |name: &[u8]| header.refs().iter().position(|r| r.name == name).map(|i| i as i32);
        match parse_region_detailed(p, lookup) {
            Ok(r) => (tid, left) = (r.tid, r.beg),
            Err(e) => {
                if e.is_logged() {
                    eprintln!("[E::hts_parse_region] {e}");
                }
                return Err(Error::Bare("Unknown reference or malformed region".into()));
            }
        }
    } else if let Some(f) = &fasta {
        let found = header.refs().iter().position(|r| f.has(&r.name));
        let Some(i) = found else {
            return Err(Error::Bare(
                "None of the BAM sequence names present in the fasta file".into(),
            ));
        };
        tid = i as i32;
    }
    let reference = match &fasta {
        Some(f) => {
            let seq = header.ref_name(tid).and_then(|name| f.fetch(name, left, left + o.width - 1));
            Some(seq.ok_or_else(|| {
                Error::Bare("Could not read the reference sequence. Is it seekable (plain text or compressed + .gzi indexed with bgzip)?".into())
            })?)
        }
        None => None,
    };
    let window = Region { tid, beg: left, end: left + o.width };
    let mut records = read_window(path, &index, &mut opened.reader, &header, window)?;
    if let Some(filter) = InputFilter::new(o.filter.as_deref()) {
        let mut kept = Vec::with_capacity(records.len());
        for rec in records {
            // htslib's iterator fails on a filter error: samtools' line follows htslib's.
            let keep = passes(Some(&filter), &RecordRef::new(&rec), &header).map_err(|e| {
                Error::Bare(format!("{e}\nsamtools tview: could not read from input file"))
            })?;
            if keep {
                kept.push(rec);
            }
        }
        records = kept;
    }
    let mut drawer = Drawer::new(o.width, left, reference, o.show_inserts);
    pile_up(&records, groups.as_deref(), &mut drawer)?;
    drawer.finish();
    let name = header.ref_name(tid).map_or("(null)".into(), String::from_utf8_lossy);
    let bytes = if o.html {
        drawer.screen.html(&format!("{name}:{}", left + 1))
    } else {
        drawer.screen.text(std::io::stdout().is_terminal())
    };
    let mut out = std::io::stdout().lock();
    out.write_all(&bytes).and_then(|_| out.flush()).map_err(|e| Error::io("-", e))
}

/// `tv_push_aln` and the pileup: each kept read pushed, each column drawn.
fn pile_up(
    records: &[Vec<u8>],
    groups: Option<&[Vec<u8>]>,
    drawer: &mut Drawer,
) -> Result<(), Error> {
    let failed = |e: String| Error::Bare(e);
    let mut plp = Pileup::new(MAX_DEPTH, false, false);
    let kept = records.iter().filter(|rec| {
        let Some(groups) = groups else { return true };
        let rg = RecordRef::new(rec).aux_get(*b"RG");
        rg.is_some_and(|f| groups.iter().any(|g| g.as_slice() == f.value))
    });
    for rec in kept {
        plp.push(rec.clone()).map_err(failed)?;
        while let Some((_, pos)) = plp.next_column().map_err(failed)? {
            draw_column(&plp, pos, drawer);
        }
    }
    plp.finish();
    while let Some((_, pos)) = plp.next_column().map_err(failed)? {
        draw_column(&plp, pos, drawer);
    }
    Ok(())
}

fn draw_column(plp: &Pileup, pos: i64, drawer: &mut Drawer) {
    let piled: Vec<Piled<'_>> = plp
        .column
        .iter()
        .map(|e| Piled { rec: RecordRef::new(&plp.reads[e.read].rec), at: *e })
        .collect();
    drawer.column(pos, &piled);
}
