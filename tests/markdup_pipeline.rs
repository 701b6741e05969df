//! `markdup-pipeline` against the samtools 1.24 oracle's four-command recipe
//! (`collate -u`, `fixmate -m -u`, `sort -u`, `markdup`, with intermediate files), on simulated
//! input in aligner (name) order and in coordinate order, SAM and BAM: SAM text without `@PG` and
//! the stats (text, JSON, stderr) compared; `--verify` and `--write-index`.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, sam_without_pg, scratch_dir,
    simulated_sam, to_sam,
};

fn simulated(dir: &Path, order: Order, seed: u64) -> PathBuf {
    let opts = SimulateOptions {
        pairs: 3_000,
        seed,
        n_refs: 3,
        ref_len: 200_000,
        order,
        dup_rate: 0.2,
        optical_dup_rate: 0.05,
        mate_unmapped_rate: 0.05,
        unmapped_pair_rate: 0.02,
        chimeric_rate: 0.05,
        secondary_rate: 0.1,
        qc_fail_rate: 0.02,
        ..SimulateOptions::default()
    };
    simulated_sam(dir, &opts)
}

/// The stats without the `COMMAND` line (the command lines differ).
fn stats_body(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.starts_with("COMMAND") && !l.contains("\"COMMAND\""))
        .filter(|l| !l.starts_with("[markdup-pipeline]"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Options of the pipeline that belong to fixmate, with the fixmate letters they stand for.
fn split_args<'a>(args: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    let (mut fix, mut md) = (vec![], vec![]);
    for &a in args {
        match a {
            "--fixmate-remove" => fix.push("-r"),
            "--fixmate-cigar" => fix.push("-c"),
            "-p" => fix.push("-p"),
            other => md.push(other),
        }
    }
    (fix, md)
}

/// The oracle's recipe on `input` with `args`; returns (SAM text without @PG, stats file).
fn oracle_recipe(dir: &Path, oracle: &Path, input: &Path, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let tag = args.join("").replace(['/', ' '], "_");
    let p = |name: &str| dir.join(format!("oracle-{tag}-{name}"));
    let (collated, fixed, sorted, out, stats) =
        (p("c.bam"), p("f.bam"), p("s.bam"), p("o.bam"), p("stats"));
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    oracle_ok(oracle, &["collate", "-u", "-o", &s(&collated), input.to_str().unwrap()]);
    let (fix_args, md_args) = split_args(args);
    let mut fix = vec!["fixmate", "-m", "-u"];
    fix.extend(fix_args);
    let (c, f) = (s(&collated), s(&fixed));
    fix.extend([c.as_str(), f.as_str()]);
    oracle_ok(oracle, &fix);
    oracle_ok(oracle, &["sort", "-u", "-o", &s(&sorted), &s(&fixed)]);
    let mut md = vec!["markdup".to_string(), "-f".into(), s(&stats)];
    md.extend(md_args.iter().map(|a| a.to_string()));
    md.extend([s(&sorted), s(&out)]);
    let md: Vec<&str> = md.iter().map(String::as_str).collect();
    oracle_ok(oracle, &md);
    (sam_without_pg(&to_sam(oracle, &out)), std::fs::read(&stats).unwrap())
}

fn compare(dir: &Path, oracle: &Path, input: &Path, args: &[&str], threads: &[&str]) {
    compare_with(dir, oracle, input, args, &[], threads);
}

/// [`compare`] with `extra` pipeline options that the recipe does not take; returns each run's
/// stderr.
fn compare_with(
    dir: &Path,
    oracle: &Path,
    input: &Path,
    args: &[&str],
    extra: &[&str],
    threads: &[&str],
) -> Vec<String> {
    let (expected, expected_stats) = oracle_recipe(dir, oracle, input, args);
    let tag = args.join("").replace(['/', ' '], "_");
    let mut stderrs = Vec::new();
    for &t in threads {
        let out = dir.join(format!("mine-{tag}-{t}.bam"));
        let stats = dir.join(format!("mine-{tag}-{t}.stats"));
        let mut mine = vec!["markdup-pipeline", "--verify", "-@", t, "-f", stats.to_str().unwrap()];
        mine.extend_from_slice(args);
        mine.extend_from_slice(extra);
        mine.extend([input.to_str().unwrap(), out.to_str().unwrap()]);
        let o = std::process::Command::new(mdsam_bin())
            .args(&mine)
            .env("MDSAM_SPILL_REPORT", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{mine:?}: {}", String::from_utf8_lossy(&o.stderr));
        let context = format!("markdup-pipeline {args:?} -@ {t} on {}", input.display());
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("verify OK"),
            "{context}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = sam_without_pg(&to_sam(oracle, &out));
        assert_same_sam(&got, &expected, &context);
        let got_stats = std::fs::read(&stats).unwrap();
        assert_eq!(stats_body(&got_stats), stats_body(&expected_stats), "{context}: stats differ");
        stderrs.push(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    stderrs
}

/// The sorted runs a spilling run reports (`MDSAM_SPILL_REPORT`), 0 when it did not spill.
fn sorted_runs(stderr: &str) -> usize {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("[markdup-pipeline] spilled: "))
        .and_then(|l| l.split(", ").nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The files left in `dir`.
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// A "UMI" for the simulator's Illumina names: the tile (the fifth field).
const UMI_RGX: &str = "^[^:]+:[^:]+:[^:]+:[^:]+:([0-9]+):";

/// `--move-umi-to-tag` and `--umi-separator` reach markdup as in the recipe.
#[test]
fn umi_moves_match_oracle_recipe() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-pipeline-umi");
    let sam = simulated(&dir, Order::Name, 46);
    compare(&dir, &oracle, &sam, &["--barcode-rgx", UMI_RGX, "--move-umi-to-tag"], &["1"]);
    let args = ["-S", "-t", "--barcode-rgx", UMI_RGX, "--move-umi-to-tag", "--umi-separator", "3"];
    compare(&dir, &oracle, &sam, &args, &["0"]);
}

/// Past `--max-memory` the pipeline spills (collate bins, sorted runs, streaming markdup) and
/// still matches the recipe, SAM and BAM input, one and two threads, with `-r -S`, `-t -d` and
/// the rest; no temporary file is left.
#[test]
fn spilling_pipeline_matches_oracle_recipe() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-pipeline-spill");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let prefix = format!("{}/part", tmp.display());
    let sam = simulated(&dir, Order::Name, 45);
    let bam = dir.join("name.bam");
    oracle_ok(&oracle, &["view", "-b", "-o", bam.to_str().unwrap(), sam.to_str().unwrap()]);
    // About 2.5 MB of records against 400 KB.
    let spill = ["--max-memory", "400K", "-T", prefix.as_str()];
    for (input, args, threads) in [
        (&sam, &[][..], &["0", "1"][..]),
        (&bam, &[][..], &["1"][..]),
        (&sam, &["-r", "-S"][..], &["1"][..]),
        (&bam, &["-r", "-S", "--fixmate-remove"][..], &["0"][..]),
        (&sam, &["-S", "-t", "-d", "100", "--duplicate-count"][..], &["1"][..]),
        (&bam, &["--barcode-tag", "RG", "--use-read-groups", "-c", "-s"][..], &["1"][..]),
        (&sam, &["-S", "--barcode-rgx", UMI_RGX, "--move-umi-to-tag"][..], &["1"][..]),
    ] {
        for err in compare_with(&dir, &oracle, input, args, &spill, threads) {
            assert!(sorted_runs(&err) > 1, "{args:?}: did not spill:\n{err}");
        }
        assert!(files_in(&tmp).is_empty(), "temporary files left: {:?}", files_in(&tmp));
    }
    // Without --max-memory nothing spills.
    let out = dir.join("plain.bam");
    let o = std::process::Command::new(mdsam_bin())
        .args(["markdup-pipeline", "-T", &prefix, sam.to_str().unwrap(), out.to_str().unwrap()])
        .env("MDSAM_SPILL_REPORT", "1")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(sorted_runs(&String::from_utf8_lossy(&o.stderr)), 0);
    // An unwritable prefix fails the small budget with one error line, and leaves no output.
    let bad = format!("{}/missing/part", dir.display());
    let out = dir.join("bad.bam");
    let o = run(
        &mdsam_bin(),
        &["markdup-pipeline", "--max-memory", "400K", "-T", &bad, &p_str(&sam), &p_str(&out)],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing/part"));
}

#[test]
fn name_order_input_matches_oracle_recipe() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-pipeline-name");
    let sam = simulated(&dir, Order::Name, 41);
    compare(&dir, &oracle, &sam, &[], &["0", "2"]);
    compare(&dir, &oracle, &sam, &["-r", "-S"], &["0"]);
    compare(&dir, &oracle, &sam, &["--json", "-d", "100", "-t"], &["2"]);
    compare(&dir, &oracle, &sam, &["-d", "2500", "--mode", "s", "--include-fails"], &["0"]);
    compare(&dir, &oracle, &sam, &["--barcode-tag", "RG", "--use-read-groups", "-c"], &["1"]);
    compare(&dir, &oracle, &sam, &["--fixmate-remove", "-p", "--duplicate-count"], &["2"]);
}

#[test]
fn coordinate_and_bam_input_match_oracle_recipe() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-pipeline-coord");
    let sam = simulated(&dir, Order::Coordinate, 42);
    compare(&dir, &oracle, &sam, &[], &["0", "2"]);
    let bam = dir.join("coord.bam");
    oracle_ok(&oracle, &["view", "-b", "-o", bam.to_str().unwrap(), sam.to_str().unwrap()]);
    compare(&dir, &oracle, &bam, &["-r", "-S"], &["2"]);
}

/// `-s`: the stats on stderr as samtools markdup prints them.
#[test]
fn stats_on_stderr_match_oracle_recipe() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-pipeline-s");
    let sam = simulated(&dir, Order::Name, 43);
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
    oracle_ok(&oracle, &["collate", "-u", "-o", &p("c.bam"), &p_str(&sam)]);
    oracle_ok(&oracle, &["fixmate", "-m", "-u", &p("c.bam"), &p("f.bam")]);
    oracle_ok(&oracle, &["sort", "-u", "-o", &p("s.bam"), &p("f.bam")]);
    let expected = oracle_ok(&oracle, &["markdup", "-s", &p("s.bam"), &p("o.bam")]).stderr;
    let got =
        run_ok(&mdsam_bin(), &["markdup-pipeline", "-s", "-@", "2", &p_str(&sam), &p("m.bam")])
            .stderr;
    assert_eq!(stats_body(&got), stats_body(&expected));
    assert_same_sam(
        &sam_without_pg(&to_sam(&oracle, &dir.join("m.bam"))),
        &sam_without_pg(&to_sam(&oracle, &dir.join("o.bam"))),
        "-s",
    );
}

fn p_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn verify_counts_removed_reads_and_write_index() {
    let dir = scratch_dir("markdup-pipeline-verify");
    let sam = simulated(&dir, Order::Name, 44);
    let out = dir.join("out.bam");
    let o = run_ok(
        &mdsam_bin(),
        &[
            "markdup-pipeline",
            "--verify",
            "-r",
            "--fixmate-remove",
            "--write-index",
            &p_str(&sam),
            &p_str(&out),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let line = err.lines().find(|l| l.contains("verify OK")).expect("a verify line");
    // "... N input records = W written + F removed by fixmate -r + D removed by markdup -r"
    let numbers: Vec<u64> =
        line.split_whitespace().filter_map(|w| w.parse().ok()).collect::<Vec<_>>();
    assert_eq!(numbers.len(), 4, "{line}");
    assert_eq!(numbers[0], numbers[1] + numbers[2] + numbers[3], "{line}");
    assert!(numbers[2] > 0 && numbers[3] > 0, "{line}");
    assert!(dir.join("out.bam.csi").exists());
    // Usage and bad options exit 1.
    let o = run(&mdsam_bin(), &["markdup-pipeline", "--mode", "x", &p_str(&sam), "-"]);
    assert_eq!(o.status.code(), Some(1));
}
