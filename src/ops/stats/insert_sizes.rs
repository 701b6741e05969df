//! Insert-size counts by orientation (samtools' `stats_isize.c`): a dense table up to `-i`, or
//! with `-i 0` (or less) a sparse one of any size.

use std::collections::HashMap;

/// Inward, outward and other-orientation counts of one insert size.
pub type Orientations = [u64; 3];
pub const INWARD: usize = 0;
pub const OUTWARD: usize = 1;
pub const OTHER: usize = 2;

#[derive(Clone, Debug)]
pub enum InsertSizes {
    /// Sizes `0..len`.
    Dense(Vec<Orientations>),
    /// Only the sizes seen; `max` is the largest (samtools' `nitems` is `max + 1`).
    Sparse { counts: HashMap<i32, Orientations>, max: i32 },
}

impl InsertSizes {
    /// samtools' `init_isize_t(bound)`.
    pub fn new(bound: i32) -> InsertSizes {
        if bound <= 0 {
            InsertSizes::Sparse { counts: HashMap::new(), max: 0 }
        } else {
            InsertSizes::Dense(vec![[0; 3]; bound as usize])
        }
    }

    pub fn add(&mut self, size: i32, orientation: usize) {
        match self {
            InsertSizes::Dense(v) => v[size as usize][orientation] += 1,
            InsertSizes::Sparse { counts, max } => {
                counts.entry(size).or_default()[orientation] += 1;
                *max = (*max).max(size);
            }
        }
    }

    pub fn merge(&mut self, other: &InsertSizes) {
        match (self, other) {
            (InsertSizes::Dense(a), InsertSizes::Dense(b)) => {
                for (x, y) in a.iter_mut().zip(b) {
                    for k in 0..3 {
                        x[k] += y[k];
                    }
                }
            }
            (InsertSizes::Sparse { counts, max }, InsertSizes::Sparse { counts: c2, max: m2 }) => {
                for (size, o) in c2 {
                    let x = counts.entry(*size).or_default();
                    for k in 0..3 {
                        x[k] += o[k];
                    }
                }
                *max = (*max).max(*m2);
            }
            _ => unreachable!("insert-size tables of one report share their kind"),
        }
    }

    /// samtools' `nitems`.
    pub fn len(&self) -> usize {
        match self {
            InsertSizes::Dense(v) => v.len(),
            InsertSizes::Sparse { max, .. } => *max as usize + 1,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, size: usize) -> Orientations {
        match self {
            InsertSizes::Dense(v) => v[size],
            InsertSizes::Sparse { counts, .. } => {
                counts.get(&(size as i32)).copied().unwrap_or_default()
            }
        }
    }

    /// Each pair was counted once per read: samtools halves every count (rounding down).
    pub fn halve(&mut self) {
        let halve = |o: &mut Orientations| o.iter_mut().for_each(|c| *c = (*c as f64 * 0.5) as u64);
        match self {
            InsertSizes::Dense(v) => v.iter_mut().for_each(halve),
            InsertSizes::Sparse { counts, .. } => counts.values_mut().for_each(halve),
        }
    }

    /// The sizes that may hold counts, ascending (all of them for a dense table).
    pub fn sizes(&self) -> Vec<usize> {
        match self {
            InsertSizes::Dense(v) => (0..v.len()).collect(),
            InsertSizes::Sparse { counts, .. } => {
                let mut s: Vec<usize> = counts.keys().map(|&k| k as usize).collect();
                s.sort_unstable();
                s
            }
        }
    }
}
