//! The inputs of `depth`, `coverage` and `bedcov`, read one record at a time so that several
//! sorted inputs can be walked together: a whole file, or one region through its BAM index
//! or CRAM index (htslib's `sam_itr_queryi`: the reads on the region's reference that start
//! before its end and end after its start).

use crate::io::input_spec::InputSpec;
use std::collections::VecDeque;

use crate::error::Error;
use crate::io::bam;
use crate::io::cram;
use crate::io::cram::index::{CraiEntry, containers_for};
use crate::io::index::{Index, Region};
use crate::io::open::{Opened, RecordReader};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::read_ahead::ReadAhead;
use crate::pipeline::region::overlaps;
use crate::record::{Batch, Header, RecordRef, Verdict};

enum Source {
    Whole(ReadAhead),
    Region {
        reader: Box<bam::Reader>,
        chunks: VecDeque<(u64, u64)>,
        region: Region,
        /// Where the chunk being read ends, while one is.
        chunk_end: Option<u64>,
    },
    /// A CRAM region: the containers the `.crai` names for it, decoded one at a time.
    CramRegion {
        reader: Box<cram::Reader>,
        containers: VecDeque<u64>,
        region: Region,
    },
}

pub struct SortedInput {
    path: String,
    source: Source,
    batches: VecDeque<Batch>,
    next: usize,
    done: bool,
}

impl SortedInput {
    /// Every record of `opened`, read ahead when the pool of `threads` the caller runs on has
    /// a worker to spare.
    pub fn whole(path: &str, opened: Opened, threads: usize) -> Self {
        SortedInput::new(path, Source::Whole(ReadAhead::new(path, opened.reader, threads)))
    }

    /// The records of `region`, found through `index`; `None` when the input is not a BAM.
    pub fn region(path: &str, opened: Opened, index: &Index, region: Region) -> Option<Self> {
        let RecordReader::Bam(mut reader) = opened.reader else { return None };
        let chunks = planned_chunks(&mut reader, index, region);
        Some(SortedInput::new(
            path,
            Source::Region { reader: Box::new(reader), chunks, region, chunk_end: None },
        ))
    }

    fn new(path: &str, source: Source) -> Self {
        SortedInput {
            path: path.to_string(),
            source,
            batches: VecDeque::new(),
            next: 0,
            done: false,
        }
    }

    /// The records of `region` in a CRAM, found through its `.crai`; `None` when the input is
    /// not a CRAM.
    pub fn cram_region(
        path: &str,
        opened: Opened,
        crai: &[CraiEntry],
        region: Region,
    ) -> Option<Self> {
        let RecordReader::Cram(reader) = opened.reader else { return None };
        let containers = cram_containers(crai, region);
        Some(SortedInput::new(path, Source::CramRegion { reader, containers, region }))
    }

    /// Points `region` at a new interval of the same file (bedcov's next BED line).
    pub fn requery(&mut self, index: &Index, region: Region) {
        if let Source::Region { reader, chunks, region: r, chunk_end } = &mut self.source {
            *chunk_end = None;
            *chunks = planned_chunks(reader, index, region);
            *r = region;
            self.restart();
        }
    }

    /// [`SortedInput::requery`] for a CRAM region.
    pub fn requery_cram(&mut self, crai: &[CraiEntry], region: Region) {
        if let Source::CramRegion { containers, region: r, .. } = &mut self.source {
            *containers = cram_containers(crai, region);
            *r = region;
            self.restart();
        }
    }

    fn restart(&mut self) {
        self.batches.clear();
        self.next = 0;
        self.done = false;
    }

    /// The current record, reading on when the batch in hand is used up; `None` at the end.
    pub fn current(&mut self) -> Result<Option<RecordRef<'_>>, Error> {
        while !self.done && self.batches.front().is_none_or(|b| self.next >= b.len()) {
            if let Some(used) = self.batches.pop_front() {
                crate::pipeline::prefetch::recycle([used]);
                self.next = 0;
                continue;
            }
            self.refill()?;
        }
        if self.done && self.batches.is_empty() {
            return Ok(None);
        }
        Ok(self.batches.front().map(|b| b.get(self.next)))
    }

    /// Moves past the current record.
    pub fn advance(&mut self) {
        self.next += 1;
    }

    fn refill(&mut self) -> Result<(), Error> {
        match &mut self.source {
            Source::Whole(reader) => match reader.next_group()? {
                Some((batches, warnings)) => {
                    for w in warnings {
                        eprintln!("{w}");
                    }
                    self.batches.extend(batches);
                }
                None => self.done = true,
            },
            Source::Region { reader, chunks, region, chunk_end } => {
                let failed = |e| Error::file(&self.path, e);
                let Some(end) = *chunk_end else {
                    match chunks.pop_front() {
                        Some((start, end)) => {
                            reader.seek_chunk(start, end).map_err(failed)?;
                            *chunk_end = Some(end);
                        }
                        None => self.done = true,
                    }
                    return Ok(());
                };
                // The chunk is read in batches, so memory stays bounded on a whole reference.
                // The first read past the region ends the query, as htslib's iterator ends it
                // (later chunks lie later in the sorted file).
                let mut past_region = false;
                let mut verdict = |r: RecordRef<'_>| {
                    if region.tid >= 0 && (r.ref_id() != region.tid || r.pos() >= region.end) {
                        past_region = true;
                        Verdict::Stop
                    } else if overlaps(&r, region) {
                        Verdict::Keep
                    } else {
                        Verdict::Drop
                    }
                };
                let Some((batch, chunk_done)) =
                    reader.next_in_chunk(end, &mut verdict).map_err(failed)?
                else {
                    *chunk_end = None;
                    return Ok(());
                };
                if chunk_done {
                    *chunk_end = None;
                }
                if past_region {
                    chunks.clear();
                }
                self.batches.push_back(batch);
            }
            Source::CramRegion { reader, containers, region } => {
                let Some(offset) = containers.pop_front() else {
                    self.done = true;
                    return Ok(());
                };
                let batch =
                    reader.read_container_at(offset).map_err(|e| Error::file(&self.path, e))?;
                let mut kept = Batch::default();
                for r in batch.iter().flat_map(|b| b.iter()).filter(|r| overlaps(r, region)) {
                    kept.push(r.bytes());
                }
                self.batches.push_back(kept);
            }
        }
        Ok(())
    }
}

/// The containers of `crai` that hold reads of `region`, in file order.
fn cram_containers(crai: &[CraiEntry], region: Region) -> VecDeque<u64> {
    if region.tid < 0 {
        return VecDeque::new();
    }
    containers_for(crai, region.tid, region.beg, region.end).into()
}

/// A BAM's `.bai`/`.csi` or a CRAM's `.crai`: what a region of a [`SortedInput`] is found
/// through.
pub enum RegionIndex {
    Bam(Index),
    Cram(Vec<CraiEntry>),
}

impl RegionIndex {
    /// The index of `opened` (a CRAM's `.crai`, else a BAM's; `explicit`: the `-X` one),
    /// printing htslib's line when there is none; the caller adds its own.
    pub fn load_logged(path: &str, explicit: Option<&str>, opened: &Opened) -> Option<Self> {
        if !matches!(opened.reader, RecordReader::Cram(_)) {
            return load_index_logged(path, explicit).map(RegionIndex::Bam);
        }
        match crate::pipeline::cram_region::load_crai(path, explicit) {
            Ok(crai) => Some(RegionIndex::Cram(crai)),
            Err(_) if explicit.is_some() => {
                // The missing `-X` file's line, as for a BAM.
                load_index_logged(path, explicit);
                None
            }
            Err(_) => {
                eprintln!("[E::cram_index_load] Could not retrieve index file for '{path}'");
                None
            }
        }
    }

    /// Whether the index lists any reads on `[beg, end)` of `tid`.
    pub fn has_reads(&self, tid: i32, beg: i64, end: i64) -> bool {
        match self {
            RegionIndex::Bam(index) => !index.query(tid, beg, end).is_empty(),
            RegionIndex::Cram(crai) => !containers_for(crai, tid, beg, end).is_empty(),
        }
    }

    /// The records of `region` in `opened`; `None` when the input is not of this index's kind.
    pub fn query(&self, path: &str, opened: Opened, region: Region) -> Option<SortedInput> {
        match self {
            RegionIndex::Bam(index) => SortedInput::region(path, opened, index, region),
            RegionIndex::Cram(crai) => SortedInput::cram_region(path, opened, crai, region),
        }
    }

    /// Points `input` (from [`RegionIndex::query`]) at `region`.
    pub fn requery(&self, input: &mut SortedInput, region: Region) {
        match self {
            RegionIndex::Bam(index) => input.requery(index, region),
            RegionIndex::Cram(crai) => input.requery_cram(crai, region),
        }
    }
}

/// The index chunks of `region` (none for an unmapped `tid`), announced to `reader` so that a
/// remote input fetches them at once.
fn planned_chunks(reader: &mut bam::Reader, index: &Index, region: Region) -> VecDeque<(u64, u64)> {
    let mut chunks: VecDeque<(u64, u64)> = if region.tid < 0 {
        VecDeque::new()
    } else {
        index.query(region.tid, region.beg, region.end).iter().map(|c| (c.start, c.end)).collect()
    };
    reader.plan_chunks(chunks.make_contiguous());
    chunks
}

/// The index of `path` (or the `-X` one), printing htslib's line when there is none; the
/// caller adds its own.
pub fn load_index_logged(path: &str, explicit: Option<&str>) -> Option<Index> {
    let loaded = crate::pipeline::region::load_index(path, explicit);
    loaded
        .map_err(|_| match explicit {
            Some(index) => {
                if let Err(e) = std::fs::metadata(index) {
                    eprintln!(
                        "[E::hts_idx_load3] Could not load local index file '{index}' : {}",
                        crate::error::c_message(&e)
                    );
                }
            }
            None => eprintln!("[E::idx_find_and_load] Could not retrieve index file for '{path}'"),
        })
        .ok()
}

/// htslib's line for an input that cannot be opened, if it cannot.
pub fn log_open_failure(path: &str) {
    if let Err(e) = std::fs::metadata(path) {
        eprintln!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {}",
            crate::error::c_message(&e)
        );
    }
}

/// The input whose current record comes first in coordinate order (the lowest index on ties),
/// as samtools merges its inputs; `None` when all are at their end.
pub fn first_in_order(inputs: &mut [SortedInput]) -> Result<Option<usize>, Error> {
    let mut best: Option<(usize, (i32, i64))> = None;
    for (i, input) in inputs.iter_mut().enumerate() {
        if let Some(r) = input.current()? {
            let key = (r.ref_id(), r.pos());
            if best.is_none_or(|(_, k)| key < k) {
                best = Some((i, key));
            }
        }
    }
    Ok(best.map(|b| b.0))
}

/// What a command says when its inputs cannot be opened or queried.
pub struct InputMessages {
    pub wording: Wording,
    /// The index of this input cannot be loaded (`path`).
    pub no_index: fn(&str) -> String,
    /// The region text cannot be parsed (`region`, `path`).
    pub bad_region: fn(&str, &str) -> String,
}

/// Inputs opened for a coordinate-order sweep (`depth`, `coverage`).
pub struct SortedInputs {
    pub inputs: Vec<SortedInput>,
    /// The first input's header; `None` without inputs.
    pub header: Option<Header>,
    /// The region, as parsed against the first input's references.
    pub region: Option<Region>,
}

/// Opens `paths` in order, each queried for `region` through its index (`index_files`, one an
/// input, else the one found next to it) when a region is given.
pub fn open_sorted_inputs(
    paths: &[String],
    spec: &InputSpec,
    (region, index_files): (Option<&str>, Option<&[String]>),
    messages: &InputMessages,
) -> Result<SortedInputs, Error> {
    let mut opened_all = SortedInputs { inputs: Vec::new(), header: None, region: None };
    for (i, path) in paths.iter().enumerate() {
        let opened = open_sequence_input(path, spec, &messages.wording)?;
        let h = opened.header.clone();
        let input = match region {
            None => SortedInput::whole(path, opened, spec.threads),
            Some(text) => {
                let explicit = index_files.map(|x| x[i].as_str());
                let no_index = || Error::Bare((messages.no_index)(path));
                let index =
                    RegionIndex::load_logged(path, explicit, &opened).ok_or_else(no_index)?;
                let r = crate::io::index::parse_region(text, h.refs())
                    .ok_or_else(|| Error::Bare((messages.bad_region)(text, path)))?;
                opened_all.region.get_or_insert(r);
                index.query(path, opened, r).ok_or_else(no_index)?
            }
        };
        opened_all.inputs.push(input);
        opened_all.header.get_or_insert(h);
    }
    Ok(opened_all)
}

/// Opens the text output `path` (`-`: stdout) of `command`, with samtools' message when it
/// cannot be created.
pub fn create_text_output(
    path: &str,
    command: &str,
) -> Result<(Box<dyn std::io::Write + Send>, Option<crate::io::output::OutputFile>), Error> {
    crate::io::output::create(path).map_err(|e| {
        Error::Bare(format!(
            "samtools {command}: Cannot open \"{path}\" for writing.: {}",
            crate::error::c_message(&e)
        ))
    })
}
