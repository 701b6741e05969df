//! One output spec (issue 41): the format options of a command line (`deflate=`, CRAM's
//! `version=`, `seqs_per_slice=`) reach every output the command writes, carried in its options
//! rather than in process globals: `view`'s `-U` file as well as its main output, each decoding
//! (by the samtools 1.24 oracle) to what the oracle writes for the same command.

use std::path::{Path, PathBuf};
use std::process::Command;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, sam_without_pg, scratch_dir, simulated_fasta,
    simulated_sam,
};

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A small simulated input: its directory, SAM and FASTA.
fn inputs(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch_dir(name);
    let opts = SimulateOptions {
        pairs: 1_500,
        seed: 41,
        n_refs: 2,
        ref_len: 100_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    (dir.clone(), simulated_sam(&dir, &opts), simulated_fasta(&dir, &opts))
}

/// Runs mdsam `view --no-PG -q 30` from `sam` with `-o main -U rest` and `format_args`, without
/// the environment's engine choice.
fn view_split(sam: &Path, (main, rest): (&Path, &Path), format_args: &[&str]) {
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(["view", "--no-PG", "-q", "30", "-o", text(main), "-U", text(rest)]);
    cmd.args(format_args).arg(sam).env_remove("MDSAM_DEFLATE");
    let out = cmd.output().expect("run mdsam");
    assert!(out.status.success(), "view {format_args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The records of `file` as the oracle decodes them (with `fasta` for CRAM), without `@PG`.
fn decoded(oracle: &Path, file: &Path, fasta: &Path) -> Vec<u8> {
    let args = ["view", "-h", "--no-PG", "-T", text(fasta), text(file)];
    sam_without_pg(&oracle_ok(oracle, &args).stdout)
}

/// `deflate=isal` deflates the `-U` output too: both files differ from libdeflate's bytes and
/// decode to the records samtools writes to its own two files.
#[test]
fn deflate_engine_reaches_the_unselected_output() {
    let Some(oracle) = oracle() else { return };
    let (dir, sam, fasta) = inputs("output_spec_deflate");
    let names = ["main", "rest"]
        .map(|n| ["default", "isal", "samtools"].map(|how| dir.join(format!("{n}.{how}.bam"))));
    let [main, rest] = &names;
    view_split(&sam, (&main[0], &rest[0]), &["-b"]);
    view_split(&sam, (&main[1], &rest[1]), &["-O", "bam,deflate=isal"]);
    let args = ["view", "--no-PG", "-q", "30", "-b", "-o", text(&main[2]), "-U", text(&rest[2])];
    oracle_ok(&oracle, &[&args[..], &[text(&sam)]].concat());
    for files in &names {
        let bytes = |p: &PathBuf| std::fs::read(p).unwrap();
        assert!(bytes(&files[0]) != bytes(&files[1]), "{:?}: deflate=isal not used", files[1]);
        let theirs = decoded(&oracle, &files[2], &fasta);
        for ours in &files[..2] {
            assert_same_sam(&decoded(&oracle, ours, &fasta), &theirs, &format!("{ours:?}"));
        }
    }
}

/// `-O cram,version=3.0,seqs_per_slice=100` applies to the `-U` output too: both files are CRAM
/// 3.0 (bytes 4 and 5 of the file definition) and decode to samtools' records for the same
/// command.
#[test]
fn cram_settings_reach_the_unselected_output() {
    let Some(oracle) = oracle() else { return };
    let (dir, sam, fasta) = inputs("output_spec_cram");
    let (main, rest) = (dir.join("main.cram"), dir.join("rest.cram"));
    let format = ["-O", "cram,version=3.0,seqs_per_slice=100", "-T", text(&fasta)];
    view_split(&sam, (&main, &rest), &format);
    let (their_main, their_rest) = (dir.join("main.samtools.cram"), dir.join("rest.samtools.cram"));
    let args = ["view", "--no-PG", "-q", "30", "-o", text(&their_main), "-U", text(&their_rest)];
    oracle_ok(&oracle, &[&args[..], &format[..], &[text(&sam)]].concat());
    for (ours, theirs) in [(&main, &their_main), (&rest, &their_rest)] {
        let bytes = std::fs::read(ours).unwrap();
        assert_eq!(&bytes[..6], b"CRAM\x03\x00", "{ours:?} is not CRAM 3.0");
        let want = decoded(&oracle, theirs, &fasta);
        assert_same_sam(&decoded(&oracle, ours, &fasta), &want, &format!("{ours:?}"));
    }
}
