//! `samtools dict`: a SAM header of `@SQ` lines, one per FASTA/FASTQ record, with its length and
//! the MD5 of its upper-cased bases (`M5:`), read through
//! [`crate::io::fasta::kseq`]. Command line: [`crate::cli::dict`].
//!
//! Compatibility (samtools 1.24 `dict.c`, `write_dict`): only bytes `!`..`~` count as bases;
//! `UR:` is `file://` and the input's real path unless `-u` names one (none for stdin); `-A`
//! adds `AN:` (`chr` added or taken off, `M`/`MT` cross-named); `-l FILE` marks the names in
//! its first column `AH:*`. A FASTQ record with a bad quality ends the output there, as kseq
//! ends samtools' loop. Difference: with `-o` the file appears only when the command succeeds.

use std::collections::HashSet;
use std::io::Write;

use md5::{Digest, Md5};

use crate::error::Error;
use crate::io::fasta::kseq;

#[derive(Clone, Debug, Default)]
pub struct DictOptions {
    /// `-` is stdin.
    pub input: String,
    pub output: Option<String>,
    pub alt: Option<String>,
    pub assembly: Option<String>,
    pub species: Option<String>,
    pub uri: Option<String>,
    pub alias: bool,
    pub header: bool,
}

fn cannot_open(path: &str, e: &std::io::Error) -> Error {
    Error::Bare(format!("samtools dict: Cannot open {path}: {}", crate::error::c_message(e)))
}

/// The names in the first column of the `.alt` file (`@` lines and empty lines skipped).
fn read_alt(path: &str) -> Result<HashSet<Vec<u8>>, Error> {
    let mut records = kseq::open_text(path).map_err(|e| {
        // hts_open logs its own line before samtools' one.
        eprintln!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {}",
            crate::error::c_message(&e)
        );
        cannot_open(path, &e)
    })?;
    let mut names = HashSet::new();
    let mut line = Vec::new();
    while records.next_line(&mut line) {
        if line.is_empty() || line[0] == b'@' {
            continue;
        }
        let end = line.iter().position(|&c| c == b'\t').unwrap_or(line.len());
        names.insert(line[..end].to_vec());
    }
    Ok(names)
}

pub fn run(opts: &DictOptions) -> Result<(), Error> {
    let alt = opts.alt.as_deref().map(read_alt).transpose()?;
    let mut records = kseq::open(&opts.input).map_err(|e| cannot_open(&opts.input, &e))?;
    let out_path = opts.output.as_deref().unwrap_or("-");
    let (mut out, file) = crate::io::output::create(out_path).map_err(|e| {
        Error::Bare(format!(
            "samtools dict: Cannot open {out_path} for writing: {}",
            crate::error::c_message(&e)
        ))
    })?;
    let write_failed = |e: std::io::Error| Error::io(out_path, e);
    let uri = match (&opts.uri, opts.input.as_str()) {
        (Some(u), _) => Some(u.clone()),
        (None, "-") => None,
        (None, path) => Some(format!(
            "file://{}",
            std::fs::canonicalize(path)
                .map_or_else(|_| "(null)".to_string(), |p| p.display().to_string())
        )),
    };
    if opts.header {
        out.write_all(b"@HD\tVN:1.0\tSO:unsorted\n").map_err(write_failed)?;
    }
    let mut line = Vec::new();
    while let Some(mut rec) = records.next_record() {
        rec.seq.retain(|c| (b'!'..=b'~').contains(c));
        rec.seq.make_ascii_uppercase();
        let digest = Md5::digest(&rec.seq);
        line.clear();
        line.extend_from_slice(b"@SQ\tSN:");
        line.extend_from_slice(&rec.name);
        write!(line, "\tLN:{}\tM5:", rec.seq.len() as i32).map_err(write_failed)?;
        for b in digest.iter() {
            write!(line, "{b:02x}").map_err(write_failed)?;
        }
        if alt.as_ref().is_some_and(|a| a.contains(&rec.name)) {
            line.extend_from_slice(b"\tAH:*");
        }
        if opts.alias {
            push_alias(&mut line, &rec.name);
        }
        for (tag, value) in [("UR", &uri), ("AS", &opts.assembly), ("SP", &opts.species)] {
            if let Some(v) = value {
                write!(line, "\t{tag}:{v}").map_err(write_failed)?;
            }
        }
        line.push(b'\n');
        out.write_all(&line).map_err(write_failed)?;
    }
    out.flush().map_err(write_failed)?;
    drop(out);
    match file {
        Some(f) => f.commit().map_err(write_failed),
        None => Ok(()),
    }
}

/// `AN:`: the name with `chr` taken off or put on; `M` and `MT` also name each other.
fn push_alias(line: &mut Vec<u8>, name: &[u8]) {
    line.extend_from_slice(b"\tAN:");
    let bare = match name.strip_prefix(b"chr") {
        Some(rest) => rest,
        None => {
            line.extend_from_slice(b"chr");
            name
        }
    };
    line.extend_from_slice(bare);
    match bare {
        b"M" => line.extend_from_slice(b",chrMT,MT"),
        b"MT" => line.extend_from_slice(b",chrM,M"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_add_or_remove_chr() {
        let an = |name: &[u8]| {
            let mut line = Vec::new();
            push_alias(&mut line, name);
            String::from_utf8(line).unwrap()
        };
        assert_eq!(an(b"chr1"), "\tAN:1");
        assert_eq!(an(b"1"), "\tAN:chr1");
        assert_eq!(an(b"chrM"), "\tAN:M,chrMT,MT");
        assert_eq!(an(b"MT"), "\tAN:chrMT,chrM,M");
    }

    #[test]
    fn md5_is_of_the_upper_cased_bases() {
        let digest = Md5::digest(b"ACGT");
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "f1f8f4bf413b16ad135722aa4591043e");
    }
}
