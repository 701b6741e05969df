//! `cat`: concatenate BAM files as samtools 1.24's `bam_cat` does. The output header is the
//! first input's (or `-h`'s) with the `@RG` lines of every input it lacks
//! ([`crate::ops::cat`]) and an `@PG` line; then, for each input, the records that share the
//! header's last block are compressed again and every later block is copied as it is
//! ([`crate::io::bam::raw`]). Messages and exit statuses are samtools'; the output is written
//! under a temporary name and appears only when everything was copied.

use std::io::Write;

use crate::error::{Error, c_message};
use crate::io::bam::raw::{CopyError, Ending, RawBam};
use crate::io::bgzf::block::{BLOCK_DATA_MAX, Deflater, EOF_BLOCK};
use crate::io::bgzf::codec::Engine;
use crate::io::input::Input;
use crate::io::open::{self, Sniffed};
use crate::io::output::{self, OutputFile};
use crate::io::output_spec::FormatOptions;
use crate::record::Header;

/// A file named by an option, read in option order.
pub enum Source {
    /// `-h FILE`: the output header (the last one wins).
    Header(String),
    /// `-b FILE`: input names, one a line, before those on the command line.
    List(String),
}

/// `-r`, `-p`, `-f`, `-q`: samtools reads them for CRAM input only; BAM input ignores them.
#[derive(Default)]
pub struct CramOnly {
    pub region: Option<String>,
    pub part: Option<String>,
    pub fast: bool,
    pub query_containers: bool,
}

pub struct CatOptions {
    pub sources: Vec<Source>,
    /// The inputs on the command line.
    pub inputs: Vec<String>,
    /// `-o`, `-` for stdout.
    pub output: String,
    /// `@PG` fields, or `None` for `--no-PG`.
    pub pg: Option<Vec<(String, String)>>,
    pub cram_only: CramOnly,
    /// `--output-fmt-option`: samtools' only matter to CRAM; mdsam's `deflate=` picks the
    /// engine of the blocks cat deflates again (the header, the inputs' leftovers).
    pub format_options: FormatOptions,
}

/// htslib's words when it cannot open a file, and then samtools'.
fn open_failed(path: &str, e: &std::io::Error, samtools_line: String) -> Error {
    Error::Bare(format!(
        "[E::hts_open_format] Failed to open file \"{path}\" : {}\n{samtools_line}: {}",
        c_message(e),
        c_message(e)
    ))
}

/// `-h FILE`'s header (any format mdsam reads).
fn read_header_file(path: &str) -> Result<Header, Error> {
    if let Err(e) = Input::open(path) {
        return Err(Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {}\n[main_cat] ERROR: fail to read the header from '{path}'.",
            c_message(&e)
        )));
    }
    match open::open(path, 1) {
        Ok(opened) => Ok(opened.header),
        Err(e) => Err(Error::Bare(format!(
            "{e}\n[main_cat] ERROR: failed to read the header from '{path}'."
        ))),
    }
}

/// The inputs: `-b` lists' names, then the command line's. Reads the `-h` header on the way;
/// the flag says a list could not be read (samtools goes on, and exits 1 at the end).
fn gather_inputs(opts: &CatOptions) -> Result<(Vec<String>, Option<Header>, bool), Error> {
    let (mut inputs, mut header, mut bad_list) = (Vec::new(), None, false);
    for source in &opts.sources {
        match source {
            Source::Header(path) => header = Some(read_header_file(path)?),
            Source::List(path) => match crate::io::lists::read_lines(path) {
                Some(names) => inputs.extend(names),
                None => {
                    eprintln!("samtools cat: Invalid file list \"{path}\"");
                    bad_list = true;
                }
            },
        }
    }
    inputs.extend(opts.inputs.iter().cloned());
    Ok((inputs, header, bad_list))
}

/// Whether a regular file ends with the BGZF EOF block (a stream cannot tell and says yes, as
/// htslib says nothing for it).
fn has_eof_marker(path: &str) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => crate::io::bgzf::data_end(path).is_ok_and(|end| end < m.len()),
        _ => true,
    }
}

/// Opens input `index` of `inputs` and reads its header, with samtools' message for each failure.
fn open_input(inputs: &[String], index: usize) -> Result<RawBam, Error> {
    let path = &inputs[index];
    // Read, not mapped: its blocks are written out as they are, and `write` from the map spent
    // its time in the kernel's copy. Read 256 KiB at a time, three inputs of 530 MB in all are
    // copied in 0.49 s instead of 0.64 s (samtools: 0.70 s).
    let mut input = Input::open_unmapped(path).map_err(|e| {
        let verb = if index == 0 { "failed" } else { "fail" };
        open_failed(path, &e, format!("samtools cat: {verb} to open file '{path}'"))
    })?;
    let sniffed = open::sniff(&mut input).map_err(|e| Error::io(path.as_str(), e))?;
    match (sniffed, index) {
        (Sniffed::Bgzf { bam: true }, _) => {}
        (Sniffed::GzipBam | Sniffed::RawBam, _) => {
            return Err(Error::file(
                path.as_str(),
                "not BGZF compressed: its blocks cannot be copied",
            ));
        }
        (_, 0) => return Err(Error::Bare("[main_cat] ERROR: input is not BAM or CRAM".into())),
        (_, _) => {
            return Err(Error::Message(format!("File {path} is of different format!")));
        }
    }
    // htslib checks for the end-of-file block as it starts reading the header.
    if !has_eof_marker(path) {
        eprintln!("[W::bam_hdr_read] EOF marker is absent. The input is probably truncated");
    }
    RawBam::read_header(input).map_err(|e| {
        Error::Bare(format!(
            "samtools cat: {path}: {e}\n[cat_check_merge_hdr] ERROR: header reading for file '{path}' filed."
        ))
    })
}

/// Every input opened, and the output header (samtools' `cat_check_merge_hdr`).
fn open_all(inputs: &[String], given: Option<Header>) -> Result<(Vec<RawBam>, Header), Error> {
    let mut opened = Vec::with_capacity(inputs.len());
    let mut merged = given;
    for index in 0..inputs.len() {
        let raw = open_input(inputs, index)?;
        match merged.as_mut() {
            None => merged = Some(raw.header.clone()),
            Some(m) => crate::ops::cat::merge_read_groups(m, &raw.header),
        }
        opened.push(raw);
    }
    Ok((opened, merged.unwrap_or_default()))
}

/// Compresses `data` in blocks of at most 0xff00 bytes, as `bgzf_write` then `bgzf_flush` cut it.
pub fn write_recompressed(
    out: &mut dyn Write,
    data: &[u8],
    deflater: &mut Deflater,
) -> std::io::Result<()> {
    let mut blocks = Vec::new();
    for chunk in data.chunks(BLOCK_DATA_MAX) {
        deflater.deflate_into(chunk, &mut blocks);
    }
    out.write_all(&blocks)
}

/// Writes the header and every input's records to `out`.
fn concatenate(
    out: &mut dyn Write,
    header: &Header,
    inputs: &mut [RawBam],
    names: &[String],
    (output, engine): (&str, Engine),
) -> Result<(), Error> {
    let write_failed = || Error::Bare(format!("[bam_cat] Error writing to '{output}'."));
    // bgzf_open(…, "w"): the default level.
    let mut deflater = Deflater::with_engine(-1, engine);
    write_recompressed(out, &header.encode_bam(), &mut deflater).map_err(|_| write_failed())?;
    let mut last_tail = None;
    for (raw, name) in inputs.iter_mut().zip(names) {
        write_recompressed(out, &raw.leftover, &mut deflater).map_err(|_| write_failed())?;
        match raw.copy_blocks(out, &mut last_tail) {
            Ok(Ending::EofBlock) => {}
            Ok(Ending::Unexpected) => eprintln!(
                "[bam_cat] WARNING: Unexpected block structure in file '{name}'. Possible output corruption."
            ),
            Err(CopyError::TooShort) => {
                return Err(Error::Bare(format!("[bam_cat] ERROR: truncated file?: '{name}'.")));
            }
            Err(CopyError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                return Err(Error::BrokenPipe);
            }
            Err(CopyError::Write(_)) => return Err(write_failed()),
            Err(CopyError::Read(e)) => return Err(Error::file(name.as_str(), e)),
        }
    }
    out.write_all(&EOF_BLOCK).map_err(|_| write_failed())
}

/// Opens the output, with samtools' message when it cannot.
fn create_output(path: &str) -> Result<(Box<dyn Write + Send>, Option<OutputFile>), Error> {
    output::create(path).map_err(|e| {
        Error::Message(format!("fail to open output file '{path}': {}", c_message(&e)))
    })
}

pub fn run(opts: CatOptions) -> Result<(), Error> {
    let (inputs, given_header, bad_list) = gather_inputs(&opts)?;
    if inputs.is_empty() {
        return Err(Error::ShowUsage(None));
    }
    if super::cat_cram::is_cram(&inputs[0]) {
        let pg = opts.pg.as_deref();
        super::cat_cram::run(&inputs, given_header, &opts.output, &opts.cram_only, pg)?;
        return if bad_list { Err(Error::Failed) } else { Ok(()) };
    }
    let (mut opened, mut header) = open_all(&inputs, given_header)?;
    let (mut out, guard) = create_output(&opts.output)?;
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        // sam_hdr_add_pg parses the header first: @SQ lines appear for a text without them.
        header.rebuild_text();
        header.add_pg("samtools", &fields);
    }
    let to = (opts.output.as_str(), opts.format_options.deflate_engine());
    concatenate(&mut out, &header, &mut opened, &inputs, to)?;
    out.flush().map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => Error::BrokenPipe,
        _ => Error::Bare(format!("[bam_cat] Error on closing '{}'.", opts.output)),
    })?;
    drop(out);
    if let Some(file) = guard {
        file.commit().map_err(|e| Error::io(opts.output.as_str(), e))?;
    }
    // samtools reports an unreadable -b list and still concatenates the rest.
    if bad_list { Err(Error::Failed) } else { Ok(()) }
}
