//! samtools 1.24's three flagstat reports (`out_fmt_default`, `out_fmt_json`, `out_fmt_tsv`),
//! with its percentages: `(float)n / total * 100.0` printed `%.2f`.

use std::fmt::Write;

use super::FlagStats;

/// `-O`: `json`/`JSON`, `tsv`/`TSV`, anything else the default text (as samtools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Default,
    Json,
    Tsv,
}

impl ReportFormat {
    pub fn from_option(value: &str) -> ReportFormat {
        match value {
            "json" | "JSON" => ReportFormat::Json,
            "tsv" | "TSV" => ReportFormat::Tsv,
            _ => ReportFormat::Default,
        }
    }
}

pub fn report(s: &FlagStats, format: ReportFormat) -> String {
    match format {
        ReportFormat::Default => default_text(s),
        ReportFormat::Json => json(s),
        ReportFormat::Tsv => tsv(s),
    }
}

/// The percentage as samtools computes it: a single-precision quotient, then times 100.
fn percentage(n: u64, total: u64) -> Option<String> {
    (total != 0).then(|| format!("{:.2}", f64::from(n as f32 / total as f32) * 100.0))
}

fn percent(n: u64, total: u64) -> String {
    percentage(n, total).map_or_else(|| "N/A".into(), |p| format!("{p}%"))
}

fn percent_json(n: u64, total: u64) -> String {
    percentage(n, total).unwrap_or_else(|| "null".into())
}

/// One report line: the counts per QC class, the label, and the totals its percentage is of
/// (for the lines that carry one).
type Line = ([u64; 2], &'static str, Option<[u64; 2]>);

/// The report's lines in samtools' order.
fn lines(s: &FlagStats) -> Vec<Line> {
    vec![
        (s.reads, "in total (QC-passed reads + QC-failed reads)", None),
        (s.primary, "primary", None),
        (s.secondary, "secondary", None),
        (s.supplementary, "supplementary", None),
        (s.duplicates, "duplicates", None),
        (s.primary_duplicates, "primary duplicates", None),
        (s.mapped, "mapped", Some(s.reads)),
        (s.primary_mapped, "primary mapped", Some(s.primary)),
        (s.paired, "paired in sequencing", None),
        (s.read1, "read1", None),
        (s.read2, "read2", None),
        (s.properly_paired, "properly paired", Some(s.paired)),
        (s.paired_both_mapped, "with itself and mate mapped", None),
        (s.singletons, "singletons", Some(s.paired)),
        (s.mate_other_chr, "with mate mapped to a different chr", None),
        (s.mate_other_chr_mapq5, "with mate mapped to a different chr (mapQ>=5)", None),
    ]
}

fn default_text(s: &FlagStats) -> String {
    let mut out = String::new();
    for (n, label, total) in lines(s) {
        let _ = write!(out, "{} + {} {label}", n[0], n[1]);
        if let Some(t) = total {
            let _ = write!(out, " ({} : {})", percent(n[0], t[0]), percent(n[1], t[1]));
        }
        out.push('\n');
    }
    out
}

fn tsv(s: &FlagStats) -> String {
    let mut out = String::new();
    for (n, label, total) in lines(s) {
        // The TSV's first line drops the default text's "in ".
        let label = label.strip_prefix("in ").unwrap_or(label);
        let _ = writeln!(out, "{}\t{}\t{label}", n[0], n[1]);
        if let Some(t) = total {
            let _ = writeln!(out, "{}\t{}\t{label} %", percent(n[0], t[0]), percent(n[1], t[1]));
        }
    }
    out
}

/// JSON's names: the TSV labels, but `total` and `mapQ >= 5` with spaces.
fn json_name(label: &'static str) -> &'static str {
    match label {
        "in total (QC-passed reads + QC-failed reads)" => "total",
        "with mate mapped to a different chr (mapQ>=5)" => {
            "with mate mapped to a different chr (mapQ >= 5)"
        }
        other => other,
    }
}

fn json(s: &FlagStats) -> String {
    let mut out = String::from("{");
    for (w, class) in ["QC-passed reads", "QC-failed reads"].iter().enumerate() {
        let _ = write!(out, "\n \"{class}\": {{ \n");
        let mut fields = Vec::new();
        for (n, label, total) in lines(s) {
            let name = json_name(label);
            fields.push(format!("  \"{name}\": {}", n[w]));
            if let Some(t) = total {
                fields.push(format!("  \"{name} %\": {}", percent_json(n[w], t[w])));
            }
        }
        out.push_str(&fields.join(", \n"));
        out.push_str(" \n }");
        if w == 0 {
            out.push(',');
        }
    }
    out.push_str("\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_use_single_precision_and_say_when_undefined() {
        assert_eq!(percent(1, 3), "33.33%");
        assert_eq!(percent(2, 3), "66.67%");
        assert_eq!(percent(0, 0), "N/A");
        assert_eq!(percent_json(0, 0), "null");
        assert_eq!(percent(5, 5), "100.00%");
    }

    #[test]
    fn formats_are_chosen_as_samtools_does() {
        assert_eq!(ReportFormat::from_option("JSON"), ReportFormat::Json);
        assert_eq!(ReportFormat::from_option("Tsv"), ReportFormat::Default);
        let empty = report(&FlagStats::default(), ReportFormat::Tsv);
        assert!(empty.starts_with("0\t0\ttotal (QC-passed reads + QC-failed reads)\n"));
        assert!(empty.contains("N/A\tN/A\tmapped %\n"));
    }
}
