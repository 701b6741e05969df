//! The sections after the base content: barcodes, insert sizes, read lengths, mapping
//! qualities, indels, coverage, GC-depth and reference statistics.

use std::fmt::Write;

use super::QUALITY_SLOTS;
use super::barcodes::BarcodeTag;
use super::counters::{Counters, MAX_INDEL};
use super::gc_depth::gcd_rows;
use super::printf::fixed;
use super::ref_stats::RefStats;
use super::report::{InsertSummary, Report};
use super::tracker::Tracker;

pub(super) fn write_tail(
    out: &mut String,
    report: Report<'_>,
    isize: &InsertSummary,
    avg_read_length: f32,
) {
    let c = &*report.counters;
    for tag in report.tracker.barcodes.tags.iter().filter(|t| t.len != 0) {
        write_barcode(out, tag);
    }
    write_insert_sizes(out, c, isize, report.settings.sparse);
    write_lengths(out, c);
    write_indels(out, c);
    if report.tracker.is_sorted {
        write_coverage(out, report.tracker);
        write_gc_depth(
            out,
            report.tracker,
            report.settings.has_reference,
            avg_read_length,
            report.settings.gcd_bin_size,
        );
    }
    if let Some(rs) = report.ref_stats {
        write_ref_stats(out, rs);
    }
}

fn write_barcode(out: &mut String, t: &BarcodeTag) {
    let (tag, qtag) = (String::from_utf8_lossy(&t.tag), String::from_utf8_lossy(&t.quality_tag));
    let _ = writeln!(
        out,
        "# ACGT content per cycle for barcodes. Use `grep ^{tag}C | cut -f 2-` to extract this part. The columns are: cycle; A,C,G,T base counts as a percentage of all A/C/G/T bases [%]; and N counts as a percentage of all A/C/G/T bases [%]"
    );
    // Cycles after the separator count from 1 again, in part 2.
    let part = |i: usize| match t.separator {
        Some(s) if i >= s => (2, i - s),
        _ => (1, i + 1),
    };
    let cycles = || (0..t.len).filter(|&i| Some(i) != t.separator);
    for i in cycles() {
        let o = &t.bases[i];
        let sum = o.acgt();
        if sum == 0 {
            continue;
        }
        let p = |x: u64| fixed(100.0 * x as f64 / sum as f64, 2);
        let (k, cycle) = part(i);
        let _ = writeln!(
            out,
            "{tag}C{k}\t{cycle}\t{}\t{}\t{}\t{}\t{}",
            p(o.a),
            p(o.c),
            p(o.g),
            p(o.t),
            p(o.n)
        );
    }
    let _ =
        writeln!(out, "# Barcode Qualities. Use `grep ^{qtag}Q | cut -f 2-` to extract this part.");
    out.push_str("# Columns correspond to qualities and rows to barcode cycles. First column is the cycle number.\n");
    for i in cycles() {
        let (k, cycle) = part(i);
        let _ = write!(out, "{qtag}Q{k}\t{cycle}");
        for q in 0..=t.max_quality {
            let _ = write!(out, "\t{}", t.qualities[i * QUALITY_SLOTS + q as usize]);
        }
        out.push('\n');
    }
}

fn write_insert_sizes(out: &mut String, c: &Counters, isize: &InsertSummary, sparse: bool) {
    out.push_str("# Insert sizes. Use `grep ^IS | cut -f 2-` to extract this part. The columns are: insert size, pairs total, inward oriented pairs, outward oriented pairs, other pairs\n");
    for s in 0..isize.bulk_end {
        let [i, o, x] = c.insert_sizes.get(s);
        if !sparse || i + o + x > 0 {
            let _ = writeln!(out, "IS\t{s}\t{}\t{i}\t{o}\t{x}", i + o + x);
        }
    }
}

fn write_lengths(out: &mut String, c: &Counters) {
    let sections = [
        ("RL", "Read lengths", &c.read_lengths, c.max_len + 1),
        ("FRL", "Read lengths - first fragments", &c.read_lengths_frag[0], c.max_len_frag[0]),
        ("LRL", "Read lengths - last fragments", &c.read_lengths_frag[1], c.max_len_frag[1]),
    ];
    for (tag, title, lengths, max) in sections {
        let _ = writeln!(
            out,
            "# {title}. Use `grep ^{tag} | cut -f 2-` to extract this part. The columns are: read length, count"
        );
        for len in 1..=max {
            let n = lengths.get(len).copied().unwrap_or(0);
            if n > 0 {
                let _ = writeln!(out, "{tag}\t{len}\t{n}");
            }
        }
    }
    out.push_str("# Mapping qualities for reads !(UNMAP|SECOND|SUPPL|QCFAIL|DUP). Use `grep ^MAPQ | cut -f 2-` to extract this part. The columns are: mapq, count\n");
    for (q, &n) in c.mapping_qualities.iter().enumerate() {
        if n > 0 {
            let _ = writeln!(out, "MAPQ\t{q}\t{n}");
        }
    }
}

fn write_indels(out: &mut String, c: &Counters) {
    out.push_str("# Indel distribution. Use `grep ^ID | cut -f 2-` to extract this part. The columns are: length, number of insertions, number of deletions\n");
    for len in 0..MAX_INDEL {
        let (i, d) = (c.insertions[len], c.deletions[len]);
        if i > 0 || d > 0 {
            let _ = writeln!(out, "ID\t{}\t{i}\t{d}", len + 1);
        }
    }
    out.push_str("# Indels per cycle. Use `grep ^IC | cut -f 2-` to extract this part. The columns are: cycle, number of insertions (fwd), .. (rev) , number of deletions (fwd), .. (rev)\n");
    let at = |v: &Vec<u64>, i: usize| v.get(i).copied().unwrap_or(0);
    let cycles = [&c.insertion_cycles[0], &c.insertion_cycles[1]]
        .into_iter()
        .chain([&c.deletion_cycles[0], &c.deletion_cycles[1]])
        .map(Vec::len)
        .max()
        .unwrap_or(0);
    for i in 0..cycles {
        let v = [
            at(&c.insertion_cycles[0], i),
            at(&c.insertion_cycles[1], i),
            at(&c.deletion_cycles[0], i),
            at(&c.deletion_cycles[1], i),
        ];
        if v.iter().any(|&n| n > 0) {
            let _ = writeln!(out, "IC\t{}\t{}\t{}\t{}\t{}", i + 1, v[0], v[1], v[2], v[3]);
        }
    }
}

fn write_coverage(out: &mut String, t: &Tracker) {
    out.push_str("# Coverage distribution. Use `grep ^COV | cut -f 2-` to extract this part.\n");
    let cov = &t.coverage.histogram;
    let b = t.coverage.bins;
    let n = cov.len();
    if cov[0] != 0 {
        let _ = writeln!(out, "COV\t[<{}]\t{}\t{}", b.min, b.min - 1, cov[0]);
    }
    for (i, &count) in cov.iter().enumerate().take(n - 1).skip(1) {
        if count != 0 {
            let i = i as i32;
            let (lo, hi) = (b.min + (i - 1) * b.step, b.min + i * b.step - 1);
            let _ = writeln!(out, "COV\t[{lo}-{hi}]\t{hi}\t{count}");
        }
    }
    if n > 1 && cov[n - 1] != 0 {
        let last = b.min + (n as i32 - 2) * b.step - 1;
        let _ = writeln!(out, "COV\t[{last}<]\t{last}\t{}", cov[n - 1]);
    }
}

fn write_gc_depth(
    out: &mut String,
    t: &mut Tracker,
    has_reference: bool,
    avg_read_length: f32,
    bin_size: i32,
) {
    out.push_str("# GC-depth. Use `grep ^GCD | cut -f 2-` to extract this part. The columns are: GC%, unique sequence percentiles, 10th, 25th, 50th, 75th and 90th depth percentile\n");
    for row in gcd_rows(&mut t.gc_depth, has_reference, avg_read_length, bin_size) {
        let _ = write!(out, "GCD\t{}\t{}", fixed(f64::from(row.gc), 1), fixed(row.cumulative, 3));
        for p in row.percentiles {
            let _ = write!(out, "\t{}", fixed(f64::from(p), 3));
        }
        out.push('\n');
    }
}

fn write_ref_stats(out: &mut String, rs: &RefStats) {
    out.push_str("# Reference statistics. Use `grep ^RFS | cut -f 2-` to extract this part.\n");
    out.push_str("# Total count, Output count, Average GC, Min length, Max length, Average length, Total length in first row.\n");
    out.push_str("# Sequence name, Length, GC content, Unknown count in following rows.\n");
    let _ = writeln!(
        out,
        "RFS\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        rs.total_count,
        rs.count,
        fixed(f64::from(rs.avg_gc), 2),
        rs.min_len,
        rs.max_len,
        fixed(f64::from(rs.avg_len), 2),
        rs.combined_len
    );
    for s in &rs.sequences {
        let _ = writeln!(
            out,
            "RFS\t{}\t{}\t{}\t{}",
            s.name,
            s.len,
            fixed(f64::from(s.gc), 2),
            s.unknown
        );
    }
}
