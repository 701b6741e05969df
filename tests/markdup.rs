//! `markdup` against the samtools 1.24 oracle: input simulated with PCR and optical duplicates,
//! several read groups, supplementary records and unmapped mates, run through the oracle's
//! `fixmate -m` and `sort`; SAM text and the stats (text and JSON) compared byte for byte, at
//! `-@ 0` and `-@ 2`.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, scratch_dir, simulated_sam,
};

/// Simulated pairs → oracle `fixmate -m` → oracle `sort`: a coordinate-sorted BAM.
fn input(dir: &Path, oracle: &Path, seed: u64) -> PathBuf {
    input_sized(dir, oracle, seed, 4_000, 2, 150_000)
}

/// [`input`] with `pairs` templates over `n_refs` references of `ref_len` bases.
fn input_sized(
    dir: &Path,
    oracle: &Path,
    seed: u64,
    pairs: u64,
    n_refs: u32,
    ref_len: u32,
) -> PathBuf {
    let opts = SimulateOptions {
        pairs,
        seed,
        n_refs,
        ref_len,
        order: Order::Name,
        dup_rate: 0.25,
        optical_dup_rate: 0.1,
        mate_unmapped_rate: 0.05,
        chimeric_rate: 0.05,
        qc_fail_rate: 0.02,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(dir, &opts);
    let fixed = dir.join("fixed.bam");
    let sorted = dir.join("sorted.bam");
    oracle_ok(oracle, &["fixmate", "-m", sam.to_str().unwrap(), fixed.to_str().unwrap()]);
    oracle_ok(oracle, &["sort", "-o", sorted.to_str().unwrap(), fixed.to_str().unwrap()]);
    sorted
}

/// The stats text without the `COMMAND` line (its argv differs between the tools).
fn stats_body(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.starts_with("COMMAND") && !l.contains("\"COMMAND\""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn compare(dir: &Path, oracle: &Path, bam: &Path, args: &[&str]) {
    let input = bam.to_str().unwrap();
    let tag = args.join("").replace(['/', ' '], "_");
    let stats_o = dir.join(format!("stats-o-{tag}"));
    let mut full: Vec<&str> =
        vec!["markdup", "-O", "sam", "--no-PG", "-f", stats_o.to_str().unwrap()];
    full.extend_from_slice(args);
    full.extend_from_slice(&[input, "-"]);
    let expected = oracle_ok(oracle, &full).stdout;
    let expected_stats = std::fs::read(&stats_o).unwrap();
    for threads in ["0", "2"] {
        let out = dir.join(format!("out-{tag}-{threads}.bam"));
        let stats_m = dir.join(format!("stats-m-{tag}-{threads}"));
        let mut mine: Vec<&str> =
            vec!["markdup", "-@", threads, "--no-PG", "-f", stats_m.to_str().unwrap()];
        mine.extend_from_slice(args);
        mine.extend_from_slice(&[input, out.to_str().unwrap()]);
        run_ok(&mdsam_bin(), &mine);
        let got = crate::support::to_sam(oracle, &out);
        let context = format!("markdup {args:?} -@ {threads}");
        assert_same_sam(&got, &expected, &context);
        let got_stats = std::fs::read(&stats_m).unwrap();
        assert_eq!(stats_body(&got_stats), stats_body(&expected_stats), "{context}: stats differ");
    }
}

#[test]
fn default_and_optical_options_match_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-optical");
    let bam = input(&dir, &oracle, 31);
    compare(&dir, &oracle, &bam, &[]);
    compare(&dir, &oracle, &bam, &["-S", "-d", "100", "-t", "--json"]);
    compare(&dir, &oracle, &bam, &["-r", "--mode", "s", "-d", "2500", "--include-fails"]);
}

/// Enough reads on several references that the decide phase splits into many windows
/// (`decide::WINDOW_MIN` records at least each): the result must not change at 1 or 2 threads.
#[test]
fn many_windows_over_several_references_match_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-windows");
    let bam = input_sized(&dir, &oracle, 33, 30_000, 6, 1_500_000);
    compare(&dir, &oracle, &bam, &[]);
    compare(&dir, &oracle, &bam, &["-S", "-d", "100", "-t", "--duplicate-count", "--json"]);
}

/// Deep coverage (about 60× on one short reference): the moving window is never empty, so the
/// decide phase cuts its windows by force and warms each up on the records before the cut.
#[test]
fn deep_coverage_forced_windows_match_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-deep");
    let bam = input_sized(&dir, &oracle, 34, 30_000, 1, 150_000);
    compare(&dir, &oracle, &bam, &[]);
    compare(&dir, &oracle, &bam, &["-S", "-d", "100", "-t", "--duplicate-count", "--json"]);
}

#[test]
fn read_groups_counts_and_barcodes_match_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-groups");
    let bam = input(&dir, &oracle, 32);
    compare(&dir, &oracle, &bam, &["--use-read-groups", "--duplicate-count", "-S", "-t"]);
    compare(
        &dir,
        &oracle,
        &bam,
        &["--barcode-tag", "RG", "--no-multi-dup", "-d", "100", "-r", "-S"],
    );
    compare(
        &dir,
        &oracle,
        &bam,
        &["-d", "100", "--read-coords", "([0-9]+):([0-9]+)$", "--coords-order", "xy", "-l", "150"],
    );
}

/// samtools compiles `--barcode-rgx` and `--read-coords` as POSIX extended expressions
/// (`regcomp(REG_EXTENDED)`): `\d` is a plain `d`, so a pattern written for Perl matches no read
/// name and every read warns; `[[:digit:]]` classes work. Records, stats and warnings as the
/// oracle's.
#[test]
fn regex_options_are_posix_extended_as_in_samtools() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("markdup-posix-regex");
    let bam = input(&dir, &oracle, 35);
    let perl_style = ["--barcode-rgx", r"HR\d+TDSXY:[0-9]:([0-9]+)", "-S"];
    compare(&dir, &oracle, &bam, &perl_style);
    compare(&dir, &oracle, &bam, &["--barcode-rgx", ":([[:digit:]]{4}):[0-9]+:[0-9]+$", "-S"]);
    compare(
        &dir,
        &oracle,
        &bam,
        &["-d", "100", "--read-coords", r"([[:digit:]]+):(\d*[0-9]+)$", "--coords-order", "xy"],
    );
    let input = bam.to_str().unwrap();
    let mut args = vec!["markdup", "-O", "sam", "--no-PG"];
    args.extend_from_slice(&perl_style);
    args.extend_from_slice(&[input, "-"]);
    let expected = oracle_ok(&oracle, &args).stderr;
    let got = run_ok(&mdsam_bin(), &args).stderr;
    assert!(!expected.is_empty(), "the oracle warns about names the pattern does not match");
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected));
    // A pattern glibc refuses: glibc's message, exit 1.
    let bad = run(&mdsam_bin(), &["markdup", "--barcode-rgx", "*a", input, "-"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr).lines().next(),
        Some(
            "samtools markdup: error, barcode regex fail \"Invalid preceding regular expression\""
        )
    );
}

#[test]
fn errors_exit_1() {
    let dir = scratch_dir("markdup-errors");
    let sam = dir.join("q.sam");
    std::fs::write(&sam, "@HD\tVN:1.6\tSO:queryname\n@SQ\tSN:c\tLN:100\n").unwrap();
    let out = run(&mdsam_bin(), &["markdup", sam.to_str().unwrap(), "-"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("queryname sorted"));
    let out = run(&mdsam_bin(), &["markdup", "--mode", "x", sam.to_str().unwrap(), "-"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown mode 'x'"));
    let sam = dir.join("u.sam");
    std::fs::write(&sam, "@SQ\tSN:c\tLN:1000\nr\t0\tc\t50\t1\t4M\t*\t0\t0\tACGT\t****\nr\t0\tc\t10\t1\t4M\t*\t0\t0\tACGT\t****\n").unwrap();
    let out = run(&mdsam_bin(), &["markdup", sam.to_str().unwrap(), "-"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in coordinate sorted order"));
}
