//! `cat` against the samtools 1.24 oracle: simulated BAMs with shared, overlapping and different
//! read groups, `-h`, `-b`, stdin and stdout, and bad inputs. The blocks after each input's
//! header block must be the input's own bytes, in the oracle's layout; only the blocks samtools
//! compresses itself (the header, the records sharing an input's header block) may differ, as
//! mdsam compresses with libdeflate.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mdsam::io::bgzf::block::{self, Deflater};
use mdsam::simulate::SimulateOptions;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, run, run_ok, sam_without_pg, scratch_dir, simulated_sam,
    to_sam,
};

fn simulated(seed: u64, read_groups: u32) -> SimulateOptions {
    SimulateOptions {
        pairs: 2_000,
        seed,
        n_refs: 3,
        ref_len: 200_000,
        read_groups,
        ..SimulateOptions::default()
    }
}

/// A BAM of simulated reads (written by mdsam's `view`).
fn simulated_bam(dir: &Path, seed: u64, read_groups: u32) -> PathBuf {
    let sam = simulated_sam(dir, &simulated(seed, read_groups));
    let bam = dir.join(format!("in-{seed}-{read_groups}.bam"));
    let (sam, out) = (sam.to_str().unwrap(), bam.to_str().unwrap());
    run_ok(&mdsam_bin(), &["view", "-b", "--no-PG", "-o", out, sam]);
    bam
}

/// `bam` cut again into full 0xff00-byte blocks, as `bgzip` cuts it: records share the header's
/// block and straddle blocks.
fn rebgzipped(bam: &Path) -> PathBuf {
    let mut data = Vec::new();
    let file = std::fs::File::open(bam).unwrap();
    flate2::read::MultiGzDecoder::new(file).read_to_end(&mut data).unwrap();
    let mut out = Vec::new();
    let mut deflater = Deflater::new(6);
    for chunk in data.chunks(block::BLOCK_DATA_MAX) {
        deflater.deflate_into(chunk, &mut out);
    }
    out.extend_from_slice(&block::EOF_BLOCK);
    let path = bam.with_extension("bgzip.bam");
    std::fs::write(&path, out).unwrap();
    path
}

/// The BGZF blocks of a file, as raw bytes.
fn blocks(bytes: &[u8]) -> Vec<&[u8]> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let size = block::block_size(&bytes[at..]).expect("a BGZF block");
        found.push(&bytes[at..at + size]);
        at += size;
    }
    found
}

/// Same block layout as the oracle's output, and every block the oracle copied from an input is
/// byte for byte the same in ours.
fn assert_same_blocks(ours: &[u8], theirs: &[u8], inputs: &[PathBuf], context: &str) {
    let input_bytes: Vec<Vec<u8>> = inputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let copied: Vec<&[u8]> = input_bytes.iter().flat_map(|b| blocks(b)).collect();
    let (ours, theirs) = (blocks(ours), blocks(theirs));
    let sizes = |b: &[&[u8]]| b.iter().map(|b| block::inflated_size(b)).collect::<Vec<_>>();
    assert_eq!(sizes(&ours), sizes(&theirs), "{context}: block layout");
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        if copied.contains(b) {
            assert!(a == b, "{context}: block {i} was not copied as it is");
        }
    }
}

fn paths(inputs: &[PathBuf]) -> Vec<&str> {
    inputs.iter().map(|p| p.to_str().unwrap()).collect()
}

/// `cat ARGS -o OUT INPUTS` with mdsam and the oracle: the same SAM (without `@PG` unless
/// `--no-PG`) and the same blocks.
fn same_cat(oracle: &Path, dir: &Path, args: &[&str], inputs: &[PathBuf]) {
    let context = format!("cat {}", args.join(" "));
    let (ours, theirs) = (dir.join("ours.bam"), dir.join("theirs.bam"));
    for (program, out) in [(mdsam_bin(), &ours), (oracle.to_path_buf(), &theirs)] {
        let mut full = vec!["cat"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["-o", out.to_str().unwrap()]);
        full.extend(paths(inputs));
        run_ok(&program, &full);
    }
    let (ours_sam, theirs_sam) = (to_sam(oracle, &ours), to_sam(oracle, &theirs));
    if args.contains(&"--no-PG") {
        assert_same_sam(&ours_sam, &theirs_sam, &context);
        let (a, b) = (std::fs::read(&ours).unwrap(), std::fs::read(&theirs).unwrap());
        assert_same_blocks(&a, &b, inputs, &context);
    } else {
        assert_same_sam(&sam_without_pg(&ours_sam), &sam_without_pg(&theirs_sam), &context);
        let pg = ours_sam.split(|&b| b == b'\n').rfind(|l| l.starts_with(b"@PG\t"));
        let pg = String::from_utf8_lossy(pg.unwrap()).into_owned();
        assert!(pg.starts_with("@PG\tID:samtools\tPN:samtools\tPP:bwa\tVN:1.24"), "{pg}");
    }
}

#[test]
fn concatenates_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cat_like_the_oracle");
    let two_groups = simulated_bam(&dir, 5, 2);
    let four_groups = rebgzipped(&simulated_bam(&dir, 5, 4));
    let other_groups = simulated_bam(&dir, 6, 1);
    let all = [two_groups.clone(), four_groups.clone(), other_groups.clone()];
    same_cat(&oracle, &dir, &["--no-PG"], &all);
    same_cat(&oracle, &dir, &[], &all);
    let reversed = [other_groups.clone(), four_groups.clone(), two_groups.clone()];
    same_cat(&oracle, &dir, &["--no-PG"], &reversed);
    // The same file twice; the header from a SAM file, whose read groups come first.
    let header = dir.join("header.sam");
    let mut text = run_ok(&mdsam_bin(), &["view", "-H", "--no-PG", paths(&all)[2]]).stdout;
    text.extend_from_slice(b"@RG\tID:given\tSM:x\n");
    std::fs::write(&header, text).unwrap();
    let twice = [four_groups.clone(), other_groups.clone(), four_groups];
    same_cat(&oracle, &dir, &["--no-PG", "-h", header.to_str().unwrap()], &twice);
}

/// Runs `program cat ARGS` with `stdin` as standard input.
fn cat_with_stdin(program: &Path, args: &[&str], stdin: &Path) -> Output {
    let output = Command::new(program)
        .arg("cat")
        .args(args)
        .stdin(Stdio::from(std::fs::File::open(stdin).unwrap()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

#[test]
fn lists_stdin_and_stdout_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cat_lists_stdin_stdout");
    let first = simulated_bam(&dir, 7, 2);
    let second = rebgzipped(&simulated_bam(&dir, 8, 3));
    let list = dir.join("list.txt");
    std::fs::write(&list, format!("{}\r\n\n{}\n", first.display(), second.display())).unwrap();
    let args = ["--no-PG", "-b", list.to_str().unwrap(), "-"];
    let ours = cat_with_stdin(&mdsam_bin(), &args, &first).stdout;
    let theirs = cat_with_stdin(&oracle, &args, &first).stdout;
    let inputs = [first.clone(), second, first];
    assert_same_blocks(&ours, &theirs, &inputs, "cat -b LIST -");
    let (ours_path, theirs_path) = (dir.join("ours.bam"), dir.join("theirs.bam"));
    std::fs::write(&ours_path, ours).unwrap();
    std::fs::write(&theirs_path, theirs).unwrap();
    let same = (to_sam(&oracle, &ours_path), to_sam(&oracle, &theirs_path));
    assert_same_sam(&same.0, &same.1, "cat -b LIST -");
}

/// A file without its end-of-file block still frames whole blocks: both warn, and copy it all.
#[test]
fn a_missing_eof_block_warns_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cat_missing_eof_block");
    let whole = simulated_bam(&dir, 9, 1);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.join("no-eof.bam");
    std::fs::write(&cut, &bytes[..bytes.len() - block::EOF_BLOCK.len()]).unwrap();
    let inputs = [cut.clone(), whole];
    same_cat(&oracle, &dir, &["--no-PG"], &inputs);
    let mut args = vec!["cat", "--no-PG", "-o", "/dev/null"];
    args.extend(paths(&inputs));
    let (ours, theirs) = (run(&mdsam_bin(), &args), run(&oracle, &args));
    assert_eq!(String::from_utf8_lossy(&ours.stderr), String::from_utf8_lossy(&theirs.stderr));
}

/// `cat ARGS` in `dir` with mdsam and the oracle: both exit 1 with the same last line on
/// stderr (htslib's own lines before it are not all reproduced), and no output is left.
fn fails_like_the_oracle(oracle: &Path, dir: &Path, args: &[&str]) {
    let mut last_lines = Vec::new();
    for program in [mdsam_bin(), oracle.to_path_buf()] {
        let out = Command::new(&program).arg("cat").args(args).current_dir(dir).output().unwrap();
        let who = format!("{} cat {args:?}", program.display());
        assert_eq!(out.status.code(), Some(1), "{who}");
        assert!(!dir.join("out.bam").exists(), "{who} left an output");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        last_lines.push(stderr.lines().last().map(String::from));
    }
    assert_eq!(last_lines[0], last_lines[1], "cat {args:?}");
    let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name());
    let left: Vec<_> = names.filter(|n| n.to_string_lossy().contains(".mdsam-")).collect();
    assert!(left.is_empty(), "cat {args:?} left {left:?}");
}

#[test]
fn bad_inputs_fail_like_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cat_bad_inputs");
    let good = simulated_bam(&dir, 10, 1);
    std::fs::rename(&good, dir.join("good.bam")).unwrap();
    let bytes = std::fs::read(dir.join("good.bam")).unwrap();
    // Half the header's block: htslib still sees BAM in what inflates, then fails the header.
    let half = block::block_size(&bytes).unwrap() / 2;
    std::fs::write(dir.join("torn-header.bam"), &bytes[..half]).unwrap();
    std::fs::write(dir.join("reads.sam"), "@SQ\tSN:c\tLN:9\nr\t4\t*\t0\t0\t*\t*\t0\t0\tA\tI\n")
        .unwrap();
    for args in [
        &["-o", "out.bam", "missing.bam", "good.bam"][..],
        &["-o", "out.bam", "good.bam", "missing.bam"],
        &["-o", "out.bam", "good.bam", "torn-header.bam"],
        &["-o", "out.bam", "reads.sam", "good.bam"],
        &["-o", "out.bam", "good.bam", "reads.sam"],
        &["-o", "out.bam", "-h", "missing.sam", "good.bam"],
        &["-o", "out.bam"],
        &["-o", "out.bam", "-x", "good.bam"],
        &["-o", "out.bam", "--threads", "2", "good.bam"],
    ] {
        fails_like_the_oracle(&oracle, &dir, args);
    }
    let usage = run(&mdsam_bin(), &["cat"]);
    assert_eq!(String::from_utf8_lossy(&usage.stderr), mdsam::cli::cat::USAGE);
    assert!(usage.stdout.is_empty());
}

/// A file cut inside a block: samtools copies the torn block into a BAM no reader can read and
/// exits 0; mdsam refuses it, naming the file, and leaves no output.
#[test]
fn a_torn_block_is_refused_and_leaves_no_output() {
    let dir = scratch_dir("cat_torn_block");
    let good = simulated_bam(&dir, 11, 1);
    let bytes = std::fs::read(&good).unwrap();
    let torn = dir.join("torn.bam");
    std::fs::write(&torn, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let out = dir.join("out.bam");
    let args = ["cat", "-o", out.to_str().unwrap(), good.to_str().unwrap(), torn.to_str().unwrap()];
    let result = run(&mdsam_bin(), &args);
    assert_eq!(result.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&result.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("samtools cat: {}: truncated BGZF block", torn.display())),
        "{stderr}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3, "only the inputs stay");
}
