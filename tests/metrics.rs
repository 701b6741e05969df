//! `--metrics FILE` (Picard `DuplicationMetrics`) read by the real MultiQC: the numbers MultiQC
//! reports must be markdup's own stats block.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, oracle, program_on_path, run_ok, scratch_dir, simulated_sam};

/// The first (all reads) stats block of `-f FILE` as key → value; read-group blocks follow it.
fn stats_block(path: &Path) -> HashMap<String, f64> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(": "))
        .filter_map(|(k, v)| v.trim().parse::<f64>().ok().map(|v| (k.to_string(), v)))
        .collect()
}

/// Rows of a MultiQC data table (tab-separated, first column `Sample`), by sample name.
fn multiqc_table(path: &Path) -> HashMap<String, HashMap<String, String>> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("MultiQC wrote no {}: {e}", path.display()));
    let mut lines = text.lines();
    let columns: Vec<&str> = lines.next().unwrap().split('\t').collect();
    lines
        .map(|l| {
            let values: Vec<&str> = l.split('\t').collect();
            let row: HashMap<String, String> =
                columns.iter().zip(&values).map(|(c, v)| (c.to_string(), v.to_string())).collect();
            (values[0].to_string(), row)
        })
        .collect()
}

fn number(row: &HashMap<String, String>, column: &str) -> f64 {
    row.get(column)
        .unwrap_or_else(|| panic!("no {column} in {row:?}"))
        .parse()
        .unwrap_or_else(|_| panic!("{column} is not a number in {row:?}"))
}

/// The rate samtools' stats block implies: duplicate reads over examined reads.
fn stats_duplicate_rate(s: &HashMap<String, f64>) -> f64 {
    (s["DUPLICATE PAIR"] + s["DUPLICATE SINGLE"]) / (s["PAIRED"] + s["SINGLE"])
}

fn run_mdsam(args: &[&str]) {
    run_ok(&mdsam_bin(), args);
}

#[test]
fn multiqc_reports_the_duplicate_rate_of_the_stats_block() {
    let Some(multiqc) = program_on_path("multiqc", "--version") else { return };
    let dir = scratch_dir("metrics_multiqc");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 4000, ..Default::default() });
    let input = input.to_str().unwrap();
    let reports = dir.join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let report = |name: &str| reports.join(name).to_str().unwrap().to_string();

    // Sample A: markdup-pipeline, all reads in one row. Sample B: markdup on A's output with
    // -c (marks cleared first), read groups kept apart, one row per library.
    let (stats_a, metrics_a) = (path("a.stats"), report("sampleA.markdup.metrics"));
    run_mdsam(&[
        "markdup-pipeline",
        "-f",
        &stats_a,
        "--metrics",
        &metrics_a,
        input,
        &path("a.bam"),
    ]);
    let (stats_b, metrics_b) = (path("b.stats"), report("sampleB.markdup.metrics"));
    run_mdsam(&[
        "markdup",
        "-c",
        "--use-read-groups",
        "-f",
        &stats_b,
        "--metrics",
        &metrics_b,
        &path("a.bam"),
        &path("b.bam"),
    ]);
    let text_b = std::fs::read_to_string(&metrics_b).unwrap();
    assert!(text_b.lines().any(|l| l.starts_with("LIB2\t")), "one row per library:\n{text_b}");

    let out = dir.join("multiqc");
    let status = Command::new(&multiqc)
        .args(["--no-version-check", "--force", "--quiet", "--no-ansi", "--no-report"])
        .args(["--module", "picard", "-o"])
        .arg(&out)
        .arg(&reports)
        .output()
        .expect("multiqc runs");
    assert!(
        status.status.success(),
        "multiqc failed:\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let dups = multiqc_table(&out.join("multiqc_data/multiqc_picard_dups.txt"));
    assert_eq!(dups.len(), 2, "two samples parsed: {:?}", dups.keys().collect::<Vec<_>>());

    for (sample, stats_path) in [("sampleA", &stats_a), ("sampleB", &stats_b)] {
        let stats = stats_block(Path::new(stats_path));
        let (_, row) = dups
            .iter()
            .find(|(name, _)| name.starts_with(sample))
            .unwrap_or_else(|| panic!("MultiQC has no {sample}: {:?}", dups.keys()));
        let rate = stats_duplicate_rate(&stats);
        assert!(rate > 0.01, "the simulated input has duplicates ({rate})");
        let parsed = number(row, "PERCENT_DUPLICATION");
        assert!((parsed - rate).abs() < 1e-6, "{sample}: MultiQC {parsed}, stats block {rate}");
        assert_eq!(number(row, "READ_PAIRS_EXAMINED"), stats["PAIRED"] / 2.0, "{sample}");
        assert_eq!(number(row, "UNPAIRED_READS_EXAMINED"), stats["SINGLE"], "{sample}");
        assert_eq!(number(row, "READ_PAIR_DUPLICATES"), stats["DUPLICATE PAIR"] / 2.0, "{sample}");
        assert_eq!(number(row, "UNPAIRED_READ_DUPLICATES"), stats["DUPLICATE SINGLE"], "{sample}");
        assert_eq!(
            number(row, "READ_PAIR_OPTICAL_DUPLICATES"),
            stats["DUPLICATE PAIR OPTICAL"] / 2.0,
            "{sample}"
        );
        let excluded =
            number(row, "UNMAPPED_READS") + number(row, "SECONDARY_OR_SUPPLEMENTARY_RDS");
        assert!(excluded > 0.0 && excluded <= stats["EXCLUDED"], "{sample}: {excluded}");
    }
    // One library: MultiQC keeps Picard's own estimate, which is samtools'.
    let (_, row_a) = dups.iter().find(|(n, _)| n.starts_with("sampleA")).unwrap();
    let stats_a = stats_block(Path::new(&stats_a));
    assert_eq!(number(row_a, "ESTIMATED_LIBRARY_SIZE"), stats_a["ESTIMATED_LIBRARY_SIZE"]);

    // The general statistics table shows the same rate as a percentage.
    let general = multiqc_table(&out.join("multiqc_data/multiqc_general_stats.txt"));
    let (_, general_a) = general.iter().find(|(n, _)| n.starts_with("sampleA")).unwrap();
    let column = general_a
        .keys()
        .find(|k| k.contains("PERCENT_DUPLICATION"))
        .unwrap_or_else(|| panic!("no duplication column in {general_a:?}"))
        .clone();
    let percent = number(general_a, &column);
    let expected = stats_duplicate_rate(&stats_a);
    assert!((percent - expected * 100.0).abs() < 1e-4 || (percent - expected).abs() < 1e-6);
}

/// The reads Picard counts apart (unmapped; secondary or supplementary) are the ones samtools
/// itself counts with those flags.
#[test]
fn excluded_reads_are_split_as_picard_counts_them() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("metrics_excluded");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 3000, ..Default::default() });
    let input = input.to_str().unwrap();
    let metrics = dir.join("m.txt");
    run_mdsam(&[
        "markdup-pipeline",
        "--metrics",
        metrics.to_str().unwrap(),
        input,
        dir.join("o.bam").to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&metrics).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("LIBRARY\t")).unwrap();
    assert_eq!(lines[header - 1], "## METRICS CLASS\tpicard.sam.DuplicationMetrics");
    let columns: Vec<&str> = lines[header].split('\t').collect();
    let values: Vec<&str> = lines[header + 1].split('\t').collect();
    let get =
        |c: &str| values[columns.iter().position(|x| *x == c).unwrap()].parse::<u64>().unwrap();
    let count = |args: &[&str]| -> u64 {
        let mut full = vec!["view", "-c"];
        full.extend_from_slice(args);
        full.push(input);
        String::from_utf8(run_ok(&oracle, &full).stdout).unwrap().trim().parse().unwrap()
    };
    assert_eq!(get("UNMAPPED_READS"), count(&["-f", "4"]));
    assert_eq!(get("SECONDARY_OR_SUPPLEMENTARY_RDS"), count(&["-F", "4", "--rf", "0x900"]));
}
