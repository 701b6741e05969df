//! `consensus` run natively (delegation off: `MDSAM_SAMTOOLS=/bin/false`) against the samtools
//! 1.24 oracle: simulated coordinate-sorted reads (mismatches, indels, soft clips) in every
//! mode, format and preset; deep amplicon-like data with heterozygous IUPAC calls; BED regions
//! (samtools walks them in its hash table's order); hand-made reads with every CIGAR operation
//! and missing qualities; and the failures (unsorted input, no index, bad region or BED).
//!
//! The oracle (pysam) may print htslib's log lines before or after samtools' own, so stderr is
//! compared as a sorted list of lines.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    mdsam_native, oracle, run, run_ok, scratch_dir, simulated_fasta, simulated_sam,
};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn sorted_lines(text: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(text).lines().map(String::from).collect();
    lines.sort();
    lines
}

/// Runs `consensus args…` with both tools; stdout, stderr and exit status must agree.
fn compare(oracle: &Path, args: &[&str]) {
    let mut full = vec!["consensus"];
    full.extend_from_slice(args);
    let want = run(oracle, &full);
    let got = mdsam_native(&full);
    let context = args.join(" ");
    assert_eq!(got.status.code(), want.status.code(), "exit status of consensus {context}");
    assert!(
        got.stdout == want.stdout,
        "stdout of consensus {context} differs:\nsamtools:\n{}\nmdsam:\n{}",
        String::from_utf8_lossy(&want.stdout[..want.stdout.len().min(2000)]),
        String::from_utf8_lossy(&got.stdout[..got.stdout.len().min(2000)])
    );
    assert_eq!(sorted_lines(&got.stderr), sorted_lines(&want.stderr), "stderr of {context}");
}

/// The simulated reads of `opts` as a sorted, indexed BAM (made by the oracle).
fn sorted_bam(oracle: &Path, dir: &Path, opts: &SimulateOptions) -> PathBuf {
    let sam = simulated_sam(dir, opts);
    let bam = dir.join(format!("sim-{}.bam", opts.seed));
    run_ok(oracle, &["sort", "-o", s(&bam), s(&sam)]);
    run_ok(oracle, &["index", s(&bam)]);
    bam
}

#[test]
fn consensus_matches_samtools_on_simulated_reads() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("consensus_simulated");
    let opts = SimulateOptions {
        pairs: 1_500,
        seed: 42,
        n_refs: 2,
        ref_len: 8_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let bam = sorted_bam(&oracle, &dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    run_ok(&oracle, &["faidx", s(&fasta)]);
    let calibration = dir.join("calibration.txt");
    std::fs::write(&calibration, "# qual subst under over\nQUAL 10 12 8 9\nQUAL 30 28 20 22\n")
        .expect("write calibration");
    let unordered = dir.join("unordered.txt");
    std::fs::write(&unordered, "QUAL 30 28 20 22\nQUAL 10 12 8 9\n").expect("write calibration");
    let (b, f) = (s(&bam), s(&fasta));
    let (cal, bad_cal) = (s(&calibration), s(&unordered));
    let cases: &[&[&str]] = &[
        &[b],
        &["-f", "fastq", b],
        &["-f", "pileup", b],
        &["-m", "simple", b],
        &["-m", "simple", "-f", "pileup", "-q", "--show-del", "yes", b],
        &["-m", "simple", "-A", "-H", "0.3", "-c", "0.6", "-f", "fastq", b],
        &["-a", "-f", "fastq", "--show-del", "yes", "--show-ins", "no", b],
        &["-aa", "-T", f, "--ref-qual", "7", "-f", "fastq", "-l", "60", b],
        &["--mark-ins", "-A", b],
        &["-X", "hifi", "-f", "fastq", b],
        &["-X", "hiseq", "-f", "pileup", b],
        &["-X", "r10.4_sup", "-A", b],
        &["-X", "r10.4_dup", b],
        &["-X", "ultima", "-f", "fastq", b],
        &["-t", ":hifi", "-p", "-f", "fastq", b],
        &["-t", cal, "-f", "fastq", b],
        &["-t", cal, "-X", "hiseq", b],
        &["-t", bad_cal, b],
        &["-m", "bayesian_m", "-f", "fastq", b],
        &["-m", "bayesian_p", b],
        &["-m", "bayesian_116", "-f", "fastq", b],
        &["--no-adj-MQ", "--no-adj-qual", "-C", "20", b],
        &["--no-use-MQ", "-f", "fastq", b],
        &["--min-MQ", "30", "--min-BQ", "20", "-d", "3", "-f", "fastq", b],
        &["--ff", "0", "--rf", "PAIRED", b],
        &["-r", "chr1:1000-3000", "-f", "fastq", b],
        &["-r", "chr2:100-400", "-a", "-f", "pileup", b],
        &["-@", "2", "-Z", "500", "-f", "fastq", b],
    ];
    for args in cases {
        compare(&oracle, args);
    }
}

/// `sam` with every other plain 150M read carrying another base at each of `sites` (1-based):
/// heterozygous columns at about half depth each.
fn with_het_sites(sam: &Path, sites: &[i64]) -> PathBuf {
    let text = std::fs::read_to_string(sam).expect("read SAM");
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let mut f: Vec<String> = line.split('\t').map(String::from).collect();
        if !line.starts_with('@') && n % 2 == 0 && f[5] == "150M" {
            let pos: i64 = f[3].parse().expect("POS");
            let mut seq = f[9].clone().into_bytes();
            for &site in sites {
                if (pos..pos + 150).contains(&site) {
                    let b = &mut seq[(site - pos) as usize];
                    *b = match *b {
                        b'A' => b'G',
                        b'G' => b'A',
                        b'C' => b'T',
                        _ => b'C',
                    };
                }
            }
            f[9] = String::from_utf8(seq).expect("ASCII");
        }
        out.push_str(&f.join("\t"));
        out.push('\n');
    }
    let path = sam.with_extension("het.sam");
    std::fs::write(&path, out).expect("write SAM");
    path
}

#[test]
fn consensus_calls_heterozygous_sites_in_deep_data_as_samtools_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("consensus_deep");
    // About 500x over 3.5 kb: amplicon-like depth, where mixed columns become IUPAC codes.
    let opts = SimulateOptions {
        pairs: 6_000,
        seed: 7,
        n_refs: 1,
        ref_len: 3_500,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = with_het_sites(&simulated_sam(&dir, &opts), &[500, 1200, 2000, 2800]);
    let bam = dir.join("het.bam");
    run_ok(&oracle, &["sort", "-o", s(&bam), s(&sam)]);
    run_ok(&oracle, &["index", s(&bam)]);
    let b = s(&bam);
    let called = mdsam_native(&["consensus", "-A", b]);
    assert!(
        called.stdout.iter().skip_while(|&&c| c != b'\n').any(|c| b"RYKMSW".contains(c)),
        "the het sites give IUPAC codes"
    );
    for args in [
        &["-A", "-f", "fastq", b][..],
        &["-A", "--het-scale", "2", "--P-het", "0.1", "-f", "pileup", b],
        &["-m", "simple", "-A", "-H", "0.05", "-c", "0.5", "-f", "fastq", b],
        &["-m", "simple", "-q", "-A", "-H", "0.02", "-d", "500", b],
    ] {
        compare(&oracle, args);
    }
}

#[test]
fn consensus_regions_file_follows_samtools_order() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("consensus_bed");
    let opts = SimulateOptions {
        pairs: 800,
        seed: 3,
        n_refs: 4,
        ref_len: 9_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let bam = sorted_bam(&oracle, &dir, &opts);
    let bed = dir.join("regions.bed");
    std::fs::write(
        &bed,
        "chr4\t100\t300\nchr4\t5000\t5100\nchr1\t50\t120\nchr1\t10\t60\nchr3\t0\t40\nchr2\t4000\t9000\nchrX\t1\t5\n",
    )
    .expect("write BED");
    let (b, r) = (s(&bam), s(&bed));
    for args in [
        &["--regions-file", r, b][..],
        &["-a", "--regions-file", r, "-f", "fastq", b],
        &["-m", "simple", "-f", "pileup", "-a", "--regions-file", r, b],
    ] {
        compare(&oracle, args);
    }
}

#[test]
fn consensus_piles_up_every_cigar_operation_as_samtools_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("consensus_cigar");
    let sam = dir.join("ops.sam");
    let reads = [
        "r1\t0\tc1\t3\t60\t2S4M2I3M1D4M\t*\t0\t0\tTTACGTAAACGTACG\tABCDEFGHIJKLMNO",
        "r2\t16\tc1\t4\t50\t3M3N4M2P1I3M2H\t*\t0\t0\tCGTAAAACGTA\t*",
        "r3\t0\tc1\t5\t40\t1S2D5M\t*\t0\t0\tGACGTA\t######",
        "r4\t0\tc1\t5\t60\t2=1X3=2S\t*\t0\t0\tGTCCGTAA\tIIIIIIII",
        "r5\t0\tc1\t6\t60\t2I6M\t*\t0\t0\tGGTAAACG\t!!IIIIII",
        "r6\t0\tc1\t6\t60\t*\t*\t0\t0\t*\t*",
        "r7\t4\tc1\t6\t0\t*\t*\t0\t0\tACGT\tIIII",
        "r8\t0\tc1\t7\t60\t4M\t*\t0\t0\tNRYA\tIIII",
        "r9\t0\tc2\t2\t60\t5M\t*\t0\t0\tACGTA\t55555",
    ];
    let mut text = String::from(
        "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:40\n@SQ\tSN:c2\tLN:12\n@SQ\tSN:c3\tLN:5\n",
    );
    for r in reads {
        text.push_str(r);
        text.push('\n');
    }
    std::fs::write(&sam, text).expect("write SAM");
    let f = s(&sam);
    for args in [
        &["-f", "pileup", "--show-del", "yes", f][..],
        &["-m", "simple", "-f", "pileup", "--show-del", "yes", f],
        &["-m", "simple", "-aa", "-f", "fastq", "--mark-ins", f],
        &["-aa", "-f", "pileup", f],
        &["-A", "-f", "fastq", "--show-del", "yes", "-C", "0", f],
        &["--no-use-MQ", "-f", "pileup", "--show-ins", "no", f],
    ] {
        compare(&oracle, args);
    }
}

#[test]
fn consensus_failures_match_samtools() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("consensus_failures");
    let sam = dir.join("unsorted.sam");
    std::fs::write(
        &sam,
        "@SQ\tSN:c1\tLN:40\nr1\t0\tc1\t9\t60\t4M\t*\t0\t0\tACGT\tIIII\nr2\t0\tc1\t2\t60\t4M\t*\t0\t0\tACGT\tIIII\n",
    )
    .expect("write SAM");
    let bad_bed = dir.join("bad.bed");
    std::fs::write(&bad_bed, "c1\n").expect("write BED");
    let missing = dir.join("missing.bam");
    let (u, m, bb) = (s(&sam), s(&missing), s(&bad_bed));
    for args in [
        &[u][..],
        &[m],
        &["-r", "c1:1-5", u],
        &["-@", "2", "-m", "simple", u],
        &["--regions-file", bb, u],
        &["-r", "c1", "--regions-file", bb, u],
        &["-f", "fasta2", u],
        &["-m", "median", u],
        &["-X", "nanopore", u],
        &["--ff", "NOTAFLAG", u],
        &["-t", s(&dir.join("no-calibration")), u],
        &[u, u],
        &[],
    ] {
        compare(&oracle, args);
    }
}

/// A BAM may hold base qualities past 100, where samtools' consensus tables end (samtools reads
/// past them; mdsam takes their last entry). Every mode finishes with a FASTQ (mdsam once
/// panicked on them), and the output is samtools' where the oracle is present.
#[test]
fn consensus_takes_base_qualities_past_its_tables() {
    let dir = scratch_dir("consensus_high_quality");
    let bam = dir.join("high-quality.bam");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/consensus/high-quality.bam");
    std::fs::copy(&fixture, &bam).expect("copy the fixture");
    let index = mdsam_native(&["index", s(&bam)]);
    assert!(index.status.success(), "index: {}", String::from_utf8_lossy(&index.stderr));
    let oracle = oracle();
    for extra in
        [&[][..], &["--no-use-MQ"], &["-m", "bayesian_m"], &["-m", "bayesian_116"], &["-@", "2"]]
    {
        let mut args = vec!["-f", "fastq"];
        args.extend_from_slice(extra);
        args.push(s(&bam));
        let mut full = vec!["consensus"];
        full.extend_from_slice(&args);
        let out = mdsam_native(&full);
        let context = extra.join(" ");
        assert!(out.status.success(), "{context}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{context}: one FASTQ record: {text}");
        assert_eq!(lines[1].len(), 49, "{context}: the 49 covered bases: {text}");
        if let Some(oracle) = &oracle {
            compare(oracle, &args);
        }
    }
}

/// Reads whose CIGARs end in a deletion, beside a read with an insertion after their last
/// bases: samtools pads them with the quality of the byte after their last one, past their
/// qualities: the first aux byte (`N` of `NM`), or on a record without aux fields stale memory
/// (its output then changes from run to run), where mdsam once panicked. With aux fields the
/// output is samtools' in every mode; without, every mode finishes.
#[test]
fn consensus_pads_a_read_that_ends_in_a_deletion() {
    let dir = scratch_dir("consensus_trailing_deletion");
    let reads = [
        "r1\t0\tc\t1\t60\t10M2D\t*\t0\t0\tAAAAAAAAAA\tIIIIIIIIII",
        "r2\t0\tc\t1\t60\t10M1I5M\t*\t0\t0\tAAAAAAAAAACGGGGG\tIIIIIIIIIIIIIIII\tNM:i:1",
        "r3\t0\tc\t2\t60\t9M2D\t*\t0\t0\tAAAAAAAAA\tzzzzzzzzz\tNM:i:2",
    ];
    let bam = |name: &str, first_aux: &str| {
        let sam = dir.join(format!("{name}.sam"));
        let text =
            format!("@SQ\tSN:c\tLN:40\n{}{first_aux}\n{}\n{}\n", reads[0], reads[1], reads[2]);
        std::fs::write(&sam, text).expect("write the SAM");
        let bam = dir.join(format!("{name}.bam"));
        let view = mdsam_native(&["view", "-b", "-o", s(&bam), s(&sam)]);
        assert!(view.status.success(), "view: {}", String::from_utf8_lossy(&view.stderr));
        bam
    };
    let without_aux = bam("no-aux", "");
    let with_aux = bam("aux", "\tNM:i:2");
    let pileup = |bam: &Path| {
        let out = mdsam_native(&[
            "consensus",
            "-m",
            "simple",
            "-f",
            "pileup",
            "--show-del",
            "yes",
            s(bam),
        ]);
        assert!(out.status.success(), "pileup: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = pileup(&with_aux);
    assert!(text.contains("c\t10\t1\t3\t*\t66\t*C*\tIIo\n"), "the insertion's column: {text}");
    assert!(pileup(&without_aux).contains("c\t10\t1\t3\t*\t"), "the insertion's column");
    let oracle = oracle();
    for mode in ["simple", "bayesian", "bayesian_m", "bayesian_116"] {
        for format in ["fasta", "fastq", "pileup"] {
            let flags = ["-m", mode, "-f", format, "-a", "--show-del", "yes"];
            let mut full = vec!["consensus"];
            full.extend_from_slice(&flags);
            full.push(s(&without_aux));
            let out = mdsam_native(&full);
            assert!(
                out.status.success(),
                "{mode} {format}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if let Some(oracle) = &oracle {
                let mut args = flags.to_vec();
                args.push(s(&with_aux));
                compare(oracle, &args);
            }
        }
    }
}
