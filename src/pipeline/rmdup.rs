//! `samtools rmdup`'s I/O (samtools 1.24 `bam_rmdup`): reads the sorted input, runs the
//! paired or single-end algorithm ([`crate::ops::rmdup`]), writes the kept records with the
//! header as it is (no `@PG`), and prints samtools' notes on stderr.

use std::collections::HashMap;

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::rmdup::{Libraries, Paired, Single};
use crate::pipeline::checked_open::open_reporting;

use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::pipeline::samples::khash_order;
use crate::record::Header;
use crate::record::header::line_field;

#[derive(Debug)]
pub struct RmdupOptions {
    pub input: String,
    pub output: String,
    /// `-s`: single-end mode.
    pub single_end: bool,
    /// `-S`: single-end mode for paired reads too.
    pub force_single_end: bool,
    /// `--output-fmt`; else from the output's name, BAM when it says nothing.
    pub format: Option<OutputFormat>,
}

/// `bam_get_library`: the LB of the `@RG` its RG:Z names.
struct LibraryOf {
    by_read_group: HashMap<Vec<u8>, Vec<u8>>,
}

impl LibraryOf {
    fn new(header: &Header) -> Self {
        let mut by_read_group = HashMap::new();
        for line in header.read_group_lines() {
            if let (Some(id), Some(lb)) = (line_field(line, b"ID"), line_field(line, b"LB")) {
                by_read_group.entry(id.to_vec()).or_insert_with(|| lb.to_vec());
            }
        }
        LibraryOf { by_read_group }
    }

    fn of(&self, bytes: &[u8]) -> Option<&[u8]> {
        let r = crate::record::RecordRef::new(bytes);
        let rg = r.aux_get(*b"RG").filter(|f| f.ty == b'Z')?;
        self.by_read_group.get(rg.value).map(Vec::as_slice)
    }
}

/// samtools' closing line per library, in its khash's order.
fn library_notes(libraries: &Libraries, prefix: &str) {
    let names: Vec<Vec<u8>> = libraries.counts.iter().map(|c| c.name.clone()).collect();
    for i in khash_order(&names) {
        let c = &libraries.counts[i];
        let rate = c.removed as f64 / c.checked as f64;
        let rate = if rate.is_nan() { "-nan".to_string() } else { format!("{rate:.4}") };
        eprintln!(
            "[{prefix}] {} / {} = {rate} in library '{}'",
            c.removed,
            c.checked,
            String::from_utf8_lossy(&c.name)
        );
    }
}

pub fn run(options: &RmdupOptions) -> Result<(), Error> {
    let path = options.input.as_str();
    let mut opened = open_reporting(path, 1, |reason| {
        format!("samtools rmdup: failed to open \"{path}\" for input: {reason}")
    })
    .map_err(|f| f.or_line("[bam_rmdup] input SAM does not have header. Abort!"))?;
    let header = opened.header.clone();
    if header.refs().is_empty() {
        return Err(Error::Bare("[bam_rmdup] input SAM does not have header. Abort!".into()));
    }
    let format = options
        .format
        .or_else(|| OutputFormat::from_path(&options.output))
        .unwrap_or(OutputFormat::Bam);
    let mut sink =
        RecordSink::create(&options.output, &OutputSpec::new(format, -1), 1, &header, true)
            .map_err(|e| match e {
                Error::CannotCreate { path, reason } => Error::Bare(format!(
                    "samtools rmdup: failed to open \"{path}\" for output: {reason}"
                )),
                e => e,
            })?;
    let libraries = LibraryOf::new(&header);
    let name_of =
        |tid: i32| String::from_utf8_lossy(header.ref_name(tid).unwrap_or_default()).into_owned();
    let mut paired = Paired::new();
    let mut single = Single::new(options.force_single_end);
    let mut encoded = Encoded::default();
    while let Some((batches, warnings)) = opened.reader.read_batches(path)? {
        for w in warnings {
            eprintln!("{w}");
        }
        let mut emit = |b: &[u8]| encoded.push_record(b, &header, format);
        for batch in &batches {
            for r in batch.iter() {
                let lib = libraries.of(r.bytes());
                if options.single_end {
                    single.push(r.bytes(), lib, &mut emit);
                } else {
                    paired.push(r.bytes(), lib, &mut emit, &mut |n| eprintln!("{n}"), &name_of);
                }
            }
        }
        sink.write(&std::mem::take(&mut encoded))?;
    }
    let mut emit = |b: &[u8]| encoded.push_record(b, &header, format);
    if options.single_end {
        single.finish(&mut emit);
    } else {
        paired.finish(&mut emit);
    }
    sink.write(&encoded)?;
    sink.finish()?;
    if options.single_end {
        library_notes(&single.libraries, "bam_rmdupse_core");
    } else {
        library_notes(&paired.libraries, "bam_rmdup_core");
    }
    Ok(())
}
