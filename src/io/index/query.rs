//! Region queries: which chunks of the BAM file can hold records overlapping `[beg, end)` on one
//! reference, and where the unplaced unmapped reads (region `*`) start.
//!
//! This reproduces htslib's `hts_itr_query` (and `reg2bins`, `hts_itr_off`) from `hts.c`, so a reader
//! visits the same file ranges as samtools. Steps for `[beg, end)` on reference `tid`:
//!
//! 1. Nothing to read if the reference has no bins, or `beg ≥ max_pos`; a negative `beg` becomes 0.
//! 2. **Lower bound `min_off`.** Start at the bottom-level bin of `beg` and walk left through its
//!    siblings, then up to the parent, until a bin exists; take its `loffset`. For BAI, raise it to the
//!    linear-index entry for `beg`'s 16 kbp window; when the reference has unmapped reads (they are not
//!    in the linear index) walk the linear index left to the first smaller entry, falling back to the
//!    bin's `loffset` if that went too far.
//! 3. **Upper bound `max_off`.** From the bottom-level bin right of `end − 1`, move right (going up at
//!    each first child) to the first existing bin with chunks: its first chunk's start; otherwise ∞.
//! 4. **Candidate bins** (`reg2bins`): at every level, the bins from `beg`'s to `end − 1`'s.
//! 5. Keep their chunks that end after `min_off` and start before `max_off`, clipped to both bounds.
//! 6. Sort by start; drop chunks contained in the previous one; trim overlaps; merge chunks that
//!    touch the same BGZF block (`prev.end >> 16 == next.start >> 16`).
//!
//! For `*`, htslib seeks to the largest `off_end` in any reference's metadata pseudo-bin (the end of
//! the last mapped data), or to "just after the header" (offset 0 = do not seek) when no reference
//! has metadata but unplaced reads exist.

use super::binning::Binning;
use super::reference::{Chunk, ReferenceIndex};

/// The chunks to read for `[beg, end)` on one reference, sorted and merged as htslib does.
pub fn query_chunks(
    binning: Binning,
    reference: &ReferenceIndex,
    beg: i64,
    end: i64,
) -> Vec<Chunk> {
    let beg = beg.max(0);
    if end < beg || reference.bins().is_empty() || beg >= binning.max_pos() {
        return Vec::new();
    }
    let min_offset = lower_bound(binning, reference, beg);
    let max_offset = upper_bound(binning, reference, end);

    let mut chunks: Vec<Chunk> = candidate_bins(binning, beg, end)
        .filter_map(|id| reference.bin(id))
        .flat_map(|bin| bin.chunks.iter())
        .filter(|c| c.end > min_offset && c.start < max_offset)
        .map(|c| Chunk { start: c.start.max(min_offset), end: c.end.min(max_offset) })
        .collect();
    chunks.sort_unstable();
    merge_sorted_chunks(chunks)
}

/// Where reading the unplaced unmapped reads starts (`hts_itr_off(idx, HTS_IDX_NOCOOR)`).
/// `Some(0)` means "right after the header"; `None` means htslib would fail to build the iterator.
pub fn unplaced_start(
    binning: Binning,
    references: &[ReferenceIndex],
    n_no_coor: u64,
) -> Option<u64> {
    let last_mapped_end = references
        .iter()
        .filter_map(|r| r.bin(binning.metadata_bin()))
        .filter_map(|b| b.chunks.first())
        .map(|c| c.end)
        .max();
    match last_mapped_end {
        Some(end) => Some(end),
        None if n_no_coor > 0 => Some(0),
        None => None,
    }
}

/// Step 2: the smallest virtual offset a record overlapping `beg` can have.
fn lower_bound(binning: Binning, reference: &ReferenceIndex, beg: i64) -> u64 {
    let window = (beg >> binning.min_shift) as u64;
    let bin = nearest_existing_bin_at_or_left_of(binning, reference, window);
    let bin_loffset = bin.map_or(0, |id| reference.bin(id).map_or(0, |b| b.loffset));
    let mut min_offset = bin_loffset;

    let linear = reference.query_linear();
    let Some(&window_offset) = usize::try_from(window).ok().and_then(|w| linear.get(w)) else {
        return min_offset;
    };
    min_offset = min_offset.max(window_offset);
    if has_unmapped_reads(binning, reference) {
        let smaller_to_the_left = linear[..window as usize].iter().rev().find(|&&o| o < min_offset);
        match smaller_to_the_left {
            Some(&offset) => min_offset = offset,
            None => {
                if bin.is_some() {
                    min_offset = bin_loffset;
                }
            }
        }
        if bin.is_some() && min_offset < bin_loffset {
            min_offset = bin_loffset;
        }
    }
    min_offset
}

/// htslib's walk from the bottom-level bin of `window`: left through siblings, then up a level.
fn nearest_existing_bin_at_or_left_of(
    binning: Binning,
    reference: &ReferenceIndex,
    window: u64,
) -> Option<u32> {
    let mut bin = u64::from(Binning::first_bin_of_level(binning.depth)) + window;
    while bin != 0 {
        if reference.bin(bin as u32).is_some() {
            return Some(bin as u32);
        }
        let first_sibling = (((bin - 1) >> 3) << 3) + 1;
        bin = if bin > first_sibling { bin - 1 } else { (bin - 1) >> 3 };
    }
    reference.bin(0).map(|_| 0)
}

/// Whether the metadata says the reference has unmapped reads (true when there is no metadata).
/// htslib keeps the count in a `uint32_t`, so only its low 32 bits matter.
fn has_unmapped_reads(binning: Binning, reference: &ReferenceIndex) -> bool {
    match reference.bin(binning.metadata_bin()) {
        Some(meta) => meta.chunks.get(1).is_none_or(|counts| counts.end as u32 != 0),
        None => true,
    }
}

/// Step 3: no record overlapping `[.., end)` starts at or after this offset.
fn upper_bound(binning: Binning, reference: &ReferenceIndex, end: i64) -> u64 {
    if end > binning.max_pos() {
        return u64::MAX;
    }
    let mut bin = i64::from(Binning::first_bin_of_level(binning.depth))
        + ((end - 1) >> binning.min_shift)
        + 1;
    if bin >= i64::from(binning.n_bins()) {
        bin = 0;
    }
    loop {
        while bin % 8 == 1 {
            bin = (bin - 1) >> 3;
        }
        if bin == 0 {
            return u64::MAX;
        }
        if let Some(first) = reference.bin(bin as u32).and_then(|b| b.chunks.first()) {
            return first.start;
        }
        bin += 1;
    }
}

/// Step 4 (`reg2bins`): every bin number, at every level, that can overlap `[beg, end)`.
fn candidate_bins(binning: Binning, beg: i64, end: i64) -> impl Iterator<Item = u32> {
    let top_shift = binning.min_shift + 3 * binning.depth;
    let end = end.min(1i64 << top_shift);
    let last = end - 1;
    let empty = beg >= end;
    (0..=binning.depth).filter(move |_| !empty).flat_map(move |level| {
        let shift = top_shift - 3 * level;
        let first = i64::from(Binning::first_bin_of_level(level));
        ((first + (beg >> shift))..=(first + (last >> shift))).map(|b| b as u32)
    })
}

/// Step 6: remove contained chunks, trim overlaps, merge chunks ending in the block the next starts in.
fn merge_sorted_chunks(mut chunks: Vec<Chunk>) -> Vec<Chunk> {
    if chunks.is_empty() {
        return chunks;
    }
    let mut kept: Vec<Chunk> = Vec::with_capacity(chunks.len());
    for chunk in chunks.drain(..) {
        match kept.last() {
            Some(last) if last.end >= chunk.end => {}
            _ => kept.push(chunk),
        }
    }
    for i in 1..kept.len() {
        if kept[i - 1].end >= kept[i].start {
            kept[i - 1].end = kept[i].start;
        }
    }
    let mut merged: Vec<Chunk> = Vec::with_capacity(kept.len());
    for chunk in kept {
        match merged.last_mut() {
            Some(last) if last.end >> 16 == chunk.start >> 16 => last.end = chunk.end,
            _ => merged.push(chunk),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::index::reference::Bin;

    fn chunk(start: u64, end: u64) -> Chunk {
        Chunk { start, end }
    }

    fn vo(coffset: u64, uoffset: u64) -> u64 {
        coffset << 16 | uoffset
    }

    #[test]
    fn candidate_bins_cover_every_level_for_bai() {
        let bins: Vec<u32> = candidate_bins(Binning::BAI, 0, 1 << 14).collect();
        assert_eq!(bins, vec![0, 1, 9, 73, 585, 4681]);
        let wide: Vec<u32> = candidate_bins(Binning::BAI, 0, (1 << 14) + 1).collect();
        assert_eq!(wide, vec![0, 1, 9, 73, 585, 4681, 4682]);
    }

    #[test]
    fn candidate_bins_clamp_end_to_the_scheme() {
        let bins: Vec<u32> =
            candidate_bins(Binning { min_shift: 14, depth: 0 }, 5, i64::MAX).collect();
        assert_eq!(bins, vec![0]);
        assert_eq!(candidate_bins(Binning::BAI, 1 << 29, i64::MAX).count(), 0);
    }

    #[test]
    fn contained_chunks_are_dropped_and_same_block_neighbours_merged() {
        let merged = merge_sorted_chunks(vec![
            chunk(vo(1, 0), vo(5, 0)),
            chunk(vo(2, 0), vo(3, 0)),
            chunk(vo(5, 10), vo(6, 0)),
            chunk(vo(9, 0), vo(9, 5)),
        ]);
        assert_eq!(merged, vec![chunk(vo(1, 0), vo(6, 0)), chunk(vo(9, 0), vo(9, 5))]);
    }

    #[test]
    fn overlapping_chunks_are_trimmed_then_joined() {
        // Trimming ends the first chunk where the second starts, which is the same block.
        let merged =
            merge_sorted_chunks(vec![chunk(vo(1, 0), vo(8, 0)), chunk(vo(7, 3), vo(9, 0))]);
        assert_eq!(merged, vec![chunk(vo(1, 0), vo(9, 0))]);
    }

    #[test]
    fn query_clips_to_the_linear_index_minimum() {
        let reference = ReferenceIndex::with_bins_and_linear(
            vec![
                Bin { id: 4681, loffset: 0, chunks: vec![chunk(vo(1, 0), vo(2, 0))] },
                Bin { id: 4682, loffset: 0, chunks: vec![chunk(vo(3, 0), vo(4, 0))] },
                Bin { id: 585, loffset: 0, chunks: vec![chunk(vo(1, 5), vo(9, 0))] },
                Bin { id: 37450, loffset: 0, chunks: vec![chunk(vo(1, 0), vo(9, 0)), chunk(3, 0)] },
            ],
            vec![vo(1, 0), vo(3, 0)],
            Binning::BAI,
        );
        // A region in the second window: bin 4681 is excluded, bin 585's chunk clipped to window 1's offset.
        let chunks = query_chunks(Binning::BAI, &reference, 20_000, 20_001);
        assert_eq!(chunks, vec![chunk(vo(3, 0), vo(9, 0))]);
    }

    #[test]
    fn unmapped_reads_pull_the_minimum_back_to_a_smaller_linear_entry() {
        let reference = ReferenceIndex::with_bins_and_linear(
            vec![
                Bin { id: 4681, loffset: 0, chunks: vec![chunk(vo(1, 0), vo(2, 0))] },
                Bin { id: 4682, loffset: 0, chunks: vec![chunk(vo(3, 0), vo(4, 0))] },
                Bin { id: 585, loffset: 0, chunks: vec![chunk(vo(1, 5), vo(9, 0))] },
                Bin { id: 37450, loffset: 0, chunks: vec![chunk(vo(1, 0), vo(9, 0)), chunk(3, 1)] },
            ],
            vec![vo(1, 0), vo(3, 0)],
            Binning::BAI,
        );
        // Found bin 4682's loffset is window 1's offset, so the fallback keeps vo(3, 0).
        assert_eq!(
            query_chunks(Binning::BAI, &reference, 20_000, 20_001),
            vec![chunk(vo(3, 0), vo(9, 0))]
        );
    }

    #[test]
    fn a_reference_without_bins_or_a_start_past_the_scheme_yields_nothing() {
        let empty = ReferenceIndex::with_bins(Vec::new());
        assert!(query_chunks(Binning::BAI, &empty, 0, 100).is_empty());
        let one =
            ReferenceIndex::with_bins(vec![Bin { id: 0, loffset: 0, chunks: vec![chunk(1, 2)] }]);
        assert!(query_chunks(Binning::BAI, &one, 1 << 29, (1 << 29) + 5).is_empty());
        assert_eq!(query_chunks(Binning::BAI, &one, -5, 10), vec![chunk(1, 2)]);
    }

    #[test]
    fn unplaced_reads_start_at_the_largest_metadata_end() {
        let with_meta = |end: u64| {
            ReferenceIndex::with_bins(vec![Bin {
                id: 37450,
                loffset: 0,
                chunks: vec![chunk(0, end), chunk(1, 0)],
            }])
        };
        let refs =
            vec![with_meta(vo(7, 3)), ReferenceIndex::with_bins(Vec::new()), with_meta(vo(4, 0))];
        assert_eq!(unplaced_start(Binning::BAI, &refs, 2), Some(vo(7, 3)));
        assert_eq!(unplaced_start(Binning::BAI, &[], 2), Some(0));
        assert_eq!(unplaced_start(Binning::BAI, &[], 0), None);
    }
}
