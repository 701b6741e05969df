//! Edits `view` makes to records it writes: flag changes, tag removal, and `-p` unmapping.

use crate::record::layout;
use crate::record::{RecordRef, cigar};

/// Which aux tags to drop: `-x` names them, `--keep-tag`/`-x ^` names the only ones to keep.
#[derive(Clone, Debug, Default)]
pub struct TagEdit {
    pub tags: Vec<[u8; 2]>,
    pub keep_only: bool,
}

impl TagEdit {
    pub fn is_active(&self) -> bool {
        !self.tags.is_empty() || self.keep_only
    }

    fn drops(&self, tag: [u8; 2]) -> bool {
        self.tags.contains(&tag) != self.keep_only
    }
}

/// What to change on each written record.
#[derive(Clone, Debug, Default)]
pub struct RecordEdit {
    pub add_flags: u16,
    pub remove_flags: u16,
    pub tags: TagEdit,
    pub collapse_back_ops: bool,
}

impl RecordEdit {
    pub fn is_active(&self) -> bool {
        self.add_flags != 0 || self.remove_flags != 0 || self.tags.is_active() || self.collapse_back_ops
    }

    /// Appends the edited record (without `block_size`) to `out`.
    pub fn apply(&self, r: &RecordRef<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        if self.collapse_back_ops && r.cigar().any(|c| cigar::op(c) == cigar::BACK) {
            collapse_back(r, out);
        } else {
            out.extend_from_slice(&r.bytes()[..r.aux_offset()]);
        }
        let flag = (r.flag() | self.add_flags) & !self.remove_flags;
        out[start + layout::FLAG..start + layout::FLAG + 2].copy_from_slice(&flag.to_le_bytes());
        for f in r.aux() {
            if !self.tags.drops(f.tag) {
                out.extend_from_slice(f.raw);
            }
        }
    }
}

/// `-p`: a filtered-out record kept as unmapped: UNMAP set, MAPQ 0, TLEN 0, CIGAR removed.
pub fn unmap(r: &RecordRef<'_>, out: &mut Vec<u8>) {
    let b = r.bytes();
    let start = out.len();
    let name_end = layout::FIXED_LEN + r.read_name().len() + 1;
    out.extend_from_slice(&b[..name_end]);
    out.extend_from_slice(&b[name_end + 4 * r.n_cigar_op()..]);
    let rec = &mut out[start..];
    let flag = r.flag() | layout::flags::UNMAP;
    rec[layout::FLAG..layout::FLAG + 2].copy_from_slice(&flag.to_le_bytes());
    rec[layout::MAPQ] = 0;
    rec[layout::TLEN..layout::TLEN + 4].copy_from_slice(&0i32.to_le_bytes());
    rec[layout::N_CIGAR_OP..layout::N_CIGAR_OP + 2].copy_from_slice(&0u16.to_le_bytes());
}

/// Removes CIGAR `B` (back) operations as samtools' `bam_remove_B` does: the sequence and
/// qualities that the back step made overlap are dropped, and adjacent operations of the same
/// kind are merged. The caller appends the aux fields.
fn collapse_back(r: &RecordRef<'_>, out: &mut Vec<u8>) {
    let ops: Vec<u32> = r.cigar().collect();
    let l_seq = r.l_seq();
    let seq: Vec<u8> = (0..l_seq).map(|i| r.base_code(i)).collect();
    let qual = r.qual().to_vec();
    let mut new_ops: Vec<u32> = Vec::with_capacity(ops.len());
    let mut keep = vec![true; l_seq];
    let mut qpos = 0usize; // query position after the ops so far
    for &c in &ops {
        let (op, len) = (cigar::op(c), cigar::len(c) as usize);
        if op == cigar::BACK {
            // Step back `len` bases: trim the preceding query-consuming ops and drop those bases.
            let mut left = len;
            while left > 0 {
                let Some(last) = new_ops.last_mut() else { break };
                let (lop, llen) = (cigar::op(*last), cigar::len(*last) as usize);
                let take = left.min(llen);
                if cigar::consumes_query(lop) {
                    for k in 0..take {
                        if qpos > k {
                            keep[qpos - 1 - k] = false;
                        }
                    }
                    qpos -= take.min(qpos);
                }
                if take == llen {
                    new_ops.pop();
                } else {
                    *last = (((llen - take) as u32) << 4) | lop as u32;
                }
                left -= take;
            }
            continue;
        }
        match new_ops.last_mut() {
            Some(last) if cigar::op(*last) == op => *last += (len as u32) << 4,
            _ => new_ops.push(c),
        }
        if cigar::consumes_query(op) {
            // Bases after a back step overwrite the dropped ones; mark them kept again.
            for k in 0..len {
                if qpos + k < l_seq {
                    keep[qpos + k] = true;
                }
            }
            qpos += len;
        }
    }
    let kept: Vec<usize> = (0..l_seq).filter(|&i| keep[i]).collect();
    let b = r.bytes();
    let start = out.len();
    let name_end = layout::FIXED_LEN + r.read_name().len() + 1;
    out.extend_from_slice(&b[..name_end]);
    for c in &new_ops {
        out.extend_from_slice(&c.to_le_bytes());
    }
    for pair in kept.chunks(2) {
        let hi = seq[pair[0]] << 4;
        let lo = pair.get(1).map_or(0, |&i| seq[i]);
        out.push(hi | lo);
    }
    out.extend(kept.iter().map(|&i| qual[i]));
    let rec = &mut out[start..];
    rec[layout::N_CIGAR_OP..layout::N_CIGAR_OP + 2].copy_from_slice(&(new_ops.len() as u16).to_le_bytes());
    rec[layout::L_SEQ..layout::L_SEQ + 4].copy_from_slice(&(kept.len() as i32).to_le_bytes());
}
