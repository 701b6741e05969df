//! `mdsam load`: read a whole input into one record store and report how long it took and how
//! many allocations it made, the measurement behind the allocator benchmark (`benches/load.sh`).

use std::time::Instant;

use crate::error::Error;
use crate::record::RecordStore;

pub struct LoadReport {
    pub seconds: f64,
    pub records: usize,
    pub bytes: usize,
    pub allocations: u64,
}

/// Reads `input` into a [`RecordStore`] on the current pool.
pub fn run(input: &str, threads: usize) -> Result<LoadReport, Error> {
    let allocations_before = crate::alloc::allocations();
    let start = Instant::now();
    let mut opened = crate::io::open::open(input, threads)?;
    let mut store = RecordStore::default();
    while let Some((batches, _)) = opened.reader.read_batches(input)? {
        for b in batches {
            store.push_batch(b);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let bytes = store.batches.iter().map(|b| b.data.len()).sum();
    Ok(LoadReport {
        seconds,
        records: store.len(),
        bytes,
        allocations: crate::alloc::allocations() - allocations_before,
    })
}
