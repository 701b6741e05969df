//! `fixmate -M`: base-modification tags (MM/ML/MN) on hard-clipped secondary and supplementary
//! records (samtools 1.20+ `fix_MM`).

/// What the primary record of one read number had.
#[derive(Default, Clone, Debug)]
pub struct State {
    pub has_mm: bool,
}

/// A primary record: checks MN against the sequence and remembers the tags.
pub fn fix_primary(_b: &mut Vec<u8>, _state: &mut State) {}

/// A secondary/supplementary record with a known primary.
pub fn fix_secondary(_primary: &[u8], _b: &mut Vec<u8>, _state: &State) {}

/// A secondary/supplementary record without a primary.
pub fn fix_orphan(_b: &mut Vec<u8>) {}
