//! mpileup's and consensus's failure messages against the samtools 1.24 oracle (BED files that
//! `bed_read` refuses, a `-T`/`-f` FASTA that `fai_load` refuses, regions htslib logs about,
//! an output that cannot be created): stdout, stderr and the exit status, byte for byte.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{mdsam_bin, oracle, oracle_ok, scratch_dir};

/// Two references, a few reads on the first: small enough for every message case.
const SAM: &str = "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:60\n@SQ\tSN:c2\tLN:30\n\
r1\t0\tc1\t1\t60\t10M\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII\n\
r2\t16\tc1\t5\t60\t4M1D6M\t*\t0\t0\tACGTACGTAC\t5555555555\n\
r3\t0\tc1\t21\t60\t10M\t*\t0\t0\tACGTACGTAC\t++++++++++\n";

const FASTA: &str = ">c1\nACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n\
>c2\nTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT\n";

/// `in.bam` (indexed) and `ref.fa` in a fresh directory.
fn setup(name: &str, oracle: &Path) -> std::path::PathBuf {
    let dir = scratch_dir(name);
    std::fs::write(dir.join("in.sam"), SAM).unwrap();
    std::fs::write(dir.join("ref.fa"), FASTA).unwrap();
    let sam = dir.join("in.sam");
    let bam = dir.join("in.bam");
    oracle_ok(oracle, &["view", "-b", "-o", bam.to_str().unwrap(), sam.to_str().unwrap()]);
    oracle_ok(oracle, &["index", bam.to_str().unwrap()]);
    dir
}

/// Runs `program args` in `dir` (so the messages name the same relative paths); `.fai` files
/// either side writes are removed first, so both start from the same files.
fn run_in(dir: &Path, program: &Path, args: &[&str]) -> Output {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "fai") && path.file_stem().unwrap() != "ref.fa" {
            std::fs::remove_file(path).unwrap();
        }
    }
    Command::new(program).args(args).current_dir(dir).output().unwrap()
}

/// stdout, stderr and the exit status of mdsam and the oracle are the same.
fn same(dir: &Path, oracle: &Path, args: &[&str]) {
    let ours = run_in(dir, &mdsam_bin(), args);
    let theirs = run_in(dir, oracle, args);
    let context = args.join(" ");
    crate::support::assert_same_outcome(&ours, &theirs, &context);
}

/// As [`same`], stderr's lines compared in any order: the oracle replays htslib's lines apart
/// from samtools' own (a native samtools interleaves them as mdsam does).
fn same_lines(dir: &Path, oracle: &Path, args: &[&str]) {
    let ours = run_in(dir, &mdsam_bin(), args);
    let theirs = run_in(dir, oracle, args);
    let context = args.join(" ");
    let sorted = |o: &Output| {
        let mut lines: Vec<String> =
            String::from_utf8_lossy(&o.stderr).lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&ours), sorted(&theirs), "stderr of {context}");
    assert!(ours.stdout == theirs.stdout, "stdout of {context} differs");
    assert_eq!(ours.status.code(), theirs.status.code(), "exit status of {context}");
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn regions_files_that_bed_read_refuses_get_its_message_before_any_input_opens() {
    let Some(oracle) = oracle() else { return };
    let dir = setup("pileup_memory_bed", &oracle);
    // End before start; the line number counts blank-but-not-empty lines and comments,
    // not empty ones.
    write(&dir, "reversed.bed", "c1\t30\t10\n");
    write(&dir, "late.bed", "c1\t1\t5\n\n# note\n   \nc1\t9\nc1\t20\t10\n");
    write(&dir, "word.bed", "c1\tten\n");
    // A position alone is the one base there; `track` parses as a name here.
    write(&dir, "fine.bed", "track 1 5\nc1 12\nc1\t20\t25 extra\n");
    for bed in ["reversed.bed", "late.bed", "word.bed", "missing.bed", "fine.bed"] {
        same(&dir, &oracle, &["mpileup", "-l", bed, "in.bam"]);
        same(&dir, &oracle, &["mpileup", "-a", "-l", bed, "-r", "c1", "in.bam"]);
        same(&dir, &oracle, &["consensus", "--regions-file", bed, "-a", "in.bam"]);
        same(&dir, &oracle, &["view", "-L", bed, "in.bam"]);
        same(&dir, &oracle, &["depth", "-b", bed, "in.bam"]);
    }
}

#[test]
fn mpileup_regions_and_outputs_refused_as_samtools_refuses_them() {
    let Some(oracle) = oracle() else { return };
    let dir = setup("pileup_memory_regions", &oracle);
    for region in ["c1:30-10", "c1:abc", "c1:0-5", "nope", "c1:1-5"] {
        same(&dir, &oracle, &["mpileup", "-r", region, "in.bam"]);
    }
    same(&dir, &oracle, &["mpileup", "-o", "no/such/dir/out.txt", "in.bam"]);
}

#[test]
fn a_fasta_that_fai_load_refuses_fails_consensus_and_mpileup_with_htslibs_lines() {
    let Some(oracle) = oracle() else { return };
    let dir = setup("pileup_memory_fasta", &oracle);
    write(&dir, "garbage.fa", "garbage\n");
    write(&dir, "empty.fa", "");
    write(&dir, "other.fa", ">other\nACGTACGTAC\n");
    std::fs::create_dir_all(dir.join("dir.fa")).unwrap();
    for fasta in ["missing.fa", "garbage.fa", "empty.fa", "dir.fa"] {
        for extra in [&["-a"][..], &["-a", "-f", "pileup"], &["-@", "2", "-a"]] {
            let mut args = vec!["consensus", "-T", fasta];
            args.extend_from_slice(extra);
            args.push("in.bam");
            same(&dir, &oracle, &args);
        }
        same(&dir, &oracle, &["mpileup", "-f", fasta, "in.bam"]);
    }
    // A reference the FASTA lacks: htslib's warning, then samtools' failure.
    same(&dir, &oracle, &["consensus", "-T", "other.fa", "-a", "in.bam"]);
    // mpileup: htslib's line at every read and column, the failed fetch not kept.
    same_lines(&dir, &oracle, &["mpileup", "-f", "other.fa", "in.bam"]);
    // And one it has, through the `.fai` written beside it.
    same(&dir, &oracle, &["consensus", "-T", "ref.fa", "-a", "--show-ins", "yes", "in.bam"]);
}
