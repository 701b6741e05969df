//! GC-depth bins (samtools' `gcd`): the reads starting in each stretch of `--GC-depth` bases,
//! with the stretch's GC content (of the reference with `-r`, else summed over its reads).
//! Bins are numbered from 1; slot 0 stays empty, and samtools sorts it in with the others.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GcBin {
    pub gc: f32,
    pub depth: u32,
}

#[derive(Default)]
pub struct GcDepth {
    /// samtools' `gcd` array, `ngcd` long.
    pub bins: Vec<GcBin>,
    /// samtools' `igcd`: the bin reads are counted in now.
    pub current: usize,
}

impl GcDepth {
    /// Starts the next bin (samtools' `igcd++` and `hts_expand0`).
    pub fn advance(&mut self) {
        self.current += 1;
        if self.current >= self.bins.len() {
            let wanted = (self.current + 1).next_power_of_two();
            self.bins.resize(wanted, GcBin::default());
        }
    }

    pub fn current_mut(&mut self) -> &mut GcBin {
        let i = self.current;
        if i >= self.bins.len() {
            self.bins.resize(i + 1, GcBin::default());
        }
        &mut self.bins[i]
    }
}

/// One `GCD` row: GC percentage, the share of bins up to it, depth percentiles.
pub struct GcdRow {
    pub gc: f32,
    pub cumulative: f64,
    pub percentiles: [f32; 5],
}

/// samtools' `gcd_percentile` over `bins` (sorted by depth).
fn percentile(bins: &[GcBin], p: i32) -> f32 {
    let n = bins.len() as i32;
    let x = p as f32 * (n + 1) as f32 / 100.0;
    let k = x as i32;
    if k <= 0 {
        return bins[0].depth as f32;
    }
    if k >= n {
        return bins[n as usize - 1].depth as f32;
    }
    let d = x - k as f32;
    let (lo, hi) = (bins[k as usize - 1].depth, bins[k as usize].depth);
    lo as f32 + d * hi.wrapping_sub(lo) as f32
}

/// samtools' GC-depth section: the bins' GC rounded to percent (all but the current one),
/// sorted, grouped by GC, and each group's depth percentiles scaled to read coverage.
pub fn gcd_rows(
    gcd: &mut GcDepth,
    has_reference: bool,
    avg_read_length: f32,
    bin_size: i32,
) -> Vec<GcdRow> {
    let last = gcd.current;
    for b in gcd.bins.iter_mut().take(last) {
        if has_reference {
            b.gc = (100.0 * f64::from(b.gc)).round_ties_even() as f32;
        } else if b.depth != 0 {
            b.gc = (100.0 * f64::from(b.gc) / f64::from(b.depth)).round_ties_even() as f32;
        }
    }
    if !gcd.bins.is_empty() {
        gcd.bins[..=last].sort_by(|a, b| {
            a.gc.partial_cmp(&b.gc).unwrap_or(std::cmp::Ordering::Equal).then(a.depth.cmp(&b.depth))
        });
    }
    let mut rows = Vec::new();
    let mut i = 0;
    while i < last {
        let gc = gcd.bins[i].gc;
        let mut n = 0;
        while i + n < last && f64::from(gcd.bins[i + n].gc - gc).abs() < 0.1 {
            n += 1;
        }
        let group = &gcd.bins[i..i + n];
        let scale = |p| percentile(group, p) * avg_read_length / bin_size as f32;
        rows.push(GcdRow {
            gc,
            cumulative: (i + n + 1) as f64 * 100.0 / (last + 1) as f64,
            percentiles: [scale(10), scale(25), scale(50), scale(75), scale(90)],
        });
        i += n;
    }
    rows
}
