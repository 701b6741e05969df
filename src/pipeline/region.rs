//! Region queries for `view`: which records of an indexed BAM or SAM.gz to read, chunk by chunk.
//!
//! - Default mode: each region in command-line order, so overlapping regions repeat reads
//!   (htslib `sam_itr_querys` per region).
//! - `-M` (multi-region): regions and BED intervals are merged per reference, each read is
//!   returned once, in file order (htslib's multi-region iterator).
//!
//! A record is in region `[beg, end)` of `tid` when it is on `tid`, starts before `end` and ends
//! (`bam_endpos`) after `beg`.

use crate::error::Error;
use crate::io::index::{Index, Region, parse_region};
use crate::io::{bam, remote};
use std::collections::HashSet;

use crate::io::sam::range::RangeReader;
use crate::record::layout::flags;
use crate::record::{Batch, Header, RecordRef, Verdict};

/// What a query does with each record it meets.
pub type Verdicts<'a> = dyn FnMut(RecordRef<'_>) -> Verdict + 'a;

/// Where a chunk's kept records go, a batch at a time.
pub type ChunkSink<'a> = dyn FnMut(Batch) -> Result<(), Error> + 'a;

/// Reads one index chunk of an indexed file: hands `each` the records whose virtual offsets lie
/// in `[start, end)` that `verdict` keeps, and says whether `verdict` stopped the query.
pub trait ChunkReader {
    fn read_chunk(
        &mut self,
        path: &str,
        chunk: (u64, u64),
        verdict: &mut Verdicts<'_>,
        each: &mut ChunkSink<'_>,
    ) -> Result<bool, Error>;

    /// Told the chunks a query will read before it reads them (a remote input fetches them at
    /// once).
    fn plan(&mut self, _chunks: &[(u64, u64)]) {}
}

impl ChunkReader for bam::Reader {
    fn read_chunk(
        &mut self,
        path: &str,
        chunk: (u64, u64),
        verdict: &mut Verdicts<'_>,
        each: &mut ChunkSink<'_>,
    ) -> Result<bool, Error> {
        let mut each = |b: Batch| each(b).map_err(ChunkError::Sink);
        self.read_range(chunk, verdict, &mut each).map_err(|e| match e {
            ChunkError::Read(e) => Error::file(path, e),
            ChunkError::Sink(e) => e,
        })
    }

    fn plan(&mut self, chunks: &[(u64, u64)]) {
        self.plan_chunks(chunks);
    }
}

/// A chunk's read failing, or what the records were handed to.
enum ChunkError {
    Read(bam::reader::ReadError),
    Sink(Error),
}

impl From<bam::reader::ReadError> for ChunkError {
    fn from(e: bam::reader::ReadError) -> Self {
        ChunkError::Read(e)
    }
}

/// A `.sam.gz` chunk prints its parse warnings as the whole-file reader does.
impl ChunkReader for RangeReader {
    fn read_chunk(
        &mut self,
        path: &str,
        (start, end): (u64, u64),
        verdict: &mut Verdicts<'_>,
        each: &mut ChunkSink<'_>,
    ) -> Result<bool, Error> {
        let (batches, warnings) = self.read_range(start, end).map_err(|e| Error::file(path, e))?;
        for w in warnings {
            eprintln!("{w}");
        }
        for mut batch in batches {
            let stopped = batch.retain_until(|_, r| verdict(r));
            each(batch)?;
            if stopped {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Finds and loads the index of `input`: the `-X` path, else `input.bai`, `input.csi`, or the
/// name with `.bam` replaced by `.bai`.
/// `DATA##idx##INDEX` names the index as `-X` does. For a URL the names go before any `?query`,
/// and a copy in the current directory is used, or made ([`remote::index_copy`]).
pub fn load_index(input: &str, explicit: Option<&str>) -> Result<Index, Error> {
    let candidates = index_candidates(input, explicit, &[".bai", ".csi"], ".bam");
    if let Some((path, bytes)) = remote::index_copy::first_readable(&candidates) {
        return Index::from_bytes(&bytes).map_err(|e| Error::file(path.as_str(), e));
    }
    Err(Error::Message(
        "Random alignment retrieval only works for indexed SAM.gz, BAM or CRAM files.".into(),
    ))
}

/// An index being fetched while the data file opens: for a URL, the index's requests go out
/// beside the data file's first ones instead of after them (a region query then waits two
/// round trips for its first records, not three). A local index is read when taken.
pub struct IndexAhead {
    input: String,
    explicit: Option<String>,
    fetching: Option<std::thread::JoinHandle<Result<Index, Error>>>,
}

impl IndexAhead {
    pub fn start(input: &str, explicit: Option<&str>) -> IndexAhead {
        let (input, explicit) = (input.to_string(), explicit.map(str::to_string));
        let fetching = remote::is_url(&input).then(|| {
            let (input, explicit) = (input.clone(), explicit.clone());
            std::thread::spawn(move || load_index(&input, explicit.as_deref()))
        });
        IndexAhead { input, explicit, fetching }
    }

    /// The index, as [`load_index`] gives it.
    pub fn take(self) -> Result<Index, Error> {
        match self.fetching.map(std::thread::JoinHandle::join) {
            Some(Ok(loaded)) => loaded,
            // The fetching thread panicked: fetch again here, where its error will show.
            Some(Err(_)) | None => load_index(&self.input, self.explicit.as_deref()),
        }
    }
}

/// Where the index of `input` may be, in order: the explicit one (`-X`, or after `##idx##`),
/// else `input` + each of `suffixes`, then the name less `data_suffix` + each.
pub fn index_candidates(
    input: &str,
    explicit: Option<&str>,
    suffixes: &[&str],
    data_suffix: &str,
) -> Vec<String> {
    let (input, beside) = match input.split_once("##idx##") {
        Some((data, index)) => (data, Some(index)),
        None => (input, None),
    };
    if let Some(p) = explicit.or(beside) {
        return vec![p.to_string()];
    }
    let mut c: Vec<String> = suffixes.iter().map(|s| remote::with_suffix(input, s)).collect();
    if let Some(stem) = remote::strip_suffix(input, data_suffix) {
        c.extend(suffixes.iter().map(|s| remote::with_suffix(&stem, s)));
    }
    c
}

pub fn overlaps(r: &RecordRef<'_>, region: &Region) -> bool {
    match region.tid {
        Region::WHOLE_FILE_TID => true,
        Region::UNPLACED_TID => r.ref_id() < 0,
        tid => r.ref_id() == tid && r.pos() < region.end && r.end_pos() > region.beg,
    }
}

/// Parses region strings, warning about (and skipping) invalid ones as samtools does.
pub fn parse_regions(texts: &[String], header: &Header) -> Vec<Region> {
    texts
        .iter()
        .filter_map(|t| {
            let r = parse_region(t, header.refs());
            if r.is_none() {
                eprintln!("[main_samview] region \"{t}\" specifies an invalid region or unknown reference. Continue anyway.");
            }
            r
        })
        .collect()
}

/// The parts of `a`'s regions that `b`'s regions also cover (`-M` with both regions and `-L`).
pub fn intersect(a: &[Region], b: &[Region]) -> Vec<Region> {
    let mut out = Vec::new();
    for x in a {
        for y in b.iter().filter(|y| y.tid == x.tid) {
            let (beg, end) = (x.beg.max(y.beg), x.end.min(y.end));
            if beg < end {
                out.push(Region { tid: x.tid, beg, end });
            }
        }
    }
    out
}

/// Whether a mate at `pos` on `tid` is inside the merged `regions` as samtools' `-P` asks it:
/// `bed_overlap(mtid, mpos, mpos)`, an empty query that only an interval starting strictly before
/// `pos` and ending after it overlaps.
fn mate_inside(merged: &[Region], tid: i32, pos: i64) -> bool {
    tid >= 0 && merged.iter().any(|g| g.tid == tid && g.beg < pos && pos < g.end)
}

/// `-P` pass 1: the names of paired reads in `regions` that pass `accepts` and whose mate is
/// not inside the regions, and one point region at each such mate (`*` when a mate is unplaced).
pub fn collect_mates(
    reader: &mut dyn ChunkReader,
    index: &Index,
    path: &str,
    regions: &[Region],
    accepts: &dyn Fn(&RecordRef<'_>) -> Result<bool, Error>,
) -> Result<(HashSet<Vec<u8>>, Vec<Region>), Error> {
    let mut names = HashSet::new();
    let mut mates = Vec::new();
    let mut unplaced = false;
    let merged: Vec<Region> = merge_by_tid(regions).into_iter().flatten().collect();
    for_each_region_batch(reader, index, path, regions, true, &mut |batch: &Batch| {
        for r in batch.iter() {
            if r.flag() & flags::PAIRED == 0
                || mate_inside(&merged, r.next_ref_id(), r.next_pos())
                || !accepts(&r)?
            {
                continue;
            }
            names.insert(r.read_name().to_vec());
            if r.next_ref_id() >= 0 {
                let pos = r.next_pos();
                mates.push(Region { tid: r.next_ref_id(), beg: pos, end: pos + 1 });
            } else {
                unplaced = true;
            }
        }
        Ok(())
    })?;
    if unplaced {
        mates.push(Region { tid: Region::UNPLACED_TID, beg: 0, end: Region::END_OF_REFERENCE });
    }
    Ok((names, mates))
}

/// Reads the records of `regions` and hands them to `sink` a chunk at a time.
pub fn for_each_region_batch(
    reader: &mut dyn ChunkReader,
    index: &Index,
    path: &str,
    regions: &[Region],
    multi: bool,
    sink: &mut dyn FnMut(&Batch) -> Result<(), Error>,
) -> Result<(), Error> {
    if multi {
        for (tid_regions, chunks) in merged_queries(index, regions) {
            read_chunks(reader, path, &chunks, &tid_regions, sink)?;
        }
        return Ok(());
    }
    for region in regions {
        let chunks = chunks_for(index, region);
        read_chunks(reader, path, &chunks, std::slice::from_ref(region), sink)?;
    }
    Ok(())
}

fn chunks_for(index: &Index, region: &Region) -> Vec<(u64, u64)> {
    match region.tid {
        Region::WHOLE_FILE_TID => vec![(0, u64::MAX)],
        Region::UNPLACED_TID => {
            index.unplaced_start().map(|s| vec![(s, u64::MAX)]).unwrap_or_default()
        }
        tid => {
            index.query(tid, region.beg, region.end).into_iter().map(|c| (c.start, c.end)).collect()
        }
    }
}

/// Per reference (in file order, `*` last): its intervals sorted, with overlapping and adjacent
/// ones merged (htslib's `bed_unify`).
pub fn merge_by_tid(regions: &[Region]) -> Vec<Vec<Region>> {
    let mut by_tid: std::collections::BTreeMap<u32, Vec<Region>> = Default::default();
    for r in regions {
        // Unplaced (`*`) sorts after every reference.
        let key = if r.tid < 0 { u32::MAX } else { r.tid as u32 };
        by_tid.entry(key).or_default().push(*r);
    }
    let mut out = Vec::new();
    for (_, mut rs) in by_tid {
        rs.sort_by_key(|r| (r.beg, r.end));
        let mut merged: Vec<Region> = Vec::new();
        for r in rs {
            match merged.last_mut() {
                Some(m) if r.beg <= m.end => m.end = m.end.max(r.end),
                _ => merged.push(r),
            }
        }
        out.push(merged);
    }
    out
}

/// One reference's merged intervals and the union of their index chunks.
type MergedQuery = (Vec<Region>, Vec<(u64, u64)>);

/// Per reference (in file order, `*` last): its merged intervals and the union of their chunks.
fn merged_queries(index: &Index, regions: &[Region]) -> Vec<MergedQuery> {
    let mut out = Vec::new();
    for merged in merge_by_tid(regions) {
        let mut chunks: Vec<(u64, u64)> =
            merged.iter().flat_map(|r| chunks_for(index, r)).collect();
        chunks.sort_unstable();
        let mut union: Vec<(u64, u64)> = Vec::new();
        for c in chunks {
            match union.last_mut() {
                Some(u) if c.0 <= u.1 => u.1 = u.1.max(c.1),
                _ => union.push(c),
            }
        }
        out.push((merged, union));
    }
    out
}

fn read_chunks(
    reader: &mut dyn ChunkReader,
    path: &str,
    chunks: &[(u64, u64)],
    regions: &[Region],
    sink: &mut dyn FnMut(&Batch) -> Result<(), Error>,
) -> Result<(), Error> {
    reader.plan(chunks);
    let past = past_the_regions(regions);
    let mut verdict = |r: RecordRef<'_>| match past {
        Some((tid, end)) if r.ref_id() != tid || r.pos() >= end => Verdict::Stop,
        _ if regions.iter().any(|region| overlaps(&r, region)) => Verdict::Keep,
        _ => Verdict::Drop,
    };
    for &(start, end) in chunks {
        // Timed as reading (and counting any bytes a remote input fetches), not as the sink.
        let mut read_phase = Some(crate::profile::phase(crate::profile::Phase::Read));
        let mut each = |batch: Batch| {
            read_phase = None;
            if !batch.is_empty() {
                sink(&batch)?;
            }
            // The next piece reuses this buffer rather than fault in fresh pages.
            crate::pipeline::prefetch::recycle([batch]);
            read_phase = Some(crate::profile::phase(crate::profile::Phase::Read));
            Ok(())
        };
        let stopped = reader.read_chunk(path, (start, end), &mut verdict, &mut each)?;
        drop(read_phase);
        if stopped {
            break;
        }
    }
    Ok(())
}

/// Where reading can stop when `regions` all lie on one reference: at the first record on
/// another reference or starting at or after the regions' last end, as htslib's iterator stops
/// (later chunks lie later in the sorted file). `None` for the whole file or `*`.
fn past_the_regions(regions: &[Region]) -> Option<(i32, i64)> {
    let tid = regions.first()?.tid;
    if tid < 0 || regions.iter().any(|r| r.tid != tid) {
        return None;
    }
    Some((tid, regions.iter().map(|r| r.end).max()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// samtools `-P` skips a read whose mate is in the regions; a mate exactly at an interval's
    /// start is not (the empty query `[mpos, mpos)` needs `beg < mpos`), and adjacent intervals
    /// merge first.
    #[test]
    fn mate_inside_is_strict_at_interval_start() {
        let regions =
            [Region { tid: 0, beg: 100, end: 200 }, Region { tid: 0, beg: 200, end: 300 }];
        let merged: Vec<Region> = merge_by_tid(&regions).into_iter().flatten().collect();
        assert!(!mate_inside(&merged, 0, 100));
        assert!(mate_inside(&merged, 0, 101));
        assert!(mate_inside(&merged, 0, 200));
        assert!(mate_inside(&merged, 0, 299));
        assert!(!mate_inside(&merged, 0, 300));
        assert!(!mate_inside(&merged, 1, 150));
        assert!(!mate_inside(&merged, -1, 150));
    }
}
