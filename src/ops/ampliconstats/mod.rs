//! `ampliconstats` on amplicons (samtools 1.24 `amplicon_stats.c`): the amplicons a primer BED
//! describes, the position → amplicon lookup reads are matched with, and the pieces of the
//! report that are arithmetic (template coordinate clustering, depth run lengths).
//!
//! The per-record counting lives in `pipeline::ampliconstats::stats`: it keeps htslib's hash
//! table order, which only `io` models.

use std::fmt::Write;

use crate::ops::ampliconclip::Primer;

/// samtools' `MAX_PRIMER_PER_AMPLICON`: alternative primers per side.
const MAX_PRIMERS_PER_SIDE: usize = 4;
/// samtools' `MAX_DEPTH`: how many `-d` depths are kept.
pub const MAX_DEPTHS: usize = 5;

/// One amplicon: its primers' inner ends and the inner and outer extents (1-based, inclusive).
#[derive(Clone, Debug, Default)]
pub struct Amplicon {
    /// Each left primer's BED end (the last primer base, 1-based).
    pub left: Vec<i64>,
    /// Each right primer's BED start (the base before the primer, 1-based).
    pub right: Vec<i64>,
    pub max_left: i64,
    pub min_right: i64,
    pub min_left: i64,
    pub max_right: i64,
}

/// The limits and layout `bed2amplicon` works with.
#[derive(Clone, Copy, Debug)]
pub struct AmpliconLimits {
    /// `-a` + 1.
    pub max_amp: i64,
    /// `-l` + 1.
    pub max_amp_len: i64,
    /// Without `-S`: lines name the reference.
    pub multi_ref: bool,
}

/// `count_amplicon`: a `-` primer followed by a `+` one starts the next amplicon.
pub fn count_amplicons(primers: &[Primer]) -> usize {
    let mut last_rev = false;
    let mut n = 0;
    for p in primers {
        if !p.rev && last_rev {
            n += 1;
        }
        last_rev = p.rev;
    }
    n + 1
}

/// `bed2amplicon`: groups the primers (in BED order, all `+` of an amplicon then all `-`) into
/// amplicons, appending the `AMPLICON` lines (and, with `title`, their heading) to `out`. An
/// error is samtools' message; what was appended before it is printed too.
pub fn build_amplicons(
    primers: &[Primer],
    limits: &AmpliconLimits,
    title: bool,
    reference: &str,
    first_amp: usize,
    out: &mut String,
) -> Result<Vec<Amplicon>, String> {
    let fresh = || Amplicon {
        max_left: 0,
        min_right: i64::MAX,
        min_left: i64::MAX,
        max_right: 0,
        ..Default::default()
    };
    if title {
        out.push_str("# Amplicon locations from BED file.\n");
        out.push_str(
            "# LEFT/RIGHT are <start>-<end> format and comma-separated for alt-primers.\n",
        );
        out.push_str(if limits.multi_ref {
            "#\n# AMPLICON\tREF\tNUMBER\tLEFT\tRIGHT\n"
        } else {
            "#\n# AMPLICON\tNUMBER\tLEFT\tRIGHT\n"
        });
    }
    let mut amps = vec![fresh()];
    let mut last_rev = false;
    for (i, p) in primers.iter().enumerate() {
        if i == 0 && p.rev {
            return Err(
                "[ampliconstats] error: BED file should start with the + strand primer".into()
            );
        }
        if !p.rev && last_rev {
            if amps.len() as i64 >= limits.max_amp {
                return Err(format!(
                    "[ampliconstats] error: too many amplicons ({}). Use -a option to raise this.",
                    amps.len()
                ));
            }
            amps.push(fresh());
        }
        let j = amps.len() - 1;
        let amp = &mut amps[j];
        if !p.rev {
            if i == 0 || last_rev {
                if j > 0 {
                    out.push('\n');
                }
                if limits.multi_ref {
                    let _ = write!(out, "AMPLICON\t{reference}\t{}", j + 1 + first_amp);
                } else {
                    let _ = write!(out, "AMPLICON\t{}", j + 1);
                }
            }
            if amp.left.len() >= MAX_PRIMERS_PER_SIDE {
                return Err(format!(
                    "samtools ampliconstats: too many primers per amplicon ({MAX_PRIMERS_PER_SIDE}).\n"
                ));
            }
            amp.left.push(p.right);
            amp.max_left = amp.max_left.max(p.right + 1);
            amp.min_left = amp.min_left.min(p.right + 1);
            let sep = if amp.left.len() > 1 { ',' } else { '\t' };
            let _ = write!(out, "{sep}{}-{}", p.left + 1, p.right);
        } else {
            if amp.right.len() >= MAX_PRIMERS_PER_SIDE {
                return Err(format!(
                    "samtools ampliconstats: too many primers per amplicon ({MAX_PRIMERS_PER_SIDE})"
                ));
            }
            amp.right.push(p.left);
            amp.min_right = amp.min_right.min(p.left - 1);
            if amp.max_right < p.left - 1 {
                amp.max_right = p.left - 1;
                if amp.max_right - amp.min_left + 1 >= limits.max_amp_len {
                    return Err(format!(
                        "[ampliconstats] error: amplicon longer ({}) than max_amp_len option ({})",
                        (amp.max_right - amp.min_left + 2) as i32,
                        limits.max_amp_len
                    ));
                }
            }
            let sep = if amp.right.len() > 1 { ',' } else { '\t' };
            let _ = write!(out, "{sep}{}-{}", p.left + 1, p.right);
        }
        last_rev = p.rev;
    }
    if !last_rev {
        out.push('\n');
        return Err(
            "[ampliconstats] error: bed file does not end on a reverse strand primer.".into()
        );
    }
    out.push('\n');
    if amps.len() as i64 >= limits.max_amp {
        return Err(format!(
            "[ampliconstats] error: too many amplicons ({}). Use -a option to raise this.",
            amps.len()
        ));
    }
    Ok(amps)
}

/// `initialise_amp_pos_lookup`: per 0-based position, the amplicon whose left (`starts`) or
/// right (`ends`) primer end lies within `margin` of it; a later amplicon wins.
pub struct PositionLookup {
    pub starts: Vec<i32>,
    pub ends: Vec<i32>,
}

impl PositionLookup {
    pub fn new(amps: &[Amplicon], len: i64, margin: i64) -> PositionLookup {
        let n = len.max(0) as usize;
        let mut starts = vec![-1; n];
        let mut ends = vec![-1; n];
        let mark = |table: &mut Vec<i32>, at: i64, amp: usize| {
            for p in at - margin..=at + margin {
                if p >= 1 && p <= len {
                    table[(p - 1) as usize] = amp as i32;
                }
            }
        };
        for (i, a) in amps.iter().enumerate() {
            for &l in &a.left {
                mark(&mut starts, l, i);
            }
            for &r in &a.right {
                mark(&mut ends, r, i);
            }
        }
        PositionLookup { starts, ends }
    }

    /// The amplicon a template starts at `pos` in (−1: none; positions off the table too).
    pub fn start(&self, pos: i64) -> i32 {
        usize::try_from(pos).ok().and_then(|p| self.starts.get(p)).copied().unwrap_or(-1)
    }

    pub fn end(&self, pos: i64) -> i32 {
        usize::try_from(pos).ok().and_then(|p| self.ends.get(p)).copied().unwrap_or(-1)
    }
}

/// One template start,end with its frequency and amplicon status bits (`tcoord_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TemplateCoord {
    pub start: i32,
    pub end: i32,
    pub freq: u32,
    pub status: u32,
}

/// `aggregate_tcoord`: sorts by descending frequency (then start, end; C's `qsort`, whose
/// order of equal items is the same as a stable sort's for distinct keys), moves the middle
/// of each tie to its front and merges coordinates within `bin / 2` into the more frequent.
pub fn aggregate_coords(tpos: &mut Vec<TemplateCoord>, bin: i32) {
    tpos.sort_by(|a, b| b.freq.cmp(&a.freq).then(a.start.cmp(&b.start)).then(a.end.cmp(&b.end)));
    let n = tpos.len();
    let mut j = 0;
    while j < n {
        let mut j2 = j + 1;
        while j2 < n {
            if tpos[j].freq != tpos[j2].freq || tpos[j2].start - tpos[j].start >= bin {
                break;
            }
            j2 += 1;
        }
        if j2 - 1 > j {
            let mut m = (j2 - 1 + j) / 2;
            while m > 1 && tpos[m].start == tpos[m - 1].start {
                m -= 1;
            }
            let mut j3 = m + 1;
            while j3 < j2 {
                if tpos[m].start != tpos[j3].start || tpos[m].end - tpos[j3].end >= bin {
                    break;
                }
                j3 += 1;
            }
            if j3 - 1 > m {
                m = (j3 - 1 + m) / 2;
            }
            tpos.swap(j, m);
            j = j2 - 1;
        }
        j += 1;
    }
    let mut k = 0;
    for j in 0..n {
        if tpos[j].freq == 0 {
            continue;
        }
        if k < j {
            tpos[k] = tpos[j];
        }
        for j2 in j + 1..n {
            let (a, b) = (tpos[j], tpos[j2]);
            if (a.start - b.start).abs() < bin / 2
                && (a.end - b.end).abs() < bin / 2
                && a.status == b.status
            {
                tpos[k].freq += b.freq;
                tpos[j2].freq = 0;
            }
        }
        k += 1;
    }
    tpos.truncate(k);
}

/// The `DP_ALL`/`DP_VALID` run-length encoding: runs whose values all lie within `fraction` of
/// the run's mid-point, as (mid-point truncated, run length).
pub fn depth_runs(depths: &[i32], fraction: f64) -> Vec<(i32, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < depths.len() {
        let (mut dmin, mut dmax) = (depths[i], depths[i]);
        let mut dmid = f64::from(dmin + dmax) / 2.0;
        let (mut low, mut high) = (dmid * (1.0 - fraction), dmid * (1.0 + fraction));
        let mut j = i + 1;
        while j < depths.len() {
            let d = depths[j];
            if f64::from(d) < low || f64::from(d) > high {
                break;
            }
            if dmin > d || dmax < d {
                if dmin > d {
                    dmin = d;
                } else {
                    dmax = d;
                }
                dmid = f64::from(dmin + dmax) / 2.0;
                low = dmid * (1.0 - fraction);
                high = dmid * (1.0 + fraction);
            }
            j += 1;
        }
        runs.push((dmid as i32, j - i));
        i = j;
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn primer(left: i64, right: i64, rev: bool) -> Primer {
        Primer { left, right, rev }
    }

    #[test]
    fn primers_group_into_amplicons_at_each_minus_to_plus_switch() {
        let p = [
            primer(30, 54, false),
            primer(385, 410, true),
            primer(320, 342, false),
            primer(704, 726, true),
        ];
        assert_eq!(count_amplicons(&p), 2);
        let limits = AmpliconLimits { max_amp: 1001, max_amp_len: 1001, multi_ref: false };
        let mut out = String::new();
        let amps = build_amplicons(&p, &limits, false, "vir1", 0, &mut out).unwrap();
        assert_eq!(out, "AMPLICON\t1\t31-54\t386-410\nAMPLICON\t2\t321-342\t705-726\n");
        assert_eq!((amps[0].max_left, amps[0].min_right), (55, 384));
        let lookup = PositionLookup::new(&amps, 800, 30);
        assert_eq!((lookup.start(54), lookup.end(384), lookup.start(200)), (0, 0, -1));
    }

    #[test]
    fn depth_runs_merge_values_within_the_fraction() {
        assert_eq!(depth_runs(&[0, 0, 100, 101, 5], 0.01), vec![(0, 2), (100, 2), (5, 1)]);
    }
}
