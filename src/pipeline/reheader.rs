//! `samtools reheader`: a BAM or CRAM with its header replaced, to stdout. The new header is
//! read from a file (SAM, BAM or CRAM) or is what `-c CMD` makes of the input's header text.
//! Command line: [`crate::cli::reheader`].
//!
//! BAM: the new header and the records that shared its last block are compressed again, every
//! later block is copied as it is (samtools' `bam_reheader`). CRAM: a file start of the input's
//! version with the new header, then the containers after the old header copied as they are
//! (samtools' `cram_reheader`); `-i` rewrites a CRAM's header container where it is
//! ([`super::reheader_in_place`]).

use std::io::{Read, Seek, Write};

use crate::error::{Error, c_message};
use crate::io::bam::raw::{CopyError, RawBam};
use crate::io::bgzf::block::{Deflater, EOF_BLOCK};
use crate::io::input::Input;
use crate::io::open::{self, Sniffed};
use crate::record::Header;

/// Where the new header comes from.
pub enum NewHeader {
    File(String),
    /// `-c CMD`: the input's header text through `sh -c "( CMD )"`.
    Command(String),
}

pub struct ReheaderOptions {
    pub input: String,
    pub new_header: NewHeader,
    pub in_place: bool,
    pub pg: Option<Vec<(String, String)>>,
}

fn read_header_file(path: &str) -> Result<Header, Error> {
    let input = Input::open(path).map_err(|e| {
        Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\nsamtools reheader: fail to read the header from '{path}': {reason}",
            reason = c_message(&e)
        ))
    })?;
    open::open_input(path, input, 1, 1 << 20).map(|o| o.header).map_err(|_| {
        Error::Bare(format!("[main_reheader] failed to read the header for '{path}'."))
    })
}

/// `external_reheader`: the input's header as SAM text into `( CMD )`, its output read back as
/// a header (up to the first line that is not a header line).
fn run_command(command: &str, current: &Header) -> Result<Header, Error> {
    let mut current = current.clone();
    current.rebuild_text();
    let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into());
    let tmp_path = format!("{tmp}/reheader{}", std::process::id());
    std::fs::write(&tmp_path, current.sam_text()).map_err(|e| {
        Error::Bare(format!(
            "samtools reheader: fail to open temp file '{tmp_path}': {}",
            c_message(&e)
        ))
    })?;
    let line = format!("( {command} ) < {tmp_path}");
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .stderr(std::process::Stdio::inherit())
        .output();
    let _ = std::fs::remove_file(&tmp_path);
    let output = output.map_err(|e| {
        Error::Bare(format!(
            "samtools reheader: [external_reheader] failed to run external command '{line}'.\n: {}",
            c_message(&e)
        ))
    })?;
    let mut text = Vec::new();
    for l in output.stdout.split_inclusive(|&b| b == b'\n') {
        if !l.starts_with(b"@") {
            break;
        }
        text.extend_from_slice(l);
    }
    let header = Header::from_sam_text(text);
    if !output.status.success() {
        return Err(Error::Bare(format!(
            "samtools reheader: Non-zero exit code returned by command '{line}'\n\n[main_reheader] failed to read the header from '{command}'."
        )));
    }
    header.map_err(|e| {
        Error::Bare(format!(
            "{e}\n[external_reheader] failed to read the header from the temp file.\n[main_reheader] failed to read the header from '{command}'."
        ))
    })
}

fn add_pg(header: &mut Header, pg: &Option<Vec<(String, String)>>) {
    if let Some(pg) = pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        // sam_hdr_add_pg parses the header first: @SQ lines appear for a text without them.
        header.rebuild_text();
        header.add_pg("samtools", &fields);
    }
}

pub fn run(opts: ReheaderOptions) -> Result<(), Error> {
    let path = opts.input.as_str();
    let cannot_open = |e: &std::io::Error| {
        Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\nsamtools reheader: fail to open file '{path}': {reason}",
            reason = c_message(e)
        ))
    };
    let mut new_header = match &opts.new_header {
        NewHeader::File(file) => Some(read_header_file(file)?),
        NewHeader::Command(_) => None,
    };
    let mut input = Input::open_unmapped(path).map_err(|e| cannot_open(&e))?;
    let sniffed = open::sniff(&mut input).map_err(|e| Error::io(path, e))?;
    match sniffed {
        Sniffed::Bgzf { bam: true } => {
            if opts.in_place {
                return Err(Error::Bare(format!(
                    "samtools reheader: cannot reheader BAM '{path}' in-place"
                )));
            }
            let mut raw = RawBam::read_header(input).map_err(|e| Error::file(path, e))?;
            let mut header = match (&opts.new_header, new_header.take()) {
                (NewHeader::Command(cmd), _) => run_command(cmd, &raw.header)?,
                (_, Some(h)) => h,
                (_, None) => unreachable!("a header file was read"),
            };
            add_pg(&mut header, &opts.pg);
            write_bam(&mut raw, &header, path)
        }
        Sniffed::Cram => {
            let version = cram_version(path)?;
            let opened = open::open_input(path, input, 1, 1 << 20)?;
            let mut header = match (&opts.new_header, new_header.take()) {
                (NewHeader::Command(cmd), _) => run_command(cmd, &opened.header)?,
                (_, Some(h)) => h,
                (_, None) => unreachable!("a header file was read"),
            };
            add_pg(&mut header, &opts.pg);
            drop(opened);
            if opts.in_place {
                return super::reheader_in_place::rewrite(path, &header.sam_text());
            }
            write_cram(&header, path, version)
        }
        _ => {
            Err(Error::Bare(format!("samtools reheader: input file '{path}' must be BAM or CRAM")))
        }
    }
}

/// The new header, the records after the old one in its block, then the other blocks as they are.
fn write_bam(raw: &mut RawBam, header: &Header, path: &str) -> Result<(), Error> {
    let (mut out, _) = crate::io::output::create("-").map_err(|e| Error::io("-", e))?;
    let mut first = header.encode_bam();
    first.extend_from_slice(&raw.leftover);
    let mut deflater = Deflater::new(-1);
    super::cat::write_recompressed(&mut out, &first, &mut deflater).map_err(write_failed)?;
    let mut tail = None;
    match raw.copy_blocks(&mut out, &mut tail) {
        Ok(_) | Err(CopyError::TooShort) => {}
        Err(CopyError::Write(e)) => return Err(write_failed(e)),
        Err(CopyError::Read(e)) => return Err(Error::file(path, e)),
    }
    out.write_all(&EOF_BLOCK).map_err(write_failed)?;
    out.flush().map_err(write_failed)
}

/// The CRAM version of the file at `path` (bytes 4 and 5).
fn cram_version(path: &str) -> Result<(u8, u8), Error> {
    let mut start = [0u8; 6];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut start))
        .map_err(|e| Error::io(path, e))?;
    Ok((start[4], start[5]))
}

/// The new header in a file start of the input's version, then the input's containers from
/// the end of its header container, byte for byte (its EOF container too).
fn write_cram(header: &Header, path: &str, version: (u8, u8)) -> Result<(), Error> {
    let mut input = Input::open_unmapped(path).map_err(|e| Error::io(path, e))?;
    let (_, _, end) = crate::io::cram_header::read_input_with_end(&mut input)
        .map_err(|e| Error::file(path, e))?;
    drop(input);
    let start = crate::io::cram::writer::reheadered_start(header, "-", version)
        .map_err(|e| Error::Bare(format!("samtools reheader: {e}")))?;
    let (mut out, _) = crate::io::output::create("-").map_err(|e| Error::io("-", e))?;
    out.write_all(&start).map_err(write_failed)?;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    file.seek(std::io::SeekFrom::Start(end as u64)).map_err(|e| Error::io(path, e))?;
    std::io::copy(&mut file, &mut out).map_err(write_failed)?;
    out.flush().map_err(write_failed)
}

fn write_failed(e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::BrokenPipe => Error::BrokenPipe,
        _ => Error::Bare(format!(
            "samtools reheader: Error writing to output file: {}",
            c_message(&e)
        )),
    }
}
