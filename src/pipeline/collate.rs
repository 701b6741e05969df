//! `collate`: read everything into one [`RecordStore`], place each record in its name-hash bin
//! (or, with `-f`, pair it in the read ring first), sort the bins in parallel with samtools'
//! own introsort, write pairs then bins. See [`crate::ops::collate`] for the order guarantee.

use rayon::prelude::*;

use crate::error::Error;
use crate::io::open::{self, Opened};
use crate::ops::collate::{self, Item};
use crate::pipeline::sink::{OutputFormat, RecordSink};
use crate::pipeline::sort::write_in_order;
use crate::record::{RecordIdx, RecordStore};

pub struct CollateOptions {
    pub input: String,
    pub output: String,
    pub format: OutputFormat,
    pub level: i32,
    pub threads: usize,
    /// `-n`: number of hash bins (samtools' temporary files).
    pub bins: usize,
    /// `-f` with `-r`: fast mode and its read buffer size.
    pub fast: Option<usize>,
    pub pg: Option<Vec<(String, String)>>,
}

pub fn run(opts: CollateOptions) -> Result<(), Error> {
    let Opened { mut reader, header: input_header, .. } = open::open(&opts.input, opts.threads)?;
    let mut header = input_header;
    header.update_hd(&[("SO", "unsorted"), ("GO", "query")], &[]);
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    // samtools opens the output and writes the header before reading records.
    let mut sink =
        RecordSink::create(&opts.output, opts.format, opts.level, opts.threads, &header, true)?;
    let mut store = RecordStore::default();
    while let Some((batches, warnings)) = reader.read_batches(&opts.input)? {
        for w in warnings {
            eprintln!("{w}");
        }
        for b in batches {
            store.push_batch(b);
        }
    }
    store.order = collated_order(&store, opts.bins, opts.fast);
    write_in_order(&store, &header, &mut sink)?;
    sink.finish()
}

/// samtools collate's output order of the store's records (in their current order): `-f` pairs
/// first (with `fast` = the read buffer size), then the `bins` name-hash bins, each sorted.
pub fn collated_order(store: &RecordStore, bins: usize, fast: Option<usize>) -> Vec<RecordIdx> {
    let handles = &store.order;
    let records = handles.iter().enumerate().map(|(i, &h)| {
        let r = store.get(h);
        (r.read_name(), r.flag(), i as u32)
    });
    let (direct, to_bins): (Vec<u32>, Vec<Item<'_>>) = match fast {
        Some(store_max) => {
            let (pairs, rest) = collate::fast_plan(records, store_max);
            (pairs, rest.into_iter().map(|(name, flag, id)| Item::new(name, flag, id)).collect())
        }
        None => (Vec::new(), records.map(|(name, flag, id)| Item::new(name, flag, id)).collect()),
    };
    let mut bins = collate::into_bins(to_bins.into_iter(), bins);
    bins.par_iter_mut().for_each(|b| collate::sort_bin(b));
    direct
        .iter()
        .map(|&id| handles[id as usize])
        .chain(bins.iter().flatten().map(|it| handles[it.id as usize]))
        .collect()
}

/// Runs `collate` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: CollateOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(opts.threads).install(|| run(opts))
}
