//! mdsam's own CRAM 2.1 and 3.x record decoder: a container's bytes to raw BAM records, without noodles'
//! record model in between (its decode was 3–10× slower than htslib's; see `reader.rs`).
//!
//! - [`compression_header`]: the preservation map and the encodings of data series and tags;
//! - [`encoding`]: reading values through those encodings;
//! - [`slice`]: slice headers and blocks;
//! - [`records`]: the data series of each record, its features, CIGAR, bases and qualities;
//! - [`bam_out`]: mates linked and each record written as raw BAM, as htslib's `cram_to_bam`.
//!
//! What it does not handle it reports as [`DecodeError::Unsupported`], and the reader decodes
//! that container with noodles instead.

pub mod bam_out;
pub mod compression_header;
pub mod encoding;
pub mod records;
pub mod slice;

use std::sync::Arc;

use noodles_fasta as fasta;

use crate::io::cram::htslib_fields::ReferenceWindow;
use crate::io::cram::varint::Cursor;
use crate::record::Batch;

#[derive(Debug)]
pub enum DecodeError {
    /// Valid CRAM this decoder does not read; noodles decodes the container instead.
    Unsupported(String),
    Corrupt(String),
    /// A reference that could not be found (the message names it) or does not match.
    Reference(String),
}

impl DecodeError {
    pub fn corrupt(why: impl Into<String>) -> DecodeError {
        DecodeError::Corrupt(why.into())
    }
}

/// What decoding every container of a file shares.
pub struct FileContext<'a> {
    /// `@SQ` names and lengths, by reference id.
    pub references: &'a [(Vec<u8>, i64)],
    /// `@RG` IDs, by read-group index.
    pub read_groups: &'a [Vec<u8>],
    pub repository: &'a fasta::Repository,
    /// htslib's name prefix for reads stored without names: the file's base name.
    pub name_prefix: &'a [u8],
    pub needs: Needs,
    /// The file's CRAM major version (2 has no CRC32s and ITF8 record counters).
    pub major_version: u8,
}

/// What of each record the command will look at (htslib's required fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    Everything,
    /// No bases, qualities or tags made from them (MD, NM): no reference is fetched, the bases
    /// are whatever the stored features give, and qualities are not decompressed.
    NoBases,
    /// Only flags, reference, mapping quality and mate reference (`idxstats`, `flagstat`,
    /// `view -c` with flag filters): where the layout allows, only those series are read.
    FlagsOnly,
}

thread_local! {
    /// A slice's decoded records, kept per thread so that their buffers are reused.
    static DECODED: std::cell::RefCell<records::Decoded> = std::cell::RefCell::default();
}

/// Decodes one container (`body`: its bytes after the container header; `slices`: where its
/// slices lie in `body`) into a batch of raw BAM records.
pub fn decode_container<'a>(
    body: &[u8],
    slices: &[std::ops::Range<usize>],
    records: usize,
    file: &'a FileContext<'a>,
) -> Result<Batch, DecodeError> {
    let first = slices.first().map_or(body.len(), |s| s.start).min(body.len());
    let mut c = Cursor::new(&body[..first]);
    let (_, _, data) = slice::read_block(&mut c, file.major_version)?;
    let header = compression_header::parse(&data)?;
    // A kept buffer: the batch is freed on the writer's thread, and a fresh one per container
    // faulted in (and cleared) new pages (`io::recycle`). The header's record count is only
    // trusted as far as the container's bytes could hold that many records (one a byte); the
    // batch grows past that if it must.
    let records = records.min(body.len());
    let mut batch = Batch {
        data: crate::io::recycle::take(records * 400),
        starts: Vec::with_capacity(records),
    };
    let unknown_read_group = match file.read_groups.last() {
        Some(id) if id == b"UNKNOWN" => file.read_groups.len() as i32 - 1,
        _ => -1,
    };
    let mut scratch = bam_out::Scratch::default();
    // With no bases needed, the qualities' block (the largest) is not even decompressed, when
    // no other series shares it.
    let flag_blocks = match file.needs {
        Needs::FlagsOnly => header.exclusive_blocks(&records::FLAG_SERIES),
        _ => None,
    };
    let skipped_block = match file.needs {
        Needs::Everything => None,
        _ => header.exclusive_quality_block(),
    };
    let wanted = match (&flag_blocks, skipped_block) {
        (Some(blocks), _) => slice::Wanted::Only(blocks),
        (None, Some(id)) => slice::Wanted::AllBut(id),
        (None, None) => slice::Wanted::All,
    };
    for range in slices {
        let bytes = body
            .get(range.clone())
            .ok_or_else(|| DecodeError::corrupt("a slice lies outside its container"))?;
        let (slice_header, blocks) = slice::read_slice(bytes, wanted, file.major_version)?;
        let mut reference = slice_reference(&slice_header, &header, &blocks, file)?;
        if let Some(w) = reference.fixed_window() {
            check_md5(&slice_header, w, file)?;
        }
        let input = records::SliceInput {
            header: &header,
            slice: &slice_header,
            unknown_read_group,
            references: file.references.len(),
            skip_qualities: skipped_block.is_some(),
        };
        DECODED.with_borrow_mut(|decoded| {
            if flag_blocks.is_some() {
                records::decode_flags_only(&input, &blocks, decoded)?;
            } else {
                records::decode_records(&input, &blocks, &mut reference, decoded)?;
            }
            bam_out::link_mates(&mut decoded.records)?;
            bam_out::append(decoded, &slice_header, &mut reference, file, &mut scratch, &mut batch)
        })?;
    }
    Ok(batch)
}

/// Where a slice's records get their reference bases (htslib's `s->ref`).
pub enum ReferenceSource<'a> {
    None,
    Embedded(ReferenceWindow<'a>),
    External(Arc<fasta::record::Sequence>),
    /// A multi-reference slice: each record's own, fetched when the reference id changes.
    PerRecord {
        file: &'a FileContext<'a>,
        current: Option<(i32, Arc<fasta::record::Sequence>)>,
    },
}

impl ReferenceSource<'_> {
    /// The bases for the slice as a whole; `None` for a multi-reference slice.
    fn fixed_window(&self) -> Option<ReferenceWindow<'_>> {
        match self {
            ReferenceSource::Embedded(w) => Some(*w),
            ReferenceSource::External(s) => {
                Some(ReferenceWindow { bases: (**s).as_ref(), start: 1 })
            }
            _ => None,
        }
    }

    /// The bases a record on reference `ref_id` is decoded against.
    pub fn window(&mut self, ref_id: i32) -> Result<Option<ReferenceWindow<'_>>, DecodeError> {
        if ref_id < 0 {
            return Ok(None);
        }
        if let ReferenceSource::PerRecord { file, current } = self {
            if current.as_ref().is_none_or(|(id, _)| *id != ref_id) {
                *current = Some((ref_id, fetch(file, ref_id)?));
            }
            return Ok(current
                .as_ref()
                .map(|(_, s)| ReferenceWindow { bases: (**s).as_ref(), start: 1 }));
        }
        Ok(self.fixed_window())
    }
}

fn fetch(file: &FileContext<'_>, ref_id: i32) -> Result<Arc<fasta::record::Sequence>, DecodeError> {
    let (name, _) = usize::try_from(ref_id)
        .ok()
        .and_then(|id| file.references.get(id))
        .ok_or_else(|| DecodeError::corrupt("reference id out of range"))?;
    match file.repository.get(name) {
        Some(Ok(sequence)) => Ok(sequence),
        Some(Err(e)) => Err(DecodeError::Reference(e.to_string())),
        None => Err(DecodeError::Reference(format!(
            "reference {} not found",
            String::from_utf8_lossy(name)
        ))),
    }
}

/// htslib's `s->ref`: the embedded reference if the slice has one, else the external one unless
/// the container says none is needed (`RR` false) or the command needs no bases.
fn slice_reference<'a>(
    slice: &slice::SliceHeader,
    header: &compression_header::CompressionHeader,
    blocks: &'a slice::SliceBlocks,
    file: &'a FileContext<'a>,
) -> Result<ReferenceSource<'a>, DecodeError> {
    // As htslib without `SAM_SEQ` in the required fields: no reference, no MD5 check.
    if file.needs != Needs::Everything {
        return Ok(ReferenceSource::None);
    }
    let external = header.reference_required;
    if slice.reference_id == -2 {
        return Ok(if external {
            ReferenceSource::PerRecord { file, current: None }
        } else {
            ReferenceSource::None
        });
    }
    if slice.reference_id < 0 {
        return Ok(ReferenceSource::None);
    }
    if slice.embedded_reference >= 0 {
        let block = blocks
            .external
            .iter()
            .find(|(id, _)| *id == slice.embedded_reference)
            .ok_or_else(|| DecodeError::corrupt("embedded reference block missing"))?;
        return Ok(ReferenceSource::Embedded(ReferenceWindow {
            bases: &block.1,
            start: slice.alignment_start,
        }));
    }
    if !external {
        return Ok(ReferenceSource::None);
    }
    Ok(ReferenceSource::External(fetch(file, slice.reference_id)?))
}

/// The slice's reference MD5 against the bases it will be decoded with (htslib checks it when
/// bases are needed; an all-zero MD5 is not checked).
fn check_md5(
    slice: &slice::SliceHeader,
    w: ReferenceWindow<'_>,
    file: &FileContext<'_>,
) -> Result<(), DecodeError> {
    use md5::{Digest, Md5};
    if slice.reference_md5 == [0; 16] {
        return Ok(());
    }
    let from = usize::try_from(slice.alignment_start - w.start).unwrap_or(0).min(w.bases.len());
    let span = usize::try_from(slice.alignment_span).unwrap_or(0);
    let to = from.saturating_add(span).min(w.bases.len());
    let digest: [u8; 16] = Md5::digest(&w.bases[from..to]).into();
    if digest == slice.reference_md5 {
        return Ok(());
    }
    let name = usize::try_from(slice.reference_id)
        .ok()
        .and_then(|id| file.references.get(id))
        .map_or("?".into(), |(n, _)| String::from_utf8_lossy(n).into_owned());
    Err(DecodeError::Reference(format!(
        "MD5 checksum reference mismatch at {name}:{}-{}",
        slice.alignment_start,
        slice.alignment_start + slice.alignment_span - 1
    )))
}
