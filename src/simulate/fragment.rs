//! Template plans: which molecule a template reads, whether it is a duplicate, and where its reads go.
//!
//! Template ids `0..placed` are placed molecules in genome order; ids `placed..pairs` are pairs with
//! neither read mapped. A plan is a pure function of `(seed, id)`:
//!
//! 1. **Duplicate?** One draw from the `Duplicate` stream: PCR duplicate with probability `dup_rate`,
//!    optical with `optical_dup_rate` (id 0 and unplaced ids never). A duplicate's *origin* is the
//!    nearest lower id that is not a duplicate; it re-reads the origin's molecule and read group.
//! 2. **Molecule** (from the origin's `Fragment` stream): its anchor in the usable space is
//!    `(origin * usable_len + r) / placed` with `r < usable_len`, which never decreases with the id,
//!    so ids come out in coordinate order; then the insert size, which read is leftmost, the pair
//!    layout and chimeric junctions.
//! 3. Every read position of a plan (mates, far mates, chimeric parts) lies at or after the anchor;
//!    distant parts are drawn from `[anchor + reach, usable_len)`. The coordinate sweep needs this.
//!
//! A read's position is given by its *unclipped 5' end*: for a forward read the first reference base
//! its first cycle covers, for a reverse read the last. Clipping never moves it, as on a real
//! sequencer, so duplicates share it however the aligner clips them.

use super::SimulateOptions;
use super::genome::Genome;
use super::rng::{Rng, Stream};

/// The most reference bases the deletions of one read remove.
pub const MAX_DELETED_BASES: u32 = 8;

/// What kind of duplicate a template is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateKind {
    None,
    /// A PCR copy: same molecule, its own cluster somewhere on the flowcell.
    Pcr,
    /// An optical copy: same molecule, a cluster next to the original's.
    Optical,
}

/// Where a read's unclipped 5' end lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub tid: u32,
    pub five_prime: u32,
    pub forward: bool,
}

/// The part of a read (its 3' tail) that comes from somewhere else: a supplementary alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chimera {
    pub tail_len: u32,
    pub tid: u32,
    /// Leftmost reference base of the tail's alignment.
    pub pos: u32,
    pub forward: bool,
}

/// The molecule and how its two reads align; index 0 is read 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// `(tid, pos)` at or before every alignment of the template; `None` for unplaced pairs.
    pub anchor: Option<(u32, u32)>,
    /// `None` for an unmapped read.
    pub reads: [Option<Placement>; 2],
    pub chimeras: [Option<Chimera>; 2],
    /// Both reads face each other on one reference within the insert-size range.
    pub proper: bool,
}

/// Everything about a template that is decided before its reads are built.
#[derive(Clone, Copy, Debug)]
pub struct TemplatePlan {
    pub id: u64,
    /// Position in name order.
    pub rank: u64,
    pub origin: u64,
    pub origin_rank: u64,
    pub duplicate: DuplicateKind,
    pub fragment: Fragment,
}

/// The sizes that bound where reads can fall.
#[derive(Clone, Copy, Debug)]
pub struct FragmentShape {
    pub read_len: u32,
    pub insert_mean: u32,
    pub insert_sd: u32,
    pub insert_min: u32,
    pub insert_max: u32,
    /// The longest reference span from a fragment's anchor to its last aligned base.
    pub reach: u32,
}

impl FragmentShape {
    pub fn new(opts: &SimulateOptions) -> FragmentShape {
        let insert_min = opts.read_len + 25;
        let insert_max = insert_min.max(opts.insert_mean + 4 * opts.insert_sd);
        let reach = insert_max + opts.read_len + 2 * MAX_DELETED_BASES;
        FragmentShape {
            read_len: opts.read_len,
            insert_mean: opts.insert_mean,
            insert_sd: opts.insert_sd,
            insert_min,
            insert_max,
            reach,
        }
    }

    /// The 5' end of a read on `forward` strand whose leftmost possible base is `leftmost`.
    fn five_prime_from_left(&self, leftmost: u32, forward: bool) -> u32 {
        if forward { leftmost } else { leftmost + self.read_len + MAX_DELETED_BASES - 1 }
    }
}

/// Draws plans; holds what every plan needs.
#[derive(Clone, Debug)]
pub struct Planner {
    seed: u64,
    placed: u64,
    shape: FragmentShape,
    pcr_rate: f64,
    optical_rate: f64,
    mate_unmapped_rate: f64,
    distant_mate_rate: f64,
    chimeric_rate: f64,
}

impl Planner {
    pub fn new(opts: &SimulateOptions, placed: u64) -> Planner {
        Planner {
            seed: opts.seed,
            placed,
            shape: FragmentShape::new(opts),
            pcr_rate: opts.dup_rate,
            optical_rate: opts.optical_dup_rate,
            mate_unmapped_rate: opts.mate_unmapped_rate,
            distant_mate_rate: opts.distant_mate_rate,
            chimeric_rate: opts.chimeric_rate,
        }
    }

    /// The duplicate kind drawn for `id` alone (before following the chain).
    pub fn duplicate_kind(&self, id: u64) -> DuplicateKind {
        if id == 0 || id >= self.placed {
            return DuplicateKind::None;
        }
        let draw = Rng::for_stream(self.seed, id, Stream::Duplicate).unit();
        if draw < self.pcr_rate {
            DuplicateKind::Pcr
        } else if draw < self.pcr_rate + self.optical_rate {
            DuplicateKind::Optical
        } else {
            DuplicateKind::None
        }
    }

    /// The plan of template `id`; `rank_of` maps an id to its name-order rank.
    pub fn plan(&self, genome: &Genome, id: u64, rank_of: impl Fn(u64) -> u64) -> TemplatePlan {
        let duplicate = self.duplicate_kind(id);
        let mut origin = id;
        while self.duplicate_kind(origin) != DuplicateKind::None {
            origin -= 1;
        }
        let fragment =
            if id < self.placed { self.molecule(genome, origin) } else { Fragment::unplaced() };
        let rank = rank_of(id);
        let origin_rank = if origin == id { rank } else { rank_of(origin) };
        TemplatePlan { id, rank, origin, origin_rank, duplicate, fragment }
    }

    /// The molecule of origin `origin` (a placed id).
    fn molecule(&self, genome: &Genome, origin: u64) -> Fragment {
        let shape = &self.shape;
        let mut rng = Rng::for_stream(self.seed, origin, Stream::Fragment);
        let usable_len = genome.usable_len();
        let anchor_coordinate = ((u128::from(origin) * u128::from(usable_len)
            + u128::from(rng.below(usable_len)))
            / u128::from(self.placed)) as u64;
        let (tid, start) = genome.locate_usable(anchor_coordinate);
        let insert = (f64::from(shape.insert_mean) + f64::from(shape.insert_sd) * rng.normal())
            .clamp(f64::from(shape.insert_min), f64::from(shape.insert_max))
            as u32;
        let read1_is_left = rng.chance(0.5);
        let far_start = anchor_coordinate + u64::from(shape.reach);
        let far_location = |rng: &mut Rng| {
            (far_start < usable_len)
                .then(|| genome.locate_usable(far_start + rng.below(usable_len - far_start)))
        };

        let layout_draw = rng.unit();
        let mut left = Some(Placement { tid, five_prime: start, forward: true });
        let mut right = Some(Placement { tid, five_prime: start + insert - 1, forward: false });
        let mut proper = true;
        if layout_draw < self.mate_unmapped_rate {
            if rng.chance(0.5) {
                left = None;
            } else {
                right = None;
            }
            proper = false;
        } else if layout_draw < self.mate_unmapped_rate + self.distant_mate_rate
            && let Some((far_tid, far_pos)) = far_location(&mut rng)
        {
            let left_forward = rng.chance(0.5);
            let right_forward = rng.chance(0.5);
            left = Some(Placement {
                tid,
                five_prime: shape.five_prime_from_left(start, left_forward),
                forward: left_forward,
            });
            right = Some(Placement {
                tid: far_tid,
                five_prime: shape.five_prime_from_left(far_pos, right_forward),
                forward: right_forward,
            });
            proper = false;
        }
        let reads = if read1_is_left { [left, right] } else { [right, left] };

        let mut chimeras = [None, None];
        for (chimera, read) in chimeras.iter_mut().zip(&reads) {
            if read.is_some() && rng.chance(self.chimeric_rate) {
                let tail_len = rng.between(30, shape.read_len - 40);
                let forward = rng.chance(0.5);
                *chimera = far_location(&mut rng).map(|(tid, pos)| Chimera {
                    tail_len,
                    tid,
                    pos,
                    forward,
                });
            }
        }
        Fragment { anchor: Some((tid, start)), reads, chimeras, proper }
    }
}

impl Fragment {
    /// A pair with neither read mapped.
    pub fn unplaced() -> Fragment {
        Fragment { anchor: None, reads: [None, None], chimeras: [None, None], proper: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (SimulateOptions, Genome, Planner) {
        let opts = SimulateOptions {
            pairs: 3_000,
            n_refs: 3,
            ref_len: 200_000,
            ..SimulateOptions::default()
        };
        let shape = FragmentShape::new(&opts);
        let genome = Genome::generate(opts.seed, opts.n_refs, opts.ref_len, shape.reach);
        let planner = Planner::new(&opts, 2_900);
        (opts, genome, planner)
    }

    #[test]
    fn anchors_never_decrease_and_reads_lie_after_them() {
        let (_, genome, planner) = setup();
        let mut previous = (0, 0);
        for id in 0..2_900 {
            let plan = planner.plan(&genome, id, |i| i);
            let anchor = plan.fragment.anchor.unwrap();
            assert!(anchor >= previous, "id {id}: {anchor:?} < {previous:?}");
            previous = anchor;
            for read in plan.fragment.reads.iter().flatten() {
                assert!((read.tid, read.five_prime) >= anchor);
            }
            for chimera in plan.fragment.chimeras.iter().flatten() {
                assert!((chimera.tid, chimera.pos) >= anchor);
            }
        }
    }

    #[test]
    fn duplicates_share_their_origin_molecule() {
        let (_, genome, planner) = setup();
        let mut duplicates = 0;
        for id in 0..2_900 {
            let plan = planner.plan(&genome, id, |i| i);
            if plan.duplicate != DuplicateKind::None {
                duplicates += 1;
                assert!(plan.origin < id);
                assert_eq!(plan.fragment, planner.plan(&genome, plan.origin, |i| i).fragment);
            } else {
                assert_eq!(plan.origin, id);
            }
        }
        assert!(duplicates > 100, "{duplicates}");
    }

    #[test]
    fn unplaced_ids_have_no_reads() {
        let (_, genome, planner) = setup();
        let plan = planner.plan(&genome, 2_950, |i| i);
        assert_eq!(plan.fragment, Fragment::unplaced());
        assert_eq!(plan.duplicate, DuplicateKind::None);
    }
}
