//! `flagstat` against the samtools 1.24 oracle on simulated data (several references, pairs
//! and single reads, unmapped reads and mates, secondary and supplementary records, duplicates,
//! QC-failed reads): SAM, BAM and a coordinate-sorted, duplicate-marked BAM, each in the three
//! report formats, at `-@ 0` and `-@ 2`, byte for byte; and the `filter=` input option of
//! flagstat, idxstats and head.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, oracle_ok, run, run_ok, scratch_dir, simulated_sam};

/// Simulated records with every flag class flagstat counts.
fn input(dir: &Path) -> PathBuf {
    let opts = SimulateOptions {
        pairs: 4_000,
        seed: 41,
        n_refs: 4,
        ref_len: 150_000,
        order: Order::Name,
        dup_rate: 0.08,
        unmapped_pair_rate: 0.03,
        mate_unmapped_rate: 0.05,
        distant_mate_rate: 0.04,
        chimeric_rate: 0.05,
        secondary_rate: 0.04,
        qc_fail_rate: 0.03,
        ..SimulateOptions::default()
    };
    simulated_sam(dir, &opts)
}

/// SAM, BAM, and sorted + markdup BAM (duplicates flagged) from one simulation.
fn inputs(dir: &Path, oracle: &Path) -> Vec<PathBuf> {
    let sam = input(dir);
    let path = |name: &str| dir.join(name);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (bam, fixed, sorted, marked) =
        (path("in.bam"), path("fixed.bam"), path("sorted.bam"), path("marked.bam"));
    oracle_ok(oracle, &["view", "-b", "-o", &s(&bam), &s(&sam)]);
    oracle_ok(oracle, &["fixmate", "-m", &s(&sam), &s(&fixed)]);
    oracle_ok(oracle, &["sort", "-o", &s(&sorted), &s(&fixed)]);
    oracle_ok(oracle, &["markdup", &s(&sorted), &s(&marked)]);
    vec![sam, bam, marked]
}

#[test]
fn all_three_reports_match_the_oracle_at_any_thread_count() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("flagstat-reports");
    for file in inputs(&dir, &oracle) {
        let file = file.to_str().unwrap();
        for format in [None, Some("json"), Some("tsv")] {
            let mut args = vec!["flagstat"];
            if let Some(f) = format {
                args.extend(["-O", f]);
            }
            args.push(file);
            let expected = oracle_ok(&oracle, &args).stdout;
            for threads in ["0", "2"] {
                let mut mine = args.clone();
                mine.splice(1..1, ["-@", threads]);
                let got = run_ok(&mdsam_bin(), &mine).stdout;
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&expected),
                    "flagstat {format:?} -@ {threads} {file}"
                );
            }
        }
    }
}

#[test]
fn usage_and_errors_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("flagstat-errors");
    let missing = dir.join("missing.bam");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "just some text\n").unwrap();
    let (missing, text) = (missing.to_str().unwrap(), text.to_str().unwrap());
    for args in [
        vec!["flagstat"],
        vec!["flagstat", "a", "b"],
        vec!["flagstat", "-@", "x", text],
        vec!["flagstat", "--input-fmt", "sam", text],
        vec!["flagstat", missing],
        vec!["flagstat", text],
    ] {
        let (want, got) = (run(&oracle, &args), run(&mdsam_bin(), &args));
        assert_eq!(got.status.code(), want.status.code(), "{args:?}");
        assert_eq!(got.stdout, want.stdout, "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&got.stderr),
            String::from_utf8_lossy(&want.stderr),
            "{args:?}"
        );
    }
}

/// `--input-fmt-option filter=EXPR` (htslib's read filter) in flagstat, idxstats' slow method
/// and head: only the records it keeps are counted or shown; a bad expression fails the read.
#[test]
fn input_filters_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("flagstat-filters");
    let sam = input(&dir);
    let sorted = dir.join("sorted.sam");
    let (sam, sorted_s) = (sam.to_str().unwrap(), sorted.to_str().unwrap());
    oracle_ok(&oracle, &["sort", "-O", "sam", "-o", sorted_s, sam]);
    for filter in ["filter=flag.unmap", "FILTER=mapq>=30 && flag.paired", "filter", "filter=(("] {
        for args in [
            vec!["flagstat", "--input-fmt-option", filter, sam],
            vec!["flagstat", "-@", "2", "-O", "json", "--input-fmt-option", filter, sam],
            vec!["idxstats", "--input-fmt-option", filter, sorted_s],
            vec!["head", "-n", "7", "--input-fmt-option", filter, sam],
        ] {
            let (want, got) = (run(&oracle, &args), run(&mdsam_bin(), &args));
            assert_eq!(got.status.code(), want.status.code(), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout),
                "{args:?}"
            );
        }
    }
}
