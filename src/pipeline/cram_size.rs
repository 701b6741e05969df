//! `samtools cram-size` (samtools 1.24 `cram_size.c`): walks the CRAM's blocks
//! ([`crate::io::cram::structure`]), sums them ([`crate::ops::cram_size`]) and prints the report.

use std::io::Write;

use crate::error::Error;
use crate::io::cram::structure::{self, Event};
use crate::io::input::Input;
use crate::ops::cram_size::{CramSizes, encodings_text, methods};

#[derive(Debug, Default)]
pub struct CramSizeOptions {
    /// `-v`: a line per compression method of each block.
    pub verbose: bool,
    /// `-e`: each container's encodings.
    pub encodings: bool,
    /// `-o`: the report's file (else stdout).
    pub output: Option<String>,
    /// The CRAM (`-` for stdin).
    pub input: String,
}

const FAILED: &str = "samtools cram_size: Failed in decoding CRAM file";

/// Runs `cram-size`.
pub fn run(o: &CramSizeOptions) -> Result<(), Error> {
    // samtools opens `-o` while reading its options, before the input.
    let mut out: Box<dyn Write> = match &o.output {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => return Err(Error::Bare(format!("{path}: {}", crate::error::c_message(&e)))),
        },
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let path = &o.input;
    let mut input = Input::open(path).map_err(|e| {
        let reason = crate::error::c_message(&e);
        Error::Bare(format!("samtools cram_size: failed to open file '{path}': {reason}"))
    })?;
    let is_cram = input.peek(4).is_ok_and(|b| b == b"CRAM");
    if !is_cram {
        return Err(Error::Bare(format!("samtools cram_size: Input is not a CRAM file\n{FAILED}")));
    }
    let mut sizes = CramSizes::default();
    let mut failure = None;
    let walked = structure::walk(&mut input, &mut |event| {
        if failure.is_some() {
            return;
        }
        match event {
            Event::Container { records, bases, slices, codecs } => {
                if o.encodings {
                    let text = encodings_text(codecs.iter().map(|c| (c.key, &*c.description)));
                    if let Err(e) = out.write_all(&text) {
                        failure = Some(Error::io(path.clone(), e));
                    }
                }
                let ids = codecs.iter().map(|c| (c.key, c.content_ids));
                sizes.container(records, bases, slices, ids);
            }
            Event::Slice { embedded_reference } => {
                if let Some(warning) = sizes.slice(embedded_reference) {
                    eprintln!("{warning}");
                }
            }
            Event::Block { content_id, method, stored, raw, data } => {
                match methods::expand(method, data) {
                    Some(kind) => sizes.block(content_id, kind, stored.into(), raw.into()),
                    None => failure = Some(Error::Bare(FAILED.into())),
                }
            }
        }
    });
    let (table, stored_total) = sizes.report(o.verbose);
    let write_err = |e| Error::io(o.output.as_deref().unwrap_or("-"), e);
    out.write_all(&table).map_err(write_err)?;
    if let Some(e) = failure {
        out.flush().map_err(write_err)?;
        return Err(e);
    }
    if walked.is_err() {
        // samtools reports what it read before the failure, then fails.
        out.flush().map_err(write_err)?;
        return Err(Error::Bare(FAILED.into()));
    }
    let file_size = input.position() as i64;
    out.write_all(sizes.summary(file_size, stored_total).as_bytes()).map_err(write_err)?;
    out.flush().map_err(write_err)
}
