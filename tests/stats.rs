//! `stats` against the samtools 1.24 oracle on simulated reads (several references, pairs,
//! unmapped reads and mates, secondary and supplementary records, duplicates marked by
//! markdup, read groups, BC/RX barcodes): the reports must be identical but for the first lines
//! naming the program and its command line, and so must stderr and the exit status.

use std::path::{Path, PathBuf};
use std::process::Output;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, run_ok, scratch_dir, simulated_fasta, simulated_sam};

/// The lines samtools' own tests skip: the version and the command line.
const HEADING_LINES: usize = 3;

fn simulated(seed: u64, order: Order) -> SimulateOptions {
    SimulateOptions {
        pairs: 4_000,
        seed,
        n_refs: 3,
        ref_len: 300_000,
        read_groups: 3,
        order,
        qc_fail_rate: 0.03,
        ..SimulateOptions::default()
    }
}

/// A coordinate-sorted, duplicate-marked, indexed BAM; its name-ordered SAM; the reference.
struct Inputs {
    sorted: PathBuf,
    name_ordered: PathBuf,
    fasta: PathBuf,
}

fn inputs(dir: &Path, seed: u64) -> Inputs {
    let opts = simulated(seed, Order::Name);
    let name_ordered = simulated_sam(dir, &opts);
    let fasta = simulated_fasta(dir, &opts);
    let sorted = dir.join(format!("sorted-{seed}.bam"));
    let (s, b) = (name_ordered.to_str().unwrap(), sorted.to_str().unwrap());
    run_ok(&mdsam_bin(), &["markdup-pipeline", s, b]);
    run_ok(&mdsam_bin(), &["index", b]);
    Inputs { sorted, name_ordered, fasta }
}

fn body(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    text.split_inclusive('\n').skip(HEADING_LINES).collect()
}

/// `stats ARGS` in `dir` with both tools: the same report, stderr and exit status.
fn same_stats(oracle: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut full = vec!["stats"];
    full.extend_from_slice(args);
    let in_dir = |program: &Path| {
        std::process::Command::new(program).args(&full).current_dir(dir).output().unwrap()
    };
    let (ours, theirs) = (in_dir(&mdsam_bin()), in_dir(oracle));
    assert_eq!(body(&ours.stdout), body(&theirs.stdout), "stats {args:?}: report");
    let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert_eq!(show(&ours.stderr), show(&theirs.stderr), "stats {args:?}: stderr");
    assert_eq!(ours.status.code(), theirs.status.code(), "stats {args:?}: exit status");
    ours
}

#[test]
fn reports_match_the_oracle_for_every_option() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("stats_options");
    let inputs = inputs(&dir, 31);
    let (bam, sam) = (inputs.sorted.to_str().unwrap(), inputs.name_ordered.to_str().unwrap());
    let fasta = inputs.fasta.to_str().unwrap();
    let targets = dir.join("targets.txt");
    std::fs::write(
        &targets,
        "chr1\t1000\t50000\nchr1\t40000\t90000\nchr3\t100\t200000\nchrX\t1\t5\n",
    )
    .unwrap();
    let targets = targets.to_str().unwrap();
    for args in [
        &[bam][..],
        &[sam],
        &["-r", fasta, bam],
        &["-r", fasta, sam],
        &["-t", targets, bam],
        &["-t", targets, "-p", bam],
        &["-p", bam],
        &[bam, "chr2:1000-100000", "chr1", "chr2:50000-150000"],
        &["-f", "0x40", "-F", "0x10", bam],
        &["-F", "SECONDARY,SUPPLEMENTARY", bam],
        &["-d", bam],
        &["-i", "0", bam],
        &["-i", "300", "-m", "0.5", bam],
        &["-c", "5,50,5", bam],
        &["-c", "10,1,1", bam],
        &["-g", "2", "-t", targets, bam],
        &["-g", "2", bam],
        &["-@", "2", "-r", fasta, bam],
        &["-I", "SIM1", bam],
        &["-q", "20", "-l", "150", "-x", bam],
        &["--GC-depth", "1000", "-r", fasta, bam],
        &["--ref-stats", "-r", fasta, "-t", targets, bam],
        &["--ref-stats", bam, "chr3:10-5000"],
        &["--input-fmt-option", "filter=mapq>30", bam],
    ] {
        same_stats(&oracle, &dir, args);
    }
}

#[test]
fn split_reports_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("stats_split");
    let inputs = inputs(&dir, 32);
    let bam = inputs.sorted.to_str().unwrap();
    let fasta = inputs.fasta.to_str().unwrap();
    for (tool, prefix) in [(oracle.as_path(), "theirs"), (mdsam_bin().as_path(), "ours")] {
        let out = std::process::Command::new(tool)
            .args(["stats", "-S", "RG", "-P", prefix, "-r", fasta, bam])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let mut compared = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(value) = name.strip_prefix("theirs_") else { continue };
        let theirs = std::fs::read(dir.join(&name)).unwrap();
        let ours = std::fs::read(dir.join(format!("ours_{value}"))).unwrap();
        assert_eq!(body(&ours), body(&theirs), "{value}");
        compared += 1;
    }
    assert_eq!(compared, 3, "one report per read group");
}

#[test]
fn bad_inputs_fail_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("stats_bad_inputs");
    let inputs = inputs(&dir, 33);
    let bam = inputs.sorted.to_str().unwrap();
    let sam = inputs.name_ordered.to_str().unwrap();
    std::fs::write(dir.join("garbage.txt"), "not a SAM file\n").unwrap();
    std::fs::write(dir.join("bad_targets.txt"), "chr1\t500\t600\nchr1\t100\t200\n").unwrap();
    for args in [
        &["missing.bam"][..],
        &["garbage.txt"],
        &["-r", "missing.fa", bam],
        &["-F", "NOSUCHFLAG", bam],
        &["-t", "missing.txt", bam],
        &["-t", "bad_targets.txt", bam],
        &["-t", "bad_targets.txt", sam],
        &["-c", "5,10", bam],
        &["-g", "-1", bam],
        &["-X", bam],
        &[sam, "chr1:1-100"],
        &[bam, "chrZ:1-100"],
        &["-S", "XX", bam],
        &["-z", bam],
        &["--input-fmt-option", "filter=foo(", bam],
        &["--input-fmt-option", "filter=foo(", bam, "chr1:1-5000"],
    ] {
        same_stats(&oracle, &dir, args);
    }
    // A truncated BAM: htslib's warning, then one line naming the file; exit 1, no report.
    let whole = std::fs::read(bam).unwrap();
    std::fs::write(dir.join("truncated.bam"), &whole[..whole.len() / 2]).unwrap();
    let out = std::process::Command::new(mdsam_bin())
        .args(["stats", "truncated.bam"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("[W::")).collect();
    assert!(errors.len() == 1 && errors[0].contains("truncated.bam"), "{stderr}");
}
