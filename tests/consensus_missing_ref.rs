//! `consensus -T` with a FASTA that lacks one of the header's references (issue 42), against the
//! samtools 1.24 oracle. samtools' serial walk (no `-@`, `-@ 0`) writes the lines it made and
//! fails where it first asks for that reference; its threaded path (`-@ 1` and up) ignores each
//! block's failure: pileup blocks end with Ns, FASTA/FASTQ drop the reference's sequence, and the
//! run succeeds. stdout and the exit status must be samtools' own.
//!
//! htslib writes its warning in three pieces, so samtools' threads can interleave them: stderr
//! is compared as the number of warning pieces and the sorted remaining lines.

use std::path::{Path, PathBuf};
use std::process::Output;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    mdsam_native, oracle, run, run_ok, scratch_dir, simulated_fasta, simulated_sam,
};

const PREFIX: &str = "[W::fai_get_val] ";
const WARNING: &str = "Reference chr2 not found in FASTA file, returning empty sequence";

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The warning's pieces counted, and the other lines sorted.
fn stderr_summary(text: &[u8]) -> (usize, usize, Vec<String>) {
    let text = String::from_utf8_lossy(text);
    let rest = text.replace(PREFIX, "").replace(WARNING, "");
    let mut lines: Vec<String> =
        rest.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
    lines.sort();
    (text.matches(PREFIX).count(), text.matches(WARNING).count(), lines)
}

fn assert_same(got: &Output, want: &Output, context: &str) {
    assert_eq!(got.status.code(), want.status.code(), "exit status of {context}");
    assert!(
        got.stdout == want.stdout,
        "stdout of {context} differs: samtools {} bytes, mdsam {} bytes",
        want.stdout.len(),
        got.stdout.len()
    );
    assert_eq!(stderr_summary(&got.stderr), stderr_summary(&want.stderr), "stderr of {context}");
}

/// `consensus args…` run by both tools at each `-@`; stdout, stderr and exit status must agree.
fn compare(oracle: &Path, args: &[&str]) {
    for threads in [None, Some("0"), Some("1"), Some("2")] {
        let mut full = vec!["consensus"];
        if let Some(n) = threads {
            full.extend(["-@", n]);
        }
        full.extend_from_slice(args);
        let context = full.join(" ");
        assert_same(&mdsam_native(&full), &run(oracle, &full), &context);
    }
}

/// Sparse simulated reads on chr1..chr3 (gaps inside each reference) as a sorted, indexed BAM,
/// and a FASTA holding only chr1 and chr3.
struct Inputs {
    dir: PathBuf,
    bam: PathBuf,
    partial: PathBuf,
}

fn inputs(oracle: &Path, name: &str) -> Inputs {
    let dir = scratch_dir(name);
    let opts = SimulateOptions {
        pairs: 120,
        seed: 7,
        n_refs: 3,
        ref_len: 12_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let bam = dir.join("reads.bam");
    run_ok(oracle, &["sort", "-o", s(&bam), s(&sam)]);
    run_ok(oracle, &["index", s(&bam)]);
    let full = simulated_fasta(&dir, &opts);
    let partial = dir.join("partial.fa");
    let only = run_ok(oracle, &["faidx", s(&full), "chr1", "chr3"]);
    std::fs::write(&partial, only.stdout).expect("write partial FASTA");
    Inputs { dir, bam, partial }
}

#[test]
fn consensus_pileup_with_a_reference_the_fasta_lacks_matches_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_missing_ref_pileup");
    let (b, t) = (s(&i.bam), s(&i.partial));
    for all in [&[][..], &["-a"], &["-aa"]] {
        for extra in [
            &[][..],
            &["--show-ins", "no"],
            &["-Z", "2500", "--show-del", "yes"],
            &["-r", "chr2:1001-6000"],
            &["-r", "chr2"],
        ] {
            let mut args = vec!["-f", "pileup", "-T", t];
            args.extend_from_slice(all);
            args.extend_from_slice(extra);
            args.push(b);
            compare(&oracle, &args);
        }
    }
}

#[test]
fn consensus_fasta_and_fastq_with_a_reference_the_fasta_lacks_match_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_missing_ref_fasta");
    let (b, t) = (s(&i.bam), s(&i.partial));
    for format in ["fasta", "fastq"] {
        for all in [&[][..], &["-a"], &["-aa"]] {
            for extra in [
                &[][..],
                &["-Z", "2500", "--mark-ins", "--show-del", "yes"],
                &["-r", "chr2:1001-6000"],
            ] {
                let mut args = vec!["-f", format, "-T", t];
                args.extend_from_slice(all);
                args.extend_from_slice(extra);
                args.push(b);
                compare(&oracle, &args);
            }
        }
    }
}

/// The input without chr2's reads.
fn without_chr2(oracle: &Path, i: &Inputs) -> PathBuf {
    let bam = i.dir.join("no-chr2.bam");
    run_ok(oracle, &["view", "-b", "-o", s(&bam), s(&i.bam), "chr1", "chr3"]);
    run_ok(oracle, &["index", s(&bam)]);
    bam
}

#[test]
fn consensus_aa_pileup_of_a_readless_reference_the_fasta_lacks_fails_as_samtools() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_missing_ref_readless");
    let bam = without_chr2(&oracle, &i);
    compare(&oracle, &["-aa", "-f", "pileup", "-T", s(&i.partial), s(&bam)]);
}

/// samtools' threaded `-aa` FASTA of a reference without reads that `-T` lacks prints memory it
/// never wrote (its `ref_or_Ns` failure goes unchecked); mdsam gives its serial walk's outcome
/// there, at every `-@`: the sequences before it, the warning and a failure.
#[test]
fn consensus_aa_fasta_of_a_readless_reference_the_fasta_lacks_fails_as_samtools_serial_walk() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_missing_ref_readless_fasta");
    let bam = without_chr2(&oracle, &i);
    for format in ["fasta", "fastq"] {
        let args = ["-aa", "-f", format, "-T", s(&i.partial), s(&bam)];
        let mut serial = vec!["consensus"];
        serial.extend_from_slice(&args);
        let want = run(&oracle, &serial);
        assert_eq!(want.status.code(), Some(1), "samtools {}", serial.join(" "));
        for threads in ["0", "1", "2"] {
            let mut full = vec!["consensus", "-@", threads];
            full.extend_from_slice(&args);
            assert_same(&mdsam_native(&full), &want, &full.join(" "));
        }
    }
}

/// `-o FILE`: a run that fails leaves no file (mdsam's rule, where samtools leaves what it
/// wrote), one that succeeds writes samtools' bytes.
#[test]
fn consensus_output_file_with_a_reference_the_fasta_lacks() {
    let Some(oracle) = oracle() else { return };
    let i = inputs(&oracle, "consensus_missing_ref_output");
    let (b, t) = (s(&i.bam), s(&i.partial));
    for threads in ["0", "1"] {
        let theirs = i.dir.join(format!("samtools-{threads}.txt"));
        let ours = i.dir.join(format!("mdsam-{threads}.txt"));
        let args = |out: &Path| {
            ["consensus", "-@", threads, "-a", "-f", "pileup", "-T", t, "-o", s(out), b]
                .map(String::from)
        };
        let listing = || -> Vec<_> {
            let mut names: Vec<_> = std::fs::read_dir(&i.dir)
                .expect("list")
                .map(|e| e.expect("entry").file_name())
                .collect();
            names.sort();
            names
        };
        let want = run(&oracle, &args(&theirs).each_ref().map(String::as_str));
        let before = listing();
        let got = mdsam_native(&args(&ours).each_ref().map(String::as_str));
        let context = format!("consensus -@ {threads} -a -o FILE");
        // samtools' serial walk fails on chr2's first gap, its threads carry on.
        assert_eq!(want.status.success(), threads == "1", "samtools {context}");
        assert_eq!(got.status.code(), want.status.code(), "exit status of {context}");
        assert_eq!(stderr_summary(&got.stderr), stderr_summary(&want.stderr), "{context}");
        if want.status.success() {
            let read = |p: &Path| std::fs::read(p).expect("read output");
            assert!(read(&ours) == read(&theirs), "{context}: output files differ");
        } else {
            let partial = theirs.metadata().expect("samtools' partial file").len();
            assert!(partial > 0, "samtools {context} leaves the lines it wrote");
            assert_eq!(listing(), before, "{context}: a failed run left a file behind");
        }
    }
}
