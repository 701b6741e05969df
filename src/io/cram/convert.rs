//! noodles' view of a CRAM file ⇄ mdsam's: the SAM header noodles decodes records against, built
//! from mdsam's header, and decoded CRAM records encoded as raw BAM records in a [`Batch`].

use std::io;
use std::num::NonZero;

use noodles_bam as bam;
use noodles_sam::{self as sam, alignment::io::Write as _};

use crate::record::Header;
use crate::record::header::line_field;

/// The noodles header a CRAM's records are decoded against: its `@SQ` names (reference ids index
/// them) and `@RG` ids (a record's read group is an index into them), in file order.
///
/// Built from mdsam's own header rather than parsed by noodles, whose header parser refuses what
/// htslib accepts (a duplicate `@RG` ID, for one).
pub fn decoding_header(header: &Header) -> sam::Header {
    let mut builder = sam::Header::builder();
    for reference in header.refs() {
        let len = NonZero::new(reference.len as usize).unwrap_or(NonZero::<usize>::MIN);
        let map = sam::header::record::value::Map::<
            sam::header::record::value::map::ReferenceSequence,
        >::new(len);
        builder = builder.add_reference_sequence(reference.name.clone(), map);
    }
    for line in header.lines().filter(|l| l.starts_with(b"@RG\t")) {
        if let Some(id) = line_field(line, b"ID") {
            builder = builder.add_read_group(id.to_vec(), Default::default());
        }
    }
    builder.build()
}

/// Encodes noodles records as raw BAM records, one at a time into a reused buffer.
pub struct RecordEncoder {
    writer: bam::io::Writer<Vec<u8>>,
}

impl Default for RecordEncoder {
    fn default() -> Self {
        RecordEncoder { writer: bam::io::Writer::from(Vec::with_capacity(1024)) }
    }
}

impl RecordEncoder {
    /// The record's BAM bytes, without `block_size`.
    pub fn encode(
        &mut self,
        header: &sam::Header,
        record: &dyn sam::alignment::Record,
    ) -> io::Result<&[u8]> {
        self.writer.get_mut().clear();
        self.writer.write_alignment_record(header, record)?;
        Ok(&self.writer.get_ref()[4..])
    }
}
