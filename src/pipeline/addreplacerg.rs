//! `samtools addreplacerg`: every record's `RG:Z` set to one read group
//! ([`crate::ops::read_group`]), the header given the `-r` line (the other `@RG` lines dropped
//! in `overwrite_all` mode) or checked for the `-R` ID. Command line: [`crate::cli::addreplacerg`].
//!
//! Compatibility (samtools 1.24 `bam_addrprg.c`, `init`): without `-r` or `-R` the first
//! `@RG`'s ID is used; `-R` and that default leave the header's `@RG` lines as they are.

use crate::error::Error;
use crate::io::format::index_request;
use crate::io::input_spec::InputSpec;
use crate::io::open::Opened;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::RecordSink;
use crate::ops::read_group::{ReadGroupMode, set_read_group};
use crate::pipeline::checked_open::open_reporting;
use crate::pipeline::input_filter::InputFilter;
use crate::pipeline::rewrite::{Edited, Source, rewrite};
use crate::record::Header;
use crate::record::header::line_field;
use crate::record::header_checks::added_line_error;

pub struct AddReplaceRgOptions {
    pub input: String,
    /// `None`: stdout.
    pub output: Option<String>,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub threads: usize,
    /// The FASTA a CRAM input is decoded against and a CRAM output encoded against.
    pub reference: Option<String>,
    /// `-r`, unescaped, with its ID.
    pub rg_line: Option<Vec<u8>>,
    /// `-R`, or the ID of the `-r` line.
    pub rg_id: Option<Vec<u8>>,
    pub mode: ReadGroupMode,
    /// `-w`
    pub overwrite_header_rg: bool,
    pub pg: Option<Vec<(String, String)>>,
    pub write_index: bool,
    pub filter: Option<String>,
}

impl AddReplaceRgOptions {
    fn input_spec(&self) -> InputSpec {
        InputSpec::new(self.threads, self.reference.as_deref())
    }
}

fn has_read_group(header: &Header, id: &[u8]) -> bool {
    header.read_group_lines().any(|l| line_field(l, b"ID") == Some(id))
}

/// The output header and the read group every record gets (`init`).
fn prepare_header(header: &mut Header, opts: &AddReplaceRgOptions) -> Result<Vec<u8>, Error> {
    let bare = |m: &str| Error::Bare(m.to_string());
    let id = match (&opts.rg_line, &opts.rg_id) {
        (Some(line), Some(id)) => {
            if has_read_group(header, id) {
                if !opts.overwrite_header_rg {
                    return Err(bare(&format!(
                        "[init] RG line with ID:{} already present in the header. Use -w to overwrite.",
                        String::from_utf8_lossy(id)
                    )));
                }
                header.retain_read_groups(|other| other != id.as_slice());
            }
            // htslib parses the line as it adds it (`sam_hdr_add_lines`): a malformed one would
            // give a header no reader accepts.
            if let Some(why) = added_line_error(line) {
                return Err(bare(&format!(
                    "[E::sam_hrecs_error] {why}\n[init] Error adding RG line with ID:{} to the output header.",
                    String::from_utf8_lossy(id)
                )));
            }
            header.append_lines([line.clone()]);
            if opts.mode == ReadGroupMode::OverwriteAll {
                header.retain_read_groups(|other| other == id.as_slice());
            }
            id.clone()
        }
        (None, Some(id)) if has_read_group(header, id) => id.clone(),
        (None, Some(_)) => {
            return Err(bare(
                "RG ID supplied does not exist in header. Supply full @RG line with -r instead?",
            ));
        }
        _ => header
            .read_group_lines()
            .find_map(|l| line_field(l, b"ID"))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| bare("No RG specified on command line or in existing header."))?,
    };
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    Ok(id)
}

pub fn run(opts: AddReplaceRgOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| {
        let Opened { mut reader, header, .. } =
            open_reporting(&opts.input, opts.input_spec(), |reason| {
                format!("samtools addreplacerg: could not open \"{}\": {reason}", opts.input)
            })
            .map_err(|e| {
                e.or_line(&format!(
                    "samtools addreplacerg: failed to read the header of \"{}\"",
                    opts.input
                ))
            })?;
        let mut out_header = header.clone();
        let id = prepare_header(&mut out_header, &opts)?;
        let output = opts.output.as_deref().unwrap_or("-");
        let (out_path, index_path, bai) = index_request(output);
        let mut sink = RecordSink::create(&out_path, &opts.spec, opts.threads, &out_header, true)?;
        if opts.write_index {
            sink.write_index(&index_path, bai, &out_header)?;
        }
        let filter = InputFilter::new(opts.filter.as_deref());
        let source = Source::new(&mut reader, &opts.input, &header, filter.as_ref());
        rewrite(source, &mut sink, &out_header, &pool, |_, rec, out, _| {
            set_read_group(rec, &id, opts.mode, out);
            Ok(Edited::Write)
        })?;
        sink.finish()
    })
}
