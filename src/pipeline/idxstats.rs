//! `samtools idxstats` (samtools 1.24 `bam_idxstats` in `bam_index.c`): per reference its
//! length and mapped and unmapped record counts, then the `*` line. A BAM's come from its index
//! (the metadata pseudo-bins and `n_no_coor`); other inputs, and a BAM whose index does not
//! load, are read through and counted ([`crate::ops::idxstats`]).

use std::io::Write;

use crate::error::Error;
use crate::io::index::Index;
use crate::io::open::{InputFormat, Opened};
use crate::io::remote;
use crate::ops::idxstats::{CountError, ReferenceCounts};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::input_filter::{InputFilter, passes};
use crate::record::Header;

pub struct IdxstatsOptions {
    pub input: String,
    /// `-X`: the index file, instead of looking next to the input.
    pub index: Option<String>,
    /// Worker threads (samtools' `-@` plus one).
    pub threads: usize,
    /// `--input-fmt-option filter=EXPR`: only the records it keeps are read.
    pub filter: Option<String>,
}

pub fn run(options: &IdxstatsOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(options.threads);
    pool.install(|| idxstats(options, &pool))
}

fn idxstats(options: &IdxstatsOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let path = options.input.as_str();
    let mut opened = open_input(path, options.threads)?;
    opened.reader.flags_only();
    let text = if opened.format == InputFormat::Bam {
        match load_index(path, options.index.as_deref()) {
            Some(index) => from_index(&opened.header, &index),
            None => {
                eprintln!(
                    "samtools idxstats: fail to load index for \"{path}\", reverting to slow method"
                );
                counted(path, &mut opened, options, pool)?
            }
        }
    } else {
        counted(path, &mut opened, options, pool)?
    };
    let mut out = std::io::stdout().lock();
    out.write_all(&text).and_then(|_| out.flush()).map_err(|e| Error::io("stdout", e))
}

/// `sam_open_format` and `sam_hdr_read`, failing with samtools' and htslib's lines.
fn open_input(path: &str, threads: usize) -> Result<Opened, Error> {
    let wording = Wording {
        cannot_open: "samtools idxstats: failed to open",
        no_header: "samtools idxstats: failed to read header for",
    };
    open_sequence_input(path, threads, &wording)
}

/// htslib's `sam_index_load2`: the `-X` file, else the first of `IN.csi`, `STEM.csi`, `IN.bai`,
/// `STEM.bai` that exists (`STEM`: the name without its extension). `None` after htslib's
/// message when there is none or it does not decode.
fn load_index(path: &str, explicit: Option<&str>) -> Option<Index> {
    let (path, explicit) = match path.split_once("##idx##") {
        Some((data, index)) => (data, Some(explicit.unwrap_or(index))),
        None => (path, explicit),
    };
    let (index_path, bytes) = match explicit {
        Some(index) => match remote::index_copy::read(index) {
            Ok(bytes) => (index.to_string(), bytes),
            Err(e) => {
                let reason = crate::error::c_message(&e);
                eprintln!(
                    "[E::hts_idx_load3] Could not load local index file '{index}' : {reason}"
                );
                return None;
            }
        },
        None => {
            let found = remote::index_copy::first_readable(&index_candidates(path));
            let Some(found) = found else {
                eprintln!("[E::idx_find_and_load] Could not retrieve index file for '{path}'");
                return None;
            };
            found
        }
    };
    let index = Index::from_bytes(&bytes).ok();
    if index.is_none() {
        eprintln!(
            "[E::hts_idx_load3] Could not load local index file '{index_path}' : Invalid argument"
        );
    }
    index
}

/// For a URL the names go before any `?query`.
fn index_candidates(path: &str) -> Vec<String> {
    let file = path.split_once('?').map_or(path, |(file, _)| file);
    let name_start = file.rfind('/').map_or(0, |i| i + 1);
    let stem = file[name_start..].rfind('.').map(|dot| &file[name_start + dot..]);
    let mut candidates = Vec::new();
    for ext in [".csi", ".bai"] {
        candidates.push(remote::with_suffix(path, ext));
        if let Some(stem) = stem.and_then(|data_ext| remote::strip_suffix(path, data_ext)) {
            candidates.push(remote::with_suffix(&stem, ext));
        }
    }
    candidates
}

/// The report from the index: every reference's metadata bin (0 and 0 without one), and the
/// unplaced unmapped count.
fn from_index(header: &Header, index: &Index) -> Vec<u8> {
    let mut text = Vec::new();
    for (tid, reference) in header.refs().iter().enumerate() {
        let (mapped, unmapped) =
            index.metadata(tid as i32).map_or((0, 0), |m| (m.n_mapped, m.n_unmapped));
        push_line(&mut text, &reference.name, reference.len, mapped, unmapped);
    }
    push_line(&mut text, b"*", 0, 0, index.n_no_coor());
    text
}

/// samtools' slow method: every record read and counted; nothing printed unless all read.
fn counted(
    path: &str,
    opened: &mut Opened,
    options: &IdxstatsOptions,
    pool: &rayon::ThreadPool,
) -> Result<Vec<u8>, Error> {
    let failed = || Error::Bare(format!("samtools idxstats: failed to process \"{path}\""));
    let filter = InputFilter::new(options.filter.as_deref());
    let header = &opened.header;
    let mut counts = ReferenceCounts::new(header.refs().len());
    let mut complaint = None;
    let read =
        crate::pipeline::prefetch::for_each_batches(&mut opened.reader, path, pool, |batches| {
            for record in batches.iter().flat_map(|b| b.iter()) {
                let counted = match passes(filter.as_ref(), &record, header) {
                    Ok(true) => counts.add(&record).map_err(|e| {
                        (e == CountError::NotSorted)
                            .then(|| "samtools idxstats: file is not position sorted".to_string())
                    }),
                    Ok(false) => Ok(()),
                    Err(lines) => Err(Some(lines)),
                };
                counted.map_err(|line| {
                    complaint = line;
                    failed()
                })?;
            }
            crate::pipeline::prefetch::recycle(batches);
            Ok(())
        });
    if let Some(line) = &complaint {
        eprintln!("{line}");
    }
    read.map_err(|_| failed())?;
    let mut text = Vec::new();
    for (tid, reference) in opened.header.refs().iter().enumerate() {
        let (mapped, unmapped) = counts.get(tid as i32);
        push_line(&mut text, &reference.name, reference.len, mapped, unmapped);
    }
    let (mapped, unmapped) = counts.get(-1);
    push_line(&mut text, b"*", 0, mapped, unmapped);
    Ok(text)
}

fn push_line(text: &mut Vec<u8>, name: &[u8], len: u64, mapped: u64, unmapped: u64) {
    text.extend_from_slice(name);
    text.extend_from_slice(format!("\t{len}\t{mapped}\t{unmapped}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_looked_for_as_htslib_does() {
        assert_eq!(
            index_candidates("d.x/in.bam"),
            ["d.x/in.bam.csi", "d.x/in.csi", "d.x/in.bam.bai", "d.x/in.bai"]
        );
        assert_eq!(index_candidates("d.x/in"), ["d.x/in.csi", "d.x/in.bai"]);
    }
}
