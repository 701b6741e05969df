//! Read groups and Illumina read names (`INSTRUMENT:RUN:FLOWCELL:LANE:TILE:X:Y`).
//!
//! Layout:
//! - Read group `g` is lane `g % 4 + 1` of flowcell `g / 4`; its ID is `FLOWCELL.LANE`. Groups share
//!   libraries round-robin: `max(2, groups / 2)` libraries when there are two or more groups, so some
//!   libraries span two lanes (as real libraries do) and duplicate marking has more than one library.
//! - Templates are split into read groups by name-order rank, in contiguous blocks.
//! - Cluster coordinates come from a grid of 100 × 100 cells over 624 NovaSeq tiles (surfaces 1–2,
//!   swaths 1–4, tiles 01–78), 320 cells across (x ≤ 33 000) and at least 370 down (y ≥ 1 000).
//!   Rank `r` of `n` owns cell `r * capacity / n`, so every template has its own cell.
//! - Inside its cell an original cluster sits at `x + [0, 40)`, `y + [0, 100)`. Optical duplicate
//!   number `k` of it sits at `x + [50, 90)`, `y + (jy + 37k) % 100`: within 100 of the original in x
//!   and y (samtools markdup's default optical distance), and distinct from every other name.

use super::rng::{Rng, Stream};

const SURFACES: u64 = 2;
const SWATHS: u64 = 4;
const TILES_PER_SWATH: u64 = 78;
const TILES: u64 = SURFACES * SWATHS * TILES_PER_SWATH;
const CELL_SIZE: u64 = 100;
const X_CELLS: u64 = 320;
const MIN_Y_CELLS: u64 = 370;
const COORDINATE_OFFSET: u64 = 1_000;
const INSTRUMENT_AND_RUN: &str = "A00817:142";

/// One `@RG` line's worth of metadata.
#[derive(Clone, Debug)]
pub struct ReadGroup {
    /// `FLOWCELL.LANE`.
    pub id: String,
    pub sample: String,
    pub library: String,
    /// Dual sample index, `ACGTACGT-TGCATGCA`; reads carry it in `BC`.
    pub barcode: String,
    /// `INSTRUMENT:RUN:FLOWCELL:LANE:`, the start of every read name in this group.
    pub name_prefix: String,
}

/// Builds `count` read groups (at least one) from `seed`.
pub fn read_groups(seed: u64, count: u32) -> Vec<ReadGroup> {
    let count = count.max(1);
    let libraries = if count >= 2 { (count / 2).max(2) } else { 1 };
    let mut rng = Rng::for_stream(seed, u64::MAX, Stream::Name);
    let flowcells: Vec<String> = (0..count.div_ceil(4))
        .map(|_| {
            let mut name = String::from("H");
            for _ in 0..4 {
                name.push(b"ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"[rng.below(34) as usize] as char);
            }
            name.push_str("DSXY");
            name
        })
        .collect();
    let barcodes: Vec<String> = (0..libraries)
        .map(|_| {
            let mut barcode = String::new();
            for i in 0..17 {
                barcode.push(if i == 8 { '-' } else { rng.base() as char });
            }
            barcode
        })
        .collect();
    (0..count)
        .map(|g| {
            let flowcell = &flowcells[(g / 4) as usize];
            let lane = g % 4 + 1;
            let library = g % libraries;
            ReadGroup {
                id: format!("{flowcell}.{lane}"),
                sample: "SIM1".to_string(),
                library: format!("LIB{}", library + 1),
                barcode: barcodes[library as usize].clone(),
                name_prefix: format!("{INSTRUMENT_AND_RUN}:{flowcell}:{lane}:"),
            }
        })
        .collect()
}

/// The read group of the template at name-order `rank` of `templates`.
pub fn read_group_of_rank(rank: u64, templates: u64, groups: usize) -> usize {
    (u128::from(rank) * groups as u128 / u128::from(templates.max(1))) as usize
}

/// Where a read name puts its cluster inside its cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterSpot {
    /// An original cluster (or a PCR duplicate, which is a cluster of its own).
    Original,
    /// The `k`-th optical duplicate (k ≥ 1) of the original whose cell this is.
    OpticalDuplicate { k: u64 },
}

/// The grid of cells shared out among `templates` name-order ranks.
#[derive(Clone, Copy, Debug)]
pub struct ClusterGrid {
    templates: u64,
    y_cells: u64,
}

impl ClusterGrid {
    pub fn new(templates: u64) -> ClusterGrid {
        let y_cells = MIN_Y_CELLS.max(templates.div_ceil(TILES * X_CELLS));
        ClusterGrid { templates: templates.max(1), y_cells }
    }

    fn capacity(&self) -> u64 {
        TILES * X_CELLS * self.y_cells
    }

    /// Appends `TILE:X:Y` for the cell of `cell_rank`. `owner_seed_id` picks the jitter of the
    /// original cluster (the template id that owns the cell); `own_id` the jitter of this name.
    pub fn write_coordinates(
        &self,
        seed: u64,
        cell_rank: u64,
        owner_id: u64,
        own_id: u64,
        spot: ClusterSpot,
        out: &mut Vec<u8>,
    ) {
        let cell = (u128::from(cell_rank) * u128::from(self.capacity())
            / u128::from(self.templates)) as u64;
        let tile_index = cell / (X_CELLS * self.y_cells);
        let within_tile = cell % (X_CELLS * self.y_cells);
        let (y_cell, x_cell) = (within_tile / X_CELLS, within_tile % X_CELLS);
        let surface = tile_index / (SWATHS * TILES_PER_SWATH) + 1;
        let swath = tile_index / TILES_PER_SWATH % SWATHS + 1;
        let tile = surface * 1000 + swath * 100 + tile_index % TILES_PER_SWATH + 1;
        let mut owner = Rng::for_stream(seed, owner_id, Stream::Name);
        let (owner_jx, owner_jy) = (owner.below(40), owner.below(CELL_SIZE));
        let (jx, jy) = match spot {
            ClusterSpot::Original => (owner_jx, owner_jy),
            ClusterSpot::OpticalDuplicate { k } => {
                let mut own = Rng::for_stream(seed, own_id, Stream::Name);
                (50 + own.below(40), (owner_jy + 37 * k) % CELL_SIZE)
            }
        };
        let x = COORDINATE_OFFSET + x_cell * CELL_SIZE + jx;
        let y = COORDINATE_OFFSET + y_cell * CELL_SIZE + jy;
        let mut number = itoa::Buffer::new();
        out.extend_from_slice(number.format(tile).as_bytes());
        out.push(b':');
        out.extend_from_slice(number.format(x).as_bytes());
        out.push(b':');
        out.extend_from_slice(number.format(y).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn name(grid: &ClusterGrid, rank: u64, owner: u64, own: u64, spot: ClusterSpot) -> String {
        let mut out = Vec::new();
        grid.write_coordinates(1, rank, owner, own, spot, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn names_are_unique_and_optical_duplicates_are_close() {
        let grid = ClusterGrid::new(5_000);
        let mut seen = HashSet::new();
        for rank in 0..5_000 {
            let original = name(&grid, rank, rank, rank, ClusterSpot::Original);
            assert!(seen.insert(original.clone()));
            for k in 1..4 {
                let dup =
                    name(&grid, rank, rank, rank + 10_000 * k, ClusterSpot::OpticalDuplicate { k });
                assert!(seen.insert(dup.clone()), "{dup} repeated");
                let o: Vec<u64> = original.split(':').map(|f| f.parse().unwrap()).collect();
                let d: Vec<u64> = dup.split(':').map(|f| f.parse().unwrap()).collect();
                assert_eq!(o[0], d[0]);
                assert!(o[1].abs_diff(d[1]) <= 100 && o[2].abs_diff(d[2]) <= 100);
            }
        }
    }

    #[test]
    fn tiles_look_like_novaseq() {
        let grid = ClusterGrid::new(10);
        let first = name(&grid, 0, 0, 0, ClusterSpot::Original);
        assert!(first.starts_with("1101:"), "{first}");
        let last = name(&grid, 9, 9, 9, ClusterSpot::Original);
        let tile: u64 = last.split(':').next().unwrap().parse().unwrap();
        assert!((1101..=2478).contains(&tile));
    }

    #[test]
    fn read_groups_have_two_libraries() {
        let groups = read_groups(1, 3);
        assert_eq!(groups.len(), 3);
        let libraries: HashSet<_> = groups.iter().map(|g| g.library.clone()).collect();
        assert_eq!(libraries.len(), 2);
        assert!(groups[0].id.ends_with(".1") && groups[1].id.ends_with(".2"));
        assert_eq!(read_group_of_rank(0, 100, 3), 0);
        assert_eq!(read_group_of_rank(99, 100, 3), 2);
    }
}
