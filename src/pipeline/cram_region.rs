//! Region queries on CRAM for `view`: the `.crai` names the containers whose slices overlap a
//! region; each is read and decoded, and its records that overlap the region are kept. Default
//! mode goes region by region (overlapping regions repeat reads); `-M` merges the regions of a
//! reference and returns each read once, in file order.

use crate::error::Error;
use crate::io::cram::Reader;
use crate::io::cram::index::{CraiEntry, CraiError, containers_for, read_crai};
use crate::io::index::Region;
use crate::pipeline::region::{merge_by_tid, overlaps};
use crate::record::Batch;

/// The `.crai` of `input`: the `-X` path, else `input.crai`, else the name with `.cram`
/// replaced by `.crai`.
pub fn load_crai(input: &str, explicit: Option<&str>) -> Result<Vec<CraiEntry>, Error> {
    let candidates =
        crate::pipeline::region::index_candidates(input, explicit, &[".crai"], ".cram");
    for path in &candidates {
        match read_crai(path) {
            Ok(crai) => return Ok(crai),
            Err(CraiError::Missing) => {}
            Err(CraiError::Bad(e)) => return Err(Error::file(path.as_str(), e)),
        }
    }
    Err(Error::Message(
        "Random alignment retrieval only works for indexed SAM.gz, BAM or CRAM files.".into(),
    ))
}

/// Hands `sink` the records of `regions`, a container at a time.
pub fn for_each_region_batch(
    reader: &mut Reader,
    crai: &[CraiEntry],
    path: &str,
    regions: &[Region],
    multi: bool,
    sink: &mut dyn FnMut(&Batch) -> Result<(), Error>,
) -> Result<(), Error> {
    if multi {
        for merged in merge_by_tid(regions) {
            read_containers(reader, crai, path, &merged, sink)?;
        }
        return Ok(());
    }
    for region in regions {
        read_containers(reader, crai, path, std::slice::from_ref(region), sink)?;
    }
    Ok(())
}

/// Reads each container any of `regions` (all on one reference) needs, once, in file order.
fn read_containers(
    reader: &mut Reader,
    crai: &[CraiEntry],
    path: &str,
    regions: &[Region],
    sink: &mut dyn FnMut(&Batch) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut offsets: Vec<u64> = Vec::new();
    for region in regions {
        offsets.extend(match region.tid {
            Region::WHOLE_FILE_TID => {
                let mut all: Vec<u64> = crai.iter().map(|e| e.container_offset).collect();
                all.sort_unstable();
                all
            }
            tid => containers_for(crai, tid, region.beg, region.end),
        });
    }
    offsets.sort_unstable();
    offsets.dedup();
    for offset in offsets {
        let read = {
            let _phase = crate::profile::phase(crate::profile::Phase::Read);
            reader.read_container_at(offset).map_err(|e| Error::file(path, e))?
        };
        let Some(batch) = read else { continue };
        let mut wanted = Batch::default();
        for r in batch.iter().filter(|r| regions.iter().any(|g| overlaps(r, g))) {
            wanted.push(r.bytes());
        }
        if !wanted.is_empty() {
            sink(&wanted)?;
        }
    }
    Ok(())
}
