//! `-p`: the part of a read that its mate already covered is left out of the coverage and of
//! the bases mapped (samtools' `remove_overlaps`). The first mate's covered stretches wait in
//! a table by read name until the second mate comes.

use std::collections::HashMap;

use super::coverage::Coverage;
use crate::record::RecordRef;
use crate::record::layout::flags;

/// The stretches `[beg, end)` one mate covered, and which mate (1: first, 2: last) it was.
struct Pending {
    mate: u32,
    stretches: Vec<(i64, i64)>,
}

/// samtools' `read_pairs`: shared by the report of all reads and the `-S` reports.
#[derive(Default)]
pub struct PairTable {
    pending: HashMap<Vec<u8>, Pending>,
}

/// What the stretch being added changed besides the coverage.
pub struct Removal {
    /// Bases the mate covered already, to take off the bases mapped.
    pub overlap: i64,
    /// 1 when a first mate entered the table, -1 when a second mate closed it.
    pub pending_change: i32,
}

impl PairTable {
    /// samtools' `cleanup_overlaps`: forgets the mates that ended before `max`; returns how many.
    pub fn forget_before(&mut self, max: i64) -> u32 {
        let before = self.pending.len();
        self.pending.retain(|_, p| p.stretches.last().is_some_and(|s| s.1 >= max));
        (before - self.pending.len()) as u32
    }

    /// Adds `[pmin, pmax)` of `r` to `coverage` less what its mate covered; `pmin == -1` closes
    /// the read (the second mate's entry is then dropped).
    pub fn add(
        &mut self,
        r: &RecordRef<'_>,
        coverage: &mut Coverage,
        mut pmin: i64,
        pmax: i64,
    ) -> Result<Removal, String> {
        let mut removal = Removal { overlap: 0, pending_change: 0 };
        let flag = r.flag();
        let mate = u32::from(flag & flags::READ1 != 0) + 2 * u32::from(flag & flags::READ2 != 0);
        if flag & flags::PAIRED == 0
            || flag & flags::MUNMAP != 0
            || r.tlen().abs() >= 2 * r.l_seq() as i64
            || (mate != 1 && mate != 2)
        {
            if pmin >= 0 {
                coverage.insert(pmin, pmax)?;
            }
            return Ok(removal);
        }
        let name = r.read_name();
        let Some(pending) = self.pending.get_mut(name) else {
            if pmin == -1 {
                return Ok(removal);
            }
            self.pending.insert(name.to_vec(), Pending { mate, stretches: vec![(pmin, pmax)] });
            removal.pending_change = 1;
            coverage.insert(pmin, pmax)?;
            return Ok(removal);
        };
        if mate == pending.mate {
            if pmin != -1 {
                pending.stretches.push((pmin, pmax));
                coverage.insert(pmin, pmax)?;
            }
            return Ok(removal);
        }
        if pmin == -1 {
            self.pending.remove(name);
            removal.pending_change = -1;
            return Ok(removal);
        }
        for &(beg, end) in &pending.stretches {
            if pmin >= end {
                continue;
            }
            if pmax <= beg {
                break;
            }
            if pmin < beg {
                coverage.insert(pmin, beg)?;
                pmin = beg;
            }
            if pmax <= end {
                removal.overlap += pmax - pmin;
                return Ok(removal);
            }
            removal.overlap += end - pmin;
            pmin = end;
        }
        coverage.insert(pmin, pmax)?;
        Ok(removal)
    }
}
