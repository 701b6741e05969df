//! `split`, `depad` and `ampliconclip` against the samtools 1.24 oracle: simulated reads split by
//! read group with `-f` patterns and by tag with `-d`, the padded SAM fixture of samtools' own
//! tests depadded, and simulated reads clipped (soft and hard) with a generated primer BED.

use std::path::{Path, PathBuf};

use mdsam::simulate::SimulateOptions;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, primer_bed, run, run_ok, sam_without_pg,
    scratch_dir, shared_dir, simulated_sam, to_sam,
};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The files of `dir`, sorted by name.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("list").map(|e| e.expect("entry").path()).collect();
    files.sort();
    files
}

/// Runs `split ARGS` (where `{dir}` is an output directory) with mdsam and the oracle, each into
/// its own directory, and compares the outputs file by file as SAM without `@PG`.
fn same_split(oracle: &Path, scratch: &Path, args: &[&str]) {
    let (mine, theirs) = (scratch.join("mdsam"), scratch.join("oracle"));
    for d in [&mine, &theirs] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("create output directory");
    }
    let with_dir =
        |dir: &Path| -> Vec<String> { args.iter().map(|a| a.replace("{dir}", s(dir))).collect() };
    let my_args = with_dir(&mine);
    let their_args = with_dir(&theirs);
    let mut full: Vec<&str> = vec!["split"];
    full.extend(my_args.iter().map(String::as_str));
    run_ok(&mdsam_bin(), &full);
    let mut full: Vec<&str> = vec!["split"];
    full.extend(their_args.iter().map(String::as_str));
    oracle_ok(oracle, &full);
    let names = |d: &Path| -> Vec<String> {
        files_in(d).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
    };
    assert_eq!(names(&mine), names(&theirs), "split {}: output names", args.join(" "));
    assert!(!names(&mine).is_empty(), "split {}: no outputs", args.join(" "));
    for (a, b) in files_in(&mine).iter().zip(files_in(&theirs).iter()) {
        let context = format!("split {}: {}", args.join(" "), a.display());
        assert_same_sam(
            &sam_without_pg(&to_sam(oracle, a)),
            &sam_without_pg(&to_sam(oracle, b)),
            &context,
        );
    }
}

#[test]
fn split_by_read_group_with_format_patterns() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("split_by_read_group");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 1500, ..Default::default() });
    let input = s(&sam);
    same_split(&oracle, &dir, &["-f", "{dir}/%*_%#.%.", input]);
    same_split(&oracle, &dir, &["--output-fmt", "sam", "-p", "3", "-f", "{dir}/%!-%#%%.%.", input]);
    same_split(&oracle, &dir, &["-f", "{dir}/x.%!.sam", "-u", "{dir}/unknown.bam", input]);
}

#[test]
fn split_by_tag_values() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("split_by_tag");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 1500, seed: 3, ..Default::default() });
    let input = s(&sam);
    same_split(&oracle, &dir, &["-d", "NM", "-u", "{dir}/none.sam", "-f", "{dir}/nm_%!.%.", input]);
    let pad = ["-d", "NM", "-p", "4", "-M", "3", "-u", "{dir}/rest.bam", "-f", "{dir}/%#_%!.bam"];
    same_split(&oracle, &dir, &[&pad[..], &[input]].concat());
    same_split(&oracle, &dir, &["-d", "RG", "-M", "2", "-f", "{dir}/rg_%!.%.", input]);
}

#[test]
fn depad_of_the_padded_fixture() {
    let (Some(oracle), Some(shared)) = (oracle(), shared_dir()) else { return };
    let dat = shared.join("peer-tests/samtools/dat");
    let dir = scratch_dir("depad_fixture");
    // A private copy: samtools writes the FASTA's `.fai` beside it.
    let fasta = dir.join("depad.001.fa");
    std::fs::copy(dat.join("depad.001.fa"), &fasta).expect("copy FASTA");
    let padded = dat.join("depad.001p.sam");
    for args in [vec!["-s", "-T", s(&fasta)], vec!["-s"], vec!["-T", s(&fasta), "-1"]] {
        let mut full = vec!["depad"];
        full.extend(&args);
        full.push(s(&padded));
        let out = dir.join("out");
        let (mine, theirs) = (run(&mdsam_bin(), &full), run(&oracle, &full));
        assert_eq!(mine.status.code(), theirs.status.code(), "depad {full:?}: exit status");
        assert_eq!(mine.stderr, theirs.stderr, "depad {full:?}: messages");
        let as_sam = |bytes: &[u8]| {
            if args[0] == "-s" {
                return sam_without_pg(bytes);
            }
            std::fs::write(&out, bytes).expect("write output");
            sam_without_pg(&to_sam(&oracle, &out))
        };
        assert_same_sam(&as_sam(&mine.stdout), &as_sam(&theirs.stdout), &format!("depad {full:?}"));
    }
}

/// Runs `ampliconclip ARGS -b BED -o OUT -f STATS --primer-counts COUNTS INPUT` with both and
/// compares the output as SAM, the summary (without its command line) and the counts.
fn same_clip(oracle: &Path, dir: &Path, bed: &Path, input: &Path, args: &[&str]) {
    let mut results = Vec::new();
    for (who, program) in [("mdsam", mdsam_bin()), ("oracle", oracle.to_path_buf())] {
        let (out, stats, counts) = (
            dir.join(format!("{who}.bam")),
            dir.join(format!("{who}.stats")),
            dir.join(format!("{who}.tsv")),
        );
        let mut full = vec!["ampliconclip", "--no-PG"];
        full.extend(args);
        full.extend([
            "-b",
            s(bed),
            "-o",
            s(&out),
            "-f",
            s(&stats),
            "--primer-counts",
            s(&counts),
            s(input),
        ]);
        run_ok(&program, &full);
        let summary: String = std::fs::read_to_string(&stats)
            .expect("read stats")
            .lines()
            .filter(|l| !l.starts_with("COMMAND:"))
            .map(|l| format!("{l}\n"))
            .collect();
        results.push((to_sam(oracle, &out), summary, std::fs::read(&counts).expect("read counts")));
    }
    let context = format!("ampliconclip {}", args.join(" "));
    assert_same_sam(&results[0].0, &results[1].0, &context);
    assert_eq!(results[0].1, results[1].1, "{context}: summary");
    assert_eq!(results[0].2, results[1].2, "{context}: primer counts");
}

#[test]
fn ampliconclip_soft_and_hard_with_a_primer_bed() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("ampliconclip_primers");
    // Secondary records without SEQ crash samtools' hard clipping, so this input has none.
    let opts = SimulateOptions {
        pairs: 4000,
        order: mdsam::simulate::Order::Coordinate,
        secondary_rate: 0.0,
        chimeric_rate: 0.0,
        ..Default::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let bed = primer_bed(&dir, &sam);
    same_clip(&oracle, &dir, &bed, &sam, &[]);
    same_clip(&oracle, &dir, &bed, &sam, &["--hard-clip", "--keep-tag"]);
    same_clip(&oracle, &dir, &bed, &sam, &["--both-ends", "--strand", "--original", "-@", "2"]);
    same_clip(
        &oracle,
        &dir,
        &bed,
        &sam,
        &["--hard-clip", "--both-ends", "--fail", "--filter-len", "120"],
    );
    same_clip(
        &oracle,
        &dir,
        &bed,
        &sam,
        &["--clipped", "--fail-len", "130", "--unmap-len", "125", "--tolerance", "8"],
    );
    same_clip(&oracle, &dir, &bed, &sam, &["--no-excluded", "--strand"]);
}
