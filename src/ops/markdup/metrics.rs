//! markdup's statistics as Picard's `DuplicationMetrics` file (`--metrics FILE`), the format
//! MultiQC, Picard users' dashboards and most pipelines already read.
//!
//! Where it sits: formats text from [`Stats`]; `pipeline::markdup` writes it.
//!
//! Layout (htsjdk `MetricsFile`): a `## htsjdk.samtools.metrics.StringHeader` with the command
//! line, then `## METRICS CLASS\tpicard.sam.DuplicationMetrics`, a tab-separated header line and
//! one row per library. No blank line follows the last row (Picard writes one before its
//! histogram): MultiQC 1.35 keeps only the first library of a table ended by a blank line, but
//! sums all libraries of a table that ends the file.
//!
//! Columns from samtools' counters (which count reads, where Picard counts pairs):
//!
//! | column | from [`Stats`] |
//! |---|---|
//! | `UNPAIRED_READS_EXAMINED` | `single` |
//! | `READ_PAIRS_EXAMINED` | `pair / 2` |
//! | `SECONDARY_OR_SUPPLEMENTARY_RDS` | `secondary_or_supplementary` |
//! | `UNMAPPED_READS` | `unmapped` |
//! | `UNPAIRED_READ_DUPLICATES` | `single_dup` |
//! | `READ_PAIR_DUPLICATES` | `duplicate / 2` |
//! | `READ_PAIR_OPTICAL_DUPLICATES` | `optical / 2` |
//! | `PERCENT_DUPLICATION` | `(single_dup + duplicate) / (single + pair)`, a fraction as in Picard |
//! | `ESTIMATED_LIBRARY_SIZE` | samtools' (= Picard's) estimate; empty when there is none, as Picard leaves it |
//!
//! So the duplicate rate equals the stats block's `(DUPLICATE PAIR + DUPLICATE SINGLE) /
//! (PAIRED + SINGLE)`.

use std::fmt::Write;

use super::stats::{Stats, estimate_library_size};

/// Picard's name for reads whose read group has no `LB`.
pub const UNKNOWN_LIBRARY: &str = "Unknown Library";

const COLUMNS: [&str; 10] = [
    "LIBRARY",
    "UNPAIRED_READS_EXAMINED",
    "READ_PAIRS_EXAMINED",
    "SECONDARY_OR_SUPPLEMENTARY_RDS",
    "UNMAPPED_READS",
    "UNPAIRED_READ_DUPLICATES",
    "READ_PAIR_DUPLICATES",
    "READ_PAIR_OPTICAL_DUPLICATES",
    "PERCENT_DUPLICATION",
    "ESTIMATED_LIBRARY_SIZE",
];

/// The fraction of examined reads marked duplicate (primary duplicates only, as Picard).
pub fn duplicate_fraction(s: &Stats) -> f64 {
    let examined = s.single + s.pair;
    if examined == 0 { 0.0 } else { (s.single_dup + s.duplicate) as f64 / examined as f64 }
}

/// The whole metrics file: `command` is the command line, `libraries` one row each.
pub fn format_duplication_metrics(command: &str, libraries: &[(String, Stats)]) -> String {
    let mut t = String::new();
    t.push_str("## htsjdk.samtools.metrics.StringHeader\n");
    let _ = writeln!(t, "# {}", command.replace('\n', " "));
    t.push_str("\n## METRICS CLASS\tpicard.sam.DuplicationMetrics\n");
    t.push_str(&COLUMNS.join("\t"));
    t.push('\n');
    for (library, s) in libraries {
        let (size, unavailable) = estimate_library_size(s.pair, s.duplicate, s.optical);
        let size = if unavailable.is_some() { String::new() } else { size.to_string() };
        let _ = writeln!(
            t,
            "{library}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.6}\t{size}",
            s.single,
            s.pair / 2,
            s.secondary_or_supplementary,
            s.unmapped,
            s.single_dup,
            s.duplicate / 2,
            s.optical / 2,
            duplicate_fraction(s),
        );
    }
    t
}

/// Library names from `(read-group ID, LB)` pairs: one row per library, read groups of the same
/// library summed (Picard's unit), in order of first appearance; `ungrouped` counts reads
/// without a known read group.
pub fn by_library(ungrouped: &Stats, groups: &[(Option<String>, Stats)]) -> Vec<(String, Stats)> {
    let mut rows: Vec<(String, Stats)> = Vec::new();
    let mut add = |name: &str, s: &Stats| match rows.iter_mut().find(|(n, _)| n == name) {
        Some((_, total)) => total.add(s),
        None => rows.push((name.to_string(), *s)),
    };
    if ungrouped.reading > 0 {
        add(UNKNOWN_LIBRARY, ungrouped);
    }
    for (library, s) in groups {
        add(library.as_deref().unwrap_or(UNKNOWN_LIBRARY), s);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Stats {
        Stats {
            reading: 130,
            single: 10,
            pair: 100,
            single_dup: 2,
            duplicate: 20,
            optical: 4,
            unmapped: 12,
            secondary_or_supplementary: 8,
            ..Stats::default()
        }
    }

    #[test]
    fn row_converts_read_counts_to_pairs() {
        let text =
            format_duplication_metrics("samtools markdup in out", &[("lib1".into(), sample())]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "## htsjdk.samtools.metrics.StringHeader");
        assert_eq!(lines[1], "# samtools markdup in out");
        assert_eq!(lines[3], "## METRICS CLASS\tpicard.sam.DuplicationMetrics");
        assert_eq!(lines[4].split('\t').count(), 10);
        let (size, _) = estimate_library_size(100, 20, 4);
        assert_eq!(lines[5], format!("lib1\t10\t50\t8\t12\t2\t10\t2\t0.200000\t{size}"));
        assert!(size > 0);
    }

    #[test]
    fn no_estimate_leaves_the_size_empty() {
        let s = Stats { single: 4, single_dup: 1, ..Stats::default() };
        let text = format_duplication_metrics("c", &[(UNKNOWN_LIBRARY.into(), s)]);
        assert!(text.contains("Unknown Library\t4\t0\t0\t0\t1\t0\t0\t0.250000\t\n"), "{text}");
    }

    #[test]
    fn read_groups_of_one_library_are_summed() {
        let s = sample();
        let rows = by_library(
            &Stats::default(),
            &[(Some("A".into()), s), (None, s), (Some("A".into()), s)],
        );
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, "A");
        assert_eq!(rows[0].1.pair, 200);
        assert_eq!(rows[1].0, UNKNOWN_LIBRARY);
    }
}
