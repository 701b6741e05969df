//! The threaded pileups against the samtools 1.24 oracle: `consensus -@` on an indexed BAM cut
//! into `-Z` blocks (reads across block edges, deletions and insertions at the edges, `-a`/`-aa`,
//! `--show-ins`/`--show-del`, `-r`, 1 to 4 extra threads), and `mpileup`'s column sweep (deep
//! columns capped by `-d`, overlapping pairs, several inputs, regions, `-a`/`-aa`).
//! stdout and the exit status are compared byte for byte.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, oracle_ok, run, scratch_dir, simulated_sam};

fn same(oracle: &Path, dir: &Path, args: &[&str]) {
    let ours = run(&mdsam_bin(), args);
    let theirs = run(oracle, args);
    let context = format!("{} (in {})", args.join(" "), dir.display());
    assert!(ours.stdout == theirs.stdout, "stdout of {context} differs");
    assert_eq!(ours.status.code(), theirs.status.code(), "exit status of {context}");
}

/// A simulated coordinate-sorted, indexed BAM: `pairs` pairs on three references of about
/// `ref_len` bases (indels, clips, overlapping mates, filtered records).
fn simulated_bam(dir: &Path, oracle: &Path, pairs: u64, ref_len: u32) -> String {
    let opts = SimulateOptions {
        pairs,
        seed: 7,
        n_refs: 3,
        ref_len,
        order: Order::Coordinate,
        mate_unmapped_rate: 0.05,
        secondary_rate: 0.03,
        qc_fail_rate: 0.03,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(dir, &opts);
    let bam = dir.join("in.bam").to_str().unwrap().to_string();
    oracle_ok(oracle, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    oracle_ok(oracle, &["index", &bam]);
    bam
}

/// Reads whose first column is a deletion: samtools' pileup gives such a read the quality left
/// in its free list's node, which the threaded path starts afresh at every block.
const STALE_QUALITY_SAM: &str = "@SQ\tSN:c1\tLN:60\n@SQ\tSN:c2\tLN:30\n\
r1\t0\tc1\t1\t60\t10M\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII\n\
r2\t0\tc1\t3\t60\t10M\t*\t0\t0\tGTACGTACGT\t5555555555\n\
r3\t0\tc1\t21\t60\t2D10M\t*\t0\t0\tACGTACGTAC\t++++++++++\n\
r4\t0\tc1\t21\t60\t10M\t*\t0\t0\tACGTACGTAC\t++++++++++\n\
r5\t0\tc1\t41\t60\t1D5M\t*\t0\t0\tACGTA\t?????\n";

fn indexed(dir: &Path, oracle: &Path, name: &str, text: &str) -> String {
    let sam = dir.join(format!("{name}.sam"));
    std::fs::write(&sam, text).unwrap();
    let bam: PathBuf = dir.join(format!("{name}.bam"));
    let bam = bam.to_str().unwrap().to_string();
    oracle_ok(oracle, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    oracle_ok(oracle, &["index", &bam]);
    bam
}

#[test]
fn consensus_threads_start_each_block_afresh_as_samtools_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("pileup_parallel_stale_quality");
    let bam = indexed(&dir, &oracle, "stale", STALE_QUALITY_SAM);
    let serial = run(&oracle, &["consensus", "-a", "--show-del", "yes", "-f", "fastq", &bam]);
    let threaded = ["consensus", "-@", "2", "-Z", "20", "-a", "--show-del", "yes", "-f", "fastq"];
    let blocks = run(&oracle, &[&threaded[..], &[&bam]].concat());
    // The case shows the blocks: samtools' serial and threaded answers differ on it.
    assert!(serial.stdout != blocks.stdout, "the oracle's threaded run matches its serial one");
    for z in ["10", "20", "40"] {
        for extra in [&[][..], &["-m", "simple"], &["--mark-ins", "--show-ins", "no"]] {
            for threads in ["1", "2", "4"] {
                let mut args = vec!["consensus", "-@", threads, "-Z", z, "-a", "--show-del", "yes"];
                args.extend_from_slice(extra);
                args.extend_from_slice(&["-f", "fastq", &bam]);
                same(&oracle, &dir, &args);
            }
        }
    }
}

/// Threads join the blocks as samtools' do: FASTA/FASTQ from each block's first called base
/// (a block that starts with a hidden deletion call leaves Ns where the serial walk leaves
/// none), pileup lines written by each block (samtools' serial walk repeats the uncovered tail
/// of a block whose reads end early), `-aa` names the references without reads (`c0` before
/// the reads, `c2` after) in order, and `--regions-file` intervals are cut into blocks too.
#[test]
fn consensus_blocks_join_as_samtools_threads_do() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("pileup_parallel_pileup_blocks");
    let text = format!("@SQ\tSN:c0\tLN:15\n{STALE_QUALITY_SAM}");
    let bam = indexed(&dir, &oracle, "blocks", &text);
    let fa = dir.join("ref.fa");
    let seqs =
        format!(">c0\n{}\n>c1\n{}\n>c2\n{}\n", "ACGTA".repeat(3), "T".repeat(60), "G".repeat(30));
    std::fs::write(&fa, seqs).unwrap();
    oracle_ok(&oracle, &["faidx", fa.to_str().unwrap()]);
    let fa = fa.to_str().unwrap();
    let bed = dir.join("regions.bed");
    std::fs::write(&bed, "c1\t10\t30\nc1\t35\t60\nc0\t0\t15\n").unwrap();
    let bed = bed.to_str().unwrap();
    for format in ["pileup", "fasta"] {
        let serial = run(&oracle, &["consensus", "-a", "-Z", "20", "-f", format, &bam]);
        let args = ["consensus", "-@", "2", "-a", "-Z", "20", "-f", format, &bam];
        let blocks = run(&oracle, &args);
        assert!(serial.stdout != blocks.stdout, "the oracle's threads match its serial walk");
    }
    let cases: &[&[&str]] = &[
        &["-f", "pileup", "-a"],
        &["-f", "pileup", "-aa", "-T", fa],
        &["-f", "pileup", "-aa", "--show-ins", "no", "-m", "simple"],
        &["-f", "pileup", "-a", "-r", "c1:10-45", "-T", fa],
        &["-f", "pileup"],
        &[],
        &["-a"],
        &["-aa", "-f", "fastq", "-T", fa],
        &["-aa", "-m", "simple", "--mark-ins"],
        &["-a", "-r", "c1:10-45", "-f", "fastq"],
        &["-r", "c1", "-T", fa, "-a"],
        &["--regions-file", bed, "-a"],
        &["--regions-file", bed, "-aa", "-f", "fastq"],
        &["--regions-file", bed, "-a", "-f", "pileup"],
    ];
    for case in cases {
        for (threads, z) in [("1", "7"), ("2", "20"), ("4", "40"), ("2", "500000")] {
            let mut args = vec!["consensus", "-@", threads, "-Z", z];
            args.extend_from_slice(case);
            args.push(&bam);
            same(&oracle, &dir, &args);
        }
    }
}

#[test]
fn consensus_blocks_match_the_oracle_on_simulated_pairs() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("pileup_parallel_consensus");
    let bam = simulated_bam(&dir, &oracle, 500, 6_000);
    let bam = bam.as_str();
    // Small blocks put many edges inside reads, deletions and insertions.
    let cases: &[&[&str]] = &[
        &[],
        &["-a"],
        &["-aa", "-f", "fastq"],
        &["-m", "simple", "-a", "--show-ins", "yes", "--show-del", "yes"],
        &["--show-del", "yes", "--mark-ins", "-A"],
        &["-r", "chr2:1000-4000", "-a"],
        &["-r", "chr3", "-m", "simple", "-f", "fastq"],
    ];
    for (i, case) in cases.iter().enumerate() {
        let z = ["97", "1000", "500000"][i % 3];
        let threads = ["1", "2", "4"][i % 3];
        let mut args = vec!["consensus", "-@", threads, "-Z", z];
        args.extend_from_slice(case);
        args.push(bam);
        same(&oracle, &dir, &args);
    }
}

#[test]
fn mpileup_column_sweep_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("pileup_parallel_mpileup");
    // Deep: some 30 reads a position, pairs overlapping, reads ending at every position.
    let bam = simulated_bam(&dir, &oracle, 2_000, 8_000);
    let second = dir.join("second.bam").to_str().unwrap().to_string();
    oracle_ok(&oracle, &["view", "-b", "-q", "20", "-o", &second, &bam]);
    oracle_ok(&oracle, &["index", &second]);
    let (bam, two) = (bam.as_str(), second.as_str());
    let cases: &[&[&str]] = &[
        &[bam],
        &["-d", "7", bam],
        &["-x", "-d", "12", bam, two],
        &["-aa", "-d", "3", bam],
        &["-a", "-r", "chr2:2000-4000", bam, two],
        &["-r", "chr3", "--output-QNAME", "-s", bam],
    ];
    for args in cases {
        let mut full = vec!["mpileup"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}
