//! The CRAM reference travels with each command's options (issue 41: no process global):
//! `--reference`, `-T` and `reference=` reach the CRAM reader of every command that takes
//! them and the CRAM writer, against the samtools 1.24 oracle. The FASTA is renamed after the
//! CRAM is written, and `REF_PATH` names an empty directory, so that only the option given can
//! supply the bases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{assert_same_sam, mdsam_bin, oracle, sam_records, scratch_dir};

/// A 240-base reference and reads on it (one with a mismatch, one unmapped), as SAM text
/// whose `@SQ` names no `M5` or `UR`.
fn write_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let bases: String =
        (0..240).map(|i| ["ACGT", "GATC", "TTAG"][i % 3].as_bytes()[i % 4] as char).collect();
    let fasta = dir.join("written.fa");
    std::fs::write(&fasta, format!(">chr1\n{}\n{}\n", &bases[..120], &bases[120..])).unwrap();
    let mut sam = String::from("@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:chr1\tLN:240\n");
    for (i, pos) in [1usize, 20, 41, 90, 150, 181].iter().enumerate() {
        let mut seq = bases[pos - 1..pos + 29].to_string();
        if i == 2 {
            seq.replace_range(5..6, if &seq[5..6] == "A" { "C" } else { "A" });
        }
        let qual = "I".repeat(30);
        sam.push_str(&format!("r{i}\t0\tchr1\t{pos}\t60\t30M\t*\t0\t0\t{seq}\t{qual}\n"));
    }
    sam.push_str("u1\t4\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII\n");
    let sam_path = dir.join("in.sam");
    std::fs::write(&sam_path, sam).unwrap();
    (sam_path, fasta)
}

/// `program args…` run in `dir`, finding no reference but through its options.
fn run_without_reference(program: &Path, dir: &Path, args: &[&str]) -> Output {
    let empty = dir.join("no-refs");
    std::fs::create_dir_all(&empty).unwrap();
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("REF_PATH", format!("{}/%s", empty.display()))
        .env_remove("REF_CACHE")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

fn succeeded(program: &Path, dir: &Path, args: &[&str]) -> Output {
    let out = run_without_reference(program, dir, args);
    assert!(
        out.status.success(),
        "{} {} failed:\n{}",
        program.display(),
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The oracle's CRAM of the inputs, and the FASTA under a name its `UR` does not give.
fn cram_input(oracle: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let (sam, fasta) = write_inputs(dir);
    let args = ["view", "-C", "-T", "written.fa", "-o", "in.cram", sam.to_str().unwrap()];
    succeeded(oracle, dir, &args);
    let moved = dir.join("ref.fa");
    std::fs::rename(&fasta, &moved).unwrap();
    let _ = std::fs::remove_file(dir.join("written.fa.fai"));
    (dir.join("in.cram"), moved)
}

#[test]
fn reporting_commands_decode_cram_with_the_reference_option() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("front_hall_reporting_reference");
    cram_input(&oracle, &dir);
    // Before issue 41's change depth and coverage ignored `--reference` (the global took only
    // `reference=`) and failed to decode the CRAM.
    let cases: [&[&str]; 4] = [
        &["depth", "--reference", "ref.fa", "in.cram"],
        &["coverage", "--reference", "ref.fa", "in.cram"],
        &["depth", "--input-fmt-option", "reference=ref.fa", "in.cram"],
        &["stats", "--reference", "ref.fa", "in.cram"],
    ];
    for args in cases {
        let ours = succeeded(&mdsam_bin(), &dir, args);
        let theirs = succeeded(&oracle, &dir, args);
        let keep = |text: &[u8]| -> String {
            // stats' first lines name the program and its command line. coverage's meanbaseq
            // is left out: samtools 1.24 asks its CRAM reader for no qualities and prints 255,
            // mdsam the qualities' mean (a difference of its own, not the reference's).
            let lines = String::from_utf8_lossy(text);
            let lines = lines.lines().filter(|l| !l.starts_with("# "));
            let without_baseq = |l: &str| {
                let mut fields: Vec<&str> = l.split('\t').collect();
                if args[0] == "coverage" && fields.len() == 9 {
                    fields.remove(7);
                }
                fields.join("\t")
            };
            lines.map(without_baseq).collect::<Vec<_>>().join("\n")
        };
        assert_eq!(keep(&ours.stdout), keep(&theirs.stdout), "{}", args.join(" "));
    }
}

#[test]
fn cram_output_is_encoded_against_the_output_format_reference() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("front_hall_output_reference");
    let (sam, _) = write_inputs(&dir);
    let sam = sam.to_str().unwrap();
    // `reference=` given to the output alone: htslib encodes against it, with no warning
    // that a reference is generated (mdsam ignored it before issue 41's change).
    let args =
        ["view", "-C", "--output-fmt-option", "reference=written.fa", "-o", "ours.cram", sam];
    let ours = succeeded(&mdsam_bin(), &dir, &args);
    let mut theirs_args = args;
    theirs_args[5] = "theirs.cram";
    let theirs = succeeded(&oracle, &dir, &theirs_args);
    assert_eq!(String::from_utf8_lossy(&ours.stderr), String::from_utf8_lossy(&theirs.stderr));
    let decode =
        |name: &str| succeeded(&oracle, &dir, &["view", "-h", "-T", "written.fa", name]).stdout;
    assert_same_sam(
        &sam_records(&decode("ours.cram")),
        &sam_records(&decode("theirs.cram")),
        "view -C reference=",
    );
}

#[test]
fn the_reference_option_reaches_both_cram_sides_of_a_command() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("front_hall_both_sides");
    cram_input(&oracle, &dir);
    let expected = succeeded(&oracle, &dir, &["view", "-T", "ref.fa", "in.cram"]).stdout;
    let commands: [&[&str]; 3] = [
        &["sort", "--reference", "ref.fa", "-O", "cram", "-o", "out.cram", "in.cram"],
        &["view", "-T", "ref.fa", "-C", "-o", "out.cram", "in.cram"],
        &["calmd", "-Q", "--reference", "ref.fa", "--output-fmt", "cram", "in.cram"],
    ];
    for args in commands {
        let out = succeeded(&mdsam_bin(), &dir, args);
        if args[0] == "calmd" {
            std::fs::write(dir.join("out.cram"), &out.stdout).unwrap();
        }
        let back = succeeded(&oracle, &dir, &["view", "-T", "ref.fa", "out.cram"]).stdout;
        if args[0] == "calmd" {
            // calmd adds MD and NM: the records otherwise as they were.
            assert_eq!(
                back.iter().filter(|&&b| b == b'\n').count(),
                expected.iter().filter(|&&b| b == b'\n').count()
            );
            assert!(String::from_utf8_lossy(&back).contains("MD:Z:"), "calmd wrote no MD");
        } else {
            assert_same_sam(&sam_records(&back), &sam_records(&expected), &args.join(" "));
        }
    }
}
