//! The parallel BAM write (blocks planned from record sizes, then gathered and deflated on the
//! pool, issue 44): `markdup-pipeline` and `view -b` lay out their BGZF blocks exactly as the
//! samtools 1.24 oracle does (same uncompressed size for every block, same records), at every
//! thread count and level, with records removed (`-r`) and records that grow when finalised
//! (`-t`, `-d`, `--duplicate-count`); `--write-index` gives the BAI `samtools index` makes of the
//! written file.

use std::path::{Path, PathBuf};

use mdsam::io::bgzf::block;
use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run_ok, scratch_dir, simulated_sam, to_sam,
};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Several MiB of BAM: past the writer's batched threshold and several windows of records.
fn input(dir: &Path) -> PathBuf {
    let opts = SimulateOptions {
        pairs: 40_000,
        seed: 44,
        n_refs: 3,
        ref_len: 400_000,
        order: Order::Name,
        dup_rate: 0.2,
        optical_dup_rate: 0.05,
        secondary_rate: 0.05,
        ..SimulateOptions::default()
    };
    simulated_sam(dir, &opts)
}

/// The uncompressed size of every BGZF block of the file at `path`, EOF block included.
fn block_sizes(path: &Path) -> Vec<usize> {
    let file = std::fs::read(path).unwrap();
    let mut at = 0;
    let mut sizes = Vec::new();
    while at < file.len() {
        let n = block::block_size(&file[at..]).unwrap();
        sizes.push(block::inflated_size(&file[at..at + n]));
        at += n;
    }
    sizes
}

/// Same blocks and same records (headers included: both runs leave `@PG` out).
fn assert_same_bam(oracle: &Path, got: &Path, expected: &Path, context: &str) {
    let (a, b) = (block_sizes(got), block_sizes(expected));
    assert!(a.len() > 20, "{context}: only {} blocks, too few to test", a.len());
    assert!(a == b, "{context}: block layout differs ({} blocks against {})", a.len(), b.len());
    assert_same_sam(&to_sam(oracle, got), &to_sam(oracle, expected), context);
}

/// The oracle's four-command recipe on `sam` with markdup's `args`, into `out`.
fn oracle_recipe(oracle: &Path, dir: &Path, sam: &Path, args: &[&str], out: &Path) {
    let (tmp, c, f, sorted) =
        (dir.join("collate-tmp"), dir.join("c.bam"), dir.join("f.bam"), dir.join("s.bam"));
    oracle_ok(oracle, &["collate", "-u", "--no-PG", "-o", s(&c), s(sam), s(&tmp)]);
    oracle_ok(oracle, &["fixmate", "-m", "-u", "--no-PG", s(&c), s(&f)]);
    oracle_ok(oracle, &["sort", "-u", "--no-PG", "-o", s(&sorted), s(&f)]);
    let mut md = vec!["markdup", "--no-PG"];
    md.extend_from_slice(args);
    md.extend([s(&sorted), s(out)]);
    oracle_ok(oracle, &md);
}

#[test]
fn markdup_pipeline_blocks_match_the_oracle_recipe() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("parallel-write-markdup");
    let sam = input(&dir);
    let cases: [&[&str]; 4] =
        [&[], &["-r"], &["-t", "-d", "100"], &["-r", "-S", "--duplicate-count", "-t"]];
    for args in cases {
        let expected = dir.join("expected.bam");
        oracle_recipe(&oracle, &dir, &sam, args, &expected);
        for threads in ["0", "2", "5"] {
            let got = dir.join(format!("got-{threads}.bam"));
            let mut cmd = vec!["markdup-pipeline", "--no-PG", "-@", threads];
            cmd.extend_from_slice(args);
            cmd.extend([s(&sam), s(&got)]);
            run_ok(&mdsam_bin(), &cmd);
            let context = format!("markdup-pipeline {args:?} -@ {threads}");
            assert_same_bam(&oracle, &got, &expected, &context);
        }
    }
}

#[test]
fn view_bam_to_bam_blocks_match_the_oracle_at_every_level() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("parallel-write-view");
    let sam = input(&dir);
    let bam = dir.join("in.bam");
    oracle_ok(&oracle, &["view", "-b", "--no-PG", "-o", s(&bam), s(&sam)]);
    for level in ["0", "1", "6"] {
        // (`view -l` is the library filter: the level is an output option.)
        let option = format!("level={level}");
        let expected = dir.join(format!("expected-{level}.bam"));
        let mut cmd = vec!["view", "-b", "--no-PG", "--output-fmt-option", option.as_str()];
        cmd.extend(["-o", s(&expected), s(&bam)]);
        oracle_ok(&oracle, &cmd);
        for threads in ["0", "2"] {
            let got = dir.join(format!("got-{level}-{threads}.bam"));
            let mut args = vec!["view", "-b", "--no-PG", "--output-fmt-option", option.as_str()];
            args.extend(["-@", threads, "-o", s(&got), s(&bam)]);
            run_ok(&mdsam_bin(), &args);
            let context = format!("view -b level {level} -@ {threads}");
            assert_same_bam(&oracle, &got, &expected, &context);
        }
    }
}

#[test]
fn write_index_matches_samtools_index_of_the_output() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("parallel-write-index");
    let sam = input(&dir);
    // BAI: `samtools index -c` writes its CSI header a little differently from htslib's
    // on-the-fly CSI (both before and after this change), and a BAI holds the same offsets.
    for threads in ["0", "2"] {
        // markdup-pipeline's output, then `view -b` of it (sorted input, as an index needs).
        let marked = dir.join(format!("markdup-{threads}.bam"));
        for command in ["markdup-pipeline", "view"] {
            let got = dir.join(format!("{command}-{threads}.bam"));
            let index = dir.join(format!("{command}-{threads}.bam.bai"));
            let target = format!("{}##idx##{}", s(&got), s(&index));
            let mut args = vec![command, "--write-index", "-@", threads];
            if command == "view" {
                args.extend(["-b", "-o", target.as_str(), s(&marked)]);
            } else {
                args.extend(["-r", "-t", s(&sam), target.as_str()]);
            }
            run_ok(&mdsam_bin(), &args);
            if command != "view" {
                std::fs::copy(&got, &marked).unwrap();
            }
            let expected = dir.join(format!("expected-{command}-{threads}.bai"));
            oracle_ok(&oracle, &["index", "-b", "-o", s(&expected), s(&got)]);
            let context = format!("{command} --write-index -@ {threads}");
            let same = std::fs::read(&index).unwrap() == std::fs::read(&expected).unwrap();
            assert!(same, "{context}: the index differs from samtools index's");
        }
    }
}
