//! `merge` against the samtools 1.24 oracle: simulated reads split into coordinate-, name- and
//! RG-sorted BAMs whose `@RG` and `@PG` IDs partly clash, merged by both programs with the same
//! options and seed. The SAM (header without `@PG`, records) must be the same; with `-u
//! --no-PG` the BAM bytes and the index too.

use std::path::{Path, PathBuf};

use mdsam::simulate::SimulateOptions;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, sam_without_pg, scratch_dir,
    simulated_sam, to_sam,
};

/// Sorted copies of three simulated inputs: inputs 0 and 2 share a seed, so their `@RG` IDs
/// clash; every input has `@PG ID:bwa`.
struct Inputs {
    coordinate: Vec<PathBuf>,
    name: Vec<PathBuf>,
    read_group: Vec<PathBuf>,
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn make_inputs(oracle: &Path, dir: &Path) -> Inputs {
    let mut inputs = Inputs { coordinate: Vec::new(), name: Vec::new(), read_group: Vec::new() };
    for (i, (seed, pairs, groups)) in [(11, 900, 2), (12, 700, 3), (11, 500, 1)].iter().enumerate()
    {
        let opts = SimulateOptions {
            pairs: *pairs,
            seed: *seed,
            n_refs: 3,
            ref_len: 300_000,
            read_groups: *groups,
            ..SimulateOptions::default()
        };
        let sam = simulated_sam(dir, &opts);
        let sorted = |kind: &str, extra: &[&str]| {
            let out = dir.join(format!("in{i}.{kind}.bam"));
            let mut args = vec!["sort", "--no-PG", "-o", s(&out)];
            args.extend_from_slice(extra);
            args.push(s(&sam));
            oracle_ok(oracle, &args);
            out
        };
        let coordinate = sorted("coord", &[]);
        oracle_ok(oracle, &["index", s(&coordinate)]);
        inputs.coordinate.push(coordinate);
        inputs.name.push(sorted("name", &["-n"]));
        inputs.read_group.push(sorted("rg", &["-t", "RG"]));
    }
    inputs
}

/// `merge ARGS OUT INPUTS` with both programs into `dir/{ours,theirs}.EXT`; their paths.
fn merge_both(
    oracle: &Path,
    dir: &Path,
    args: &[&str],
    inputs: &[PathBuf],
    ext: &str,
) -> (PathBuf, PathBuf) {
    let (ours, theirs) = (dir.join(format!("ours.{ext}")), dir.join(format!("theirs.{ext}")));
    for (program, out) in [(mdsam_bin(), &ours), (oracle.to_path_buf(), &theirs)] {
        let _ = std::fs::remove_file(out);
        let mut full = vec!["merge"];
        full.extend_from_slice(args);
        full.push(s(out));
        full.extend(inputs.iter().map(|p| s(p)));
        run_ok(&program, &full);
    }
    (ours, theirs)
}

/// The same SAM from both outputs (`@PG` lines aside unless `--no-PG`).
fn same_merge(oracle: &Path, dir: &Path, args: &[&str], inputs: &[PathBuf]) {
    let context = format!("merge {}", args.join(" "));
    let (ours, theirs) = merge_both(oracle, dir, args, inputs, "bam");
    let (a, b) = (to_sam(oracle, &ours), to_sam(oracle, &theirs));
    assert!(a.split(|&c| c == b'\n').filter(|l| !l.starts_with(b"@")).count() > 100, "{context}");
    if args.contains(&"--no-PG") {
        assert_same_sam(&a, &b, &context);
    } else {
        assert_same_sam(&sam_without_pg(&a), &sam_without_pg(&b), &context);
    }
}

#[test]
fn merges_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("merge_like_the_oracle");
    let inputs = make_inputs(&oracle, &dir);
    let o = oracle.as_path();
    same_merge(o, &dir, &["-s", "1"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "7", "--no-PG"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "1", "-n"], &inputs.name);
    same_merge(o, &dir, &["-s", "1", "-t", "RG"], &inputs.read_group);
    same_merge(o, &dir, &["-s", "1", "-r"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "1", "-c", "-p"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "1", "-c"], &inputs.name[..2]);
    same_merge(o, &dir, &["-s", "1", "-R", "chr2:1000-150000"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "1", "-R", "chr3"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "1", "-1"], &inputs.coordinate);
    same_merge(o, &dir, &["-s", "1", "-h", s(&inputs.name[1])], &inputs.coordinate);
}

#[test]
fn lists_regions_from_bed_and_text_output_match() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("merge_lists_bed_text");
    let inputs = make_inputs(&oracle, &dir);
    let o = oracle.as_path();
    let list = dir.join("inputs.txt");
    let names: Vec<&str> = inputs.coordinate[1..].iter().map(|p| s(p)).collect();
    std::fs::write(&list, names.join("\n") + "\n").unwrap();
    same_merge(o, &dir, &["-s", "1", "-b", s(&list)], &inputs.coordinate[..1]);
    let bed = dir.join("regions.bed");
    std::fs::write(&bed, "chr1\t100\t20000\nchr1\t15000\t40000\nchr3\t5000\t5001\nchrX\t1\t9\n")
        .unwrap();
    same_merge(o, &dir, &["-s", "1", "-L", s(&bed)], &inputs.coordinate);
    // SAM text without @PG: the same bytes.
    let args = ["-s", "1", "--no-PG", "-O", "SAM"];
    let (ours, theirs) = merge_both(o, &dir, &args, &inputs.coordinate, "sam");
    assert_same_sam(&std::fs::read(&ours).unwrap(), &std::fs::read(&theirs).unwrap(), "SAM");
}

#[test]
fn uncompressed_output_and_its_index_are_the_oracles_bytes() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("merge_uncompressed_index");
    let inputs = make_inputs(&oracle, &dir);
    let args = ["-s", "1", "-u", "--no-PG", "--write-index"];
    let (ours, theirs) = merge_both(&oracle, &dir, &args, &inputs.coordinate, "bam");
    let (a, b) = (std::fs::read(&ours).unwrap(), std::fs::read(&theirs).unwrap());
    assert!(a == b, "merge -u --no-PG: BAM bytes differ");
    let index = |p: &Path| std::fs::read(format!("{}.csi", p.display())).unwrap();
    assert!(index(&ours) == index(&theirs), "merge --write-index: CSI bytes differ");
}

#[test]
fn bad_inputs_fail_as_the_oracle_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("merge_bad_inputs");
    let good = dir.join("good.sam");
    std::fs::write(&good, "@SQ\tSN:c\tLN:100\nr\t0\tc\t1\t9\t4M\t*\t0\t0\tACGT\t*\n").unwrap();
    let missing = dir.join("missing.bam");
    let garbage = dir.join("garbage.bam");
    std::fs::write(&garbage, b"\x1f\x8b\x08\x04not really a bam").unwrap();
    for bad in [&missing, &garbage] {
        let out = dir.join("out.bam");
        let args = ["merge", "-o", s(&out), s(&good), s(bad)];
        let ours = run(&mdsam_bin(), &args);
        assert_eq!(ours.status.code(), Some(1), "{}", bad.display());
        assert!(!out.exists(), "no output after a failure");
        let theirs = run(&oracle, &args);
        assert_eq!(theirs.status.code(), Some(1));
        let _ = std::fs::remove_file(&out);
        let last = |e: &[u8]| String::from_utf8_lossy(e).lines().last().map(str::to_string);
        assert_eq!(last(&ours.stderr), last(&theirs.stderr), "{}", bad.display());
        assert!(last(&ours.stderr).unwrap().contains(s(bad)));
    }
    // An existing output without -f.
    let exists = dir.join("exists.bam");
    std::fs::write(&exists, b"x").unwrap();
    let args = ["merge", s(&exists), s(&good)];
    let (ours, theirs) = (run(&mdsam_bin(), &args), run(&oracle, &args));
    assert_eq!((ours.status.code(), ours.stderr), (theirs.status.code(), theirs.stderr));
    assert_eq!(std::fs::read(&exists).unwrap(), b"x");
    // No arguments: the usage on stdout, status 0.
    let (ours, theirs) = (run(&mdsam_bin(), &["merge"]), run(&oracle, &["merge"]));
    assert_eq!((ours.status.code(), &ours.stdout), (theirs.status.code(), &theirs.stdout));
    let _ = run_ok;
}

/// Files of `fixtures/bad/` whose broken aux data mdsam refuses as it reads the record, where
/// samtools only complains when a tag is looked at and merges them (`fixtures/README.md`).
const AUX_REFUSED: &[&str] = &[
    "aux-b-count-huge.bam",
    "aux-no-value.sam",
    "aux-truncated.bam",
    "aux-z-unterminated.bam",
    "bad-aux-type.bam",
];

#[test]
fn the_bad_input_corpus_fails_cleanly_with_the_oracles_status() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("merge_bad_corpus");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bad");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&corpus).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut wrong = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let (ours_dir, theirs_dir) = (dir.join("ours"), dir.join("theirs"));
        for d in [&ours_dir, &theirs_dir] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir_all(d).unwrap();
        }
        let out = |d: &Path| d.join("out.bam").to_str().unwrap().to_string();
        let ours = run(&mdsam_bin(), &["merge", "-o", &out(&ours_dir), s(file)]);
        let theirs = run(&oracle, &["merge", "-o", &out(&theirs_dir), s(file)]);
        let stderr = String::from_utf8_lossy(&ours.stderr);
        let expected = if AUX_REFUSED.contains(&name) { Some(1) } else { theirs.status.code() };
        let left = std::fs::read_dir(&ours_dir).unwrap().count();
        if ours.status.code() != expected || stderr.contains("panicked") {
            wrong
                .push(format!("{name}: status {:?}, expected {expected:?}: {stderr}", ours.status));
        } else if ours.status.code() != Some(0) {
            let last = stderr.lines().last().unwrap_or("");
            // A record BAM cannot hold (positions past 2^31) is the output's failure.
            let names_a_file = last.contains(name) || last.contains(&out(&ours_dir));
            if !names_a_file || left != 0 {
                wrong.push(format!("{name}: last line {last:?}, {left} files left"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
