//! Test records: a SAM-like description built into BAM record bytes.

use crate::record::Header;
use crate::record::aux::push_int;
use crate::record::cigar;
use crate::record::layout::SEQ_CODES;

/// One record in SAM terms (1-based positions, quality as SAM text), built as BAM bytes.
pub struct Sam {
    pub name: &'static str,
    pub flag: u16,
    pub tid: i32,
    pub pos: i32,
    pub mapq: u8,
    pub cigar: &'static str,
    pub mate_tid: i32,
    pub mate_pos: i32,
    pub tlen: i32,
    pub seq: &'static str,
    pub qual: &'static str,
    pub aux: Vec<u8>,
}

impl Sam {
    pub fn mapped() -> Sam {
        Sam {
            name: "r1",
            flag: 99,
            tid: 0,
            pos: 10,
            mapq: 60,
            cigar: "2H3S10M2S1H",
            mate_tid: 0,
            mate_pos: 50,
            tlen: 45,
            seq: "ACGTACGTACGTACG",
            qual: "IIIIIIIIIIIIII!",
            aux: Vec::new(),
        }
    }

    pub fn unmapped() -> Sam {
        Sam {
            name: "r2",
            flag: 4,
            tid: -1,
            pos: 0,
            mapq: 0,
            cigar: "*",
            mate_tid: -1,
            mate_pos: 0,
            tlen: 0,
            seq: "*",
            qual: "*",
            aux: Vec::new(),
        }
    }

    pub fn tag_z(mut self, tag: &str, value: &str) -> Sam {
        self.aux.extend_from_slice(tag.as_bytes());
        self.aux.push(b'Z');
        self.aux.extend_from_slice(value.as_bytes());
        self.aux.push(0);
        self
    }

    pub fn tag_i(mut self, tag: &str, value: i64) -> Sam {
        push_int(&mut self.aux, [tag.as_bytes()[0], tag.as_bytes()[1]], value);
        self
    }

    pub fn tag_raw(mut self, raw: &[u8]) -> Sam {
        self.aux.extend_from_slice(raw);
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        let ops: Vec<u32> = if self.cigar == "*" {
            Vec::new()
        } else {
            let mut ops = Vec::new();
            let mut len = 0u32;
            for c in self.cigar.bytes() {
                if c.is_ascii_digit() {
                    len = len * 10 + (c - b'0') as u32;
                } else {
                    ops.push((len << 4) | cigar::op_code(c).unwrap() as u32);
                    len = 0;
                }
            }
            ops
        };
        let seq: Vec<u8> = if self.seq == "*" {
            Vec::new()
        } else {
            self.seq
                .bytes()
                .map(|b| SEQ_CODES.iter().position(|&c| c == b).unwrap() as u8)
                .collect()
        };
        let mut b = Vec::new();
        b.extend_from_slice(&self.tid.to_le_bytes());
        b.extend_from_slice(&(self.pos - 1).to_le_bytes());
        b.push(self.name.len() as u8 + 1);
        b.push(self.mapq);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(ops.len() as u16).to_le_bytes());
        b.extend_from_slice(&self.flag.to_le_bytes());
        b.extend_from_slice(&(seq.len() as i32).to_le_bytes());
        b.extend_from_slice(&self.mate_tid.to_le_bytes());
        b.extend_from_slice(&(self.mate_pos - 1).to_le_bytes());
        b.extend_from_slice(&self.tlen.to_le_bytes());
        b.extend_from_slice(self.name.as_bytes());
        b.push(0);
        for op in &ops {
            b.extend_from_slice(&op.to_le_bytes());
        }
        for pair in seq.chunks(2) {
            b.push(pair[0] << 4 | pair.get(1).copied().unwrap_or(0));
        }
        if self.qual == "*" {
            b.extend(std::iter::repeat_n(0xff, seq.len()));
        } else {
            b.extend(self.qual.bytes().map(|q| q - 33));
        }
        b.extend_from_slice(&self.aux);
        crate::record::view::validate(&b).unwrap();
        b
    }
}

pub fn header() -> Header {
    Header::from_sam_text(b"@HD\tVN:1.6\n@SQ\tSN:chr1\tLN:1000\n@RG\tID:g1\tLB:libA\n".to_vec())
        .unwrap()
}
