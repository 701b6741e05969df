//! `samtools faidx` and `fqidx`: index a FASTA/FASTQ file (plain or BGZF), or write regions of
//! it, wrapped, reverse-complemented or renamed, to stdout or a plain or BGZF file with its own
//! `.fai`/`.gzi`. Reads through [`crate::io::fasta::Fasta`]; the command line is
//! [`crate::cli::faidx`].
//!
//! Algorithm (samtools 1.24 `faidx.c`, `faidx_core`):
//! 1. One input and no `-r`: build the index files (`fai_build3`), `-o` naming the `.fai`.
//! 2. Else load the index (building it when absent), open the output, then write each region of
//!    the `-r` file and of the command line in turn (`write_output`), stopping at the first
//!    that fails (`-c`: a missing one is only reported).
//! 3. With `--write-index` and `-o`, write `OUT.fai` (and `OUT.gzi` for BGZF output).
//!
//! Compatibility: messages, their order and exit statuses are samtools'; an empty `-r` file
//! fails (exit 1) as in samtools. Differences: the output file appears only when the command
//! succeeds (samtools leaves what it wrote); `-@` deflates BGZF output (samtools also reads
//! with it).

mod output;

use crate::error::Error;
/// FASTA or FASTQ, for the command line.
pub use crate::io::fasta::Format;
use crate::io::fasta::{Entry, Fasta};
use crate::io::index::{Region, parse_region_detailed};
use crate::io::output_spec::FormatOptions;
use output::FaidxOutput;

/// What `faidx`/`fqidx` is asked to do.
#[derive(Clone, Debug)]
pub struct FaidxOptions {
    pub input: String,
    pub regions: Vec<String>,
    pub region_file: Option<String>,
    pub output: Option<String>,
    /// Bases per output line; negative: as the input's lines (the default).
    pub line_len: i64,
    pub continue_on_missing: bool,
    pub reverse_complement: bool,
    pub pos_strand_name: Vec<u8>,
    pub neg_strand_name: Vec<u8>,
    pub fai_path: Option<String>,
    pub gzi_path: Option<String>,
    pub format: Format,
    pub write_index: bool,
    /// `--output-fmt-option level=N`.
    pub level: Option<i32>,
    /// `--output-fmt-option deflate=`: the engine of BGZF output.
    pub format_options: FormatOptions,
    /// Workers (`-@ N` + 1) that deflate BGZF output.
    pub threads: usize,
}

/// A `.fai` line of the output (`--write-index`), with htslib's unsigned arithmetic.
struct OutEntry {
    name: Vec<u8>,
    seq_offset: u64,
    seq_len: u64,
    line_len: u64,
    qual_offset: u64,
}

/// The command's state: the input, the output and the output's index.
struct Faidx<'a> {
    opts: &'a FaidxOptions,
    fasta: Fasta,
    out: FaidxOutput,
    entries: Vec<OutEntry>,
    offset: u64,
}

pub fn run(opts: &FaidxOptions) -> Result<(), Error> {
    let could_not = |verb: &str, fai: Option<&str>| {
        let fai = fai.map_or_else(|| format!("{}.fai", opts.input), str::to_string);
        let gzi = opts.gzi_path.as_ref().map(|g| format!(" or compressed index {g}"));
        Error::Bare(format!("[faidx] Could not {verb} fai index {fai}{}", gzi.unwrap_or_default()))
    };
    if opts.regions.is_empty() && opts.region_file.is_none() {
        let fai = opts.fai_path.as_deref().or(opts.output.as_deref());
        return Fasta::build_files(&opts.input, fai, opts.gzi_path.as_deref()).map_err(|lines| {
            eprintln!("{lines}");
            could_not("build", fai)
        });
    }
    let fasta =
        Fasta::load(&opts.input, opts.fai_path.as_deref(), opts.gzi_path.as_deref(), opts.format)
            .map_err(|lines| {
            eprintln!("{lines}");
            could_not("load", opts.fai_path.as_deref())
        })?;
    let bgzf_out = opts.output.as_deref().is_some_and(is_bgzf_name);
    let out = match opts.output.as_deref() {
        Some(path) if path == opts.input => {
            return Err(Error::Bare(format!("[faidx] Same input/output : {path}")));
        }
        Some(path) => {
            let engine = opts.format_options.deflate_engine();
            let compression = bgzf_out.then(|| (opts.level.unwrap_or(4), engine));
            FaidxOutput::create(path, compression, opts.threads).map_err(|e| {
                Error::Bare(format!(
                    "[faidx] Cannot open \"{path}\" for writing :{}.",
                    crate::error::c_message(&e)
                ))
            })?
        }
        None => FaidxOutput::create("-", None, 1).map_err(|e| Error::io("-", e))?,
    };
    let mut job = Faidx { opts, fasta, out, entries: Vec::new(), offset: 0 };
    let ok = job.write_all_regions()?;
    if ok
        && opts.write_index
        && let Some(path) = opts.output.as_deref()
    {
        job.out.flush_block()?;
        job.write_index(path, bgzf_out)?;
    }
    job.out.finish(ok)?;
    if ok { Ok(()) } else { Err(Error::Failed) }
}

/// samtools' test for BGZF output: the name's last extension.
fn is_bgzf_name(path: &str) -> bool {
    match path.rfind('.') {
        Some(dot) => matches!(&path[dot..], ".gz" | ".bgz" | ".bgzf"),
        None => false,
    }
}

impl Faidx<'_> {
    /// The `-r` file's regions, then the command line's; false once one failed.
    fn write_all_regions(&mut self) -> Result<bool, Error> {
        if let Some(path) = self.opts.region_file.as_deref() {
            let Ok(text) = std::fs::read(path) else {
                eprintln!("[faidx] Failed to open \"{path}\" for reading.");
                return Ok(false);
            };
            // samtools starts from failure: an empty file fails.
            let mut ok = false;
            for line in text.split_inclusive(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\n").unwrap_or(line);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                ok = self.write_region(&String::from_utf8_lossy(line))?;
                if !ok {
                    break;
                }
            }
            if !ok {
                return Ok(false);
            }
        }
        for region in &self.opts.regions {
            if !self.write_region(region)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// htslib's `fai_get_val`: the entry and clamped `[beg, end)`, or (after its messages)
    /// `None`, which samtools reports as length -2.
    fn resolve(&self, region: &str) -> Option<(Entry, i64, i64)> {
        let index = self.fasta.index();
        match parse_region_detailed(region, |name| index.id(name)) {
            Ok(Region { tid, beg, end }) => {
                let entry = index.entries[tid as usize].clone();
                let (beg, end) = crate::io::fasta::clamp_region(&entry, beg, end);
                Some((entry, beg, end))
            }
            Err(e) => {
                if e.is_logged() {
                    eprintln!("[E::hts_parse_region] {e}");
                }
                eprintln!(
                    "[W::fai_get_val] Reference {region} not found in FASTA file, returning empty sequence"
                );
                None
            }
        }
    }

    /// `fai_fetch64` / `fai_fetchqual64`: the bases or qualities, or the length samtools sees
    /// on failure (-2 no such region, -1 a read error).
    fn fetch(&mut self, region: &str, quality: bool) -> Result<Vec<u8>, i64> {
        let Some((entry, beg, end)) = self.resolve(region) else { return Err(-2) };
        let offset = if quality { entry.qual_offset } else { entry.seq_offset };
        self.fasta.retrieve(&entry, offset, beg, end).map_err(|line| {
            eprintln!("{line}");
            -1
        })
    }

    /// `write_output`: one region's header and wrapped lines; false when it failed.
    fn write_region(&mut self, region: &str) -> Result<bool, Error> {
        let opts = self.opts;
        let mut wrap = opts.line_len;
        if wrap < 0 {
            wrap = self.resolve(region).map_or(-1, |(e, _, _)| i64::from(e.line_bases));
        }
        if wrap <= 0 {
            wrap = Region::END_OF_REFERENCE;
        }
        let seq = self.fetch(region, false);
        let mut header = Vec::with_capacity(region.len() + 8);
        header.push(if opts.format == Format::Fasta { b'>' } else { b'@' });
        header.extend_from_slice(region.as_bytes());
        header.extend_from_slice(if opts.reverse_complement {
            &opts.neg_strand_name
        } else {
            &opts.pos_strand_name
        });
        header.push(b'\n');
        self.out.write(&header)?;
        let mut seq_len = match seq {
            Ok(mut s) => {
                if opts.reverse_complement {
                    reverse_complement(&mut s);
                }
                let n = s.len() as i64;
                if !self.write_lines(region, Ok(s), wrap)? {
                    return Ok(false);
                }
                n
            }
            Err(n) => {
                if !self.write_lines(region, Err(n), wrap)? {
                    return Ok(false);
                }
                n
            }
        };
        let seq_sz = seq_len
            .wrapping_add(seq_len / wrap)
            .wrapping_add(i64::from(seq_len % wrap != 0)) as u64;
        if opts.format == Format::Fastq {
            let qual = self.fetch(region, true).map(|mut q| {
                if opts.reverse_complement {
                    q.reverse();
                }
                q
            });
            seq_len = match &qual {
                Ok(q) => q.len() as i64,
                Err(n) => *n,
            };
            self.out.write(b"+\n")?;
            if !self.write_lines(region, qual, wrap)? {
                return Ok(false);
            }
        }
        if opts.write_index {
            let seq_offset = self.offset + header.len() as u64;
            let mut entry = OutEntry {
                name: header[1..header.len() - 1].to_vec(),
                seq_offset,
                seq_len: seq_len as u64,
                line_len: seq_len.min(wrap) as u64,
                qual_offset: 0,
            };
            self.offset = seq_offset.wrapping_add(seq_sz);
            if opts.format == Format::Fastq {
                entry.qual_offset = seq_offset.wrapping_add(seq_sz).wrapping_add(2);
                self.offset = entry.qual_offset.wrapping_add(seq_sz);
            }
            self.entries.push(entry);
        }
        Ok(true)
    }

    /// `write_line`: the checks on what was fetched, then `wrap` bytes a line.
    fn write_lines(
        &mut self,
        region: &str,
        data: Result<Vec<u8>, i64>,
        wrap: i64,
    ) -> Result<bool, Error> {
        let data = match data {
            Err(n) => {
                eprintln!("[faidx] Failed to fetch sequence in {region}");
                return Ok(self.opts.continue_on_missing && n == -2);
            }
            Ok(d) => d,
        };
        if data.is_empty() {
            eprintln!("[faidx] Zero length sequence: {region}");
        } else {
            let index = self.fasta.index();
            if let Ok(r) = parse_region_detailed(region, |name| index.id(name))
                && r.end < Region::END_OF_REFERENCE
                && data.len() as i64 != r.end - r.beg
            {
                eprintln!("[faidx] Truncated sequence: {region}");
            }
        }
        let wrap = usize::try_from(wrap).unwrap_or(usize::MAX);
        let mut text = Vec::with_capacity(data.len() + data.len() / wrap + 1);
        for line in data.chunks(wrap) {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        self.out.write(&text)?;
        Ok(true)
    }

    /// `writeindex`: `OUT.fai`, and `OUT.gzi` for BGZF output.
    fn write_index(&self, path: &str, bgzf_out: bool) -> Result<(), Error> {
        let mut text = Vec::new();
        for e in &self.entries {
            text.extend_from_slice(&e.name);
            let line = match self.opts.format {
                Format::Fasta => format!(
                    "\t{}\t{}\t{}\t{}\n",
                    e.seq_len,
                    e.seq_offset,
                    e.line_len,
                    e.line_len.wrapping_add(1)
                ),
                Format::Fastq => format!(
                    "\t{}\t{}\t{}\t{}\t{}\n",
                    e.seq_len,
                    e.seq_offset,
                    e.line_len,
                    e.line_len.wrapping_add(1),
                    e.qual_offset
                ),
            };
            text.extend_from_slice(line.as_bytes());
        }
        let failed = |what: &str| Error::Bare(format!("[faidx] Failed to create {what}"));
        crate::io::output::write_file(&format!("{path}.fai"), &text)
            .map_err(|_| failed("index file for output."))?;
        if bgzf_out {
            let blocks = self.out.blocks.get(1..).unwrap_or_default();
            let gzi = crate::io::fasta::encode_gzi(blocks);
            crate::io::output::write_file(&format!("{path}.gzi"), &gzi)
                .map_err(|_| failed("index gzi file for output."))?;
        }
        Ok(())
    }
}

/// samtools' `comp_base`: IUPAC complements in both cases, other bytes unchanged.
fn complement(c: u8) -> u8 {
    let upper = match c.to_ascii_uppercase() {
        b'A' => b'T',
        b'T' | b'U' => b'A',
        b'C' => b'G',
        b'G' => b'C',
        b'B' => b'V',
        b'V' => b'B',
        b'D' => b'H',
        b'H' => b'D',
        b'K' => b'M',
        b'M' => b'K',
        b'R' => b'Y',
        b'Y' => b'R',
        _ => return c,
    };
    if c.is_ascii_lowercase() { upper.to_ascii_lowercase() } else { upper }
}

fn reverse_complement(seq: &mut [u8]) {
    seq.reverse();
    for c in seq.iter_mut() {
        *c = complement(*c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complements_follow_samtools_table() {
        let pairs = b"ATTAUACGGCNNRYYRKMMKBVVBDHHDSSWWXX--**";
        for pair in pairs.chunks(2) {
            assert_eq!(complement(pair[0]), pair[1], "{}", pair[0] as char);
            let lower = pair[0].to_ascii_lowercase();
            assert_eq!(complement(lower), pair[1].to_ascii_lowercase(), "{}", lower as char);
        }
        let mut s = b"ACGTNu".to_vec();
        reverse_complement(&mut s);
        assert_eq!(s, b"aNACGT");
    }

    #[test]
    fn bgzf_output_is_chosen_by_the_last_extension() {
        assert!(is_bgzf_name("x.fa.gz") && is_bgzf_name("x.bgz") && is_bgzf_name("a.b.bgzf"));
        assert!(!is_bgzf_name("x.gz.fa") && !is_bgzf_name("plain"));
    }
}
