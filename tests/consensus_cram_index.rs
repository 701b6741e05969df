//! `consensus` on a CRAM with a `.crai` (issue 42), against the samtools 1.24 oracle: `-r` and
//! `--regions-file` read their reads through the index, and `-@` takes samtools' threaded path
//! (blocks fetched through the index) as it does on a BAM. The CRAMs are cut into small
//! containers (and, in one, containers holding several references) so that regions and blocks
//! start and end inside them. stdout, stderr and the exit status must be samtools' own.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_outcome, mdsam_bin, oracle, run_ok, scratch_dir, simulated_fasta, simulated_sam,
};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `cmd args…` with delegation to samtools impossible and no reference looked up elsewhere.
fn run_isolated(cmd: &Path, args: &[&str]) -> Output {
    Command::new(cmd)
        .args(args)
        .env("MDSAM_SAMTOOLS", "/bin/false")
        .env("REF_PATH", "/nonexistent")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", cmd.display()))
}

/// Simulated reads on chr1..chr3 as indexed CRAMs: `small` with 100 reads a slice (one
/// reference a container), `whole` with htslib's default containers (chr3's reads share one with
/// the unplaced reads), `no_chr2` without chr2's reads; and their FASTA.
struct Inputs {
    dir: PathBuf,
    fasta: PathBuf,
    small: PathBuf,
    whole: PathBuf,
    no_chr2: PathBuf,
}

fn inputs(oracle: &Path, name: &str) -> Inputs {
    let dir = scratch_dir(name);
    let opts = SimulateOptions {
        pairs: 400,
        seed: 11,
        n_refs: 3,
        ref_len: 9_000,
        read_len: 75,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let f = s(&fasta);
    let cram = |file: &str, extra: &[&str]| {
        let path = dir.join(file);
        let mut args = vec!["view", "-C", "-T", f, "-o", s(&path)];
        args.extend_from_slice(extra);
        run_ok(oracle, &args);
        run_ok(oracle, &["index", s(&path)]);
        path
    };
    let small = cram("small.cram", &["--output-fmt-option", "seqs_per_slice=100", s(&sam)]);
    let whole = cram("whole.cram", &[s(&sam)]);
    let no_chr2 = cram("no-chr2.cram", &[s(&whole), "chr1", "chr3"]);
    Inputs { dir, fasta, small, whole, no_chr2 }
}

/// `consensus args…` run by both tools (the CRAM decoded against `fasta`) at `threads`.
fn compare(oracle: &Path, fasta: &Path, threads: &[Option<&str>], args: &[&str]) {
    let reference = format!("reference={}", s(fasta));
    for n in threads {
        let mut full = vec!["consensus"];
        if let Some(n) = n {
            full.extend(["-@", n]);
        }
        full.extend(["--input-fmt-option", &reference]);
        full.extend_from_slice(args);
        let context = full.join(" ");
        let want = run_isolated(oracle, &full);
        assert_same_outcome(&run_isolated(&mdsam_bin(), &full), &want, &context);
    }
}

const ALL_THREADS: [Option<&str>; 3] = [None, Some("1"), Some("2")];

#[test]
fn consensus_region_of_an_indexed_cram_matches_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_cram_index_region");
    for cram in [&i.small, &i.whole] {
        for region in ["chr2:1001-6000", "chr3", "chr1:4000-4100"] {
            for format in [&["-f", "fasta"][..], &["-f", "fastq", "-a"], &["-f", "pileup"]] {
                let mut args = vec!["-r", region];
                args.extend_from_slice(format);
                args.push(s(cram));
                compare(&oracle, &i.fasta, &ALL_THREADS, &args);
            }
        }
    }
}

#[test]
fn consensus_regions_file_on_an_indexed_cram_matches_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_cram_index_bed");
    // Out of order, an unknown reference, one past the reference's end, one running past it.
    let bed = i.dir.join("regions.bed");
    let text =
        "chr3\t200\t2500\nchr1\t100\t3000\nchr9\t0\t300\nchr2\t50000\t50100\nchr1\t2900\t99999\n";
    std::fs::write(&bed, text).expect("write BED");
    for cram in [&i.small, &i.whole] {
        for format in [&["-f", "fasta"][..], &["-f", "fastq", "-aa"], &["-f", "pileup", "-a"]] {
            let mut args = vec!["--regions-file", s(&bed)];
            args.extend_from_slice(format);
            args.push(s(cram));
            compare(&oracle, &i.fasta, &ALL_THREADS, &args);
        }
    }
}

/// `-@` on a whole indexed CRAM: samtools' blocks (`-Z`), not its serial walk, and no
/// "No index" line.
#[test]
fn consensus_threads_on_an_indexed_cram_take_samtools_block_path() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_cram_index_threads");
    let threads = [Some("1"), Some("2")];
    for cram in [&i.small, &i.whole] {
        for format in [
            &["-f", "fasta", "-Z", "700"][..],
            &["-f", "fastq", "-a", "--show-del", "yes"],
            &["-f", "pileup", "-Z", "1500"],
            &["-f", "pileup", "-a", "-T", s(&i.fasta)],
        ] {
            let mut args = format.to_vec();
            args.push(s(cram));
            compare(&oracle, &i.fasta, &threads, &args);
        }
    }
    // A reference without reads: `-aa` writes its Ns (or empty lines) in the block path too.
    for format in ["fasta", "pileup"] {
        let args = ["-aa", "-f", format, s(&i.no_chr2)];
        compare(&oracle, &i.fasta, &ALL_THREADS, &args);
    }
}

/// A CRAM without its `.crai`: htslib's CRAM line, then samtools' failure (a region) or its
/// serial walk (`-@`). (samtools' serial walk under `-@` drops its `-f pileup` lines, a bug not
/// copied here, so `-@` is compared in FASTA.)
#[test]
fn consensus_cram_without_index_matches_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_cram_index_missing");
    let bare = i.dir.join("bare.cram");
    std::fs::copy(&i.small, &bare).expect("copy CRAM");
    let b = s(&bare);
    compare(&oracle, &i.fasta, &ALL_THREADS, &["-r", "chr1:1-500", b]);
    compare(&oracle, &i.fasta, &[Some("2")], &["-f", "fasta", "-a", b]);
}

/// `cmd args…` (any command) run by both tools; stdout, stderr and exit status must agree.
fn compare_command(oracle: &Path, args: &[&str]) {
    let want = run_isolated(oracle, args);
    assert_same_outcome(&run_isolated(&mdsam_bin(), args), &want, &args.join(" "));
}

/// `depth -r`, `coverage -r` and `bedcov` share consensus' region input, so they read an
/// indexed CRAM through its `.crai` too; without one, htslib's CRAM line and their failure.
/// (`coverage` is run with `-Q 1`: without it samtools decodes no CRAM qualities and reports a
/// mean base quality of 255.)
#[test]
fn depth_coverage_and_bedcov_regions_of_an_indexed_cram_match_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_cram_index_depth");
    let bed = i.dir.join("regions.bed");
    std::fs::write(&bed, "chr1\t100\t3000\nchr3\t0\t9000\nchr1\t2900\t2950\n").expect("write BED");
    let bare = i.dir.join("bare.cram");
    std::fs::copy(&i.small, &bare).expect("copy CRAM");
    let f = s(&i.fasta);
    for cram in [&i.small, &i.whole, &bare] {
        let c = s(cram);
        compare_command(&oracle, &["depth", "--reference", f, "-a", "-r", "chr2:1001-6000", c]);
        compare_command(&oracle, &["depth", "--reference", f, "-r", "chr3", c]);
        for region in ["chr1:100-4000", "chr3"] {
            compare_command(&oracle, &["coverage", "--reference", f, "-Q", "1", "-r", region, c]);
        }
        compare_command(&oracle, &["bedcov", "--reference", f, "-c", "-j", s(&bed), c]);
    }
}
