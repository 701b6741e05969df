//! `samtools calmd`: `MD`/`NM` of every placed record recomputed against a FASTA reference
//! ([`crate::ops::calmd`]), to stdout. The reference is read through the faidx reader
//! ([`crate::io::fasta::Fasta::load`]), one sequence at a time as records need it. With `-r` BAQ
//! ([`crate::ops::baq`]) and with `-C` the mapping-quality cap come first, as in samtools.
//! Records are edited in parallel chunks; warnings come out in input order.
//! Command line: [`crate::cli::calmd`].

use crate::io::input_spec::InputSpec;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, c_message};
use crate::io::fasta::{Fasta, Format};
use crate::io::open::Opened;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::RecordSink;
use crate::ops::baq::{BaqFlags, cap_mapq::cap_mapq, prob_realn};
use crate::ops::calmd::{CalmdFlags, Filled, fill_md};
use crate::pipeline::checked_open::open_reporting;
use crate::pipeline::rewrite::{Edited, Source, rewrite};
use crate::record::Header;
use crate::record::layout;

pub struct CalmdOptions {
    pub input: String,
    pub reference: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// `--reference`, `reference=`: the FASTA a CRAM input is decoded against (the positional
    /// FASTA is calmd's own).
    pub cram_reference: Option<String>,
    pub flags: CalmdFlags,
    /// `-r`: BAQ with these flags (`-A`, `-E`).
    pub baq: Option<BaqFlags>,
    /// `-C`: mapping qualities capped when above 10.
    pub cap_q: i32,
    pub pg: Option<Vec<(String, String)>>,
    pub filter: Option<String>,
}

/// Reference sequences by tid, fetched on first use (`None`: not in the FASTA). While the
/// input's references come in order, one left behind is dropped (samtools' streaming mode); once
/// they go backwards, every one is kept (its caching mode).
struct References {
    fasta: Fasta,
    by_tid: Mutex<HashMap<i32, Option<Arc<Vec<u8>>>>>,
    out_of_order: AtomicBool,
}

impl References {
    /// The input moved from reference `from` to `to` (file order).
    fn moved(&self, from: i32, to: i32) {
        if to < from {
            self.out_of_order.store(true, Ordering::Relaxed);
        } else if !self.out_of_order.load(Ordering::Relaxed) {
            // Chunks run in parallel: one still on `from` holds its own copy (or reads it again).
            self.by_tid.lock().unwrap_or_else(|e| e.into_inner()).retain(|&t, _| t >= from);
        }
    }

    fn get(&self, header: &Header, tid: i32) -> Option<Arc<Vec<u8>>> {
        if let Some(seq) = self.by_tid.lock().unwrap_or_else(|e| e.into_inner()).get(&tid) {
            return seq.clone();
        }
        let seq = header.ref_name(tid).and_then(|name| {
            let entry = self.fasta.index().get(name)?;
            let len = entry.len as i64;
            self.fasta.retrieve(entry, entry.seq_offset, 0, len).ok().map(Arc::new)
        });
        self.by_tid.lock().unwrap_or_else(|e| e.into_inner()).insert(tid, seq.clone());
        seq
    }
}

pub fn run(opts: CalmdOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| calmd(&opts, &pool))
}

fn calmd(opts: &CalmdOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let path = opts.input.as_str();
    let Opened { mut reader, header, .. } = open_reporting(
        path,
        InputSpec::new(opts.threads, opts.cram_reference.as_deref()),
        |reason| format!("samtools calmd: Failed to open input file '{path}': {reason}"),
    )
    .map_err(|e| e.or_line(&format!("samtools calmd: failed to read the header of '{path}'")))?;
    if header.refs().is_empty() {
        eprintln!("[bam_fillmd] warning: input SAM does not have header, performing a no-op.");
    }
    let mut out_header = header.clone();
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        out_header.add_pg("samtools", &fields);
    }
    let mut sink = RecordSink::create("-", &opts.spec, opts.threads, &out_header, true)?;
    let fasta = Fasta::load(&opts.reference, None, None, Format::Fasta).map_err(|lines| {
        let reason = std::fs::metadata(&opts.reference)
            .err()
            .map_or_else(|| "Success".to_string(), |e| c_message(&e));
        Error::Bare(format!(
            "{lines}\nsamtools calmd: Failed to open reference file '{}': {reason}",
            opts.reference
        ))
    })?;
    let references = References {
        fasta,
        by_tid: Mutex::new(HashMap::new()),
        out_of_order: AtomicBool::new(false),
    };
    let skipped = AtomicU32::new(0);
    let filter = crate::pipeline::input_filter::InputFilter::new(opts.filter.as_deref());
    let source = Source::new(&mut reader, path, &header, filter.as_ref());
    // Without a reference BAQ and the cap would crash samtools: it stops there.
    let needs_reference = opts.baq.is_some() || opts.cap_q > 10;
    let rewritten = rewrite(source, &mut sink, &out_header, pool, |before, rec, out, notes| {
        out.extend_from_slice(rec.bytes());
        let tid = rec.ref_id();
        if tid < 0 {
            return Ok(Edited::Write);
        }
        if let Some(from) = before.map(|b| b.ref_id()).filter(|&f| f >= 0 && f != tid) {
            references.moved(from, tid);
        }
        let reference = references.get(&header, tid);
        let Some(reference) = reference else {
            // samtools remembers only a reference it found, so it asks (and warns) again for
            // every record on a missing one.
            let name = header.ref_name(tid).map(String::from_utf8_lossy);
            if let Some(name) = &name {
                notes.warnings.push(format!(
                    "[W::fai_get_val] Reference {name} not found in FASTA file, returning empty sequence"
                ));
            }
            notes.warnings.push(format!(
                "[bam_fillmd] fail to find sequence '{}' in the reference.",
                name.as_deref().unwrap_or("(unknown)")
            ));
            notes.stop = needs_reference;
            return Ok(Edited::Write);
        };
        if let Some(baq) = opts.baq
            && prob_realn(out, &reference, baq, &mut notes.warnings).is_err()
        {
            // samtools prints errno, left at ENOENT by its earlier probes for index files.
            notes.warnings.push(
                "samtools calmd: BAQ alignment failed: No such file or directory".to_string(),
            );
            notes.stop = true;
            return Ok(Edited::Write);
        }
        if opts.cap_q > 10 {
            let cap = cap_mapq(out, &reference, opts.cap_q);
            // samtools compares as int and stores the byte: "no cap" (-1) becomes 255.
            if i32::from(out[layout::MAPQ]) > cap {
                out[layout::MAPQ] = cap as u8;
            }
        }
        let ref_name = header.ref_name(tid).unwrap_or_default();
        let place = (ref_name, rec.pos());
        if fill_md(out, &reference, &opts.flags, place, &mut notes.warnings) == Filled::NoSequence {
            skipped.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Edited::Write)
    });
    if let Err(Error::Failed) = rewritten {
        // samtools closes its output on the way out: what was written stays complete.
        sink.finish()?;
        return Err(Error::Failed);
    }
    rewritten?;
    let skipped = skipped.into_inner();
    if skipped > 0 {
        eprintln!("[calmd] Warning: {skipped} records skipped due to no query sequence");
    }
    sink.finish()
}
