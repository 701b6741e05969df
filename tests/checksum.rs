//! `checksum` against the samtools 1.24 oracle on simulated reads (read groups, reverse reads,
//! QC failures, secondary and supplementary records, integer tags of every width): every report
//! layout and option, merging reports, and bad inputs. The reports must be byte-identical.

use std::path::{Path, PathBuf};
use std::process::Output;

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, oracle, run, run_ok, scratch_dir, simulated_sam};

fn simulated(seed: u64, read_groups: u32) -> SimulateOptions {
    SimulateOptions {
        pairs: 1_500,
        seed,
        n_refs: 3,
        ref_len: 200_000,
        read_groups,
        qc_fail_rate: 0.05,
        extra_tag_rate: 0.5,
        ..SimulateOptions::default()
    }
}

/// A BAM (written by mdsam's `view`) and its SAM.
fn simulated_input(dir: &Path, seed: u64, read_groups: u32) -> (PathBuf, PathBuf) {
    let sam = simulated_sam(dir, &simulated(seed, read_groups));
    let bam = dir.join(format!("in-{seed}.bam"));
    let (s, b) = (sam.to_str().unwrap(), bam.to_str().unwrap());
    run_ok(&mdsam_bin(), &["view", "-b", "--no-PG", "-o", b, s]);
    (sam, bam)
}

/// `checksum ARGS` in `dir` with both tools: the same stdout, stderr and exit status.
fn same_checksum(oracle: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut full = vec!["checksum"];
    full.extend_from_slice(args);
    let in_dir = |program: &Path| {
        std::process::Command::new(program).args(&full).current_dir(dir).output().unwrap()
    };
    let (ours, theirs) = (in_dir(&mdsam_bin()), in_dir(oracle));
    let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_eq!(show(&ours.stdout), show(&theirs.stdout), "checksum {args:?}: report");
    // pysam's build renames C's `stdout` everywhere, the "[stdout]" of the usage text too;
    // samtools' source (and mdsam) print "[stdout]".
    let theirs_stderr = show(&theirs.stderr).replace("[samtools_stdout]", "[stdout]");
    assert_eq!(show(&ours.stderr), theirs_stderr, "checksum {args:?}: stderr");
    assert_eq!(ours.status.code(), theirs.status.code(), "checksum {args:?}: exit status");
    ours
}

#[test]
fn every_option_reports_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("checksum_options");
    let (sam, bam) = simulated_input(&dir, 21, 3);
    let (sam, bam) = (sam.to_str().unwrap(), bam.to_str().unwrap());
    for args in [
        &[][..],
        &["-a"],
        &["-q", "-v"],
        &["-q", "-v", "-a"],
        &["-T", "-q"],
        &["-B"],
        &["-O"],
        &["-O", "-O", "-q"],
        &["-c", "-P", "-C", "-M"],
        &["-t", "*"],
        &["-t", "XI,XT,RG,XC"],
        &["-t", "*,XI", "-F", "0"],
        &["-f", "0x40", "-b", "PAIRED,READ1,REVERSE"],
        &["-N", "100", "-q"],
        &["-z", "all,cigarx", "-a"],
        &["-t", "XYZ"],
        &["-@", "2", "-T", "-a"],
    ] {
        let mut full = args.to_vec();
        full.push(bam);
        same_checksum(&oracle, &dir, &full);
    }
    // SAM input, and two files: one report each.
    same_checksum(&oracle, &dir, &["-a", sam, bam]);
}

#[test]
fn merged_reports_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("checksum_merge");
    let (_, first) = simulated_input(&dir, 22, 2);
    let (_, second) = simulated_input(&dir, 23, 1);
    for (args, name) in [(&["-a"][..], "a"), (&["-T", "-q"], "tq"), (&["-B"], "b")] {
        let mut reports = Vec::new();
        for (i, bam) in [&first, &second].iter().enumerate() {
            let report = format!("{name}{i}.chk");
            let mut full = vec!["checksum", "-o", &report];
            full.extend_from_slice(args);
            full.push(bam.to_str().unwrap());
            let out = std::process::Command::new(oracle.as_path())
                .args(&full)
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(out.status.success());
            reports.push(report);
        }
        let mut merge = vec!["-m"];
        if name == "b" {
            merge.insert(0, "-B");
        }
        merge.extend(reports.iter().map(String::as_str));
        same_checksum(&oracle, &dir, &merge);
    }
    // Reports of different layouts, a missing one, and no report at all.
    same_checksum(&oracle, &dir, &["-m", "a0.chk", "b1.chk"]);
    same_checksum(&oracle, &dir, &["-m", "a0.chk", "missing.chk"]);
    same_checksum(&oracle, &dir, &["-m"]);
}

#[test]
fn bad_inputs_fail_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("checksum_bad_inputs");
    let (_, bam) = simulated_input(&dir, 24, 1);
    std::fs::rename(&bam, dir.join("good.bam")).unwrap();
    for args in [
        &["good.bam", "missing.bam", "good.bam"][..],
        &["-F", "NOSUCHFLAG", "good.bam"],
        &["-z", "bogus", "good.bam"],
        &["--input-fmt", "bam", "good.bam"],
        &["-x", "good.bam"],
    ] {
        same_checksum(&oracle, &dir, args);
    }
    // -o: no report file is left when an input fails (samtools leaves the part it wrote).
    let out = run(&mdsam_bin(), &["checksum", "-o", "/nonexistent/dir/x.chk", "x.bam"]);
    assert_eq!(out.status.code(), Some(1));
    let failed = dir.join("failed.chk");
    let good = dir.join("good.bam");
    let args = ["checksum", "-o", failed.to_str().unwrap(), good.to_str().unwrap(), "missing.bam"];
    assert_eq!(run(&mdsam_bin(), &args).status.code(), Some(1));
    assert!(!failed.exists());
}
