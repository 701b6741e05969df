//! `cram-size` run natively (issue 42): its reports on CRAMs the oracle writes (3.0 and 3.1,
//! several profiles) and on mdsam's own CRAMs, compared with the samtools 1.24 oracle byte for
//! byte, and its answers to bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support;

/// Runs `program args` in `dir`, delegation off.
fn run_in(dir: &Path, program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("MDSAM_SAMTOOLS", "/bin/false")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// mdsam's `cram-size args` gives the oracle's stdout, stderr and exit status.
fn assert_same_as_oracle(oracle: &Path, dir: &Path, args: &[&str]) {
    let want = run_in(dir, oracle, args);
    let got = run_in(dir, &support::mdsam_bin(), args);
    let show = |o: &Output| {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(
        want.status.code() == got.status.code()
            && want.stdout == got.stdout
            && want.stderr == got.stderr,
        "cram-size {}:\n=== oracle\n{}\n=== mdsam\n{}",
        args.join(" "),
        show(&want),
        show(&got)
    );
}

/// A simulated coordinate-sorted SAM and its reference, in `dir`.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    inputs_of(dir, 1500)
}

/// [`inputs`] with `pairs` read pairs.
fn inputs_of(dir: &Path, pairs: u64) -> (PathBuf, PathBuf) {
    let opts = SimulateOptions {
        pairs,
        seed: 42,
        order: Order::Coordinate,
        n_refs: 2,
        ref_len: 60_000,
        ..Default::default()
    };
    (support::simulated_sam(dir, &opts), support::simulated_fasta(dir, &opts))
}

#[test]
fn reports_match_the_oracle_on_oracle_written_crams() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("cram_size_oracle_crams");
    let (sam, fasta) = inputs(&dir);
    let (sam, fasta) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    let formats = [
        "cram,version=3.0",
        "cram,version=3.0,fast,seqs_per_slice=300",
        "cram,version=3.1",
        "cram,version=3.1,small",
        "cram,version=3.1,archive,embed_ref=1,seqs_per_slice=500,slices_per_container=2",
    ];
    for (i, format) in formats.iter().enumerate() {
        let cram = dir.join(format!("oracle{i}.cram"));
        let cram = cram.to_str().unwrap();
        support::oracle_ok(&oracle, &["view", "-T", fasta, "-O", format, "-o", cram, sam]);
        for flags in [&[][..], &["-v"], &["-e"], &["-v", "-e"]] {
            let mut args = vec!["cram-size"];
            args.extend_from_slice(flags);
            args.push(cram);
            assert_same_as_oracle(&oracle, &dir, &args);
        }
    }
}

#[test]
fn reports_match_the_oracle_on_mdsam_written_crams() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("cram_size_mdsam_crams");
    let (sam, fasta) = inputs(&dir);
    let (sam, fasta) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    for (i, format) in ["cram,version=3.0", "cram,version=3.1"].iter().enumerate() {
        let cram = dir.join(format!("mdsam{i}.cram"));
        let cram = cram.to_str().unwrap();
        let out = run_in(
            &dir,
            &support::mdsam_bin(),
            &["view", "-T", fasta, "-O", format, "-o", cram, sam],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_same_as_oracle(&oracle, &dir, &["cram-size", "-v", "-e", cram]);
    }
}

#[test]
fn bad_input_is_answered_as_samtools_answers_it() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("cram_size_bad_input");
    let (sam, fasta) = inputs(&dir);
    let (sam, fasta) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    support::oracle_ok(&oracle, &["view", "-T", fasta, "-C", "-o", &path("whole.cram"), sam]);
    let whole = std::fs::read(dir.join("whole.cram")).unwrap();
    // Cut inside the second half: the blocks read before the cut are still reported.
    std::fs::write(dir.join("cut.cram"), &whole[..whole.len() * 2 / 3]).unwrap();
    // One byte changed at several places: data blocks are counted unread (their CRC32 is not
    // checked, as htslib's), container and slice headers fail their CRC32 or their parsing.
    let mut damaged = Vec::new();
    for k in 1..9 {
        let mut bytes = whole.clone();
        bytes[whole.len() * k / 9] ^= 0x55;
        let name = format!("damaged{k}.cram");
        std::fs::write(dir.join(&name), &bytes).unwrap();
        damaged.push(name);
    }
    support::oracle_ok(&oracle, &["view", "-b", "-o", &path("in.bam"), sam]);
    for args in [
        &["cram-size", "cut.cram"][..],
        &["cram-size", "-v", "cut.cram"],
        &["cram-size", "in.bam"],
        &["cram-size", "missing.cram"],
        &["cram-size", "-x", "whole.cram"],
        &["cram-size", "-o", "no/such/dir", "whole.cram"],
        &["cram-size", "--verbose", "--output", "report.txt", "whole.cram"],
    ] {
        assert_same_as_oracle(&oracle, &dir, args);
    }
    for name in &damaged {
        assert_same_as_oracle(&oracle, &dir, &["cram-size", name]);
    }
    let report = std::fs::read(dir.join("report.txt")).unwrap();
    assert!(report.starts_with(b"#   Content_ID"), "{}", String::from_utf8_lossy(&report));
}

/// The methods the oracle's `cram-size -v` lists for `cram`.
fn methods_listed(oracle: &Path, dir: &Path, cram: &str) -> String {
    let out = run_in(dir, oracle, &["cram-size", "-v", cram]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let methods = text
        .lines()
        .filter(|l| l.starts_with("BLOCK"))
        .filter_map(|l| l.split_whitespace().nth(5).map(str::to_string));
    methods.collect::<Vec<_>>().join(" ")
}

#[test]
fn profiles_choose_htslib_methods_and_both_decoders_read_them() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("cram_size_profiles");
    // Few reads: a debug build's bzip2, xz and arithmetic coders are slow.
    let (sam, fasta) = inputs_of(&dir, 400);
    let (sam, fasta) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    // What a CRAM of these records reads back as (MD and NM made again, tags reordered).
    let reference_cram = dir.join("oracle.cram").to_str().unwrap().to_string();
    support::oracle_ok(&oracle, &["view", "-T", fasta, "-C", "-o", &reference_cram, sam]);
    let want = support::oracle_ok(&oracle, &["view", "-T", fasta, &reference_cram]).stdout;
    let want = support::sam_records(&want);
    let write = |format: &str, name: &str| {
        let cram = dir.join(name).to_str().unwrap().to_string();
        let out = run_in(
            &dir,
            &support::mdsam_bin(),
            &["view", "-T", fasta, "-O", format, "-o", &cram, sam],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for reader in [oracle.clone(), support::mdsam_bin()] {
            let out = run_in(&dir, &reader, &["view", "-T", fasta, &cram]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let got = support::sam_records(&out.stdout);
            support::assert_same_sam(&want, &got, &format!("{format} read by {reader:?}"));
        }
        (std::fs::metadata(&cram).unwrap().len(), methods_listed(&oracle, &dir, &cram))
    };
    // (format, methods that must be used, methods that must not)
    let cases = [
        ("cram,version=3.0,level=9,archive", &["bzip2-9", "lzma"][..], &["arith"][..]),
        // The level set when htslib reads `archive` decides xz: 7 here.
        ("cram,version=3.1,archive,level=9", &["arith-o"], &["lzma"]),
        ("cram,version=3.1,small,level=7", &["bzip2-7"], &["arith", "lzma"]),
        ("cram,version=3.1,level=5,archive", &["arith-o"], &["lzma", "bzip2-9"]),
        // htslib's switches for single methods.
        ("cram,version=3.1,use_arith=1", &["arith-o"], &["lzma", "bzip2"]),
    ];
    for (i, (format, used, unused)) in cases.iter().enumerate() {
        let version = if format.contains("3.0") { "3.0" } else { "3.1" };
        let (default_size, _) = write(&format!("cram,version={version}"), &format!("d{i}.cram"));
        let (size, methods) = write(format, &format!("p{i}.cram"));
        assert!(size < default_size, "{format}: {size} bytes, default {default_size}");
        for m in *used {
            assert!(methods.contains(m), "{format}: no {m} in {methods}");
        }
        for m in *unused {
            assert!(!methods.contains(m), "{format}: {m} in {methods}");
        }
    }
}
