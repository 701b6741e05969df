//! Test support: a minimal BGZF + BAM walk that yields what the index needs per record, with
//! virtual offsets following htslib 1.24's `bgzf_tell` (a fully read block is left at once).

use std::io::Read;

use super::build::IndexedRecord;

/// One BAM file, walked.
pub(crate) struct BamWalk {
    pub ref_lengths: Vec<i64>,
    pub records: Vec<IndexedRecord>,
    pub end_voffset: u64,
}

/// Inflated BGZF blocks with their compressed offsets.
struct Blocks {
    blocks: Vec<(u64, Vec<u8>)>,
    block: usize,
    within: usize,
}

impl Blocks {
    fn new(bam: &[u8]) -> Self {
        let mut blocks = Vec::new();
        let mut at = 0;
        while at < bam.len() {
            let bsize = u16::from_le_bytes([bam[at + 16], bam[at + 17]]) as usize + 1;
            let mut data = Vec::new();
            flate2::read::DeflateDecoder::new(&bam[at + 18..at + bsize - 8])
                .read_to_end(&mut data)
                .unwrap();
            blocks.push((at as u64, data));
            at += bsize;
        }
        Blocks { blocks, block: 0, within: 0 }
    }

    fn tell(&self) -> u64 {
        self.blocks[self.block].0 << 16 | self.within as u64
    }

    /// No record bytes remain (only empty blocks, such as the EOF marker, may follow).
    fn at_end(&self) -> bool {
        self.within == self.blocks[self.block].1.len()
            && self.blocks[self.block + 1..].iter().all(|(_, d)| d.is_empty())
    }

    /// Like `bgzf_read`: a fully consumed block is left at once, so `tell` then gives
    /// `(next block, 0)` rather than `(this block, its length)`.
    fn read(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let data = &self.blocks[self.block].1;
            if self.within == data.len() {
                assert!(self.block + 1 < self.blocks.len(), "BAM ends inside a record");
                self.block += 1;
                self.within = 0;
                continue;
            }
            let take = (n - out.len()).min(data.len() - self.within);
            out.extend_from_slice(&data[self.within..self.within + take]);
            self.within += take;
            if self.within == data.len() && self.block + 1 < self.blocks.len() {
                self.block += 1;
                self.within = 0;
            }
        }
        out
    }

    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.read(4).try_into().unwrap())
    }
}

/// Walks a whole BAM file.
pub(crate) fn walk(bam: &[u8]) -> BamWalk {
    let mut blocks = Blocks::new(bam);
    assert_eq!(blocks.read(4), b"BAM\x01");
    let l_text = blocks.i32() as usize;
    blocks.read(l_text);
    let n_ref = blocks.i32();
    let ref_lengths = (0..n_ref)
        .map(|_| {
            let l_name = blocks.i32() as usize;
            blocks.read(l_name);
            i64::from(blocks.i32())
        })
        .collect();
    let mut records = Vec::new();
    loop {
        let voffset_start = blocks.tell();
        if blocks.at_end() {
            return BamWalk { ref_lengths, records, end_voffset: voffset_start };
        }
        let block_size = blocks.i32() as usize;
        let body = blocks.read(block_size);
        let field = |at: usize| i32::from_le_bytes(body[at..at + 4].try_into().unwrap());
        let tid = field(0);
        let pos = i64::from(field(4));
        let l_read_name = body[8] as usize;
        let n_cigar = u16::from_le_bytes([body[12], body[13]]) as usize;
        let flag = u16::from_le_bytes([body[14], body[15]]);
        let is_mapped = flag & 4 == 0;
        let cigar_at = 32 + l_read_name;
        let mut ref_len: i64 = 0;
        for i in 0..n_cigar {
            let op = u32::from_le_bytes(
                body[cigar_at + 4 * i..cigar_at + 4 * i + 4].try_into().unwrap(),
            );
            if matches!(op & 0xf, 0 | 2 | 3 | 7 | 8) {
                ref_len += i64::from(op >> 4);
            }
        }
        if !is_mapped || ref_len == 0 {
            ref_len = 1;
        }
        records.push(IndexedRecord {
            tid,
            beg: pos,
            end: pos + ref_len,
            is_mapped,
            voffset_start,
            voffset_end: blocks.tell(),
        });
    }
}
