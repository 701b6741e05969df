//! `view`: read → filter/edit in parallel → write, one batch at a time in bounded memory.
//!
//! Per batch: the records are cut into chunks; each chunk is filtered and encoded (SAM text or
//! framed BAM) on the pool; the encoded chunks are handed to the sink in input order, whose BGZF
//! deflate is parallel again. Output bytes never depend on the thread count.

use crate::io::input_spec::InputSpec;
use rayon::prelude::*;

use crate::error::Error;
use crate::io::bgzf::stage::OnPool;
use crate::io::format::OutputFormat;
use crate::io::index::Region;
use crate::io::input::Input;
use crate::io::open::{self, Opened, RecordReader};
use crate::io::output_spec::OutputSpec;
use crate::io::sam::format::format_record;
use crate::io::sam::range::RangeReader;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::view::edit::{self, RecordEdit};
use crate::ops::view::filter::{Filter, NameSet, Targets};
use crate::pipeline::view::request::ViewRequest;
use crate::pipeline::{cram_region, region};
use crate::profile::{self, Counter, Phase, RunInfo};
use crate::record::header::Reference;
use crate::record::{Batch, Header, RecordRef};

mod passed;
pub mod request;

use passed::PassedRecords;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeaderMode {
    #[default]
    Without,
    With,
    Only,
}

pub struct ViewOptions {
    pub input: String,
    pub regions: Vec<String>,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub header: HeaderMode,
    pub count: bool,
    pub unselected: Option<String>,
    pub unmap_rejected: bool,
    pub filter: Filter,
    pub edit: RecordEdit,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// References to add when the input header has none (`-t`/`-T`).
    pub fai_refs: Option<Vec<Reference>>,
    /// `@RG` lines to keep in the header (`-r`/`-R`): the listed IDs, even for `-R ^FILE`, where
    /// samtools 1.24 keeps the header lines of the very groups whose records it drops.
    pub keep_read_groups: Option<NameSet>,
    /// `@PG` fields to add (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
    pub save_counts: Option<String>,
    /// `(fraction, seed)` for the `@CO Sub-sampled` line; `seed` `None` means `auto`.
    pub subsample: Option<(f64, Option<u32>)>,
    /// `-X`: the index file given after the input.
    pub index_path: Option<String>,
    /// `-M`/`--region-file`: merge regions and BED intervals, each read once.
    pub multi_region: bool,
    /// `-P`: also fetch mates outside the regions.
    pub fetch_pairs: bool,
    /// `-B`: collapse CIGAR back operations before filtering.
    pub remove_back: bool,
    /// `-L` BED intervals by reference name.
    pub bed: Option<Vec<(Vec<u8>, i64, i64)>>,
    /// `-l` library.
    pub library: Option<Vec<u8>>,
    /// `--write-index`: (index path, BAI?), the output path stripped of any `##idx##` part.
    pub index: Option<(String, bool)>,
}

/// Counts for `-c` and `--save-counts`.
#[derive(Default, Clone, Copy)]
struct Counts {
    processed: u64,
    accepted: u64,
}

/// One chunk's results.
#[derive(Default)]
struct ChunkOut {
    main: Encoded,
    /// Records written unchanged to BAM: their numbers in the batch (no copy into `main`).
    passed: Vec<u32>,
    unselected: Encoded,
    counts: Counts,
}

fn encode(
    r: &RecordRef<'_>,
    header: &Header,
    format: OutputFormat,
    out: &mut Encoded,
    edit: Option<&RecordEdit>,
) {
    match (format, edit) {
        (OutputFormat::Bam | OutputFormat::Cram, None) => {
            let at = out.begin_record();
            out.data.extend_from_slice(r.bytes());
            out.end_record(at);
        }
        (OutputFormat::Bam | OutputFormat::Cram, Some(e)) => {
            let at = out.begin_record();
            e.apply(r, &mut out.data);
            out.end_record(at);
        }
        (_, None) => {
            format_record(&mut out.data, r, header);
            out.end_unit();
        }
        (_, Some(e)) => {
            let mut tmp = Vec::with_capacity(r.bytes().len() + 16);
            e.apply(r, &mut tmp);
            format_record(&mut out.data, &RecordRef::new(&tmp), header);
            out.end_unit();
        }
    }
}

struct Plan<'a> {
    opts: &'a ViewOptions,
    header: &'a Header,
    main_format: Option<OutputFormat>,
    unselected_format: Option<OutputFormat>,
    /// BAM out, records unchanged and in input order: write them straight from the input batch.
    passthrough: bool,
}

impl Plan<'_> {
    fn process_chunk(
        &self,
        batch: &Batch,
        range: std::ops::Range<usize>,
    ) -> Result<ChunkOut, Error> {
        let mut out = ChunkOut::default();
        if let (Some(f), false) = (self.main_format, self.passthrough) {
            // Sized up front from a recycled buffer (see `io::recycle`): growing by doubling
            // copied the output again and took fresh pages each time.
            let bytes = batch.bytes_of(range.clone());
            let room = if f.takes_bam_records() { bytes } else { 2 * bytes + 64 * range.len() };
            out.main.data = crate::io::recycle::take(room);
        }
        let edit = self.opts.edit.is_active().then_some(&self.opts.edit);
        let mut rewritten = Vec::new();
        for i in range {
            let mut r = batch.get(i);
            if self.opts.remove_back {
                rewritten.clear();
                edit::remove_back_ops(&r, &mut rewritten);
                r = RecordRef::new(&rewritten);
            }
            out.counts.processed += 1;
            let ok = self.opts.filter.accepts(&r, self.header).map_err(Error::Message)?;
            if ok {
                out.counts.accepted += 1;
                if self.passthrough {
                    out.passed.push(i as u32);
                } else if let Some(f) = self.main_format {
                    encode(&r, self.header, f, &mut out.main, edit);
                }
            } else if self.opts.unmap_rejected {
                if let Some(f) = self.main_format {
                    let mut tmp = Vec::with_capacity(r.bytes().len());
                    edit::unmap(&r, &mut tmp);
                    encode(&RecordRef::new(&tmp), self.header, f, &mut out.main, None);
                }
            } else if let Some(f) = self.unselected_format {
                encode(&r, self.header, f, &mut out.unselected, None);
            }
        }
        Ok(out)
    }

    fn process_batch(&self, batch: &Batch) -> Result<Vec<ChunkOut>, Error> {
        const CHUNK: usize = 4096;
        let n = batch.len();
        let ranges: Vec<_> =
            (0..n.div_ceil(CHUNK)).map(|c| c * CHUNK..((c + 1) * CHUNK).min(n)).collect();
        ranges.into_par_iter().map(|r| self.process_chunk(batch, r)).collect()
    }
}

/// Builds the output header: references from `-t`, `@RG` filtering, the subsample `@CO`, `@PG`.
/// Runs the filter of `plan` over a batch on the pool.
fn filter_batch(plan: &Plan<'_>, batch: &Batch) -> Result<Vec<ChunkOut>, Error> {
    let _phase = profile::phase(Phase::Filter);
    profile::add(Phase::Filter, Counter::Records, batch.len() as u64);
    plan.process_batch(batch)
}

fn output_header(opts: &ViewOptions, input: &Header) -> (Header, Option<u32>) {
    let mut header = input.clone();
    if let Some(refs) = &opts.fai_refs {
        header.add_references(refs.clone());
    }
    if let Some(keep) = &opts.keep_read_groups {
        header.retain_read_groups(|id| keep.names.contains(id));
    }
    let mut seed = None;
    if let Some((fraction, given)) = opts.subsample {
        let s = given.unwrap_or_else(|| crate::ops::view::subsample::auto_seed(input.text()));
        seed = Some(s);
        header.add_comment(&format!(
            "Sub-sampled fraction={} seed={}",
            format_fraction(fraction),
            s
        ));
    }
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    (header, seed)
}

/// `%g` of the fraction, as samtools prints it in the `@CO` line.
fn format_fraction(f: f64) -> String {
    let mut v = Vec::new();
    crate::io::sam::format::push_g(&mut v, f);
    String::from_utf8_lossy(&v).into_owned()
}

fn write_counts(path: &str, counts: Counts) -> Result<(), Error> {
    let text = format!(
        "{{\n    \"records_processed\" : {},\n    \"records_filter_accepted\" : {},\n    \"records_filter_rejected\" : {}\n}}\n",
        counts.processed,
        counts.accepted,
        counts.processed - counts.accepted
    );
    crate::io::output::write_file(path, text.as_bytes()).map_err(|e| Error::io(path, e))
}

/// Completes the filter with what needs the output header: the subsample seed, the BED targets
/// by reference id, the `-l` library's read groups.
fn complete_filter(opts: &mut ViewOptions, header: &Header, seed: Option<u32>) {
    if let (Some((fraction, _)), Some(seed)) = (opts.subsample, seed) {
        opts.filter.subsample = Some(crate::ops::view::subsample::Subsample::new(fraction, seed));
    }
    if let Some(bed) = &opts.bed {
        let mut t = Targets::default();
        for (name, beg, end) in bed {
            if let Some(tid) = header.tid(name) {
                t.by_ref.entry(tid).or_default().push((*beg, *end));
            }
        }
        t.finish();
        opts.filter.targets = Some(t);
    }
    if let Some(lib) = &opts.library {
        opts.filter.set_library(lib, header);
    }
}

/// With -M, BED intervals become regions instead of a filter: takes them out of the filter.
fn take_bed_regions(opts: &mut ViewOptions) -> Vec<Region> {
    let mut bed_regions = Vec::new();
    if opts.multi_region
        && let Some(t) = opts.filter.targets.take()
    {
        for (tid, ivs) in t.by_ref {
            bed_regions.extend(ivs.into_iter().map(|(beg, end)| Region { tid, beg, end }));
        }
    }
    bed_regions
}

/// Where the filtered records go (none with `-c`), and the counts so far.
struct Outputs {
    main: Option<RecordSink>,
    unselected: Option<RecordSink>,
    counts: Counts,
}

impl Outputs {
    /// Opens the output and the `-U` output and writes their headers.
    fn open(opts: &ViewOptions, header: &Header) -> Result<Outputs, Error> {
        let write_header = opts.header == HeaderMode::With || opts.spec.format.takes_bam_records();
        let main = if opts.count {
            None
        } else {
            let mut sink =
                RecordSink::create(&opts.output, &opts.spec, opts.threads, header, write_header)?;
            if let Some((path, bai)) = &opts.index {
                sink.write_index(path, *bai, header)?;
            }
            Some(sink)
        };
        let unselected = match &opts.unselected {
            Some(p) => {
                let f = OutputFormat::from_path(p).unwrap_or(opts.spec.format);
                let spec = OutputSpec { format: f, ..opts.spec.clone() };
                Some(RecordSink::create(
                    p,
                    &spec,
                    opts.threads,
                    header,
                    write_header || f.takes_bam_records(),
                )?)
            }
            _ => None,
        };
        Ok(Outputs { main, unselected, counts: Counts::default() })
    }

    /// Filters one batch through `plan` and writes it.
    fn write_batch(&mut self, plan: &Plan<'_>, batch: &Batch) -> Result<(), Error> {
        let chunks = filter_batch(plan, batch)?;
        let _phase = profile::phase(Phase::Write);
        if let (Some(s), true) = (self.main.as_mut(), plan.passthrough) {
            // The whole batch in one call: its blocks are gathered and deflated in one pass
            // over the pool, where a call per chunk had the workers wait at every chunk's end.
            let framed: Vec<&[u8]> = chunks
                .iter()
                .flat_map(|c| c.passed.iter().map(|&i| batch.framed(i as usize)))
                .collect();
            s.write_framed(&framed)?;
        }
        self.write_chunks(plan, chunks)
    }

    /// As [`Outputs::write_batch`] for a batch it may keep: records passed unchanged to BAM are
    /// handed over with the batch, and their blocks are deflated while the next batch is read
    /// and filtered ([`RecordSink::write_framed_shared`]).
    fn write_owned_batch(&mut self, plan: &Plan<'_>, batch: Batch) -> Result<(), Error> {
        let mut chunks = filter_batch(plan, &batch)?;
        let _phase = profile::phase(Phase::Write);
        match (self.main.as_mut(), plan.passthrough) {
            (Some(s), true) => {
                let passed = chunks.iter_mut().flat_map(|c| std::mem::take(&mut c.passed));
                let records = PassedRecords::new(batch, passed.collect());
                s.write_framed_shared(std::sync::Arc::new(records), &OnPool)?;
            }
            _ => crate::io::recycle::give(batch.data),
        }
        self.write_chunks(plan, chunks)
    }

    /// Writes what the filter made of a batch, besides records passed unchanged, and counts it.
    fn write_chunks(&mut self, plan: &Plan<'_>, chunks: Vec<ChunkOut>) -> Result<(), Error> {
        for chunk in chunks {
            self.counts.processed += chunk.counts.processed;
            self.counts.accepted += chunk.counts.accepted;
            if let (Some(s), false) = (self.main.as_mut(), plan.passthrough) {
                s.write_owned(chunk.main)?;
            }
            if let Some(s) = self.unselected.as_mut() {
                s.write(&chunk.unselected)?;
            }
        }
        Ok(())
    }

    /// Finishes the outputs, then writes the `-c` count and the `--save-counts` file.
    fn finish(self, opts: &ViewOptions) -> Result<(), Error> {
        {
            let _phase = profile::phase(Phase::Write);
            if let Some(s) = self.main {
                s.finish()?;
            }
            if let Some(s) = self.unselected {
                s.finish()?;
            }
        }
        if opts.count {
            write_count_line(&opts.output, self.counts.accepted)?;
        }
        if let Some(p) = &opts.save_counts {
            write_counts(p, self.counts)?;
        }
        Ok(())
    }
}

/// The command line's regions, intersected with `-M`'s BED intervals when there are both.
fn query_regions(opts: &ViewOptions, header: &Header, bed_regions: Vec<Region>) -> Vec<Region> {
    let regions = region::parse_regions(&opts.regions, header);
    if regions.is_empty() {
        bed_regions
    } else if bed_regions.is_empty() {
        regions
    } else {
        region::intersect(&regions, &bed_regions)
    }
}

/// htslib's line before `view`'s "Random alignment retrieval…" when no index could be found.
fn report_missing_index(opts: &ViewOptions) {
    match opts.index_path.as_deref() {
        None => {
            eprintln!("[E::idx_find_and_load] Could not retrieve index file for '{}'", opts.input)
        }
        Some(p) if !std::path::Path::new(p).exists() => eprintln!(
            "[E::hts_idx_load3] Could not load local index file '{p}' : No such file or directory"
        ),
        Some(_) => {}
    }
}

/// Feeds the records of the regions (and of `-M`'s BED intervals) to `handle`, through the
/// input's index; with `-P`, their mates too.
fn for_each_region_batch(
    (reader, is_bgzf): (&mut RecordReader, bool),
    opts: &ViewOptions,
    (header, index_ahead): (&Header, Option<region::IndexAhead>),
    bed_regions: Vec<Region>,
    handle: &mut dyn FnMut(&Batch) -> Result<(), Error>,
) -> Result<(), Error> {
    if let RecordReader::Cram(cram_reader) = reader {
        if opts.fetch_pairs {
            return Err(Error::Message("-P is not supported on CRAM input by mdsam".into()));
        }
        let crai = cram_region::load_crai(&opts.input, opts.index_path.as_deref())?;
        let regions = query_regions(opts, header, bed_regions);
        let (path, multi) = (&opts.input, opts.multi_region);
        return cram_region::for_each_region_batch(
            cram_reader,
            &crai,
            path,
            &regions,
            multi,
            handle,
        );
    }
    let mut sam_gz;
    let bam_reader: &mut dyn region::ChunkReader = match reader {
        RecordReader::Bam(bam_reader) => bam_reader,
        RecordReader::Sam(_) if is_bgzf => {
            let input = Input::open(&opts.input).map_err(|e| Error::io(&opts.input, e))?;
            sam_gz = RangeReader::new(input, header.clone(), opts.threads);
            &mut sam_gz
        }
        _ => {
            report_missing_index(opts);
            return Err(Error::Message(
                "Random alignment retrieval only works for indexed SAM.gz, BAM or CRAM files."
                    .into(),
            ));
        }
    };
    let index = match index_ahead {
        Some(ahead) => ahead.take(),
        None => region::load_index(&opts.input, opts.index_path.as_deref()),
    };
    let index = index.inspect_err(|e| {
        if matches!(e, Error::Message(_)) {
            report_missing_index(opts);
        }
    })?;
    let regions = query_regions(opts, header, bed_regions);
    if !opts.fetch_pairs {
        return region::for_each_region_batch(
            bam_reader,
            &index,
            &opts.input,
            &regions,
            opts.multi_region,
            handle,
        );
    }
    let (names, mates) = region::collect_mates(bam_reader, &index, &opts.input, &regions, &|r| {
        opts.filter.accepts(r, header).map_err(Error::Message)
    })?;
    let mut union = regions.clone();
    union.extend(mates);
    region::for_each_region_batch(bam_reader, &index, &opts.input, &union, true, &mut |batch| {
        let mut wanted = Batch::default();
        for r in batch.iter() {
            if names.contains(r.read_name()) || regions.iter().any(|g| region::overlaps(&r, g)) {
                wanted.push(r.bytes());
            }
        }
        handle(&wanted)
    })
}

/// Runs `view` on the current thread pool.
pub fn run(mut opts: ViewOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    crate::alloc::keep_freed_memory();
    // A region query on a BAM URL: its index is fetched while the file opens.
    let bam_url = crate::io::remote::is_url(&opts.input)
        && !opts.input.split("##idx##").next().unwrap_or("").to_ascii_lowercase().contains(".cram");
    let index_ahead = (bam_url && !opts.regions.is_empty())
        .then(|| region::IndexAhead::start(&opts.input, opts.index_path.as_deref()));
    let Opened { mut reader, header: input_header, is_bgzf, .. } =
        open::open(&opts.input, InputSpec::new(opts.threads, opts.reference.as_deref()))?;
    profile::describe(RunInfo::streamed(
        opts.threads,
        opts.spec.level,
        (&opts.input, &opts.output),
        (reader.format_name(), if opts.count { "none" } else { opts.spec.format.name() }),
    ));
    if let Some(why) = input_header.sq_error().filter(|_| !opts.count && opts.pg.is_some()) {
        // htslib parses a BAM's header text only when it adds the `@PG` line.
        return Err(Error::Bare(format!(
            "{why}\nsamtools view: failed to add PG line to the header"
        )));
    }
    let (header, seed) = output_header(&opts, &input_header);
    if opts.fai_refs.is_some() {
        reader.set_header(&header);
    }
    complete_filter(&mut opts, &header, seed);
    // samtools' `count_rf`: counting reads no bases unless a filter may look at them, and only
    // flags when no filter looks at more than flags and mapping quality.
    let f = &opts.filter;
    if opts.count && f.expr.is_none() && f.tag.is_none() && f.min_qlen == 0 {
        let flags_only = opts.regions.is_empty()
            && opts.unselected.is_none()
            && opts.bed.is_none()
            && opts.subsample.is_none()
            && opts.keep_read_groups.is_none()
            && opts.library.is_none()
            && f.targets.is_none()
            && f.subsample.is_none()
            && f.read_groups.is_none()
            && !f.exclude_no_read_group
            && f.read_names.is_none()
            && f.library_groups.is_none();
        if flags_only { reader.flags_only() } else { reader.without_bases() }
    }
    if opts.header == HeaderMode::Only {
        if opts.count {
            return write_count_line(&opts.output, 0);
        }
        let sink = RecordSink::create(&opts.output, &opts.spec, opts.threads, &header, true)?;
        return sink.finish();
    }
    let bed_regions = take_bed_regions(&mut opts);
    let mut outputs = Outputs::open(&opts, &header)?;
    let plan = Plan {
        opts: &opts,
        header: &header,
        main_format: outputs.main.as_ref().map(RecordSink::format),
        unselected_format: outputs.unselected.as_ref().map(RecordSink::format),
        passthrough: outputs.main.as_ref().is_some_and(|s| s.format().takes_bam_records())
            && !opts.edit.is_active()
            && !opts.remove_back
            && !opts.unmap_rejected,
    };
    if opts.regions.is_empty() && !opts.multi_region {
        crate::pipeline::prefetch::for_each_batches(&mut reader, &opts.input, pool, |batches| {
            batches.into_iter().try_for_each(|batch| outputs.write_owned_batch(&plan, batch))
        })?;
    } else {
        let mut handle = |batch: &Batch| outputs.write_batch(&plan, batch);
        let header_and_index = (&header, index_ahead);
        for_each_region_batch(
            (&mut reader, is_bgzf),
            &opts,
            header_and_index,
            bed_regions,
            &mut handle,
        )?;
    }
    outputs.finish(&opts)
}

fn write_count_line(output: &str, n: u64) -> Result<(), Error> {
    crate::io::output::write_file(output, format!("{n}\n").as_bytes())
        .map_err(|e| Error::io(output, e))
}

/// Runs `view` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: ViewOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| run(opts, &pool))
}

/// Reads the files `request` names, then runs `view` on a pool of `opts.threads` threads.
pub fn run_request(request: ViewRequest) -> Result<(), Error> {
    run_on_pool(request::resolve(request)?)
}

#[cfg(test)]
mod tests {
    use super::request::ListFile;
    use super::*;
    use crate::ops::view::filter::TagFilter;

    /// Options for `view x.bam` as the command line leaves them, for the tests to adjust.
    fn options() -> ViewOptions {
        ViewOptions {
            input: "x.bam".into(),
            regions: Vec::new(),
            output: "-".into(),
            spec: OutputSpec::new(OutputFormat::Sam, -1),
            header: HeaderMode::Without,
            count: false,
            unselected: None,
            unmap_rejected: false,
            filter: Filter::default(),
            edit: RecordEdit::default(),
            threads: 1,
            reference: None,
            fai_refs: None,
            keep_read_groups: None,
            pg: None,
            save_counts: None,
            subsample: None,
            index_path: None,
            multi_region: false,
            fetch_pairs: false,
            remove_back: false,
            bed: None,
            library: None,
            index: None,
        }
    }

    fn list_file(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("mdsam-view-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }

    /// `-R ^FILE` drops the listed groups' records but, as in samtools 1.24, keeps exactly the
    /// listed `@RG` lines in the header.
    #[test]
    fn negated_read_group_list_keeps_listed_header_lines() {
        let text = b"@HD\tVN:1.6\n@RG\tID:a\n@RG\tID:b\n@RG\tID:c\n".to_vec();
        let input = Header::from_sam_text(text).unwrap();
        let mut opts = options();
        let excluded = NameSet { names: Default::default(), negate: true };
        (opts.filter.read_groups, opts.keep_read_groups) = (Some(excluded.clone()), Some(excluded));
        let lists = vec![ListFile::ReadGroups(list_file("rg-header", "b\n"))];
        let request = ViewRequest { lists, options: Ok(opts), fai: None, bed: None };
        let opts = request::resolve(request).unwrap();
        assert!(opts.keep_read_groups.as_ref().unwrap().negate);
        assert_eq!(opts.filter.read_groups.as_ref().unwrap().names.len(), 1);
        let (header, _) = output_header(&opts, &input);
        assert_eq!(header.sam_text(), b"@HD\tVN:1.6\n@RG\tID:b\n");
    }

    /// The list files add to the sets the command line began, in order; an unreadable one is
    /// reported before the command line's own error.
    #[test]
    fn list_files_fill_the_sets_and_fail_first() {
        let groups = list_file("rg", "g2\ng3\n");
        let names = list_file("names", "a\nb\n");
        let values = list_file("values", "x;y z\n");
        let mut opts = options();
        let included = NameSet { names: [b"g1".to_vec()].into(), negate: false };
        (opts.filter.read_groups, opts.keep_read_groups) = (Some(included.clone()), Some(included));
        opts.filter.read_names = Some(NameSet { names: Default::default(), negate: false });
        opts.filter.tag = Some(TagFilter { tag: *b"XY", values: Some(Default::default()) });
        let lists = vec![
            ListFile::ReadGroups(groups),
            ListFile::ReadNames(names.clone()),
            ListFile::ReadNames(names),
            ListFile::TagValues(values),
        ];
        let request = ViewRequest { lists, options: Ok(opts), fai: None, bed: None };
        let opts = request::resolve(request).unwrap();
        assert_eq!(opts.keep_read_groups.unwrap().names.len(), 3);
        assert_eq!(opts.filter.read_groups.unwrap().names.len(), 3);
        assert_eq!(opts.filter.read_names.unwrap().names.len(), 2);
        assert_eq!(opts.filter.tag.unwrap().values.unwrap().len(), 3);

        let missing = ListFile::ReadNames("/nonexistent/mdsam-names".into());
        let failed = Err(Error::Message("a later error".into()));
        let request = ViewRequest { lists: vec![missing], options: failed, fai: None, bed: None };
        let err = request::resolve(request).err().unwrap().to_string();
        assert!(err.starts_with("/nonexistent/mdsam-names: could not read"), "{err}");
    }
}
