//! BAM writing: the header in its own BGZF block(s), then records, through `bgzf::Writer`.
//!
//! A record holding a POS, PNEXT or TLEN beyond 32 bits (from SAM, see `record::layout`) is
//! refused as htslib's `bam_write1` refuses it; one with a CIGAR of more than 65,535 operations is
//! written in BAM's placeholder + `CG` tag form (`record::long_cigar`). So the name extension
//! never reaches a BAM file.

use std::io::Write;

use crate::io::bgzf;
use crate::record::{Batch, Header, layout, long_cigar};

/// htslib's `bam_write1` error for a record whose values do not fit BAM's 32-bit fields; carried
/// inside the `std::io::Error` the writer returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Positional data is too large for BAM format")]
pub struct PositionTooLarge;

impl PositionTooLarge {
    /// True when `e` is this error.
    pub fn is(e: &std::io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<PositionTooLarge>())
    }
}

/// Refuses a framed record (`block_size` first) that BAM cannot hold.
#[inline]
fn check_fits_bam(framed: &[u8]) -> std::io::Result<()> {
    if layout::has_wide_values(&framed[4..]) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, PositionTooLarge));
    }
    Ok(())
}

/// htslib's `bam_write1` refusal of a long CIGAR whose reference span BAM cannot hold; carried
/// inside the `std::io::Error` the writer returns.
pub fn is_span_too_long(e: &std::io::Error) -> Option<&long_cigar::SpanTooLongForBam> {
    e.get_ref()?.downcast_ref::<long_cigar::SpanTooLongForBam>()
}

pub struct Writer {
    bgzf: bgzf::Writer,
}

impl Writer {
    /// Writes the header and returns a writer for records (`bam_hdr_write` then `bgzf_flush`).
    pub fn new(
        sink: Box<dyn Write + Send>,
        header: &Header,
        level: i32,
        threads: usize,
    ) -> std::io::Result<Self> {
        Self::with_engine(sink, header, (level, bgzf::codec::deflate_engine()), threads)
    }

    /// [`Writer::new`] deflating with `engine` (temporary files: see [`bgzf::Writer::with_engine`]).
    pub fn with_engine(
        sink: Box<dyn Write + Send>,
        header: &Header,
        compression: (i32, bgzf::codec::Engine),
        threads: usize,
    ) -> std::io::Result<Self> {
        let mut bgzf = bgzf::Writer::with_engine(sink, compression, threads)?;
        bgzf.write_bytes(&header.encode_bam())?;
        bgzf.flush_block()?;
        Ok(Writer { bgzf })
    }

    /// Writes one record given with its `block_size` prefix.
    #[inline]
    pub fn write_framed(&mut self, framed: &[u8]) -> std::io::Result<()> {
        if layout::uses_name_ext(&framed[4..]) {
            return self.write_extended(framed);
        }
        self.bgzf.write_unit(framed)
    }

    /// A record with a name extension: refused if a value does not fit 32 bits, else it holds a
    /// long CIGAR, written as BAM stores one.
    #[cold]
    fn write_extended(&mut self, framed: &[u8]) -> std::io::Result<()> {
        check_fits_bam(framed)?;
        let mut bam = Vec::new();
        long_cigar::to_bam(&framed[4..], &mut bam)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.bgzf.write_unit(&bam)
    }

    /// Writes many framed records; same bytes as one [`Writer::write_framed`] per record.
    pub fn write_framed_all(&mut self, framed: &[&[u8]]) -> std::io::Result<()> {
        // All or nothing, as one call: records before a refused one are not written either.
        let mut extended = false;
        for f in framed {
            if layout::uses_name_ext(&f[4..]) {
                check_fits_bam(f)?;
                extended = true;
            }
        }
        if extended {
            // Long CIGARs change size on the way out: one record at a time.
            return framed.iter().try_for_each(|f| self.write_framed(f));
        }
        self.bgzf.write_units(framed)
    }

    /// Writes the framed records of `units` (of nonzero size), gathered and deflated by jobs
    /// `spawner` runs; returns once they are queued ([`bgzf::Writer::write_units_shared`]). The
    /// caller has checked that none uses the name extension ([`layout::uses_name_ext`]): those
    /// change size on the way out.
    pub fn write_units_shared<'s, U: bgzf::gather::Units + Send + Sync + 's>(
        &mut self,
        units: std::sync::Arc<U>,
        spawner: &impl bgzf::stage::Spawner<'s>,
    ) -> std::io::Result<()> {
        self.bgzf.write_units_shared(units, spawner)
    }

    pub fn write_batch(&mut self, batch: &Batch) -> std::io::Result<()> {
        for i in 0..batch.len() {
            self.write_framed(batch.framed(i))?;
        }
        Ok(())
    }

    pub fn finish(self) -> std::io::Result<Box<dyn Write + Send>> {
        self.bgzf.finish()
    }

    /// Records each later record's start virtual offset (for `--write-index`).
    pub fn track_records(&mut self) {
        self.bgzf.track_units();
    }

    /// Finishes; returns each tracked record's start virtual offset and the data's end offset.
    pub fn finish_tracked(self) -> std::io::Result<(Box<dyn Write + Send>, Vec<u64>, u64)> {
        self.bgzf.finish_tracked()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(name_region: &[u8]) -> Vec<u8> {
        let mut rec = vec![0u8; layout::FIXED_LEN];
        rec[layout::L_READ_NAME] = name_region.len() as u8;
        rec.extend_from_slice(name_region);
        let mut f = (rec.len() as u32).to_le_bytes().to_vec();
        f.extend_from_slice(&rec);
        f
    }

    #[test]
    fn refuses_records_with_values_beyond_32_bits() {
        let mut w = Writer::new(Box::new(Vec::new()), &Header::default(), 0, 1).unwrap();
        let ordinary = framed(b"r\0");
        let mut wide_region = b"r\0".to_vec();
        wide_region.extend_from_slice(&[2, 0, 0, 0]);
        wide_region.extend_from_slice(&[0; layout::NAME_EXT_LEN - 4]);
        let wide = framed(&wide_region);
        w.write_framed(&ordinary).unwrap();
        assert!(PositionTooLarge::is(&w.write_framed(&wide).unwrap_err()));
        assert!(PositionTooLarge::is(&w.write_framed_all(&[&ordinary, &wide]).unwrap_err()));
        // An all-zero extension is NUL padding, which BAM may hold.
        w.write_framed(&framed(&[b'r', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
            .unwrap();
    }
}
