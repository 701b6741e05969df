//! The simulated reference genome: random sequences with planted repeats, and the "usable" coordinate
//! space in which fragments are placed.
//!
//! Layout:
//! - `n_refs` references `chr1..chrN`, shrinking like human chromosomes: reference `i` has
//!   `ref_len - ref_len * 3i / 5n` bases (the longest is `ref_len`), upper-case `ACGT` at 41 % GC.
//! - Repeats: about one per 40 kb, a 1–4 kb *source* segment copied downstream on the same reference
//!   with 1 % substitutions. Reads inside a source get a secondary alignment in the copy.
//! - Usable space: the concatenation of `0..len - reach` of each reference, where `reach` is the
//!   longest span a fragment can cover. A fragment placed anywhere in it fits on its reference, and
//!   the usable coordinate increases with `(tid, pos)`, which the coordinate sweep relies on.

use super::rng::{Rng, Stream};

/// Fraction of substitutions between a repeat source and its copy, per 1000 bases.
const REPEAT_DIVERGENCE_PER_MILLE: u64 = 10;
/// One repeat element per this many bases of reference.
const BASES_PER_REPEAT: u32 = 40_000;

/// One reference sequence.
#[derive(Clone, Debug)]
pub struct Reference {
    /// `chr1`, `chr2`, …
    pub name: String,
    /// Upper-case `ACGT`.
    pub sequence: Vec<u8>,
}

/// A segment `source..source + len` copied to `copy..copy + len` on reference `tid` (`copy > source`).
#[derive(Clone, Copy, Debug)]
pub struct Repeat {
    pub tid: u32,
    pub source: u32,
    pub copy: u32,
    pub len: u32,
}

/// The references, their repeats and the usable coordinate space.
#[derive(Clone, Debug)]
pub struct Genome {
    pub references: Vec<Reference>,
    /// Sorted by `(tid, source)`.
    repeats: Vec<Repeat>,
    /// `usable_offsets[t]` is the usable coordinate of `(t, 0)`; one extra entry holds the total.
    usable_offsets: Vec<u64>,
}

/// The reference lengths for `n_refs` references whose longest has `ref_len` bases.
pub fn reference_lengths(n_refs: u32, ref_len: u32) -> Vec<u32> {
    (0..n_refs)
        .map(|i| ref_len - (u64::from(ref_len) * 3 * u64::from(i) / (5 * u64::from(n_refs))) as u32)
        .collect()
}

impl Genome {
    /// Generates the genome for `seed`; `reach` is the longest reference span of one fragment.
    pub fn generate(seed: u64, n_refs: u32, ref_len: u32, reach: u32) -> Genome {
        let lengths = reference_lengths(n_refs, ref_len);
        let mut references = Vec::with_capacity(lengths.len());
        let mut repeats = Vec::new();
        let mut usable_offsets = Vec::with_capacity(lengths.len() + 1);
        let mut usable_total = 0u64;
        for (tid, &len) in lengths.iter().enumerate() {
            let mut rng = Rng::for_stream(seed, tid as u64, Stream::Genome);
            let mut sequence = random_sequence(&mut rng, len as usize);
            plant_repeats(&mut rng, tid as u32, &mut sequence, &mut repeats);
            references.push(Reference { name: format!("chr{}", tid + 1), sequence });
            usable_offsets.push(usable_total);
            usable_total += u64::from(len.saturating_sub(reach));
        }
        usable_offsets.push(usable_total);
        repeats.sort_by_key(|r| (r.tid, r.source));
        Genome { references, repeats, usable_offsets }
    }

    /// The size of the usable coordinate space.
    pub fn usable_len(&self) -> u64 {
        *self.usable_offsets.last().unwrap_or(&0)
    }

    /// The `(tid, pos)` of usable coordinate `coordinate` (< [`Genome::usable_len`]).
    pub fn locate_usable(&self, coordinate: u64) -> (u32, u32) {
        debug_assert!(coordinate < self.usable_len());
        // The last reference whose usable range starts at or before `coordinate` and is not empty.
        let tid = self.usable_offsets.partition_point(|&start| start <= coordinate) - 1;
        (tid as u32, (coordinate - self.usable_offsets[tid]) as u32)
    }

    /// The usable coordinate of `(tid, pos)`, which must lie in the usable part of its reference.
    pub fn usable_coordinate(&self, tid: u32, pos: u32) -> u64 {
        self.usable_offsets[tid as usize] + u64::from(pos)
    }

    /// The sequence of reference `tid`.
    pub fn sequence(&self, tid: u32) -> &[u8] {
        &self.references[tid as usize].sequence
    }

    /// Where `start..end` on `tid` lies inside a repeat source, the start of the same stretch in the
    /// repeat's copy.
    pub fn repeat_copy_of(&self, tid: u32, start: u32, end: u32) -> Option<u32> {
        let after = self.repeats.partition_point(|r| (r.tid, r.source) <= (tid, start));
        let repeat = self.repeats[..after].last()?;
        (repeat.tid == tid && end <= repeat.source + repeat.len)
            .then(|| repeat.copy + (start - repeat.source))
    }

    /// Writes the references as FASTA with 60 bases per line.
    pub fn write_fasta(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut text = Vec::with_capacity(1 << 20);
        for reference in &self.references {
            text.push(b'>');
            text.extend_from_slice(reference.name.as_bytes());
            text.push(b'\n');
            for line in reference.sequence.chunks(60) {
                text.extend_from_slice(line);
                text.push(b'\n');
                if text.len() >= 1 << 20 {
                    out.write_all(&text)?;
                    text.clear();
                }
            }
        }
        out.write_all(&text)
    }
}

/// `len` random bases at 41 % GC, eight bases per 64 random bits.
fn random_sequence(rng: &mut Rng, len: usize) -> Vec<u8> {
    // A byte below 75 is A, below 127 C, below 179 G, else T: 29.3 % A, 20.3 % C, 20.3 % G, 30.1 % T.
    let mut table = [b'T'; 256];
    for (byte, base) in table.iter_mut().enumerate() {
        *base = match byte {
            0..75 => b'A',
            75..127 => b'C',
            127..179 => b'G',
            _ => b'T',
        };
    }
    let mut sequence = Vec::with_capacity(len + 8);
    while sequence.len() < len {
        for byte in rng.next_u64().to_le_bytes() {
            sequence.push(table[byte as usize]);
        }
    }
    sequence.truncate(len);
    sequence
}

/// Copies 1–4 kb segments downstream with 1 % substitutions, about one per 40 kb.
fn plant_repeats(rng: &mut Rng, tid: u32, sequence: &mut [u8], repeats: &mut Vec<Repeat>) {
    let len = sequence.len() as u32;
    let count = len / BASES_PER_REPEAT;
    for _ in 0..count {
        let repeat_len = rng.between(1_000, 4_000);
        if len < 3 * repeat_len {
            continue;
        }
        let source = rng.between(0, len - 2 * repeat_len);
        let copy = rng.between(source + repeat_len, len - repeat_len);
        for i in 0..repeat_len {
            let mut base = sequence[(source + i) as usize];
            if rng.below(1000) < REPEAT_DIVERGENCE_PER_MILLE {
                base = substitute(rng, base);
            }
            sequence[(copy + i) as usize] = base;
        }
        repeats.push(Repeat { tid, source, copy, len: repeat_len });
    }
}

/// A base other than `base`, uniformly.
pub fn substitute(rng: &mut Rng, base: u8) -> u8 {
    const OTHERS: [&[u8; 3]; 4] = [b"CGT", b"AGT", b"ACT", b"ACG"];
    let index = match base {
        b'A' => 0,
        b'C' => 1,
        b'G' => 2,
        _ => 3,
    };
    OTHERS[index][rng.below(3) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_shrink_from_ref_len() {
        assert_eq!(reference_lengths(5, 100_000), vec![100_000, 88_000, 76_000, 64_000, 52_000]);
    }

    #[test]
    fn usable_space_round_trips() {
        let genome = Genome::generate(3, 3, 50_000, 1_000);
        assert_eq!(genome.usable_len(), 49_000 + 39_000 + 29_000);
        for coordinate in [0, 48_999, 49_000, 50_000, 116_999] {
            let (tid, pos) = genome.locate_usable(coordinate);
            assert_eq!(genome.usable_coordinate(tid, pos), coordinate);
        }
        assert_eq!(genome.locate_usable(49_000), (1, 0));
    }

    #[test]
    fn repeats_are_near_copies() {
        let genome = Genome::generate(5, 2, 200_000, 1_000);
        assert!(!genome.repeats.is_empty());
        // Later repeats may overwrite earlier ones, so require only most copies to stay close.
        let close = genome
            .repeats
            .iter()
            .filter(|r| {
                let seq = genome.sequence(r.tid);
                let source = &seq[r.source as usize..(r.source + r.len) as usize];
                let copy = &seq[r.copy as usize..(r.copy + r.len) as usize];
                let differences = source.iter().zip(copy).filter(|(a, b)| a != b).count();
                differences * 20 < r.len as usize
            })
            .count();
        assert!(close * 2 >= genome.repeats.len());
        let r = genome.repeats[0];
        assert_eq!(genome.repeat_copy_of(r.tid, r.source + 10, r.source + 160), Some(r.copy + 10));
        assert_eq!(genome.repeat_copy_of(r.tid, r.source + r.len - 5, r.source + r.len + 5), None);
    }

    #[test]
    fn sequence_is_deterministic_acgt() {
        let a = Genome::generate(9, 1, 20_000, 500);
        let b = Genome::generate(9, 1, 20_000, 500);
        assert_eq!(a.sequence(0), b.sequence(0));
        assert!(a.sequence(0).iter().all(|b| b"ACGT".contains(b)));
    }
}
