//! `samtools split`: one output per read group (`@RG` lines of the header) or per value of a tag
//! (`-d`), plus the reads that fit none (`-u`). Command line: [`crate::cli::split`].
//!
//! Compatibility (samtools 1.24 `bam_split.c`): outputs for the header's read groups are made
//! first, each header keeping only its own `@RG`; `-d` makes a new output per value as it is
//! met, up to `-M`; integer tags are written in decimal (zero-padded with `-p`, one more digit
//! for negatives). An input whose `@HD SS` starts `unsorted:TAG:` is taken as grouped by the
//! tag: one output is open at a time, and `%#` counts the outputs made. Differences: outputs
//! appear only when the command succeeds; records are routed in input batches, each output's
//! deflate running on the shared pool.

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::format::index_request;
use crate::io::input_spec::InputSpec;
use crate::io::open::Opened;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::pipeline::split_names::{expand, format_of, input_base_name};
use crate::record::aux::AuxValue;
use crate::record::header::line_field;
use crate::record::{Header, RecordRef};
use rayon::prelude::*;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

#[derive(Default)]
pub struct SplitOptions {
    pub input: String,
    /// `-u`: where the reads no output takes go (else such a read is an error).
    pub unaccounted: Option<String>,
    /// `-h`: the header of the `-u` output.
    pub unaccounted_header: Option<String>,
    /// `-f`.
    pub format_string: String,
    /// `-d`: split by this tag instead of `RG`.
    pub tag: Option<String>,
    /// `-M` (no limit: `i64::MAX`).
    pub max_split: i64,
    /// `-p`.
    pub zero_pad: usize,
    pub verbose: bool,
    /// `--output-fmt`.
    pub explicit_format: Option<OutputFormat>,
    /// Level, deflate engine and CRAM settings of every output (the format is each file's own:
    /// `explicit_format`, else its name's).
    pub spec: OutputSpec,
    pub threads: usize,
    /// The FASTA a CRAM input's bases are decoded against (`--reference`, `reference=`).
    pub reference: Option<String>,
    pub write_index: bool,
    /// `@PG` fields (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
}

/// One output file.
struct Output {
    sink: RecordSink,
    header: Header,
}

/// Records of one group of input batches routed to their outputs, as framed BAM records
/// borrowed from the batches: BAM and CRAM outputs take them without a copy (a routed copy of
/// every record, and the recycled buffers it left behind, grew split's RSS with the input).
#[derive(Default)]
struct Routed<'b> {
    /// Per output, in `Splitter::outputs` order.
    outputs: Vec<Vec<&'b [u8]>>,
    unaccounted: Vec<&'b [u8]>,
}

/// Records a chunk of SAM text is formatted from, on one worker.
const TEXT_CHUNK_RECORDS: usize = 4096;

impl Output {
    /// Opens the output `name`: bytes, as record data may put invalid UTF-8 in it.
    fn create(name: &[u8], header: Header, opts: &SplitOptions) -> Result<Output, Error> {
        let format = format_of(name, opts.explicit_format);
        let (path, index, bai) = if opts.write_index {
            // `##idx##` is split on text; such names are taken as UTF-8 (lossily).
            let (path, index, bai) = index_request(&String::from_utf8_lossy(name));
            (path.into_bytes(), index, bai)
        } else {
            (name.to_vec(), String::new(), false)
        };
        let path = Path::new(OsStr::from_bytes(&path));
        let mut sink = {
            let spec = OutputSpec { format, ..opts.spec.clone() };
            RecordSink::create_at(path, &spec, opts.threads, &header, true)?
        };
        let name = String::from_utf8_lossy(name);
        if opts.write_index {
            sink.write_index(&index, bai, &header).map_err(|_| {
                Error::Bare(format!(
                    "samtools auto_index: failed to open index \"{index}\" for writing\nsamtools split: Could not create index for file \"{name}\""
                ))
            })?;
        }
        Ok(Output { sink, header })
    }

    /// Writes framed records, in order: BAM and CRAM as they are, SAM formatted in parallel.
    fn write(&mut self, framed: &[&[u8]]) -> Result<(), Error> {
        if framed.is_empty() {
            return Ok(());
        }
        let format = self.sink.format();
        if format.takes_bam_records() {
            return self.sink.write_framed(framed);
        }
        let header = &self.header;
        let texts: Vec<Encoded> = framed
            .par_chunks(TEXT_CHUNK_RECORDS)
            .map(|chunk| {
                let bytes = chunk.iter().map(|f| f.len()).sum();
                let mut text = Encoded::sized_for(bytes, chunk.len(), format);
                for f in chunk {
                    text.push_record(&f[4..], header, format);
                }
                text
            })
            .collect();
        texts.into_iter().try_for_each(|t| self.sink.write_owned(t))
    }

    fn finish(self) -> Result<(), Error> {
        self.sink.finish()
    }
}

/// The routing state: the outputs made so far and which value goes where.
struct Splitter<'a> {
    opts: &'a SplitOptions,
    input_header: &'a Header,
    base: String,
    /// The tag looked up in each record (`RG` without `-d`).
    tag: [u8; 2],
    /// Splitting by read group (no `-d`, or `-d RG`).
    is_rg: bool,
    /// The input is grouped by the tag: one output open at a time.
    grouped: bool,
    outputs: Vec<Output>,
    by_value: HashMap<Vec<u8>, usize>,
    /// Outputs made in grouped mode (`%#`).
    made: usize,
    /// `-M`, raised to the number of the header's read groups.
    max_split: i64,
    unaccounted: Option<Output>,
}

/// `@HD SS` starts `unsorted:TAG:`: the records come grouped by the tag.
fn grouped_by(header: &Header, tag: &str) -> bool {
    header
        .lines()
        .find(|l| l.starts_with(b"@HD\t"))
        .and_then(|l| line_field(l, b"SS"))
        .is_some_and(|ss| ss.starts_with(format!("unsorted:{tag}:").as_bytes()))
}

fn read_group_ids(header: &Header) -> Vec<Vec<u8>> {
    header.read_group_lines().map(|l| line_field(l, b"ID").unwrap_or_default().to_vec()).collect()
}

impl<'a> Splitter<'a> {
    fn header_with_pg(&self, mut header: Header) -> Header {
        if let Some(pg) = &self.opts.pg {
            let fields: Vec<(&str, &str)> =
                pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            header.add_pg("samtools", &fields);
        }
        header
    }

    /// The outputs of the header's read groups, made before any record is read.
    fn open_read_group_outputs(&mut self) -> Result<(), Error> {
        let ids = read_group_ids(self.input_header);
        if self.opts.verbose {
            eprintln!("@RG's found {}", ids.len());
        }
        for (i, id) in ids.iter().enumerate() {
            let name = expand(
                &self.opts.format_string,
                &self.base,
                id,
                (i, self.opts.zero_pad),
                self.opts.explicit_format,
            )?;
            let mut header = self.input_header.clone();
            header.retain_read_groups(|rg| rg == id.as_slice());
            let header = self.header_with_pg(header);
            self.outputs.push(Output::create(&name, header, self.opts)?);
            self.by_value.insert(id.clone(), i);
        }
        Ok(())
    }

    /// A new output for `value` met in a record (`prep_sam_file`); in grouped mode the previous
    /// value's output is complete: its routed records are written and it is closed.
    fn open_value_output(&mut self, value: &[u8], routed: &mut Routed<'_>) -> Result<usize, Error> {
        let index = if self.grouped { self.made } else { self.by_value.len() };
        let name = expand(
            &self.opts.format_string,
            &self.base,
            value,
            (index, self.opts.zero_pad),
            self.opts.explicit_format,
        )?;
        let mut header = self.header_with_pg(self.input_header.clone());
        if self.is_rg {
            // A read group the header lacks (or grouped input): its own `@RG` line only.
            header.retain_read_groups(|_| false);
            let mut line = b"@RG\tID:".to_vec();
            line.extend_from_slice(value);
            header.append_lines([line]);
        }
        let output = Output::create(&name, header, self.opts)?;
        if self.grouped {
            // One output at a time: the previous value's is complete.
            if let Some(mut previous) = self.outputs.pop() {
                previous.write(&routed.outputs.pop().unwrap_or_default())?;
                previous.finish()?;
            }
            self.by_value.clear();
            self.made += 1;
        }
        self.outputs.push(output);
        routed.outputs.push(Vec::new());
        let at = self.outputs.len() - 1;
        self.by_value.insert(value.to_vec(), at);
        Ok(at)
    }

    /// Sends one record (`framed`, its bytes with `block_size`) to its output's routed list.
    fn route<'b>(&mut self, framed: &'b [u8], routed: &mut Routed<'b>) -> Result<(), Error> {
        let r = RecordRef::new(&framed[4..]);
        let field = r.aux_get(self.tag);
        let number: String;
        let value: Option<&[u8]> = match field.as_ref().map(|f| f.typed()) {
            Some(AuxValue::Str(s)) => Some(s),
            Some(AuxValue::Int(v)) => {
                let width = if v < 0 { self.opts.zero_pad + 1 } else { self.opts.zero_pad };
                number = if width == 0 { v.to_string() } else { format!("{v:0width$}") };
                Some(number.as_bytes())
            }
            _ => None,
        };
        let mut target = value.and_then(|v| self.by_value.get(v).copied());
        if let Some(v) = value
            && target.is_none()
        {
            let new_rg_file = self.grouped
                && self.opts.tag.is_none()
                && read_group_ids(self.input_header).iter().any(|id| id.as_slice() == v);
            let count = if self.grouped { 0 } else { self.outputs.len() as i64 };
            if count < self.max_split && (self.opts.tag.is_some() || new_rg_file) {
                target = Some(self.open_value_output(v, routed)?);
            }
        }
        if let Some(i) = target {
            routed.outputs[i].push(framed);
            return Ok(());
        }
        match self.unaccounted {
            Some(_) => {
                routed.unaccounted.push(framed);
                Ok(())
            }
            None => {
                let name = String::from_utf8_lossy(r.read_name());
                Err(Error::Bare(match &field {
                    Some(f) => {
                        let shown = match f.ty {
                            b'Z' | b'H' => String::from_utf8_lossy(f.value).into_owned(),
                            _ => "(null)".to_string(),
                        };
                        format!("Read \"{name}\" with unaccounted for tag \"{shown}\".")
                    }
                    None => format!(
                        "Read \"{name}\" has no {} tag.",
                        self.opts.tag.as_deref().unwrap_or("RG")
                    ),
                }))
            }
        }
    }

    /// An empty routing of one group of batches to the outputs made so far.
    fn routing<'b>(&self) -> Routed<'b> {
        Routed { outputs: vec![Vec::new(); self.outputs.len()], unaccounted: Vec::new() }
    }

    /// Writes a group's routed records.
    fn write(&mut self, routed: Routed<'_>) -> Result<(), Error> {
        for (o, framed) in self.outputs.iter_mut().zip(&routed.outputs) {
            o.write(framed)?;
        }
        match self.unaccounted.as_mut() {
            Some(u) => u.write(&routed.unaccounted),
            None => Ok(()),
        }
    }

    fn finish(self) -> Result<(), Error> {
        for o in self.outputs.into_iter().chain(self.unaccounted) {
            o.finish()?;
        }
        Ok(())
    }
}

/// The `-u` output's header: `-h`'s (which must match the input's references), else the
/// input's with a `@PG`.
fn unaccounted_header(opts: &SplitOptions, input: &Header) -> Result<Header, Error> {
    let Some(path) = &opts.unaccounted_header else {
        let mut header = input.clone();
        if let Some(pg) = &opts.pg {
            let fields: Vec<(&str, &str)> =
                pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            header.add_pg("samtools", &fields);
        }
        return Ok(header);
    };
    let wording = Wording {
        cannot_open: "samtools split: Could not open unaccounted header file",
        no_header: "samtools split: Could not read header from",
    };
    let header = open_sequence_input(path, 1, &wording)?.header;
    if header.refs().len() != input.refs().len() {
        return Err(Error::Bare(
            "samtools split: Unaccounted header contains wrong number of references".into(),
        ));
    }
    for (n, (a, b)) in input.refs().iter().zip(header.refs()).enumerate() {
        if a.len != b.len {
            return Err(Error::Bare(format!(
                "samtools split: Unaccounted header reference {} \"{}\" is not the same length as in the input file",
                n + 1,
                String::from_utf8_lossy(&b.name)
            )));
        }
    }
    Ok(header)
}

pub fn run(opts: &SplitOptions, pool: &rayon::ThreadPool) -> Result<(), Error> {
    let wording = Wording {
        cannot_open: "samtools split: Could not open",
        no_header: "samtools split: Could not read header from",
    };
    let Opened { mut reader, header, .. } = open_sequence_input(
        &opts.input,
        InputSpec::new(opts.threads, opts.reference.as_deref()),
        &wording,
    )?;
    let tag_name = opts.tag.as_deref().unwrap_or("RG");
    let mut tag = [0u8; 2];
    for (t, b) in tag.iter_mut().zip(tag_name.bytes()) {
        *t = b;
    }
    let is_rg = tag_name == "RG";
    let grouped = grouped_by(&header, tag_name);
    let unaccounted = match &opts.unaccounted {
        Some(name) => {
            Some(Output::create(name.as_bytes(), unaccounted_header(opts, &header)?, opts)?)
        }
        None => None,
    };
    let mut splitter = Splitter {
        opts,
        input_header: &header,
        base: input_base_name(&opts.input).to_string(),
        tag,
        is_rg,
        grouped,
        outputs: Vec::new(),
        by_value: HashMap::new(),
        made: 0,
        max_split: opts.max_split,
        unaccounted,
    };
    if is_rg && !grouped {
        splitter.open_read_group_outputs()?;
        // `-M` never stops the header's read groups.
        splitter.max_split = opts.max_split.max(splitter.outputs.len() as i64);
    }
    crate::pipeline::prefetch::for_each_batches(&mut reader, &opts.input, pool, |batches| {
        let mut routed = splitter.routing();
        for b in &batches {
            for i in 0..b.len() {
                splitter.route(b.framed(i), &mut routed)?;
            }
        }
        splitter.write(routed)?;
        for b in batches {
            crate::io::recycle::give(b.data);
        }
        Ok(())
    })?;
    splitter.finish()
}

/// Runs `split` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: SplitOptions) -> Result<(), Error> {
    let pool = crate::pipeline::threads::pool(opts.threads);
    pool.install(|| run(&opts, &pool))
}
