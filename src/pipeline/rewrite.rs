//! One record in, at most one record out, in input order: the streaming loop `reset`,
//! `addreplacerg` and `calmd` share. Records are edited in parallel chunks on the pool (each
//! chunk encoded for the output format), then written by one writer in input order, so output
//! bytes and the order of warnings never depend on the thread count.

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::open::RecordReader;
use crate::io::sink::{Encoded, RecordSink};
use crate::pipeline::input_filter::{InputFilter, passes};
use crate::record::{Batch, Header, RecordRef};
use rayon::prelude::*;

/// Records per parallel task.
const CHUNK: usize = 2048;

/// What an edit made of one record.
pub enum Edited {
    /// The edited bytes are in the buffer (without `block_size`).
    Write,
    /// The record is left out of the output.
    Drop,
}

/// Per-chunk state an edit writes into: lines for stderr, printed in input order.
#[derive(Default)]
pub struct Notes {
    pub warnings: Vec<String>,
    /// Set by an edit that ends the run at this record (not written): the records before it are
    /// written, the warnings printed, then the run fails with [`Error::Failed`].
    pub stop: bool,
}

/// An edit of one record: it sees the record before (if any) and the record, fills the buffer
/// it is given with the edited bytes and may add notes.
pub trait Edit:
    Fn(Option<&RecordRef<'_>>, &RecordRef<'_>, &mut Vec<u8>, &mut Notes) -> Result<Edited, Error> + Sync
{
}

impl<T> Edit for T where
    T: Fn(
            Option<&RecordRef<'_>>,
            &RecordRef<'_>,
            &mut Vec<u8>,
            &mut Notes,
        ) -> Result<Edited, Error>
        + Sync
{
}

/// The input side of a rewrite: reader, its path and header, and an optional input filter.
pub struct Source<'a> {
    pub reader: &'a mut RecordReader,
    pub path: &'a str,
    pub header: &'a Header,
    pub filter: Option<&'a InputFilter>,
}

impl<'a> Source<'a> {
    pub fn new(
        reader: &'a mut RecordReader,
        path: &'a str,
        header: &'a Header,
        filter: Option<&'a InputFilter>,
    ) -> Self {
        Source { reader, path, header, filter }
    }
}

/// Edits every record of `source` with `edit` (which fills the buffer it is given, and sees the
/// record before, if any) and writes the kept ones to `sink`, encoded against `out_header`.
pub fn rewrite<E>(
    source: Source<'_>,
    sink: &mut RecordSink,
    out_header: &Header,
    pool: &rayon::ThreadPool,
    edit: E,
) -> Result<(), Error>
where
    E: Edit,
{
    let format = sink.format();
    let Source { reader, path, header, filter } = source;
    // The last record of the previous step (the one before the first of the next).
    let mut last: Vec<u8> = Vec::new();
    let step = |batches: Vec<Batch>| -> Result<(), Error> {
        let before = (!last.is_empty()).then(|| RecordRef::new(&last));
        let recs: Vec<RecordRef<'_>> =
            before.into_iter().chain(batches.iter().flat_map(|b| b.iter())).collect();
        let first = usize::from(before.is_some());
        let starts: Vec<usize> = (first..recs.len()).step_by(CHUNK).collect();
        let outs: Vec<Result<(Encoded, Notes), Error>> = starts
            .par_iter()
            .map(|&at| {
                let range = at..(at + CHUNK).min(recs.len());
                edit_chunk(&recs, range, (header, out_header), filter, format, &edit)
            })
            .collect();
        for out in outs {
            let (encoded, notes) = out?;
            for w in notes.warnings {
                eprintln!("{w}");
            }
            sink.write_owned(encoded)?;
            if notes.stop {
                return Err(Error::Failed);
            }
        }
        let new_last = recs.last().map(|r| r.bytes().to_vec());
        drop(recs);
        if let Some(l) = new_last {
            last = l;
        }
        crate::pipeline::prefetch::recycle(batches);
        Ok(())
    };
    crate::pipeline::prefetch::for_each_batches(reader, path, pool, step)
}

fn edit_chunk<E>(
    recs: &[RecordRef<'_>],
    range: std::ops::Range<usize>,
    (in_header, out_header): (&Header, &Header),
    filter: Option<&InputFilter>,
    format: OutputFormat,
    edit: &E,
) -> Result<(Encoded, Notes), Error>
where
    E: Edit,
{
    let chunk = &recs[range.clone()];
    let bytes: usize = chunk.iter().map(|r| r.bytes().len() + 32).sum();
    let mut out = Encoded::sized_for(bytes, chunk.len(), format);
    let mut notes = Notes::default();
    let mut buf = Vec::with_capacity(1024);
    for (i, rec) in range.zip(chunk) {
        match passes(filter, rec, in_header) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(lines) => return Err(Error::Bare(lines)),
        }
        buf.clear();
        let before = i.checked_sub(1).map(|p| &recs[p]);
        let edited = edit(before, rec, &mut buf, &mut notes)?;
        if notes.stop {
            break;
        }
        if let Edited::Write = edited {
            out.push_record(&buf, out_header, format);
        }
    }
    Ok((out, notes))
}
