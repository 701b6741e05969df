//! `collate`: read everything into one [`RecordStore`], place each record in its name-hash bin
//! (or, with `-f`, pair it in the read ring first), sort the bins in parallel with samtools'
//! own introsort, write pairs then bins. See [`crate::ops::collate`] for the order guarantee.
//!
//! Over the memory budget (`--max-memory`, default 768M a thread), the records in memory are
//! appended to their bin's temporary file (`PREFIX.NNNN.bam`, one per bin, raw framed records as
//! in a BAM stream but not compressed), in arrival order, and freed; at the end each bin is read
//! back, sorted and written, bin after bin: the same order as in memory. A bin must fit in
//! memory (about 1/`-n` of the input). Fast mode (`-f`) pairs across the whole input and does
//! not spill.

use crate::io::input_spec::InputSpec;
use rayon::prelude::*;

use crate::error::Error;
use crate::io::direct_read::{WholeFile, read_whole};
use crate::io::direct_write::DirectWriter;
use crate::io::open::{self, Opened};
use crate::io::output_spec::OutputSpec;
use crate::io::sink::RecordSink;
use crate::io::temp_names::TempNamer;
use crate::io::tempfiles::TempFile;
use crate::ops::collate::{self, Item};
use crate::pipeline::sort::write_in_order;
use crate::pipeline::sort::{batch_cost, data_budget, piece_bytes};
use crate::profile::{self, Counter, Phase, RunInfo};
use crate::record::{Batch, RecordIdx, RecordStore};

use std::io::Write;

pub struct CollateOptions {
    pub input: String,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    /// `-n`: number of hash bins (samtools' temporary files).
    pub bins: usize,
    /// `-f` with `-r`: fast mode and its read buffer size.
    pub fast: Option<usize>,
    pub pg: Option<Vec<(String, String)>>,
    /// Total memory budget in bytes.
    pub memory: u64,
    /// Prefix of temporary files (`-T`, or the prefix argument).
    pub tmp_prefix: Option<String>,
}

/// The bins' temporary files, created at the first spill.
pub struct BinFiles {
    files: Vec<(TempFile, DirectWriter)>,
    /// The command's threads (its pool's size), among which a spill's bins are shared out.
    threads: usize,
}

impl BinFiles {
    /// `n` bins for a command with `budget` bytes on `threads`: each gathers up to a sixteenth
    /// of the budget shared out among the bins, at most 1 MiB, before a direct write.
    pub fn create(
        n: usize,
        budget: u64,
        threads: usize,
        namer: &mut TempNamer,
    ) -> Result<BinFiles, Error> {
        let chunk = (budget / 16 / n.max(1) as u64).min(1 << 20) as usize;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            let (t, f) = namer.create_next().map_err(|e| Error::CannotCreate {
                path: namer.last_path(),
                reason: crate::error::c_message(&e),
            })?;
            files.push((t, DirectWriter::temporary(f, chunk)));
        }
        Ok(BinFiles { files, threads })
    }

    /// Appends the store's records, in input order, to their bins; empties the store, handing
    /// its pieces back to the recycler to be kept within `keep` bytes.
    ///
    /// The bins' files are shared out among the command's threads, each appending the records of
    /// its own bins: copying into the page cache is most of a spill's cost, and on one thread it
    /// was 12.5 s of 29 s at 6 M reads (2.3 GB spilled), with the other core idle.
    pub fn spill(&mut self, store: &mut RecordStore, keep: usize) -> Result<(), Error> {
        let n = self.files.len() as u32;
        let bins: Vec<Vec<u32>> = store
            .batches
            .par_iter()
            .map(|b| (0..b.len()).map(|i| collate::name_hash(b.get(i).read_name()) % n).collect())
            .collect();
        let shares = self.threads.clamp(1, self.files.len().max(1));
        let mut owned: Vec<Vec<&mut (TempFile, DirectWriter)>> =
            (0..shares).map(|_| Vec::new()).collect();
        for (i, file) in self.files.iter_mut().enumerate() {
            owned[i % shares].push(file);
        }
        let batches = &store.batches;
        owned.into_par_iter().enumerate().try_for_each(|(share, mut files)| {
            for (b, bins) in batches.iter().zip(&bins) {
                for (i, &bin) in bins.iter().enumerate() {
                    let bin = bin as usize;
                    if bin % shares == share {
                        let (t, w) = &mut *files[bin / shares];
                        w.write_all(b.framed(i)).map_err(|e| Error::io(t.path_str(), e))?;
                    }
                }
            }
            Ok::<(), Error>(())
        })?;
        // Handed back for the next reads (kept as far as `keep` allows): freed, the next
        // pieces faulted in fresh pages, each cleared by the kernel.
        for batch in std::mem::take(store).batches {
            crate::io::recycle::give_within(batch.data, keep);
        }
        Ok(())
    }

    /// Closes the bins' files; the bins in output order.
    pub fn finish(self) -> Result<Vec<TempFile>, Error> {
        let mut done = Vec::with_capacity(self.files.len());
        for (t, mut w) in self.files {
            w.flush().map_err(|e| Error::io(t.path_str(), e))?;
            drop(w);
            done.push(t);
        }
        Ok(done)
    }

    /// Writes the bins in order, each sorted. A thread reads and sorts the next bin while this
    /// one is written: in turn, the merge ran 10 s of serial work beside 10 s on the pool.
    fn write_out(self, header: &crate::record::Header, sink: &mut RecordSink) -> Result<(), Error> {
        let files = self.finish()?;
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let reader = scope.spawn(move || {
                for t in files {
                    if tx.send(read_bin(t)).is_err() {
                        return;
                    }
                }
            });
            let mut result = Ok(());
            // While the next bin is read, this worker deflates queued groups instead of
            // blocking.
            while let Some(store) = crate::io::pool_wait::next_helping_pool(&rx) {
                if let Err(e) = store.and_then(|s| write_in_order(&s, header, sink)) {
                    result = Err(e);
                    break;
                }
            }
            drop(rx);
            reader.join().map_err(|_| Error::Message("the bin reader thread failed".into()))?;
            result
        })
    }
}

/// One bin's records (the file is removed once read) in samtools collate's order within the bin
/// (`store.order`).
pub fn read_bin(t: TempFile) -> Result<RecordStore, Error> {
    // Sized from the file at once: grown by doubling, every bin was copied and faulted into
    // fresh pages several times.
    let whole = read_whole(t.path()).map_err(|e| Error::io(t.path_str(), e))?;
    Ok(bin_store(whole))
}

/// A bin's bytes as read ([`read_bin`]), in samtools collate's order within the bin.
pub fn bin_store(whole: WholeFile) -> RecordStore {
    let mut store = RecordStore::default();
    store.push_batch(Batch::from_framed_at(whole.data, whole.offset));
    let batch = &store.batches[0];
    let name = |i: usize| batch.get(i).read_name();
    let runs = collate::runs(batch.len(), |i| name(i) == name(i - 1));
    let mut items: Vec<Item> = runs
        .enumerate()
        .map(|(i, run)| {
            let r = batch.get(i);
            let id = RecordIdx { batch: 0, record: i as u32 };
            Item::new(collate::name_hash(r.read_name()), run, r.flag(), id)
        })
        .collect();
    collate::sort_bin(&mut items, |id| batch.get(id.record as usize).read_name());
    let order: Vec<_> = items.iter().map(|it| it.id).collect();
    drop(items);
    store.order = order;
    store
}

pub fn run(opts: CollateOptions) -> Result<(), Error> {
    // What the recycler may keep of a spilled store's pieces, for the next reads.
    let keep = crate::io::recycle::kept_for_budget(opts.memory);
    let Opened { mut reader, header: input_header, .. } = open::open_with_piece(
        &opts.input,
        InputSpec::new(opts.threads, opts.reference.as_deref()),
        piece_bytes(opts.memory, opts.threads),
    )?;
    profile::describe(
        RunInfo::staged(
            opts.threads,
            opts.spec.level,
            (&opts.input, &opts.output),
            (reader.format_name(), opts.spec.format.name()),
        )
        .budgeted(Some(opts.memory)),
    );
    if let Some(why) = input_header.sq_error() {
        // htslib parses a BAM's header text only now, when `@HD` changes (and twice).
        return Err(Error::Bare(format!(
            "{why}\n{why}\nsamtools collate: failed to update HD line\n"
        )));
    }
    let mut header = input_header;
    header.update_hd(&[("SO", "unsorted"), ("GO", "query")], &[]);
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    // samtools opens the output and writes the header before reading records.
    let mut sink = RecordSink::create(&opts.output, &opts.spec, opts.threads, &header, true)?;
    let mut store = RecordStore::default();
    let limit = data_budget(opts.memory, opts.threads);
    let mut namer = TempNamer::for_collate(opts.tmp_prefix.as_deref(), &opts.output);
    let mut bin_files: Option<BinFiles> = None;
    // Bins are BAM files, which cannot hold positions beyond 32 bits: with references that long
    // everything stays in memory.
    let can_spill = opts.fast.is_none() && !header.has_very_large_references();
    let mut used = 0usize;
    while let Some((batches, warnings)) = reader.read_batches(&opts.input)? {
        for w in warnings {
            eprintln!("{w}");
        }
        for b in batches {
            used += batch_cost(&b);
            store.push_batch(b);
        }
        if can_spill && used > limit {
            if bin_files.is_none() {
                let created =
                    BinFiles::create(opts.bins.max(1), opts.memory, opts.threads, &mut namer);
                bin_files = Some(created.map_err(|e| match e {
                    Error::CannotCreate { path, reason } => Error::Bare(format!(
                        "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n\
                         samtools collate: Cannot open intermediate file \"{path}\": {reason}"
                    )),
                    other => other,
                })?);
            }
            if let Some(files) = bin_files.as_mut() {
                let _phase = profile::phase(Phase::Spill);
                files.spill(&mut store, keep)?;
            }
            used = 0;
        }
    }
    if let Some(mut files) = bin_files {
        drop(reader);
        {
            let _phase = profile::phase(Phase::Spill);
            files.spill(&mut store, keep)?;
        }
        let _phase = profile::phase(Phase::Merge);
        files.write_out(&header, &mut sink)?;
        return sink.finish();
    }
    {
        let _phase = profile::phase(Phase::Collate);
        profile::add(Phase::Collate, Counter::Records, store.len() as u64);
        // Each record's name is read once through its handle to bin and sort it.
        profile::add(Phase::Collate, Counter::RandomAccesses, store.len() as u64);
        store.order = collated_order(&store, opts.bins, opts.fast);
    }
    let _phase = profile::phase(Phase::Write);
    profile::add(Phase::Write, Counter::Records, store.len() as u64);
    write_in_order(&store, &header, &mut sink)?;
    sink.finish()
}

/// samtools collate's output order of the store's records (in their current order): `-f` pairs
/// first (with `fast` = the read buffer size), then the `bins` name-hash bins, each sorted.
pub fn collated_order(store: &RecordStore, bins: usize, fast: Option<usize>) -> Vec<RecordIdx> {
    let handles = &store.order;
    let name = |i: usize| store.get(handles[i]).read_name();
    let (direct, mut bins) = match fast {
        Some(store_max) => {
            let records = handles.iter().enumerate().map(|(i, &h)| {
                let r = store.get(h);
                (r.read_name(), r.flag(), i as u32)
            });
            let (pairs, rest) = collate::fast_plan(records, store_max);
            let runs = collate::runs(rest.len(), |k| rest[k].0 == rest[k - 1].0);
            let rest: Vec<Item> = rest
                .iter()
                .zip(runs)
                .map(|(&(name, flag, i), run)| {
                    Item::new(collate::name_hash(name), run, flag, handles[i as usize])
                })
                .collect();
            let pairs: Vec<RecordIdx> = pairs.iter().map(|&i| handles[i as usize]).collect();
            (pairs, collate::into_bins(&rest, bins))
        }
        None => {
            let hash_of = |i: usize| collate::name_hash(name(i));
            // A record's run starts at the first of the equal names right before it: mates of
            // name-grouped input are neighbours, and that walk reads records already in cache.
            // The walk stops after a few records (input where every name is `*` would make it
            // quadratic); any position with the record's name is a valid run number.
            const RUN_WALK: usize = 16;
            let item_of = |i: usize, hash: u32| {
                let r = store.get(handles[i]);
                let mut start = i;
                while start > 0 && i - start < RUN_WALK && name(start - 1) == r.read_name() {
                    start -= 1;
                }
                Item::new(hash, start as u32, r.flag(), handles[i])
            };
            (Vec::new(), collate::into_bins_on_pool(handles.len(), bins, hash_of, item_of))
        }
    };
    bins.par_iter_mut().for_each(|b| collate::sort_bin(b, |id| store.get(id).read_name()));
    let mut order = direct;
    order.reserve(handles.len() - order.len());
    order.extend(bins.iter().flatten().map(|it| it.id));
    order
}

/// Runs `collate` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: CollateOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(opts.threads).install(|| run(opts))
}
