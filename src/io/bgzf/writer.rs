//! BGZF writing with htslib's block layout and parallel deflate.
//!
//! Layout rules reproduced from htslib `bgzf.c` (`bgzf_write`, `bgzf_flush_try`) and
//! `sam.c` (`bam_write1`, `bam_hdr_write`):
//! - a block holds at most 0xff00 bytes; data is cut at that size;
//! - before a record is written, the open block is closed if the record would not fit, so a record
//!   straddles blocks only when it is larger than a block;
//! - the BAM header is followed by a flush, so it never shares a block with a record;
//! - the file ends with the 28-byte EOF block.
//!
//! The cut points depend only on the data, so output bytes never depend on the thread count.
//! Closed blocks are staged and deflated in parallel (one libdeflate compressor per thread) once
//! enough are waiting, then written in order.

use std::io::Write;

use rayon::prelude::*;

use super::block::{BLOCK_DATA_MAX, Deflater, EOF_BLOCK};

pub struct Writer {
    sink: Box<dyn Write + Send>,
    level: i32,
    /// Uncompressed bytes of closed blocks followed by the open block.
    staging: Vec<u8>,
    /// End offsets (in `staging`) of closed blocks.
    cuts: Vec<usize>,
    /// Start of the open block in `staging`.
    open_start: usize,
    /// Deflate once this many blocks are closed.
    batch_blocks: usize,
    /// Compressed bytes written so far (the next block's offset).
    written: u64,
    /// With unit tracking (`--write-index`): see [`Writer::track_units`].
    tracking: Option<Tracking>,
}

/// Where each unit started, resolved to virtual offsets once its block is deflated.
///
/// A unit's start is (block number, offset in block); the block's compressed offset is known only
/// after deflate, so `block_offsets` collects it per block number as blocks are written.
#[derive(Default)]
struct Tracking {
    /// Blocks closed so far (the open block's number).
    blocks_closed: u64,
    /// Compressed offset of each written block, by block number.
    block_offsets: Vec<u64>,
    /// Per unit: block number << 16 | offset in that block.
    starts: Vec<u64>,
}

impl Writer {
    /// `level` is samtools' level: −1 default, 0 uncompressed (stored blocks), 1..9.
    pub fn new(sink: Box<dyn Write + Send>, level: i32, threads: usize) -> Self {
        Writer {
            sink,
            level,
            staging: Vec::with_capacity(BLOCK_DATA_MAX * 16),
            cuts: Vec::new(),
            open_start: 0,
            batch_blocks: 16 * threads.max(1),
            written: 0,
            tracking: None,
        }
    }

    /// Records where every later [`Writer::write_unit`] starts, for an index built while writing.
    pub fn track_units(&mut self) {
        // Closed blocks not yet deflated get their offsets recorded too: number them from 0.
        self.tracking =
            Some(Tracking { blocks_closed: self.cuts.len() as u64, ..Tracking::default() });
    }

    fn open_len(&self) -> usize {
        self.staging.len() - self.open_start
    }

    /// Closes the open block if it has data (`bgzf_flush`).
    pub fn flush_block(&mut self) -> std::io::Result<()> {
        if self.open_len() > 0 {
            self.cuts.push(self.staging.len());
            self.open_start = self.staging.len();
            if let Some(t) = self.tracking.as_mut() {
                t.blocks_closed += 1;
            }
            if self.cuts.len() >= self.batch_blocks {
                self.deflate_closed()?;
            }
        }
        Ok(())
    }

    /// Writes bytes, cutting blocks at 0xff00 (`bgzf_write`).
    pub fn write_bytes(&mut self, mut data: &[u8]) -> std::io::Result<()> {
        while !data.is_empty() {
            let room = BLOCK_DATA_MAX - self.open_len();
            let n = room.min(data.len());
            self.staging.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.open_len() == BLOCK_DATA_MAX {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Writes one unit that should not straddle blocks (a BAM record or a SAM line),
    /// closing the open block first when it would not fit (`bgzf_flush_try`).
    pub fn write_unit(&mut self, unit: &[u8]) -> std::io::Result<()> {
        if self.open_len() + unit.len() > BLOCK_DATA_MAX {
            self.flush_block()?;
        }
        if let Some(t) = self.tracking.as_mut() {
            let at = (self.staging.len() - self.open_start) as u64;
            t.starts.push(t.blocks_closed << 16 | at);
        }
        self.write_bytes(unit)
    }

    /// Writes many units at once, laid out exactly as successive [`Writer::write_unit`] calls
    /// would, but with the block assembly (copying units into blocks) done in parallel together
    /// with deflate: the cut points are computed first from the unit lengths alone.
    pub fn write_units(&mut self, units: &[&[u8]]) -> std::io::Result<()> {
        /// A block to build: where its bytes start (unit, offset in unit) and how many there are.
        struct Spec {
            unit: usize,
            offset: usize,
            len: usize,
        }
        self.deflate_closed()?;
        // Bytes already in the open block belong in front of the first block.
        let prefix = self.staging.split_off(self.open_start);
        self.staging.clear();
        self.open_start = 0;
        let mut specs: Vec<Spec> = Vec::new();
        let mut open = prefix.len();
        let (mut start_unit, mut start_offset) = (0usize, 0usize);
        let first_block_number = self.tracking.as_ref().map_or(0, |t| t.blocks_closed);
        for (i, u) in units.iter().enumerate() {
            if open + u.len() > BLOCK_DATA_MAX && open > 0 {
                specs.push(Spec { unit: start_unit, offset: start_offset, len: open });
                (open, start_unit, start_offset) = (0, i, 0);
            }
            if let Some(t) = self.tracking.as_mut() {
                t.starts.push((first_block_number + specs.len() as u64) << 16 | open as u64);
            }
            let mut at = 0;
            while at < u.len() {
                let n = (BLOCK_DATA_MAX - open).min(u.len() - at);
                open += n;
                at += n;
                if open == BLOCK_DATA_MAX {
                    specs.push(Spec { unit: start_unit, offset: start_offset, len: open });
                    open = 0;
                    (start_unit, start_offset) = if at == u.len() { (i + 1, 0) } else { (i, at) };
                }
            }
        }
        // Copies `len` bytes starting at (unit, offset), after `lead` bytes of prefix.
        let gather = |spec: &Spec, lead: &[u8], out: &mut Vec<u8>| {
            out.extend_from_slice(lead);
            let (mut unit, mut offset, mut left) = (spec.unit, spec.offset, spec.len - lead.len());
            while left > 0 {
                let u = units[unit];
                let n = (u.len() - offset).min(left);
                out.extend_from_slice(&u[offset..offset + n]);
                left -= n;
                unit += 1;
                offset = 0;
            }
        };
        let level = self.level;
        let group = 64 * rayon::current_num_threads().max(1);
        for (g, chunk) in specs.chunks(group).enumerate() {
            let blocks: Vec<Vec<u8>> = chunk
                .par_iter()
                .enumerate()
                .map_init(
                    || (Deflater::new(level), Vec::with_capacity(BLOCK_DATA_MAX)),
                    |(d, raw), (k, spec)| {
                        raw.clear();
                        let lead: &[u8] = if g == 0 && k == 0 { &prefix } else { &[] };
                        gather(spec, lead, raw);
                        let mut out = Vec::new();
                        d.deflate_into(raw, &mut out);
                        out
                    },
                )
                .collect();
            for b in &blocks {
                if let Some(t) = self.tracking.as_mut() {
                    t.block_offsets.push(self.written);
                    t.blocks_closed += 1;
                }
                self.sink.write_all(b)?;
                self.written += b.len() as u64;
            }
        }
        // The rest stays in the open block.
        if open > 0 {
            let lead: &[u8] = if specs.is_empty() { &prefix } else { &[] };
            let tail = Spec { unit: start_unit, offset: start_offset, len: open };
            gather(&tail, lead, &mut self.staging);
        }
        Ok(())
    }

    /// Deflates every closed block in parallel and writes them in order.
    fn deflate_closed(&mut self) -> std::io::Result<()> {
        if self.cuts.is_empty() {
            return Ok(());
        }
        let mut ranges = Vec::with_capacity(self.cuts.len());
        let mut start = 0;
        for &end in &self.cuts {
            ranges.push(start..end);
            start = end;
        }
        let level = self.level;
        let staging = &self.staging;
        let blocks: Vec<Vec<u8>> = ranges
            .into_par_iter()
            .map_init(
                || Deflater::new(level),
                |d, r| {
                    let mut out = Vec::new();
                    d.deflate_into(&staging[r], &mut out);
                    out
                },
            )
            .collect();
        for b in &blocks {
            if let Some(t) = self.tracking.as_mut() {
                t.block_offsets.push(self.written);
            }
            self.sink.write_all(b)?;
            self.written += b.len() as u64;
        }
        self.staging.drain(..start);
        self.open_start -= start;
        self.cuts.clear();
        Ok(())
    }

    /// Closes the open block, writes everything and the EOF block, and flushes the sink.
    pub fn finish(self) -> std::io::Result<Box<dyn Write + Send>> {
        Ok(self.finish_tracked()?.0)
    }

    /// As [`Writer::finish`], also returning the virtual offset where each tracked unit started
    /// and the virtual offset of the end of the data (the EOF block's offset `<< 16`).
    pub fn finish_tracked(mut self) -> std::io::Result<(Box<dyn Write + Send>, Vec<u64>, u64)> {
        self.flush_block()?;
        self.deflate_closed()?;
        let end = self.written << 16;
        self.sink.write_all(&EOF_BLOCK)?;
        self.sink.flush()?;
        let starts = match self.tracking.take() {
            Some(t) => t
                .starts
                .iter()
                .map(|&s| {
                    let block = (s >> 16) as usize;
                    // A unit at the very end of the data starts "in" the block after the last.
                    let coffset = t.block_offsets.get(block).copied().unwrap_or(self.written);
                    coffset << 16 | (s & 0xffff)
                })
                .collect(),
            None => Vec::new(),
        };
        Ok((self.sink, starts, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::bgzf::block;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn block_sizes(file: &[u8]) -> Vec<usize> {
        let mut at = 0;
        let mut sizes = Vec::new();
        while at < file.len() {
            let n = block::block_size(&file[at..]).unwrap();
            sizes.push(block::inflated_size(&file[at..at + n]));
            at += n;
        }
        sizes
    }

    #[test]
    fn units_do_not_straddle_and_large_data_is_cut() {
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()), 1, 2);
        w.write_bytes(b"header").unwrap();
        w.flush_block().unwrap();
        w.write_unit(&[1; 40000]).unwrap();
        w.write_unit(&[2; 40000]).unwrap();
        w.write_unit(&[3; 70000]).unwrap();
        w.finish().unwrap();
        let file = out.0.lock().unwrap().clone();
        assert_eq!(block_sizes(&file), vec![6, 40000, 40000, 0xff00, 70000 - 0xff00, 0]);
        assert!(file.ends_with(&block::EOF_BLOCK));
    }

    #[test]
    fn batched_units_give_the_same_bytes_and_offsets() {
        let units: Vec<Vec<u8>> = (0..400u32)
            .map(|i| vec![(i % 251) as u8; [30, 700, 5000, 65280, 70000, 1][i as usize % 6]])
            .collect();
        let run = |batched: bool| {
            let out = Shared::default();
            let mut w = Writer::new(Box::new(out.clone()), 1, 2);
            w.write_bytes(b"head").unwrap();
            w.track_units();
            if batched {
                let refs: Vec<&[u8]> = units.iter().map(Vec::as_slice).collect();
                w.write_units(&refs[..150]).unwrap();
                w.write_unit(&units[150]).unwrap();
                w.write_units(&refs[151..]).unwrap();
            } else {
                for u in &units {
                    w.write_unit(u).unwrap();
                }
            }
            let (_, starts, end) = w.finish_tracked().unwrap();
            let file = out.0.lock().unwrap().clone();
            (file, starts, end)
        };
        let (a, b) = (run(false), run(true));
        assert!(a.0 == b.0, "bytes differ");
        assert_eq!(a.1, b.1);
        assert_eq!(a.2, b.2);
    }

    #[test]
    fn tracked_units_resolve_to_virtual_offsets() {
        let out = Shared::default();
        let mut w = Writer::new(Box::new(out.clone()), 1, 1);
        w.write_bytes(b"header").unwrap();
        w.flush_block().unwrap();
        w.track_units();
        w.write_unit(&[1; 30000]).unwrap();
        w.write_unit(&[2; 30000]).unwrap();
        w.write_unit(&[3; 30000]).unwrap();
        let (_, starts, end) = w.finish_tracked().unwrap();
        let file = out.0.lock().unwrap().clone();
        let mut offsets = vec![0u64];
        while (*offsets.last().unwrap() as usize) < file.len() {
            let at = *offsets.last().unwrap() as usize;
            offsets.push((at + block::block_size(&file[at..]).unwrap()) as u64);
        }
        assert_eq!(starts, vec![offsets[1] << 16, offsets[1] << 16 | 30000, offsets[2] << 16]);
        assert_eq!(end, offsets[3] << 16);
    }
}
