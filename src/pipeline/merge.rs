//! `merge`: sorted inputs into one sorted output, as samtools 1.24's `bam_merge_core2`.
//!
//! The output header is built input by input ([`crate::ops::merge::header`]); each record is
//! translated into it as read ([`crate::ops::merge::translate`]) and the inputs' current records
//! are merged k-way on the sort's keys ([`crate::ops::merge::order`], the sort's
//! [`RunHeap`]), ties going to the earlier input. `-R` and `-L` read each input through its
//! index ([`super::region`]). Messages and exit statuses are samtools'; the output is written
//! under a temporary name and appears only when the merge succeeded.

use crate::io::input_spec::InputSpec;
use std::collections::VecDeque;

use crate::error::{Error, c_message};
use crate::io::format::OutputFormat;
use crate::io::index::{Region, parse_region_with};
use crate::io::input::Input;
use crate::io::open::{self, RecordReader};
use crate::io::output_spec::OutputSpec;
use crate::io::sam::format::format_record;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::merge::header::{Combine, MergedHeader, program_link_warnings};
use crate::ops::merge::order::{MergeKey, cmp_current};
use crate::ops::merge::translate::{self, Translation};
use crate::ops::sort::SortOrder;
use crate::ops::sort::keys;
use crate::ops::sort::merge::RunHeap;
use crate::pipeline::region;
use crate::pipeline::threads::Threads;
use crate::record::{Batch, Header, RecordRef};

pub struct MergeOptions {
    /// `-b` lists, read in order; their names come before the command line's.
    pub lists: Vec<String>,
    /// The inputs on the command line (with `-X`, followed by their indexes).
    pub inputs: Vec<String>,
    /// `-X`.
    pub with_indexes: bool,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    /// `-u`.
    pub uncompressed: bool,
    /// `-@`.
    pub threads: Threads,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    pub order: SortOrder,
    /// `-h FILE`: its header goes first.
    pub header_file: Option<String>,
    pub combine_rg: bool,
    pub combine_pg: bool,
    /// `-r`.
    pub attach_rg: bool,
    pub force: bool,
    /// `-s`; samtools seeds with the time otherwise.
    pub seed: Option<i64>,
    /// `-R`.
    pub region: Option<String>,
    /// `-L`.
    pub bed: Option<String>,
    pub pg: Option<Vec<(String, String)>>,
    /// `--write-index`: (index path, BAI?).
    pub index: Option<(String, bool)>,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            lists: Vec::new(),
            inputs: Vec::new(),
            with_indexes: false,
            output: String::new(),
            spec: OutputSpec::default(),
            uncompressed: false,
            threads: Threads::default(),
            reference: None,
            order: SortOrder::Coordinate,
            header_file: None,
            combine_rg: false,
            combine_pg: false,
            attach_rg: false,
            force: false,
            seed: None,
            region: None,
            bed: None,
            pg: None,
            index: None,
        }
    }
}

/// One input being merged: its records, its translation, and its current record translated.
struct MergeInput {
    path: String,
    /// The whole file read as it goes, or `None` when the index selected `pending` up front.
    stream: Option<RecordReader>,
    pending: VecDeque<Batch>,
    batch: Batch,
    at: usize,
    translation: Translation,
    /// `-r`'s read group.
    group: Vec<u8>,
    current: Vec<u8>,
    key: MergeKey,
}

impl MergeInput {
    /// Moves to the next record, translated; false at the end.
    fn advance(&mut self, order: SortOrder, n_refs: usize) -> Result<bool, Error> {
        self.at = self.at.wrapping_add(1);
        while self.at >= self.batch.len() {
            if let Some(b) = self.pending.pop_front() {
                self.batch = b;
                self.at = 0;
                continue;
            }
            let Some(reader) = &mut self.stream else { return Ok(false) };
            match reader.read_batches(&self.path)? {
                Some((batches, warnings)) => {
                    for w in warnings {
                        eprintln!("{w}");
                    }
                    self.pending.extend(batches);
                }
                None => {
                    self.batch = Batch::default();
                    return Ok(false);
                }
            }
        }
        self.current.clear();
        self.current.extend_from_slice(&self.batch.framed(self.at)[4..]);
        for w in self.translation.apply(&mut self.current) {
            eprintln!("{w}");
        }
        self.key.set(&RecordRef::new(&self.current), order, n_refs);
        Ok(true)
    }
}

/// htslib's and samtools' lines when an input cannot be opened.
fn open_failed(path: &str, e: &std::io::Error) -> Error {
    let m = c_message(e);
    Error::Bare(format!(
        "[E::hts_open_format] Failed to open file \"{path}\" : {m}\nsamtools merge: fail to open \"{path}\": {m}"
    ))
}

/// The `-h` header.
fn read_header_file(path: &str) -> Result<Header, Error> {
    let input = Input::open(path).map_err(|e| {
        let m = c_message(&e);
        Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {m}\nsamtools merge: cannot open \"{path}\": {m}"
        ))
    })?;
    open::open_input(path, input, 1, 64 << 10)
        .map(|o| o.header)
        .map_err(|_| Error::Bare(format!("samtools merge: couldn't read headers from \"{path}\"")))
}

/// The inputs named by the lists and the command line.
struct Gathered {
    names: Vec<String>,
    /// `-X`'s index names, one per input.
    indexes: Option<Vec<String>>,
    /// A `-b` list could not be read: samtools goes on, and exits 1 at the end.
    bad_list: bool,
}

/// The inputs: `-b` lists' names, then the command line's; and `-X`'s index names.
fn gather_inputs(opts: &MergeOptions) -> Result<Gathered, Error> {
    let mut names = Vec::new();
    let mut bad_list = false;
    for path in &opts.lists {
        match crate::io::lists::read_lines(path) {
            Some(n) => names.extend(n),
            None => {
                eprintln!("samtools merge: Invalid file list \"{path}\"");
                bad_list = true;
            }
        }
    }
    let out = &opts.output;
    if !opts.force && out != "-" && std::fs::metadata(out).is_ok_and(|m| m.is_file()) {
        return Err(Error::Bare(format!(
            "[bam_merge] File '{out}' exists. Please apply '-f' to overwrite. Abort."
        )));
    }
    let mut indexes = None;
    if opts.with_indexes {
        if !opts.inputs.len().is_multiple_of(2) {
            return Err(Error::Bare(
                "Odd number of filenames detected! Each BAM file should have an index file".into(),
            ));
        }
        let (files, idx) = opts.inputs.split_at(opts.inputs.len() / 2);
        names.extend(files.iter().cloned());
        indexes = Some(idx.to_vec());
    } else {
        names.extend(opts.inputs.iter().cloned());
    }
    if names.is_empty() {
        return Err(Error::ShowUsage(Some(
            "samtools merge: You must specify at least one (and usually two or more) input files"
                .into(),
        )));
    }
    if opts.region.is_some() && opts.bed.is_some() {
        return Err(Error::Bare(
            "samtools merge: You must specify either a BED file or a region".into(),
        ));
    }
    Ok(Gathered { names, indexes, bad_list })
}

/// Which records of each input to read.
enum Wanted {
    All,
    /// `-R`: one region of the output header.
    Region(Region),
    /// `-L`: BED intervals by reference name.
    Bed(Vec<(Vec<u8>, i64, i64)>),
}

fn wanted(opts: &MergeOptions, header: &Header) -> Result<Wanted, Error> {
    if let Some(bed) = &opts.bed {
        let intervals = crate::io::bed::read_bed(bed).map_err(|e| {
            e.report(&format!("[bam_merge_core2] Could not read BED file: \"{bed}\""), false)
        })?;
        if intervals.is_empty() {
            return Err(Error::Bare("[bam_merge_core2] Null or empty region list".into()));
        }
        return Ok(Wanted::Bed(intervals));
    }
    let Some(text) = &opts.region else { return Ok(Wanted::All) };
    // sam_parse_region without flags: the references of the output header.
    parse_region_with(text, |name| header.tid_or_alias(name)).map(Wanted::Region).ok_or_else(|| {
        Error::Bare(format!(
            "[bam_merge_core2] Badly formatted region or unknown reference name: \"{text}\""
        ))
    })
}

/// The records `wanted` selects from `reader`, through the input's index.
fn select(
    reader: &mut RecordReader,
    (path, index_path): (&str, Option<&str>),
    header: &Header,
    translation: &Translation,
    wanted: &Wanted,
) -> Result<Vec<Batch>, Error> {
    let no_index = || {
        Error::Bare(format!(
            "[E::idx_find_and_load] Could not retrieve index file for '{path}'\n[bam_merge_core2] failed to load index for {path}. Random alignment retrieval only works for indexed BAM or CRAM files."
        ))
    };
    let RecordReader::Bam(bam) = reader else { return Err(no_index()) };
    let index = region::load_index(path, index_path).map_err(|_| no_index())?;
    let (regions, multi) = match wanted {
        Wanted::All => return Ok(Vec::new()),
        Wanted::Region(r) => {
            let mapped = match r.tid {
                tid if tid >= 0 => translation.input_tid(tid).map(|t| Region { tid: t, ..*r }),
                _ => Some(*r),
            };
            (mapped.into_iter().collect::<Vec<_>>(), false)
        }
        Wanted::Bed(intervals) => {
            let mut regions = Vec::new();
            let mut unknown: Vec<&[u8]> = Vec::new();
            for (name, beg, end) in intervals {
                match header.tid_or_alias(name) {
                    Some(tid) => regions.push(Region { tid, beg: *beg, end: *end }),
                    None if !unknown.contains(&name.as_slice()) => unknown.push(name),
                    None => {}
                }
            }
            for name in unknown {
                eprintln!(
                    "[W::hts_itr_regions] Region '{}' specifies an unknown reference name. Continue anyway",
                    String::from_utf8_lossy(name)
                );
            }
            (regions, true)
        }
    };
    let mut selected = Vec::new();
    region::for_each_region_batch(bam, &index, path, &regions, multi, &mut |b: &Batch| {
        selected.push(b.clone());
        Ok(())
    })?;
    Ok(selected)
}

/// Opens every input, builds the output header, and selects what `-R`/`-L` ask of each input.
fn open_inputs(
    opts: &MergeOptions,
    names: &[String],
    indexes: Option<&[String]>,
) -> Result<(Vec<MergeInput>, Header), Error> {
    let seed = opts.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    });
    let mut merged = MergedHeader::new(seed);
    let combine = Combine { read_groups: opts.combine_rg, programs: opts.combine_pg };
    if let Some(path) = &opts.header_file {
        let given = read_header_file(path)?;
        for w in merged.add(&given, combine, true, None).1 {
            eprintln!("{w}");
        }
    }
    let mut opened = Vec::with_capacity(names.len());
    let mut reset_order = false;
    for path in names {
        let input = Input::open(path).map_err(|e| open_failed(path, &e))?;
        let o =
            open::open_input(path, input, InputSpec::new(1, opts.reference.as_deref()), 1 << 20)
                .map_err(|e| match e {
                    // What samtools reads and mdsam does not: say so rather than blame the file.
                    Error::File { ref what, .. } if what.contains("not supported") => e,
                    _ => Error::Bare(format!(
                        "samtools merge: failed to read header from \"{path}\""
                    )),
                })?;
        let group = if opts.attach_rg { translate::read_group_of_path(path) } else { Vec::new() };
        let (translation, warnings) =
            merged.add(&o.header, combine, true, opts.attach_rg.then_some(group.as_slice()));
        for w in warnings {
            eprintln!("{w}");
        }
        if translation.lost_order() && opts.order == SortOrder::Coordinate {
            eprintln!(
                "[bam_merge_core] Order of targets in file {path} caused coordinate sort to be lost"
            );
            reset_order = true;
        }
        opened.push((path.clone(), o.reader, o.header, translation, group));
    }
    if !merged.has_hd() {
        eprintln!("[W::bam_merge_core2] No @HD tag found.");
    }
    let header = merged.finish(reset_order);
    let wanted = wanted(opts, &header)?;
    let mut inputs = Vec::with_capacity(opened.len());
    for (i, (path, mut reader, input_header, translation, group)) in opened.into_iter().enumerate()
    {
        let (stream, pending) = match wanted {
            Wanted::All => (Some(reader), VecDeque::new()),
            _ => {
                let index_path = indexes.map(|x| x[i].as_str());
                let selected =
                    select(&mut reader, (&path, index_path), &input_header, &translation, &wanted)?;
                (None, selected.into())
            }
        };
        inputs.push(MergeInput {
            path: path.clone(),
            stream,
            pending,
            batch: Batch::default(),
            at: usize::MAX,
            translation,
            group,
            current: Vec::new(),
            key: MergeKey::default(),
        });
    }
    Ok((inputs, header))
}

/// samtools' line for an input cut short; any other reading error as mdsam's reader words it
/// (the file and what is wrong).
fn read_failed(path: &str, e: Error) -> Error {
    match &e {
        Error::File { what, .. } if what.contains("truncated") => {
            Error::Bare(format!("samtools merge: \"{path}\" is truncated"))
        }
        _ => e,
    }
}

/// htslib's line for a record BAM cannot hold, then samtools' naming the output.
fn write_failed(output: &str, e: Error) -> Error {
    match e {
        Error::Bare(line) => {
            Error::Bare(format!("{line}\nsamtools merge: failed writing to \"{output}\""))
        }
        e => e,
    }
}

/// The k-way merge into `sink`.
fn merge_into(
    opts: &MergeOptions,
    inputs: &mut [MergeInput],
    live: Vec<usize>,
    header: &Header,
    sink: &mut RecordSink,
) -> Result<(), Error> {
    let n_refs = header.refs().len();
    let libraries = keys::library_lookup(header.lines());
    let bam = sink.format().takes_bam_records();
    let mut out = Encoded::default();
    let cmp = |inputs: &[MergeInput], a: usize, b: usize| {
        let (x, y) = (&inputs[a], &inputs[b]);
        cmp_current(
            opts.order,
            &libraries,
            (&RecordRef::new(&x.current), &x.key),
            (&RecordRef::new(&y.current), &y.key),
        )
    };
    let mut heap = RunHeap::new(live.into_iter(), &|a, b| cmp(inputs, a, b));
    while let Some(top) = heap.top() {
        let input = &mut inputs[top];
        if opts.attach_rg {
            translate::attach_read_group(&mut input.current, &input.group);
        }
        if bam {
            out.data.extend_from_slice(&(input.current.len() as u32).to_le_bytes());
            out.data.extend_from_slice(&input.current);
        } else {
            format_record(&mut out.data, &RecordRef::new(&input.current), header);
        }
        out.end_unit();
        if out.data.len() >= 1 << 20 {
            sink.write(&out).map_err(|e| write_failed(&opts.output, e))?;
            // The same buffer again: a new one grew by doubling into fresh pages each time.
            out.data.clear();
            out.ends.clear();
        }
        let alive = input.advance(opts.order, n_refs).map_err(|e| read_failed(&input.path, e))?;
        heap.advanced(alive, &|a, b| cmp(inputs, a, b));
    }
    sink.write(&out).map_err(|e| write_failed(&opts.output, e))
}

pub fn run(opts: MergeOptions) -> Result<(), Error> {
    let Gathered { names, indexes, bad_list } = gather_inputs(&opts)?;
    let (mut inputs, mut header) = open_inputs(&opts, &names, indexes.as_deref())?;
    let n_refs = header.refs().len();
    let mut live = Vec::new();
    for (i, input) in inputs.iter_mut().enumerate() {
        // mdsam reads records a piece at a time, so an input cut short usually fails here;
        // samtools, reading one record at a time, reports it as truncated.
        let alive = input.advance(opts.order, n_refs).map_err(|e| read_failed(&input.path, e))?;
        if alive {
            live.push(i);
        }
    }
    if let Some(pg) = &opts.pg {
        // htslib links the merged @PG lines as samtools' line is added.
        for w in program_link_warnings(&header) {
            eprintln!("{w}");
        }
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    if let Some((path, _)) = &opts.index {
        // htslib cannot index standard output (samtools fails without a word) nor plain SAM.
        if opts.output == "-" {
            return Err(Error::Failed);
        }
        if opts.spec.format == OutputFormat::Sam {
            return Err(Error::Bare(format!(
                "samtools auto_index: failed to open index \"{path}\" for writing: No such file or directory"
            )));
        }
    }
    // -u writes uncompressed BAM on the calling thread, as samtools sets no output threads.
    let threads = if opts.uncompressed { 1 } else { opts.threads.total() };
    let mut sink = RecordSink::create(&opts.output, &opts.spec, threads, &header, true)?;
    if let Some((path, bai)) = &opts.index {
        sink.write_index(path, *bai, &header)?;
    }
    merge_into(&opts, &mut inputs, live, &header, &mut sink)?;
    sink.finish()?;
    if bad_list { Err(Error::Failed) } else { Ok(()) }
}

/// Runs `merge` on a pool of `-@ + 1` threads.
pub fn run_on_pool(opts: MergeOptions) -> Result<(), Error> {
    opts.threads.pool().install(|| run(opts))
}
