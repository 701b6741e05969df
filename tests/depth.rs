//! `depth`, `coverage` and `bedcov` against the samtools 1.24 oracle on a simulated,
//! coordinate-sorted and indexed BAM (pairs, unmapped mates, secondary, supplementary, duplicate
//! and QC-failed records, indels): every main option, one and two inputs, stdout, stderr and the
//! exit status compared byte for byte.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, oracle_ok, run, scratch_dir, simulated_sam};

struct Inputs {
    bam: String,
    /// A subset of `bam` (mapping quality 30 and more), same header.
    second: String,
    bed: String,
}

fn inputs(dir: &Path, oracle: &Path) -> Inputs {
    let opts = SimulateOptions {
        pairs: 3_000,
        seed: 23,
        n_refs: 4,
        ref_len: 60_000,
        order: Order::Coordinate,
        mate_unmapped_rate: 0.05,
        distant_mate_rate: 0.04,
        chimeric_rate: 0.05,
        secondary_rate: 0.04,
        qc_fail_rate: 0.03,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(dir, &opts);
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    let (bam, second, bed) = (s(dir.join("in.bam")), s(dir.join("q30.bam")), s(dir.join("r.bed")));
    oracle_ok(oracle, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    oracle_ok(oracle, &["index", &bam]);
    oracle_ok(oracle, &["view", "-b", "-q", "30", "-o", &second, &bam]);
    oracle_ok(oracle, &["index", &second]);
    let intervals = "chr1\t0\t1000\nchr1\t500\t5000\tname\t0\t+\nchr2\t20000\t20100\n\
                     chr3\t100\t40000\nchr4\t7\t8\n";
    std::fs::write(&bed, intervals).unwrap();
    Inputs { bam, second, bed }
}

fn same(oracle: &Path, dir: &Path, args: &[&str]) {
    let ours = run(&mdsam_bin(), args);
    let theirs = run(oracle, args);
    let context = format!("{} (in {})", args.join(" "), dir.display());
    assert_eq!(
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&theirs.stderr),
        "stderr of {context}"
    );
    assert!(ours.stdout == theirs.stdout, "stdout of {context} differs");
    assert!(!ours.stdout.is_empty(), "no output from {context}");
    assert_eq!(ours.status.code(), theirs.status.code(), "exit status of {context}");
}

#[test]
fn depth_coverage_and_bedcov_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("depth_commands");
    let i = inputs(&dir, &oracle);
    let (bam, two, bed) = (i.bam.as_str(), i.second.as_str(), i.bed.as_str());
    let depth: &[&[&str]] = &[
        &[bam],
        &["-a", bam],
        &["-aa", bam],
        &["-r", "chr2:1000-50000", bam],
        &["-a", "-r", "chr3", bam],
        &["-aa", "-r", "chr1:59000-", bam],
        &["-b", bed, bam],
        &["-a", "-b", bed, bam],
        &["-Q", "30", bam],
        &["-q", "25", bam],
        &["-J", bam],
        &["-J", "-q", "30", bam],
        &["-s", bam],
        &["-l", "120", "-g", "DUP", "-G", "0x40", bam],
        &["--incl-flags", "0x80", "--require-flags", "PAIRED", bam],
        &["-H", bam, two],
        &["-a", "-H", "-r", "chr4:100-9000", bam, two],
    ];
    for args in depth {
        same(&oracle, &dir, &[&["depth"], *args].concat());
    }
    let coverage: &[&[&str]] = &[
        &[bam],
        &["-H", bam],
        &["-m", "-w", "40", bam],
        &["-A", "-w", "33", bam],
        &["-D", "-w", "25", bam],
        &["-r", "chr1:1000-20000", bam],
        &["-m", "-w", "30", "-r", "chr2:1000-20000", bam],
        &["-q", "20", "-Q", "25", bam],
        &["--min-depth", "3", "-l", "140", bam],
        &["--ff", "UNMAP", "--rf", "0x40", bam],
        &[bam, two],
    ];
    for args in coverage {
        same(&oracle, &dir, &[&["coverage"], *args].concat());
    }
    let bedcov: &[&[&str]] = &[
        &[bed, bam],
        &["-c", bed, bam],
        &["-j", bed, bam],
        &["-c", "-j", bed, bam],
        &["-d", "5", bed, bam],
        &["-d", "0", "-c", bed, bam, two],
        &["-H", "-Q", "20", bed, bam],
        &["-g", "DUP", "-G", "READ2", bed, bam, two],
    ];
    for args in bedcov {
        same(&oracle, &dir, &[&["bedcov"], *args].concat());
    }
}

#[test]
fn bad_bed_lines_and_missing_files_fail_as_samtools() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("depth_commands_bad");
    let i = inputs(&dir, &oracle);
    let bad = dir.join("bad.bed");
    std::fs::write(&bad, "chr1\t10\t20\nchrX\t1\t5\nchr2\t30\t10\nchr2 5 9\n").unwrap();
    let bad = bad.to_str().unwrap();
    let missing = dir.join("missing.bam");
    let missing = missing.to_str().unwrap();
    for args in [
        &["bedcov", bad, i.bam.as_str()][..],
        &["bedcov", bad, missing],
        &["depth", missing],
        &["depth", "-r", "chrX:1-5", i.bam.as_str()],
    ] {
        let ours = run(&mdsam_bin(), args);
        let theirs = run(&oracle, args);
        assert_eq!(ours.stdout, theirs.stdout, "stdout of {args:?}");
        assert_eq!(ours.status.code(), theirs.status.code(), "exit status of {args:?}");
    }
}

/// htslib's pileup depth cap (`coverage -d`, `bedcov --max-depth`, and a `bedcov -d` above
/// it) on reads about 150 deep with many duplicates, where the cap leaves reads out.
#[test]
fn pileup_depth_caps_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("depth_caps");
    let opts = SimulateOptions {
        pairs: 10_000,
        seed: 5,
        n_refs: 2,
        ref_len: 20_000,
        dup_rate: 0.3,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    let (bam, bed) = (s(dir.join("deep.bam")), s(dir.join("deep.bed")));
    oracle_ok(&oracle, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    oracle_ok(&oracle, &["index", &bam]);
    std::fs::write(&bed, "chr1\t0\t5000\nchr1\t3000\t15000\nchr2\t100\t9000\n").unwrap();
    let (bam, bed) = (bam.as_str(), bed.as_str());
    let capped = |args: &[&str]| {
        let uncapped = run(&oracle, &[args[0], args[args.len() - 1]]).stdout;
        let theirs = run(&oracle, args).stdout;
        assert!(theirs != uncapped, "{}: the cap leaves no read out", args.join(" "));
        same(&oracle, &dir, args);
    };
    capped(&["coverage", "-d", "5", bam]);
    capped(&["coverage", "-d", "40", bam]);
    same(&oracle, &dir, &["coverage", "-d", "3", "-m", bam]);
    same(&oracle, &dir, &["coverage", "-d", "0", bam]);
    same(&oracle, &dir, &["coverage", "-d", "-1", bam]);
    same(&oracle, &dir, &["coverage", "-d", "10", "-r", "chr2:1000-3000", bam]);
    for args in [
        &["--max-depth", "10", bed, bam][..],
        &["--max-depth", "3", "-c", bed, bam],
        &["-d", "30", "--max-depth", "10", "-c", bed, bam],
        &["--max-depth", "0", "-c", bed, bam],
        &["--max-depth", "1", "-j", "-c", bed, bam, bam],
    ] {
        same(&oracle, &dir, &[&["bedcov"], args].concat());
    }
    let uncapped = run(&oracle, &["bedcov", "-c", bed, bam]).stdout;
    assert!(run(&oracle, &["bedcov", "--max-depth", "3", "-c", bed, bam]).stdout != uncapped);
}

/// An input of several read pieces at `-@ 2` (each 2 MiB of BGZF): the sweep walks one group
/// while the next is read on the pool, and the output must not depend on it.
#[test]
fn depth_reading_ahead_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("depth_read_ahead");
    let opts = SimulateOptions {
        pairs: 25_000,
        seed: 29,
        n_refs: 2,
        ref_len: 200_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let bam = dir.join("big.bam").to_str().unwrap().to_string();
    oracle_ok(&oracle, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    oracle_ok(&oracle, &["index", &bam]);
    let size = std::fs::metadata(&bam).unwrap().len();
    assert!(size > 3 * (2 << 20), "the input must span several read pieces ({size} bytes)");
    same(&oracle, &dir, &["depth", "-@", "2", &bam]);
    same(&oracle, &dir, &["depth", "-@", "2", "-a", "-Q", "20", &bam, &bam]);
    same(&oracle, &dir, &["depth", "-@", "3", "-aa", "-r", "chr2", &bam]);
}
