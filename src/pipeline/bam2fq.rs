//! `samtools fastq` / `fasta` (samtools 1.24 `bam_fastq.c`): records of a collated SAM, BAM or
//! CRAM → FASTQ or FASTA files. Command line: `crate::cli::bam2fq`.
//!
//! Each batch of records is filtered and changed (`-O`, `--no-sc`) in parallel, paired in
//! input order ([`crate::ops::bam2fq::pairing`]), then formatted in parallel chunks, each chunk
//! into one buffer per output, and the buffers written in order.
//!
//! Messages as samtools: the `[M::bam2fq_mainloop]` counts at the end, a warning for a
//! coordinate-sorted input. Difference: named output files appear only when the command
//! succeeds.

use crate::io::input_spec::InputSpec;
use std::borrow::Cow;
use std::collections::HashSet;

use rayon::prelude::*;

use crate::error::Error;
use crate::io::fastq::format::format_entry;
use crate::io::fastq::style::FastqStyle;
use crate::io::input::Input;
use crate::io::open;
use crate::ops::bam2fq::pairing::{Emit, Pairing, PairingOptions};
use crate::ops::bam2fq::{Changes, Selection, prepare};
use crate::pipeline::bam2fq_outputs::{OutputNames, Outputs};
use crate::pipeline::prefetch;
use crate::record::RecordRef;
use crate::record::header::line_field;

/// Records formatted by one task.
const FORMAT_CHUNK: usize = 4096;

#[derive(Clone, Debug)]
pub struct Bam2fqOptions {
    /// `-` is stdin.
    pub input: String,
    pub fasta: bool,
    pub outputs: OutputNames,
    pub style: FastqStyle,
    pub selection: Selection,
    /// `-D TAG:FILE`: files whose lines are accepted values of the `-d`/`-D` tag.
    pub tag_files: Vec<String>,
    pub changes: Changes,
    pub pairing: PairingOptions,
    /// BGZF level of `.gz` outputs (`-c`).
    pub level: i32,
    /// Worker threads (`-@` plus one).
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
}

pub fn run(options: &Bam2fqOptions) -> Result<(), Error> {
    let mut options = options.clone();
    load_tag_files(&mut options)?;
    let pool = crate::pipeline::threads::pool(options.threads);
    pool.install(|| convert(&options, &pool))
}

/// `-D`'s files, read as samtools reads them when it parses the option.
fn load_tag_files(options: &mut Bam2fqOptions) -> Result<(), Error> {
    for path in &options.tag_files {
        let mut lines = crate::io::fasta::kseq::open_text(path).map_err(|e| {
            Error::Bare(format!(
                "samtools fastq: failed to open \"{path}\" for reading: {}",
                crate::error::c_message(&e)
            ))
        })?;
        let filter = options.selection.tag.get_or_insert_with(Default::default);
        let mut line = Vec::new();
        // As samtools, an empty file leaves any value accepted.
        while lines.next_line(&mut line) {
            filter.values.get_or_insert_with(HashSet::new).insert(line.clone());
        }
    }
    Ok(())
}

fn convert(options: &Bam2fqOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let path = options.input.as_str();
    let input = Input::open(path).map_err(|e| {
        let reason = crate::error::c_message(&e);
        Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n\
             samtools bam2fq: Cannot read file \"{path}\": {reason}"
        ))
    })?;
    let piece = open::PIECE_BYTES_PER_THREAD * options.threads;
    let mut opened = open::open_input(
        path,
        input,
        InputSpec::new(options.threads, options.reference.as_deref()),
        piece,
    )
    .map_err(|e| Error::Bare(format!("{e}\nFailed to read header for \"{path}\"")))?;
    let mut outputs = Outputs::open(&options.outputs, options.level, options.threads)?;
    // htslib parses a BAM's header text when samtools looks up `SO`; a header it cannot parse
    // is reported and has no `SO`.
    let sq_error = opened.header.sq_error();
    if let Some(why) = &sq_error {
        eprintln!("{why}");
    }
    let coordinate_sorted = sq_error.is_none()
        && opened
            .header
            .lines()
            .any(|l| l.starts_with(b"@HD\t") && line_field(l, b"SO") == Some(&b"coordinate"[..]));
    if coordinate_sorted {
        let command = if options.fasta { "fasta" } else { "fastq" };
        eprintln!("samtools {command}: Coordinate sorted file.  Read pairs may be out of order");
    }
    let mut pairing = Pairing::new(options.pairing.clone());
    let mut reads = 0u64;
    let result = (|| {
        // The next batches are read while these are converted and written.
        prefetch::for_each_batches(&mut opened.reader, path, pool, |batches| {
            for batch in &batches {
                let prepared: Vec<Option<Cow<'_, [u8]>>> = (0..batch.len())
                    .into_par_iter()
                    .map(|i| prepare(batch.get(i).bytes(), &options.selection, &options.changes))
                    .collect();
                let mut emits = Vec::with_capacity(prepared.len());
                for record in prepared.into_iter().flatten() {
                    reads += 1;
                    pairing.push(record, &mut emits).map_err(|_| unknown_code())?;
                }
                write(&emits, &options.style, &mut outputs)?;
            }
            prefetch::recycle(batches);
            Ok(())
        })?;
        let mut emits = Vec::new();
        pairing.flush(&mut emits).map_err(|_| unknown_code())?;
        write(&emits, &options.style, &mut outputs)
    })();
    let finished = result.and_then(|()| outputs.finish());
    if let Err(e) = &finished
        && !matches!(e, Error::BrokenPipe)
    {
        eprintln!("{}", describe(e));
        eprintln!("samtools bam2fq: Error writing to FASTx files.");
    }
    eprintln!("[M::bam2fq_mainloop] discarded {} singletons", pairing.singletons);
    eprintln!("[M::bam2fq_mainloop] processed {reads} reads");
    finished.map_err(|e| if matches!(e, Error::BrokenPipe) { e } else { Error::Failed })
}

fn unknown_code() -> Error {
    Error::Bare("Unknown index-format code".to_string())
}

fn describe(e: &Error) -> String {
    match e {
        Error::Bare(m) => m.clone(),
        other => format!("samtools bam2fq: {other}"),
    }
}

/// Formats `emits` in parallel chunks and writes each chunk's text to its outputs in order.
fn write(emits: &[Emit], style: &FastqStyle, outputs: &mut Outputs) -> Result<(), Error> {
    let sinks = outputs.sink_count();
    let routes: Vec<Option<usize>> = emits.iter().map(|e| outputs.route(e.dest)).collect();
    let chunks: Vec<Vec<Vec<u8>>> = emits
        .par_chunks(FORMAT_CHUNK)
        .zip(routes.par_chunks(FORMAT_CHUNK))
        .map(|(chunk, routes)| {
            // Room for each output's text up front: growing by doubling copied it again.
            let mut room = vec![0usize; sinks];
            for (e, route) in chunk.iter().zip(routes) {
                if let Some(sink) = *route {
                    room[sink] += 2 * e.record.len();
                }
            }
            // Recycled buffers: fresh ones were pages the kernel zeroed each time.
            let mut texts: Vec<Vec<u8>> = room.into_iter().map(crate::io::recycle::take).collect();
            for (e, route) in chunk.iter().zip(routes) {
                if let Some(sink) = *route {
                    format_entry(&mut texts[sink], &RecordRef::new(&e.record), style);
                }
            }
            texts
        })
        .collect();
    for texts in chunks {
        for (sink, text) in texts.into_iter().enumerate() {
            if !text.is_empty() {
                outputs.write(sink, &text)?;
            }
            crate::io::recycle::give(text);
        }
    }
    Ok(())
}
