//! Numeric option values read as samtools 1.24 reads each option (`atoi`, `strtol(…, 0)`,
//! `strtoull`, `strtod`, its strict `parse_int_value`/`parse_long_value`), against the oracle.
//! Every case runs the same command line with awkward values (`010`, `20x`, `0x10`, ` 7`, `-3`,
//! `4294967297`, `abc`, an empty value) through both tools; exit status, stdout and stderr must
//! agree.

use std::path::Path;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    mdsam_bin, oracle, oracle_ok, run, scratch_dir, simulated_fasta, simulated_sam,
};

const VALUES: &[&str] = &["010", "20x", "0x10", " 7", "-3", "4294967297", "abc", ""];

/// `{V}` is the value; `{bam}` a coordinate-sorted indexed BAM, `{fm}` the same reads after
/// `fixmate -m` and sorting, `{sam}` the name-grouped SAM, `{fa}` the reference, `{bed}` regions,
/// `{dir}` a directory for outputs.
const CASES: &[&[&str]] = &[
    &["view", "-c", "-q", "{V}", "{bam}"],
    &["view", "-q", "{V}", "-c", "{bam}"],
    &["view", "-c", "-m", "{V}", "{bam}"],
    &["view", "-c", "--subsample", "0.5", "--subsample-seed", "{V}", "{bam}"],
    &["view", "-c", "--subsample", "{V}", "{bam}"],
    &["view", "-c", "-s", "{V}.3", "{bam}"],
    &["view", "-c", "-@", "{V}", "{bam}"],
    &["view", "-c", "--verbosity", "{V}", "{bam}"],
    &["head", "-n", "{V}", "{bam}"],
    &["depth", "-q", "{V}", "{bam}"],
    &["depth", "-Q", "{V}", "{bam}"],
    &["bedcov", "-Q", "{V}", "{bed}", "{bam}"],
    &["bedcov", "-d", "{V}", "{bed}", "{bam}"],
    &["coverage", "-q", "{V}", "{bam}"],
    &["coverage", "-Q", "{V}", "{bam}"],
    &["coverage", "-d", "{V}", "{bam}"],
    &["index", "-m", "{V}", "-o", "{dir}/x.csi", "{bam}"],
    &["index", "-@", "{V}", "-o", "{dir}/x.bai", "{bam}"],
    &["sort", "--no-PG", "-O", "sam", "-l", "{V}", "{bam}"],
    &["sort", "--no-PG", "-O", "sam", "-M", "-K", "{V}", "{bam}"],
    &["merge", "--no-PG", "-O", "sam", "-l", "{V}", "-", "{bam}"],
    &["merge", "--no-PG", "-O", "sam", "-s", "{V}", "-", "{bam}"],
    &["fastq", "-F", "{V}", "{bam}"],
    &["fastq", "-v", "{V}", "{bam}"],
    &["markdup", "--no-PG", "-O", "sam", "-d", "{V}", "{fm}", "-"],
    &["faidx", "-n", "{V}", "{fa}", "chr1:1-200"],
    &["stats", "-q", "{V}", "{bam}"],
    &["stats", "-m", "{V}", "{bam}"],
    &["checksum", "-N", "{V}", "{bam}"],
];

/// Cases where samtools itself crashes on some of [`VALUES`] (collate divides by a bin count of
/// 0 and cannot allocate a negative one), with the values it survives.
const CASES_WITH_VALUES: &[(&[&str], &[&str])] = &[(
    &["collate", "--no-PG", "-O", "--output-fmt", "sam", "-n", "{V}", "{sam}"],
    &["010", "20x", " 7", "4294967297"],
)];

/// The first line of stderr: a usage that follows may list options of mdsam's own.
fn first_line(text: &[u8]) -> &[u8] {
    text.split(|&b| b == b'\n').next().unwrap_or(b"")
}

/// stdout without the line naming the program's version (`stats`).
fn without_version(text: &[u8]) -> Vec<u8> {
    let lines = text.split_inclusive(|&b| b == b'\n');
    lines.filter(|l| !l.starts_with(b"# This file was produced by")).flatten().copied().collect()
}

#[test]
fn numeric_options_read_as_samtools_reads_them() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("c_numbers");
    let opts = SimulateOptions {
        pairs: 300,
        order: Order::Name,
        n_refs: 2,
        ref_len: 200_000,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fa = simulated_fasta(&dir, &opts);
    let bam = dir.join("in.bam");
    let fm = dir.join("fm.bam");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    oracle_ok(&oracle, &["sort", "-o", &s(&bam), &s(&sam)]);
    oracle_ok(&oracle, &["index", &s(&bam)]);
    oracle_ok(&oracle, &["faidx", &s(&fa)]);
    let fixed = dir.join("fixed.bam");
    oracle_ok(&oracle, &["fixmate", "-m", &s(&sam), &s(&fixed)]);
    oracle_ok(&oracle, &["sort", "-o", &s(&fm), &s(&fixed)]);
    let bed = dir.join("r.bed");
    std::fs::write(&bed, "chr1\t100\t50000\nchr2\t1000\t90000\n").unwrap();
    let mut differences = Vec::new();
    let all = CASES.iter().map(|case| (*case, VALUES));
    for (case, values) in all.chain(CASES_WITH_VALUES.iter().copied()) {
        for value in values {
            let args: Vec<String> = case
                .iter()
                .map(|a| {
                    a.replace("{V}", value)
                        .replace("{bam}", &s(&bam))
                        .replace("{fm}", &s(&fm))
                        .replace("{sam}", &s(&sam))
                        .replace("{fa}", &s(&fa))
                        .replace("{bed}", &s(&bed))
                        .replace("{dir}", &s(&dir))
                })
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let expected = run(&oracle, &args);
            let got = run(&mdsam_bin(), &args);
            if expected.status.code() != got.status.code()
                || without_version(&expected.stdout) != without_version(&got.stdout)
                || first_line(&expected.stderr) != first_line(&got.stderr)
            {
                differences.push(format!(
                    "{}: exit {:?}/{:?}\n  samtools: {}\n  mdsam:    {}",
                    args.join(" "),
                    expected.status.code(),
                    got.status.code(),
                    String::from_utf8_lossy(&expected.stderr).lines().next().unwrap_or(""),
                    String::from_utf8_lossy(&got.stderr).lines().next().unwrap_or(""),
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
