//! `fixmate` against the samtools 1.24 oracle on simulated name-grouped data (supplementary and
//! secondary records, unmapped mates, QC-fail reads), several option sets, at `-@ 0` and `-@ 2`.

use std::path::Path;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run_ok, scratch_dir, simulated_sam,
};

fn input(dir: &Path, seed: u64) -> std::path::PathBuf {
    let opts = SimulateOptions {
        pairs: 3_000,
        seed,
        n_refs: 3,
        ref_len: 200_000,
        order: Order::Name,
        mate_unmapped_rate: 0.05,
        chimeric_rate: 0.05,
        qc_fail_rate: 0.02,
        ..SimulateOptions::default()
    };
    simulated_sam(dir, &opts)
}

/// Runs both tools with `args` on `sam` and compares the SAM text (mdsam at 1 and 3 threads).
fn compare(dir: &Path, oracle: &Path, sam: &Path, args: &[&str]) {
    let input = sam.to_str().unwrap();
    let mut full: Vec<&str> = vec!["fixmate", "-O", "sam", "--no-PG"];
    full.extend_from_slice(args);
    full.extend_from_slice(&[input, "-"]);
    let expected = oracle_ok(oracle, &full).stdout;
    for threads in ["0", "2"] {
        let out = dir.join(format!("out-{}-{threads}.bam", args.join("")));
        let out_s = out.to_str().unwrap();
        let mut mine: Vec<&str> = vec!["fixmate", "-@", threads, "--no-PG"];
        mine.extend_from_slice(args);
        mine.extend_from_slice(&[input, out_s]);
        run_ok(&mdsam_bin(), &mine);
        let got = crate::support::to_sam(oracle, &out);
        assert_same_sam(&got, &expected, &format!("fixmate {args:?} -@ {threads}"));
    }
}

#[test]
fn matches_oracle_with_mate_scores_and_template_cigar() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("fixmate-m-c");
    let sam = input(&dir, 21);
    compare(&dir, &oracle, &sam, &["-m", "-c"]);
    compare(&dir, &oracle, &sam, &["-r", "-p"]);
}

#[test]
fn matches_oracle_without_sanitising() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("fixmate-z-off");
    let sam = input(&dir, 22);
    compare(&dir, &oracle, &sam, &["-z", "off", "-m"]);
}

/// `-O sam.gz` goes through the `-O` parser every command shares: BGZF-compressed SAM whatever
/// the output's name, as samtools writes it.
#[test]
fn writes_compressed_sam_when_asked() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("fixmate-sam-gz");
    let sam = input(&dir, 23);
    let (mine, theirs) = (dir.join("mdsam.out"), dir.join("oracle.out"));
    let (sam_in, m, t) = (sam.to_str().unwrap(), mine.to_str().unwrap(), theirs.to_str().unwrap());
    run_ok(&mdsam_bin(), &["fixmate", "--no-PG", "-m", "-O", "sam.gz", sam_in, m]);
    oracle_ok(&oracle, &["fixmate", "--no-PG", "-m", "-O", "sam.gz", sam_in, t]);
    assert_eq!(&std::fs::read(&mine).unwrap()[..4], b"\x1f\x8b\x08\x04", "a BGZF file");
    let got = crate::support::to_sam(&oracle, &mine);
    assert_same_sam(&got, &crate::support::to_sam(&oracle, &theirs), "fixmate -O sam.gz");
}

#[test]
fn refuses_coordinate_sorted_input() {
    let dir = scratch_dir("fixmate-coord");
    let sam = dir.join("c.sam");
    std::fs::write(&sam, "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c\tLN:100\n").unwrap();
    let out = crate::support::run(&mdsam_bin(), &["fixmate", sam.to_str().unwrap(), "-"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Coordinate sorted"));
}
