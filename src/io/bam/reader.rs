//! BAM reading: the header, then batches of records cut from parallel-inflated BGZF pieces.
//!
//! Each piece of inflated data becomes one [`Batch`] with no copy: the bytes of a record that
//! straddles the end of a piece are carried into the front of the next piece's buffer. Record
//! boundaries are found by a quick walk over `block_size` fields; every record is then validated
//! (all length fields and the aux block, see `record::view::validate`) in parallel, and its
//! reference ids are checked against the header, as htslib's `sam_read1` does.

use rayon::prelude::*;

use crate::io::bgzf;
use crate::io::bgzf::block::BlockError;
use crate::io::bgzf::spans::Spans;
use crate::record::header::Reference;
use crate::record::prefetch::{PREFETCH_AHEAD, prefetch_bytes};
use crate::record::{Batch, Header, RecordRef, Verdict, layout, long_cigar, view};

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Bgzf(#[from] bgzf::reader::ReadError),
    #[error("not a BAM file (bad magic)")]
    BadMagic,
    #[error("truncated BAM header")]
    TruncatedHeader,
    #[error("invalid BAM header: {0}")]
    BadHeader(&'static str),
    #[error("truncated BAM record {record}")]
    TruncatedRecord { record: u64 },
    #[error("invalid BAM record {record}: {source}")]
    BadRecord { record: u64, source: view::RecordError },
    #[error("invalid BAM record {record}: block_size {size} is too small")]
    BadBlockSize { record: u64, size: u32 },
    #[error(
        "invalid BAM record {record}: reference id {tid} is not in the header ({n_ref} references)"
    )]
    BadReferenceId { record: u64, tid: i32, n_ref: usize },
}

pub struct Reader {
    bgzf: bgzf::Reader,
    carry: Vec<u8>,
    /// The blocks the carried bytes came from.
    carry_spans: Spans,
    records_read: u64,
    /// References in the header: record reference ids must be below this.
    n_ref: usize,
}

/// Decodes the BAM header (magic, text, reference list; SAMv1 §4.2) from the front of inflated
/// `data`; `Ok(None)` when more bytes are needed, else the header and the bytes it used.
pub fn decode_header(data: &[u8]) -> Result<Option<(Header, usize)>, ReadError> {
    let need = |n: usize| data.len() >= n;
    if !need(4) {
        return Ok(None);
    }
    if &data[..4] != b"BAM\x01" {
        return Err(ReadError::BadMagic);
    }
    if !need(8) {
        return Ok(None);
    }
    let l_text = u32::from_le_bytes(data[4..8].try_into().unwrap_or_default()) as usize;
    let mut at = 8 + l_text;
    if !need(at + 4) {
        return Ok(None);
    }
    let text = data[8..at].to_vec();
    let n_ref = i32::from_le_bytes(data[at..at + 4].try_into().unwrap_or_default());
    if n_ref < 0 {
        return Err(ReadError::BadHeader("negative reference count"));
    }
    at += 4;
    // n_ref comes from the file: reserve no more references than the bytes at hand can hold
    // (each takes at least 9), or a lying count allocates gigabytes (found by fuzzing).
    const MIN_REFERENCE_BYTES: usize = 9;
    let mut refs =
        Vec::with_capacity((n_ref as usize).min((data.len() - at) / MIN_REFERENCE_BYTES));
    for _ in 0..n_ref {
        if !need(at + 4) {
            return Ok(None);
        }
        let l_name = u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or_default()) as usize;
        if l_name == 0 {
            return Err(ReadError::BadHeader("empty reference name"));
        }
        if !need(at + 4 + l_name + 4) {
            return Ok(None);
        }
        let name = &data[at + 4..at + 4 + l_name];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        let len = u32::from_le_bytes(
            data[at + 4 + l_name..at + 8 + l_name].try_into().unwrap_or_default(),
        ) as u64;
        refs.push(Reference { name: name.to_vec(), len });
        at += 8 + l_name;
    }
    if refs.is_empty() {
        // No binary reference list: htslib takes the references from the text's @SQ lines.
        if let Ok(from_text) = Header::from_sam_text(text.clone()) {
            refs = from_text.refs().to_vec();
        }
    } else if refs.iter().any(|r| r.len == u32::MAX as u64) {
        // A reference longer than 32 bits is UINT32_MAX in the list; htslib
        // (`sam_hdr_tid2len`) takes its length from the text's @SQ line.
        if let Ok(from_text) = Header::from_sam_text(text.clone()) {
            let text_refs = from_text.refs();
            for (i, r) in refs.iter_mut().enumerate().filter(|(_, r)| r.len == u32::MAX as u64) {
                // The same position in the text first: a header may repeat a name.
                let t = match text_refs.get(i) {
                    Some(t) if t.name == r.name => Some(i),
                    _ => from_text.tid(&r.name).map(|t| t as usize),
                };
                if let Some(t) = t {
                    r.len = text_refs[t].len;
                }
            }
        }
    }
    Ok(Some((Header::from_parts(text, refs), at)))
}

/// How far ahead of its position the framing walk asks for bytes: a few short-read records.
const FRAME_PREFETCH_DISTANCE: usize = 2048;

/// Finds the records framed at the front of `data`; returns their starts and the end of the last
/// complete one.
fn frame_records(data: &[u8], first_record: u64) -> Result<(Vec<u32>, usize), ReadError> {
    let mut starts = Vec::with_capacity(data.len() / 300);
    let mut at = 0;
    // Every line up to here has been asked for.
    let mut asked = 0;
    while at + 4 <= data.len() {
        // The walk stalls on memory at every record (the piece was just written by other
        // cores): ask for the lines a few records ahead, which the walk reaches in order.
        while asked < at + FRAME_PREFETCH_DISTANCE {
            prefetch_bytes(data, asked);
            asked += 64;
        }
        let size = u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or_default());
        if (size as usize) < crate::record::layout::FIXED_LEN {
            return Err(ReadError::BadBlockSize {
                record: first_record + starts.len() as u64,
                size,
            });
        }
        if at + 4 + size as usize > data.len() {
            break;
        }
        starts.push(at as u32);
        at += 4 + size as usize;
    }
    Ok((starts, at))
}

/// Validates one record (`record` counts from 1, 0 when unknown): its layout, then RNAME and
/// RNEXT ids, which must be -1 or name a header reference (htslib fails with `ERANGE`).
pub fn validate_record(bytes: &[u8], n_ref: usize, record: u64) -> Result<(), ReadError> {
    view::validate(bytes).map_err(|source| ReadError::BadRecord { record, source })?;
    // A BAM record's values are 32-bit and its CIGAR count 16-bit: bytes that would read as the
    // name extension's high halves are refused rather than taken as positions or counts.
    if layout::uses_name_ext(bytes) {
        return Err(ReadError::BadRecord { record, source: view::RecordError::NameGarbage });
    }
    for at in [layout::REF_ID, layout::NEXT_REF_ID] {
        let tid = layout::read_i32(bytes, at);
        if tid < -1 || tid >= 0 && tid as usize >= n_ref {
            return Err(ReadError::BadReferenceId { record, tid, n_ref });
        }
    }
    Ok(())
}

/// Validates every record of a batch in parallel; the error names the first bad record. True when
/// some record may hold its CIGAR in a `CG` tag (`long_cigar::may_hold_cg_cigar`).
fn validate_batch(batch: &Batch, first_record: u64, n_ref: usize) -> Result<bool, ReadError> {
    (0..batch.len())
        .into_par_iter()
        .with_min_len(2048)
        .map(|i| {
            // Each task walks its records in order: ask for one a few ahead.
            batch.prefetch(i + PREFETCH_AHEAD);
            let record = &batch.framed(i)[4..];
            validate_record(record, n_ref, first_record + i as u64 + 1)?;
            Ok(long_cigar::may_hold_cg_cigar(record))
        })
        .try_reduce(|| false, |a, b| Ok(a || b))
}

impl Reader {
    /// Reads the header of a BAM file.
    pub fn new(mut bgzf: bgzf::Reader) -> Result<(Reader, Header), ReadError> {
        let mut data = Vec::new();
        let mut spans = Spans::default();
        loop {
            if let Some((header, used)) = decode_header(&data)? {
                let carry = data[used..].to_vec();
                let n_ref = header.refs().len();
                let carry_spans = spans.carried_past(used);
                return Ok((Reader { bgzf, carry, carry_spans, records_read: 0, n_ref }, header));
            }
            // As htslib, the header is read as far as it goes, not a whole piece: a bad block
            // after it is reported by the first record read. Doubling keeps a long header linear.
            let want = data.len().max(1);
            match bgzf.read_piece_of(data, want)? {
                Some(p) if !p.blocks.is_empty() => {
                    spans.add(&p.blocks);
                    data = p.data;
                }
                _ => return Err(ReadError::TruncatedHeader),
            }
        }
    }

    pub fn bgzf(&self) -> &bgzf::Reader {
        &self.bgzf
    }

    /// The next batch of records; `None` at end of input.
    pub fn read_batch(&mut self) -> Result<Option<Batch>, ReadError> {
        Ok(self.next_batch(false)?.map(|(b, _)| b))
    }

    /// The next batch with the virtual offset where each record starts and, last, where the data
    /// read so far ends, as htslib's `bgzf_tell` reports them (a position at the end of a block
    /// is the start of the next block).
    pub fn read_batch_located(&mut self) -> Result<Option<(Batch, Vec<u64>)>, ReadError> {
        self.next_batch(true)
    }

    fn next_batch(&mut self, locate: bool) -> Result<Option<(Batch, Vec<u64>)>, ReadError> {
        loop {
            let carry = std::mem::take(&mut self.carry);
            let mut spans = std::mem::take(&mut self.carry_spans);
            let Some(piece) = self.bgzf.read_piece(carry)? else {
                return Ok(None);
            };
            spans.add(&piece.blocks);
            let at_end = piece.blocks.is_empty();
            let (starts, used) = frame_records(&piece.data, self.records_read)?;
            if at_end && used < piece.data.len() {
                // An index chunk's reading stops at the block its end lies in: a record cut at
                // that block's end (htsjdk cuts records anywhere) starts past the chunk.
                if self.bgzf.stopped_at_limit() {
                    if starts.is_empty() {
                        return Ok(None);
                    }
                } else {
                    return Err(ReadError::TruncatedRecord {
                        record: self.records_read + starts.len() as u64 + 1,
                    });
                }
            }
            if starts.is_empty() {
                self.carry = piece.data;
                self.carry_spans = spans;
                continue;
            }
            let located = if locate {
                let mut v: Vec<u64> = starts.iter().map(|&s| spans.voffset(s as usize)).collect();
                v.push(spans.voffset(used));
                v
            } else {
                Vec::new()
            };
            let mut data = piece.data;
            self.carry = data[used..].to_vec();
            self.carry_spans = spans.carried_past(used);
            data.truncate(used);
            let mut batch = Batch { data, starts };
            if validate_batch(&batch, self.records_read, self.n_ref)? {
                // CIGARs held in `CG` tags go back in place, as htslib's `bam_read1` does.
                let first = self.records_read;
                batch = long_cigar::convert_batch(batch, |_| {}).map_err(|(i, _)| {
                    let source = view::RecordError::NameTooLongForLongCigar;
                    ReadError::BadRecord { record: first + i as u64 + 1, source }
                })?;
            }
            self.records_read += batch.len() as u64;
            return Ok(Some((batch, located)));
        }
    }

    /// Says which index chunks (virtual offsets `[start, end)`) the next [`Self::seek_chunk`]s
    /// or [`Self::read_range`]s will read: a remote input fetches them at once.
    pub fn plan_chunks(&mut self, chunks: &[(u64, u64)]) {
        let seeks: Vec<(u64, u64)> =
            chunks.iter().map(|&(start, end)| (start >> 16, chunk_limit(start, end))).collect();
        self.bgzf.plan(&seeks);
    }

    /// Moves to virtual offset `start`, reading no block past the one `end` lies in: one index
    /// chunk, then read in batches by [`Self::read_batch_located`] (the caller stops at `end`).
    pub fn seek_chunk(&mut self, start: u64, end: u64) -> Result<(), ReadError> {
        let (cstart, ustart) = (start >> 16, (start & 0xffff) as usize);
        let limit = chunk_limit(start, end);
        self.bgzf.seek(cstart, Some(limit)).map_err(bgzf::reader::ReadError::Io)?;
        self.carry = Vec::new();
        self.carry_spans = Spans::default();
        let piece = self.bgzf.read_piece_of(Vec::new(), 1)?;
        // The offset may be the block's end (the next block's start), never past it: an index
        // that names bytes the file does not have (a file cut short, an index of another file)
        // fails the query as htslib fails it, instead of reading nothing and exiting 0.
        let first_block = piece.as_ref().map_or(0, |p| match p.blocks.get(1) {
            Some(next) => next.data_start - p.blocks[0].data_start,
            None => p.data.len(),
        });
        if ustart > first_block {
            let source = BlockError::OffsetBeyondBlock { offset: ustart, size: first_block };
            return Err(bgzf::reader::ReadError::Block { source, offset: cstart }.into());
        }
        if let Some(piece) = piece {
            let mut spans = Spans::default();
            spans.add(&piece.blocks);
            self.carry = piece.data[ustart..].to_vec();
            self.carry_spans = spans.carried_past(ustart);
        }
        Ok(())
    }

    /// Hands `each` the records of one index chunk of a region query (virtual offsets
    /// `[start, end)`) that `verdict` keeps, a batch per piece read, filtered in place; says
    /// whether `verdict` stopped the query. Reading ends at the chunk's end or at the record
    /// `verdict` stops at (htslib's iterator stops at the first read past the region): the rest
    /// is never inflated.
    pub fn read_range<E: From<ReadError>>(
        &mut self,
        (start, end): (u64, u64),
        verdict: &mut dyn FnMut(RecordRef<'_>) -> Verdict,
        each: &mut dyn FnMut(Batch) -> Result<(), E>,
    ) -> Result<bool, E> {
        self.seek_chunk(start, end)?;
        let mut query_done = false;
        let mut noting_stops = |r: RecordRef<'_>| {
            let v = verdict(r);
            query_done |= v == Verdict::Stop;
            v
        };
        while let Some((batch, chunk_done)) = self.next_in_chunk(end, &mut noting_stops)? {
            each(batch)?;
            if chunk_done {
                break;
            }
        }
        self.carry = Vec::new();
        self.carry_spans = Spans::default();
        self.bgzf.seek(0, None).map_err(bgzf::reader::ReadError::Io).map_err(ReadError::from)?;
        Ok(query_done)
    }

    /// The next batch of the index chunk [`Self::seek_chunk`] moved to, which ends at virtual
    /// offset `end`: its records before `end` that `verdict` keeps, filtered in place, and
    /// whether the chunk is done (`end` reached, or `verdict` stopped); `None` past its data.
    pub fn next_in_chunk(
        &mut self,
        end: u64,
        verdict: &mut dyn FnMut(RecordRef<'_>) -> Verdict,
    ) -> Result<Option<(Batch, bool)>, ReadError> {
        let Some((mut batch, located)) = self.read_batch_located()? else {
            return Ok(None);
        };
        // `located` ends with where the data read so far ends: at or past `end`, the chunk is
        // whole (the bytes carried past it belong to records after it).
        let chunk_whole = located[batch.len()] >= end;
        let stopped = batch.retain_until(|i, r| {
            if located[i] >= end {
                return Verdict::Stop;
            }
            verdict(r)
        });
        Ok(Some((batch, stopped || chunk_whole)))
    }
}

/// The compressed offset no block of chunk `[start, end)` starts at or after: past the block
/// `end` lies in, unless `end` is that block's first byte.
fn chunk_limit(start: u64, end: u64) -> u64 {
    let (cend, uend) = (end >> 16, end & 0xffff);
    let limit = if uend == 0 { cend } else { cend + 1 };
    limit.max((start >> 16) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_needs_all_bytes() {
        let h = Header::from_parts(
            b"@HD\tVN:1.6\n".to_vec(),
            vec![Reference { name: b"chr1".to_vec(), len: 9 }],
        );
        let bytes = h.encode_bam();
        for cut in 0..bytes.len() {
            assert!(decode_header(&bytes[..cut]).unwrap().is_none(), "cut {cut}");
        }
        let (back, used) = decode_header(&bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(back.refs(), h.refs());
        assert!(matches!(decode_header(b"BAM\x02xxxx"), Err(ReadError::BadMagic)));
    }

    /// A reference past 32 bits takes its length from its own @SQ line, even when a later line
    /// repeats its name (found by fuzzing).
    #[test]
    fn long_reference_length_comes_from_its_own_line() {
        let text = b"@SQ\tSN:c\tLN:30000100000\n@SQ\tSN:c\tLN:1000\n".to_vec();
        let h = Header::from_sam_text(text).unwrap();
        let (back, _) = decode_header(&h.encode_bam()).unwrap().unwrap();
        assert_eq!(back.refs(), h.refs());
    }

    /// With n_ref 0 the references come from the text's @SQ lines, as in samtools 1.24.
    #[test]
    fn references_come_from_the_text_without_a_binary_list() {
        let h = Header::from_parts(b"@SQ\tSN:chr1\tLN:9\n".to_vec(), Vec::new());
        let (back, _) = decode_header(&h.encode_bam()).unwrap().unwrap();
        assert_eq!(back.refs(), &[Reference { name: b"chr1".to_vec(), len: 9 }]);
    }

    /// A huge n_ref with a few bytes after it asks for more data instead of reserving room for
    /// two billion references (fuzzing found the allocation).
    #[test]
    fn lying_reference_count_allocates_nothing_up_front() {
        let mut bytes = b"BAM\x01\0\0\0\0".to_vec();
        bytes.extend_from_slice(&i32::MAX.to_le_bytes());
        bytes.extend_from_slice(&5u32.to_le_bytes());
        bytes.extend_from_slice(b"chr1\0");
        bytes.extend_from_slice(&100u32.to_le_bytes());
        assert!(decode_header(&bytes).unwrap().is_none());
    }

    /// samtools 1.24 fails ("Numerical result out of range") on a RNAME or RNEXT id that is
    /// below -1 or past the header's references.
    #[test]
    fn reference_ids_must_name_header_references() {
        let mut record = vec![0u8; layout::FIXED_LEN + 2];
        record[layout::L_READ_NAME] = 2;
        record[layout::FIXED_LEN] = b'r';
        let with_ids = |tid: i32, mtid: i32| {
            let mut r = record.clone();
            r[layout::REF_ID..layout::REF_ID + 4].copy_from_slice(&tid.to_le_bytes());
            r[layout::NEXT_REF_ID..layout::NEXT_REF_ID + 4].copy_from_slice(&mtid.to_le_bytes());
            r
        };
        assert!(validate_record(&with_ids(1, -1), 2, 1).is_ok());
        for (tid, mtid) in [(2, 0), (0, 2), (-2, 0), (0, -5)] {
            let err = validate_record(&with_ids(tid, mtid), 2, 7).expect_err("out of range");
            assert!(matches!(err, ReadError::BadReferenceId { record: 7, n_ref: 2, .. }), "{err}");
        }
    }

    /// An unmapped record named `name` with `l_seq` bases (short or long reads).
    fn unmapped(name: &str, l_seq: usize) -> Vec<u8> {
        let mut b = vec![0u8; layout::FIXED_LEN];
        for at in [layout::REF_ID, layout::POS, layout::NEXT_REF_ID, layout::NEXT_POS] {
            b[at..at + 4].copy_from_slice(&(-1i32).to_le_bytes());
        }
        b[layout::L_READ_NAME] = name.len() as u8 + 1;
        b[layout::L_SEQ..layout::L_SEQ + 4].copy_from_slice(&(l_seq as u32).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b.extend(std::iter::repeat_n(0x12, l_seq.div_ceil(2)));
        b.extend(std::iter::repeat_n(30, l_seq));
        b
    }

    /// Every piece size gives the same records and the same virtual offsets, whether a record
    /// is cut by a piece's end, fits the gap kept in front of the next piece, or (long reads)
    /// is longer than the gap or than a whole piece.
    #[test]
    fn records_and_offsets_do_not_depend_on_piece_size() {
        let records: Vec<Vec<u8>> = (0..300)
            .map(|i| unmapped(&format!("r{i}"), [20, 150, 3000, 90_000, 300_000][i % 5]))
            .collect();
        let header = Header::from_parts(b"@HD\tVN:1.6\n".to_vec(), Vec::new());
        let mut file = Vec::new();
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w =
            crate::io::bam::Writer::new(Box::new(SharedVec(out.clone())), &header, 1, 1).unwrap();
        for r in &records {
            let mut framed = (r.len() as u32).to_le_bytes().to_vec();
            framed.extend_from_slice(r);
            w.write_framed(&framed).unwrap();
        }
        w.finish().unwrap();
        file.extend_from_slice(&out.lock().unwrap());
        let read_all = |target: usize| {
            let input = crate::io::input::Input::from_reader(
                "t",
                Box::new(std::io::Cursor::new(file.clone())),
            );
            let (mut r, _) = Reader::new(bgzf::Reader::new(input, target)).unwrap();
            let (mut got, mut offsets) = (Vec::new(), Vec::new());
            while let Some((batch, located)) = r.read_batch_located().unwrap() {
                got.extend(batch.iter().map(|x| x.bytes().to_vec()));
                offsets.extend_from_slice(&located[..located.len() - 1]);
            }
            (got, offsets)
        };
        let (whole, offsets) = read_all(1 << 30);
        assert!(whole == records, "one piece");
        for target in [100, 70_000, 200_000, 1 << 20] {
            let (got, at) = read_all(target);
            assert!(got == records, "piece target {target}");
            assert_eq!(at, offsets, "piece target {target}");
        }
    }

    use crate::io::test_sink::SharedSink as SharedVec;

    #[test]
    fn name_padding_must_be_nul() {
        let with_padding = |padding: &[u8]| {
            let mut r = vec![0u8; layout::FIXED_LEN];
            r[layout::L_READ_NAME] = (2 + padding.len()) as u8;
            r.extend_from_slice(b"r\0");
            r.extend_from_slice(padding);
            r
        };
        assert!(validate_record(&with_padding(&[0; 20]), 1, 1).is_ok());
        let mut garbage = [0u8; layout::NAME_EXT_LEN];
        garbage[layout::EXT_POS_HIGH] = 1;
        let err = validate_record(&with_padding(&garbage), 1, 3).expect_err("not NUL");
        assert!(
            matches!(
                err,
                ReadError::BadRecord { record: 3, source: view::RecordError::NameGarbage }
            ),
            "{err}"
        );
    }

    #[test]
    fn frames_complete_records_only() {
        let mut b = Batch::default();
        b.push(&[0; 36]);
        b.push(&[0; 40]);
        let (starts, used) = frame_records(&b.data[..50], 0).unwrap();
        assert_eq!((starts, used), (vec![0], 40));
        assert!(matches!(
            frame_records(&[4, 0, 0, 0, 1, 2, 3, 4], 0),
            Err(ReadError::BadBlockSize { .. })
        ));
    }
}
