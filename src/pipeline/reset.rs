//! `samtools reset`: the records back to unaligned reads ([`crate::ops::reset`]) under a new
//! header of `@HD VN:1.6`, the input's `@RG` lines (unless `--no-RG`), its `@PG` lines up to the
//! one `--reject-PG` names, and reset's own `@PG` (`PN` and `CL`, no `VN`, as samtools adds it).
//! Command line: [`crate::cli::reset`].

use crate::error::Error;
use crate::io::input_spec::InputSpec;
use crate::io::open::Opened;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::RecordSink;
use crate::ops::reset::{TagSets, reset_record};
use crate::pipeline::checked_open::open_reporting;
use crate::pipeline::input_filter::InputFilter;
use crate::pipeline::rewrite::{Edited, Source, rewrite};
use crate::record::Header;
use crate::record::header::line_field;

pub struct ResetOptions {
    pub input: String,
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    pub tags: TagSets,
    pub keep_read_groups: bool,
    pub keep_dup: bool,
    /// `--reject-PG ID`: that `@PG` line and those after it are left out.
    pub reject_pg: Option<String>,
    /// reset's `CL` (`None` with `--no-PG`).
    pub command_line: Option<String>,
    /// `--input-fmt-option filter=EXPR`.
    pub filter: Option<String>,
}

/// The output header `reset` writes.
fn reset_header(input: &Header, opts: &ResetOptions) -> Result<Header, Error> {
    let mut text = b"@HD\tVN:1.6\n".to_vec();
    if opts.keep_read_groups {
        for line in input.read_group_lines() {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
    }
    let reject = opts.reject_pg.as_deref().filter(|id| !id.is_empty());
    for line in input.lines().filter(|l| l.starts_with(b"@PG\t")) {
        if let Some(reject) = reject {
            match line_field(line, b"ID") {
                Some(id) if id != reject.as_bytes() => {}
                _ => break,
            }
        }
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    let mut header = Header::from_sam_text(text).map_err(|e| Error::Bare(e.to_string()))?;
    if let Some(cl) = &opts.command_line {
        header.add_pg("samtools", &[("PN", "samtools"), ("CL", cl)]);
    }
    Ok(header)
}

pub fn run(opts: ResetOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| {
        let Opened { mut reader, header, .. } = open_reporting(
            &opts.input,
            InputSpec::new(opts.threads, opts.reference.as_deref()),
            |_| format!("Could not open {}", opts.input),
        )
        .map_err(|e| e.or_line("Failed to read header from file!"))?;
        let out_header = reset_header(&header, &opts)?;
        let mut sink =
            RecordSink::create(&opts.output, &opts.spec, opts.threads, &out_header, true)?;
        let filter = InputFilter::new(opts.filter.as_deref());
        let source = Source::new(&mut reader, &opts.input, &header, filter.as_ref());
        rewrite(source, &mut sink, &out_header, &pool, |_, rec, out, _| {
            Ok(match reset_record(rec, &opts.tags, opts.keep_dup, out) {
                true => Edited::Write,
                false => Edited::Drop,
            })
        })?;
        sink.finish()
    })
}
