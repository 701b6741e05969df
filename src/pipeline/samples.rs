//! `samtools samples` (samtools 1.24 `bam_samples.c`): the sample names of each input's `@RG`
//! lines, with the path, optionally whether it is indexed and which known reference matches
//! its `@SQ` lines.
//!
//! samtools keeps each file's samples in a khash string set and prints them by walking its
//! buckets, so the order is khash's: the names go through the same model of the table
//! ([`crate::io::index::khash`]) with htslib's FNV-1a string hash.

use std::io::{BufRead, IsTerminal, Write};

use crate::error::Error;
use crate::io::fasta::{Fasta, Format};
use crate::io::index::khash::{BinTable, KhashKey};
use crate::pipeline::checked_open::{OpenFailure, open_reporting};
use crate::record::Header;
use crate::record::header::line_field;

#[derive(Debug, Default)]
pub struct SamplesOptions {
    pub header_line: bool,
    pub test_index: bool,
    /// The `@RG` tag holding the sample (two characters).
    pub tag: [u8; 2],
    pub output: Option<String>,
    /// `-f FILE` and `-F LIST` in command-line order (`true`: a list of paths).
    pub references: Vec<(String, bool)>,
    /// `-X`: every input comes with an index path.
    pub custom_index: bool,
    pub inputs: Vec<String>,
}

/// A known reference: its path and `(name, length)` in `.fai` order.
struct KnownReference {
    path: String,
    sequences: Vec<(Vec<u8>, u64)>,
}

/// A string key as khash's `KHASH_MAP_INIT_STR` sees it: its FNV-1a hash; equality by the
/// position in the caller's list of distinct names (each name is put once).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct NameKey {
    hash: u32,
    id: u32,
}

impl KhashKey for NameKey {
    fn kh_hash(self) -> u32 {
        self.hash
    }
}

/// htslib's `kh_str_hash_func`: `__ac_FNV1a_hash_string` (unsigned bytes).
fn fnv1a_hash(s: &[u8]) -> u32 {
    s.iter().fold(2_166_136_261u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(16_777_619))
}

/// `names` (distinct, in insertion order) in the order a khash string set walks them.
pub(crate) fn khash_order(names: &[Vec<u8>]) -> Vec<usize> {
    let mut table: BinTable<(), NameKey> = BinTable::default();
    for (id, name) in names.iter().enumerate() {
        table.entry(NameKey { hash: fnv1a_hash(name), id: id as u32 });
    }
    table.live_buckets().into_iter().map(|(_, key)| key.id as usize).collect()
}

/// The distinct values of `tag` on the `@RG` lines, first seen first.
fn sample_names(header: &Header, tag: &[u8; 2]) -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = Vec::new();
    for line in header.read_group_lines() {
        if let Some(value) = line_field(line, tag)
            && !names.iter().any(|n| n == value)
        {
            names.push(value.to_vec());
        }
    }
    names
}

/// `fai_load`: the index beside `path`, built (and written) first when missing.
fn load_reference(path: &str) -> Result<KnownReference, Error> {
    let loaded = Fasta::load(path, None, None, Format::Fasta).map_err(|lines| {
        // samtools adds errno: the file's absence, else what the FASTA parse left.
        let why = if std::path::Path::new(path).exists() {
            "Invalid argument"
        } else {
            "No such file or directory"
        };
        Error::Bare(format!("{lines}\nsamtools samples: Cannot load index from \"{path}\": {why}"))
    })?;
    let sequences = loaded.index().entries.iter().map(|e| (e.name.clone(), e.len)).collect();
    Ok(KnownReference { path: path.to_string(), sequences })
}

/// `-F`: one FASTA path a line.
fn load_reference_list(list: &str, known: &mut Vec<KnownReference>) -> Result<(), Error> {
    let text = std::fs::read(list).map_err(|e| {
        let reason = crate::error::c_message(&e);
        Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{list}\" : {reason}\nsamtools samples: Cannot open \"{list}\": {reason}"
        ))
    })?;
    for line in text.lines() {
        let line = line.map_err(|e| Error::io(list, e))?;
        // The latest loaded is tried first, as samtools' list grows at its head.
        known.insert(0, load_reference(&line)?);
    }
    Ok(())
}

/// Whether `sam_index_load3` would load an index: the given path, else the usual names beside
/// the input (`.csi`, `.bai`, also with the extension replaced; `.crai` for CRAM). A BAI or CSI
/// must decode; a `.crai` must only be there.
fn has_index(input: &str, explicit: Option<&str>) -> bool {
    let loads = |p: &str| match std::fs::read(p) {
        Ok(bytes) if p.ends_with(".crai") => !bytes.is_empty(),
        Ok(bytes) => crate::io::index::Index::from_bytes(&bytes).is_ok(),
        Err(_) => false,
    };
    if let Some(path) = explicit {
        return loads(path);
    }
    let stem = input.rsplit_once('.').map_or(input, |(s, _)| s);
    ["csi", "bai", "crai"]
        .iter()
        .any(|ext| loads(&format!("{input}.{ext}")) || loads(&format!("{stem}.{ext}")))
}

/// The reference column: the first known reference (latest loaded first) whose sequences are
/// the header's, names and lengths, in order.
fn matching_reference<'a>(known: &'a [KnownReference], header: &Header) -> Option<&'a str> {
    let refs = header.refs();
    known
        .iter()
        .find(|k| {
            k.sequences.len() == refs.len()
                && k.sequences.iter().zip(refs).all(|((n, l), r)| *n == r.name && *l == r.len)
        })
        .map(|k| k.path.as_str())
}

struct Printer<'a> {
    options: &'a SamplesOptions,
    known: Vec<KnownReference>,
    out: Box<dyn Write>,
}

impl Printer<'_> {
    fn print_file(&mut self, input: &str, index: Option<&str>) -> Result<(), Error> {
        let opened = open_reporting(input, 1, |reason| {
            format!("samtools samples: Failed to open \"{input}\" for reading: {reason}")
        })
        .map_err(|f: OpenFailure| {
            f.or_line(&format!("samtools samples: Failed to read the header from \"{input}\""))
        })?;
        let indexed = self.options.test_index && has_index(input, index);
        let names = sample_names(&opened.header, &self.options.tag);
        let reference = matching_reference(&self.known, &opened.header);
        let mut rows: Vec<&[u8]> = khash_order(&names).into_iter().map(|i| &names[i][..]).collect();
        if rows.is_empty() {
            rows.push(b".");
        }
        let mut text = Vec::new();
        for sample in rows {
            text.extend_from_slice(sample);
            text.push(b'\t');
            text.extend_from_slice(input.as_bytes());
            if self.options.test_index {
                text.extend_from_slice(if indexed { b"\tY" } else { b"\tN" });
            }
            if !self.known.is_empty() {
                text.push(b'\t');
                text.extend_from_slice(reference.unwrap_or(".").as_bytes());
            }
            text.push(b'\n');
        }
        self.out.write_all(&text).map_err(|e| Error::io("-", e))
    }
}

pub fn run(options: &SamplesOptions) -> Result<(), Error> {
    let mut known = Vec::new();
    for (path, is_list) in &options.references {
        if *is_list {
            load_reference_list(path, &mut known)?;
        } else {
            known.insert(0, load_reference(path)?);
        }
    }
    let out: Box<dyn Write> = match &options.output {
        Some(path) => {
            Box::new(std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| {
                Error::Bare(format!(
                    "samtools samples: Cannot open \"{path}\" for writing: {}",
                    crate::error::c_message(&e)
                ))
            })?))
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut printer = Printer { options, known, out };
    if options.header_line {
        let mut line = format!("#{}\tPATH", String::from_utf8_lossy(&options.tag));
        if options.test_index {
            line.push_str("\tINDEX");
        }
        if !printer.known.is_empty() {
            line.push_str("\tREFERENCE");
        }
        line.push('\n');
        printer.out.write_all(line.as_bytes()).map_err(|e| Error::io("-", e))?;
    }
    let result = print_inputs(options, &mut printer);
    printer.out.flush().map_err(|e| Error::io("-", e))?;
    result
}

fn print_inputs(options: &SamplesOptions, printer: &mut Printer) -> Result<(), Error> {
    if options.inputs.is_empty() {
        return print_listed_on_stdin(options, printer);
    }
    if !options.custom_index {
        return options.inputs.iter().try_for_each(|input| printer.print_file(input, None));
    }
    if !options.inputs.len().is_multiple_of(2) {
        return Err(Error::Bare(
            "samtools samples: Odd number of filenames detected! Each BAM file should have an index file"
                .into(),
        ));
    }
    let (files, indexes) = options.inputs.split_at(options.inputs.len() / 2);
    files.iter().zip(indexes).try_for_each(|(f, i)| printer.print_file(f, Some(i)))
}

/// No input named: each line of stdin is a path (with `-X`, a path, a tab and its index).
fn print_listed_on_stdin(options: &SamplesOptions, printer: &mut Printer) -> Result<(), Error> {
    let stdin = std::io::stdin();
    debug_assert!(!stdin.is_terminal());
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| Error::io("-", e))?;
        if !options.custom_index {
            printer.print_file(&line, None)?;
            continue;
        }
        match line.split_once('\t') {
            Some((file, index)) if !index.is_empty() => printer.print_file(file, Some(index))?,
            // samtools adds whatever errno holds: the terminal test on stdin left ENOTTY.
            _ => {
                return Err(Error::Bare(format!(
                    "samtools samples: Expected path-to-bam(tab)path-to-index but got \"{line}\": Inappropriate ioctl for device"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn khash_walks_names_in_samtools_order() {
        // The order samtools 1.24 prints these five samples in.
        let names: Vec<Vec<u8>> =
            ["zeta", "alpha", "mu", "beta", "s5"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let order: Vec<&str> = khash_order(&names)
            .into_iter()
            .map(|i| std::str::from_utf8(&names[i]).unwrap())
            .collect();
        assert_eq!(order, ["mu", "beta", "alpha", "s5", "zeta"]);
    }
}
