//! The text of a report, section by section as samtools prints it: checksums, summary numbers,
//! qualities, mismatches, GC and base content ([`write_report`]); the rest follows in
//! `report_tail`.

use std::fmt::Write;

use super::counters::{BaseCounts, Counters, CycleCounts, GC_BINS};
use super::printf::{fixed, scientific};
use super::ref_stats::RefStats;
use super::report_tail;
use super::tracker::Tracker;
use super::{QUALITY_SLOTS, Settings};

/// What the report says about how it was made.
pub struct Heading<'a> {
    /// e.g. `1.24+htslib-1.24`.
    pub version: &'a str,
    /// The command line after `samtools`, words joined by spaces.
    pub command_line: &'a str,
    /// `-S`: the tag and this report's value of it.
    pub split: Option<(&'a str, &'a str)>,
}

/// One report's numbers.
pub struct Report<'a> {
    pub settings: &'a Settings,
    pub tracker: &'a mut Tracker,
    pub counters: &'a mut Counters,
    pub ref_stats: Option<&'a RefStats>,
}

/// Insert-size summary over the main bulk of the sizes (samtools' first loops of
/// `output_stats`).
pub(super) struct InsertSummary {
    /// Sizes below this are printed.
    pub bulk_end: usize,
    pub average: f64,
    pub sd: f64,
    pub inward: u64,
    pub outward: u64,
    pub other: u64,
}

fn insert_summary(c: &mut Counters, main_bulk: f32) -> InsertSummary {
    let sizes = &mut c.insert_sizes;
    sizes.halve();
    let listed = sizes.sizes();
    let (mut inward, mut outward, mut other) = (0u64, 0u64, 0u64);
    for &s in &listed {
        let o = sizes.get(s);
        inward += o[0];
        outward += o[1];
        other += o[2];
    }
    let mut total = inward + outward + other;
    let (mut bulk_end, mut bulk, mut average) = (0usize, 0f64, 0f64);
    // Sizes absent from a sparse table add nothing; only size 0 can end the bulk unseen.
    let mut walk: Vec<usize> = listed;
    if walk.first() != Some(&0) {
        walk.insert(0, 0);
    }
    for &s in walk.iter().filter(|&&s| s < sizes.len()) {
        let num: u64 = sizes.get(s).iter().sum();
        if num > 0 {
            bulk_end = s + 1;
        }
        bulk += num as f64;
        average += (s as u64).wrapping_mul(num) as f64;
        if bulk / total as f64 > f64::from(main_bulk) {
            bulk_end = s + 1;
            total = bulk as u64;
            break;
        }
    }
    let divisor = if total != 0 { total } else { 1 };
    average /= divisor as f64;
    let mut sd = 0f64;
    for &s in walk.iter().filter(|&&s| s >= 1 && s < bulk_end) {
        let num: u64 = sizes.get(s).iter().sum();
        sd += num as f64 * (s as f64 - average) * (s as f64 - average) / divisor as f64;
    }
    InsertSummary { bulk_end, average, sd: sd.sqrt(), inward, outward, other }
}

/// The whole report text.
pub fn write_report(heading: &Heading<'_>, report: Report<'_>) -> String {
    let mut out = String::with_capacity(64 << 10);
    let isize = insert_summary(report.counters, report.settings.main_bulk);
    let c = &*report.counters;
    let t = &*report.tracker;
    write_heading(&mut out, heading, c);
    let avg_read_length = write_summary(&mut out, c, t, report.settings, &isize);
    write_qualities(&mut out, c, t, report.settings);
    write_gc(&mut out, c);
    write_base_content(&mut out, c);
    report_tail::write_tail(&mut out, report, &isize, avg_read_length);
    out
}

fn write_heading(out: &mut String, h: &Heading<'_>, c: &Counters) {
    let _ = writeln!(
        out,
        "# This file was produced by samtools stats ({}) and can be plotted using plot-bamstats",
        h.version
    );
    match h.split {
        Some((tag, value)) => {
            let _ = writeln!(
                out,
                "# This file contains statistics only for reads with tag: {tag}={value}"
            );
        }
        None => out.push_str("# This file contains statistics for all reads.\n"),
    }
    let _ = writeln!(out, "# The command line was:  {}", h.command_line);
    out.push_str("# CHK, Checksum\t[2]Read Names\t[3]Sequences\t[4]Qualities\n");
    out.push_str(
        "# CHK, CRC32 of reads which passed filtering followed by addition (32bit overflow)\n",
    );
    let [n, s, q] = c.checksum;
    let _ = writeln!(out, "CHK\t{n:08x}\t{s:08x}\t{q:08x}");
}

/// The `SN` lines; returns the average read length (the GC-depth section scales by it).
fn write_summary(
    out: &mut String,
    c: &Counters,
    t: &Tracker,
    settings: &Settings,
    isize: &InsertSummary,
) -> f32 {
    let sequences = c.reads_frag[0] + c.reads_frag[1] + c.reads_other;
    let ratio = |a: u64, b: u64| if b != 0 { a as f32 / b as f32 } else { 0.0 };
    let avg_read_length = ratio(c.total_len, sequences);
    let error_rate = ratio(c.mismatches, t.bases_mapped_cigar);
    let sorted = if t.is_sorted { 1 } else { 0 };
    out.push_str("# Summary Numbers. Use `grep ^SN | cut -f 2-` to extract this part.\n");
    let mut sn = |text: String| {
        out.push_str("SN\t");
        out.push_str(&text);
        out.push('\n');
    };
    let raw = t.filtered + sequences;
    sn(format!("raw total sequences:\t{raw}\t# excluding supplementary and secondary reads"));
    sn(format!("filtered sequences:\t{}", t.filtered));
    sn(format!("sequences:\t{sequences}"));
    let sorted_text = if t.is_sorted { "sorted" } else { "not sorted" };
    sn(format!("is sorted:\t{sorted}\t# {sorted_text} by coordinate"));
    sn(format!("1st fragments:\t{}", c.reads_frag[0]));
    sn(format!("last fragments:\t{}", c.reads_frag[1]));
    sn(format!("reads mapped:\t{}", c.paired_and_mapped + c.single_mapped));
    sn(format!(
        "reads mapped and paired:\t{}\t# paired-end technology bit set + both mates mapped",
        c.paired_and_mapped
    ));
    sn(format!("reads unmapped:\t{}", c.unmapped));
    sn(format!("reads properly paired:\t{}\t# proper-pair bit set", c.properly_paired));
    sn(format!("reads paired:\t{}\t# paired-end technology bit set", c.paired_tech));
    sn(format!("reads duplicated:\t{}\t# PCR or optical duplicate bit set", c.duplicates));
    sn(format!("reads MQ0:\t{}\t# mapped and MQ=0", c.mq0));
    sn(format!("reads QC failed:\t{}", c.qc_failed));
    sn(format!("non-primary alignments:\t{}", c.secondary));
    sn(format!("supplementary alignments:\t{}", c.supplementary));
    sn(format!("total length:\t{}\t# ignores clipping", c.total_len));
    sn(format!("total first fragment length:\t{}\t# ignores clipping", c.total_len_frag[0]));
    sn(format!("total last fragment length:\t{}\t# ignores clipping", c.total_len_frag[1]));
    sn(format!("bases mapped:\t{}\t# ignores clipping", c.bases_mapped));
    sn(format!("bases mapped (cigar):\t{}\t# more accurate", t.bases_mapped_cigar as i64));
    sn(format!("bases trimmed:\t{}", c.trimmed));
    sn(format!("bases duplicated:\t{}", c.duplicate_bases));
    sn(format!("mismatches:\t{}\t# from NM fields", c.mismatches as i64));
    sn(format!(
        "error rate:\t{}\t# mismatches / bases mapped (cigar)",
        scientific(f64::from(error_rate))
    ));
    sn(format!("average length:\t{}", fixed(f64::from(avg_read_length), 0)));
    let first = ratio(c.total_len_frag[0], c.reads_frag[0]);
    sn(format!("average first fragment length:\t{}", fixed(f64::from(first), 0)));
    let last = ratio(c.total_len_frag[1], c.reads_frag[1]);
    sn(format!("average last fragment length:\t{}", fixed(f64::from(last), 0)));
    sn(format!("maximum length:\t{}", c.max_len));
    sn(format!("maximum first fragment length:\t{}", c.max_len_frag[0]));
    sn(format!("maximum last fragment length:\t{}", c.max_len_frag[1]));
    let quality = if c.total_len != 0 { c.quality_sum as f64 / c.total_len as f64 } else { 0.0 };
    sn(format!("average quality:\t{}", fixed(quality, 1)));
    sn(format!("insert size average:\t{}", fixed(isize.average, 1)));
    sn(format!("insert size standard deviation:\t{}", fixed(isize.sd, 1)));
    sn(format!("inward oriented pairs:\t{}", isize.inward));
    sn(format!("outward oriented pairs:\t{}", isize.outward));
    sn(format!("pairs with other orientation:\t{}", isize.other));
    sn(format!("pairs on different chromosomes:\t{}", c.anomalous / 2));
    let proper = ratio(100 * c.properly_paired, sequences);
    sn(format!("percentage of properly paired reads (%):\t{}", fixed(f64::from(proper), 1)));
    if let Some(targets) = t.targets.as_ref().filter(|t| t.base_count != 0) {
        sn(format!("bases inside the target:\t{}", targets.base_count));
        let from = (settings.cov_threshold + 1).max(0) as usize;
        let covered: u64 = t.coverage.histogram.iter().skip(from).sum();
        let share = (100 * covered) as f32 / targets.base_count as f32;
        sn(format!(
            "percentage of target genome with coverage > {} (%):\t{}",
            settings.cov_threshold,
            fixed(f64::from(share), 2)
        ));
    }
    avg_read_length
}

/// The highest quality column printed: one past the highest seen, as samtools pads it.
pub(super) fn quality_columns(c: &Counters) -> usize {
    let max = c.max_quality;
    let max = if max + 1 < QUALITY_SLOTS as i32 && max < 255 { max + 1 } else { max };
    max as usize
}

fn write_qualities(out: &mut String, c: &Counters, t: &Tracker, settings: &Settings) {
    let max_quality = quality_columns(c);
    let names = [("FFQ", "First"), ("LFQ", "Last")];
    for (f, (tag, name)) in names.iter().enumerate() {
        let _ = writeln!(
            out,
            "# {name} Fragment Qualities. Use `grep ^{tag} | cut -f 2-` to extract this part."
        );
        out.push_str(
            "# Columns correspond to qualities and rows to cycles. First column is the cycle number.\n",
        );
        for cycle in 0..c.max_len_frag[f] {
            let _ = write!(out, "{tag}\t{}", cycle + 1);
            for q in 0..=max_quality {
                let _ = write!(out, "\t{}", c.quality(f, cycle, q));
            }
            out.push('\n');
        }
    }
    if settings.has_reference {
        out.push_str("# Mismatches per cycle and quality. Use `grep ^MPC | cut -f 2-` to extract this part.\n");
        out.push_str("# Columns correspond to qualities, rows to cycles. First column is the cycle number, second\n");
        out.push_str("# is the number of N's and the rest is the number of mismatches\n");
        for cycle in 0..c.max_len + 1 {
            let _ = write!(out, "MPC\t{}", cycle + 1);
            for q in 0..=max_quality {
                let n = t.mismatches.get(cycle * QUALITY_SLOTS + q).copied().unwrap_or(0);
                let _ = write!(out, "\t{n}");
            }
            out.push('\n');
        }
    }
}

fn write_gc(out: &mut String, c: &Counters) {
    for (f, (tag, name)) in [("GCF", "first"), ("GCL", "last")].iter().enumerate() {
        let _ = writeln!(
            out,
            "# GC Content of {name} fragments. Use `grep ^{tag} | cut -f 2-` to extract this part."
        );
        let gc = &c.gc[f];
        let mut prev = 0;
        for i in 0..GC_BINS {
            if gc[i] == gc[prev] {
                continue;
            }
            let percent = (i + prev) as f64 * 0.5 * 100.0 / (GC_BINS - 1) as f64;
            let _ = writeln!(out, "{tag}\t{}\t{}", fixed(percent, 2), gc[prev]);
            prev = i;
        }
    }
}

fn percent(x: u64, sum: u64) -> String {
    fixed(100.0 * x as f64 / sum as f64, 2)
}

fn cycle_counts(v: &[CycleCounts], i: usize) -> BaseCounts {
    v.get(i).map(BaseCounts::from_slots).unwrap_or_default()
}

fn write_base_content(out: &mut String, c: &Counters) {
    let max_len = c.max_len + 1;
    out.push_str("# ACGT content per cycle. Use `grep ^GCC | cut -f 2-` to extract this part. The columns are: cycle; A,C,G,T base counts as a percentage of all A/C/G/T bases [%]; and N and O counts as a percentage of all A/C/G/T bases [%]\n");
    for i in 0..max_len {
        let (a, b) = (cycle_counts(&c.cycles[0], i), cycle_counts(&c.cycles[1], i));
        let sum = a.acgt() + b.acgt();
        if sum == 0 {
            continue;
        }
        let p = |x, y| percent(x + y, sum);
        let _ = writeln!(
            out,
            "GCC\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            i + 1,
            p(a.a, b.a),
            p(a.c, b.c),
            p(a.g, b.g),
            p(a.t, b.t),
            p(a.n, b.n),
            p(a.other, b.other)
        );
    }
    out.push_str("# ACGT content per cycle, read oriented. Use `grep ^GCT | cut -f 2-` to extract this part. The columns are: cycle; A,C,G,T base counts as a percentage of all A/C/G/T bases [%]\n");
    for i in 0..max_len {
        let o = cycle_counts(&c.read_oriented, i);
        let sum = o.acgt();
        if sum == 0 {
            continue;
        }
        let p = |x| percent(x, sum);
        let _ = writeln!(out, "GCT\t{}\t{}\t{}\t{}\t{}", i + 1, p(o.a), p(o.c), p(o.g), p(o.t));
    }
    for (f, (tag, total_tag, name)) in
        [("FBC", "FTC", "first"), ("LBC", "LTC", "last")].iter().enumerate()
    {
        let _ = writeln!(
            out,
            "# ACGT content per cycle for {name} fragments. Use `grep ^{tag} | cut -f 2-` to extract this part. The columns are: cycle; A,C,G,T base counts as a percentage of all A/C/G/T bases [%]; and N and O counts as a percentage of all A/C/G/T bases [%]"
        );
        let mut total = [0u64; 5];
        for i in 0..max_len {
            let o = cycle_counts(&c.cycles[f], i);
            for (k, n) in [o.a, o.c, o.g, o.t, o.n].into_iter().enumerate() {
                total[k] += n;
            }
            let sum = o.acgt();
            if sum == 0 {
                continue;
            }
            let p = |x| percent(x, sum);
            let _ = writeln!(
                out,
                "{tag}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                i + 1,
                p(o.a),
                p(o.c),
                p(o.g),
                p(o.t),
                p(o.n),
                p(o.other)
            );
        }
        let _ = writeln!(
            out,
            "# ACGT raw counters for {name} fragments. Use `grep ^{total_tag} | cut -f 2-` to extract this part. The columns are: A,C,G,T,N base counters"
        );
        let [a, cc, g, tt, n] = total;
        let _ = writeln!(out, "{total_tag}\t{a}\t{cc}\t{g}\t{tt}\t{n}");
    }
}
