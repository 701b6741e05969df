//! Edits `view` makes to records it writes: flag changes, tag removal, and `-p` unmapping.

use crate::record::layout;
use crate::record::{RecordRef, cigar, long_cigar};

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
}

impl RecordEdit {
    pub fn is_active(&self) -> bool {
        self.add_flags != 0 || self.remove_flags != 0 || self.tags.is_active()
    }

    /// Appends the edited record (without `block_size`) to `out`.
    pub fn apply(&self, r: &RecordRef<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&r.bytes()[..r.aux_offset()]);
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
    let name_end = layout::FIXED_LEN + b[layout::L_READ_NAME] as usize;
    out.extend_from_slice(&b[..name_end]);
    out.extend_from_slice(&b[name_end + 4 * r.n_cigar_op()..]);
    let rec = &mut out[start..];
    let flag = r.flag() | layout::flags::UNMAP;
    rec[layout::FLAG..layout::FLAG + 2].copy_from_slice(&flag.to_le_bytes());
    rec[layout::MAPQ] = 0;
    crate::record::edit::set_narrow(rec, layout::WIDE_TLEN, 0);
    // No CIGAR needs no room: this drops a long CIGAR's count from the name extension too.
    let none = long_cigar::set_n_cigar_of_last(out, start, 0);
    debug_assert!(none.is_ok());
}

/// Removes CIGAR `B` (back) operations as samtools' `bam_remove_B` does, appending the whole
/// rewritten record to `out`. Bases that a back step makes overlap are merged into a consensus:
/// equal bases keep the higher quality; different bases keep the better one with the quality
/// difference. A record that cannot be rewritten (B first, or a step back past the start) is
/// flagged unmapped instead. Records without `B` are copied unchanged.
pub fn remove_back_ops(r: &RecordRef<'_>, out: &mut Vec<u8>) {
    let ops: Vec<u32> = r.cigar().collect();
    let has_back = ops.iter().any(|&c| cigar::op(c) == cigar::BACK);
    if r.flag() & layout::flags::UNMAP != 0 || !has_back {
        out.extend_from_slice(r.bytes());
        return;
    }
    let unmapped_copy = |out: &mut Vec<u8>| {
        let start = out.len();
        out.extend_from_slice(r.bytes());
        let flag = r.flag() | layout::flags::UNMAP;
        out[start + layout::FLAG..start + layout::FLAG + 2].copy_from_slice(&flag.to_le_bytes());
    };
    if cigar::op(ops[0]) == cigar::BACK {
        return unmapped_copy(out);
    }
    let mut seq: Vec<u8> = (0..r.l_seq()).map(|i| r.base_code(i)).collect();
    let mut qual = r.qual().to_vec();
    let no_qual = qual.first() == Some(&0xff);
    let mut new_ops: Vec<u32> = Vec::with_capacity(ops.len());
    let (mut i, mut j, mut end_j) = (0usize, 0usize, 0usize);
    for (k, &c) in ops.iter().enumerate() {
        let (op, len) = (cigar::op(c), cigar::len(c) as usize);
        if op == cigar::BACK {
            if k == ops.len() - 1 {
                break; // a trailing B is ignored
            }
            if len > j {
                return unmapped_copy(out);
            }
            // Walk back over query-consuming ops until `len` bases are undone.
            let mut undone = 0usize;
            let mut t = new_ops.len();
            while t > 0 {
                t -= 1;
                let (op1, len1) = (cigar::op(new_ops[t]), cigar::len(new_ops[t]) as usize);
                if cigar::consumes_query(op1) {
                    if undone + len1 >= len {
                        new_ops[t] -= ((len - undone) as u32) << 4;
                        break;
                    }
                    undone += len1;
                }
            }
            let keep = if cigar::len(new_ops[t]) == 0 { t } else { t + 1 };
            new_ops.truncate(keep);
            end_j = j;
            j -= len;
            continue;
        }
        new_ops.push(c);
        if cigar::consumes_query(op) {
            if i != j {
                for u in 0..len {
                    let base = seq[i + u];
                    if j + u < end_j {
                        if base != seq[j + u] {
                            if qual[j + u] < qual[i + u] {
                                seq[j + u] = base;
                                qual[j + u] = qual[i + u] - qual[j + u];
                            } else {
                                qual[j + u] -= qual[i + u];
                            }
                        } else {
                            qual[j + u] = qual[j + u].max(qual[i + u]);
                        }
                    } else {
                        seq[j + u] = base;
                        qual[j + u] = qual[i + u];
                    }
                }
            }
            i += len;
            j += len;
        }
    }
    if no_qual && !qual.is_empty() {
        qual[0] = 0xff;
    }
    // Merge neighbours with the same op, then drop zero-length ops.
    let mut merged: Vec<u32> = Vec::with_capacity(new_ops.len());
    for c in new_ops {
        match merged.last_mut() {
            Some(last) if cigar::op(*last) == cigar::op(c) => *last += c & !0xf,
            _ => merged.push(c),
        }
    }
    merged.retain(|&c| cigar::len(c) > 0);
    let b = r.bytes();
    let start = out.len();
    let name_end = layout::FIXED_LEN + b[layout::L_READ_NAME] as usize;
    out.extend_from_slice(&b[..name_end]);
    for c in &merged {
        out.extend_from_slice(&c.to_le_bytes());
    }
    for pair in seq[..j].chunks(2) {
        out.push(pair[0] << 4 | pair.get(1).copied().unwrap_or(0));
    }
    out.extend_from_slice(&qual[..j]);
    out.extend_from_slice(r.aux_bytes());
    let rec = &mut out[start..];
    rec[layout::L_SEQ..layout::L_SEQ + 4].copy_from_slice(&(j as i32).to_le_bytes());
    // Merging never adds operations, and a long count came with its name extension.
    let fits = long_cigar::set_n_cigar_of_last(out, start, merged.len());
    debug_assert!(fits.is_ok());
}
