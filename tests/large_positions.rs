//! Positions above 2³¹ (SAM in, SAM out) against the samtools 1.24 oracle: `view`, `sort`,
//! `collate -f`, `fixmate -m` and `markdup` on a small generated SAM whose references are longer
//! than BAM's 32-bit positions reach, and the BAM output samtools refuses.
//!
//! The input mixes POS, PNEXT and (after fixmate) TLEN just below and above 2³¹ and 2³², near
//! 10¹⁰, and pairs on the same reference far apart, so TLEN goes beyond 32 bits while both
//! positions fit. Pairs repeat their positions so markdup finds duplicates.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::support::{assert_same_sam, mdsam_bin, oracle, oracle_ok, run, sam_without_pg};

/// Reference lengths: two beyond 32 bits, one ordinary.
const REFS: [(&str, u64); 3] =
    [("big1", 10_000_000_045), ("big2", 5_000_000_000), ("small", 50_000)];

/// Where pairs start on each big reference: around 2³¹, 2³² and 10¹⁰.
const STARTS: [u64; 3] = [(1 << 31) - 400, (1 << 32) - 400, 9_999_990_000];

/// A deterministic generator (64-bit LCG), enough for positions and bases.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }

    fn bases(&mut self, n: usize) -> String {
        (0..n).map(|_| b"ACGT"[self.next(4) as usize] as char).collect()
    }

    fn quals(&mut self, n: usize) -> String {
        (0..n).map(|_| (b'#' + self.next(40) as u8) as char).collect()
    }
}

/// One SAM line; `mate` is (RNEXT, PNEXT).
#[allow(clippy::too_many_arguments)]
fn line(
    out: &mut String,
    g: &mut Lcg,
    name: &str,
    flag: u16,
    rname: &str,
    pos: u64,
    cigar: &str,
    mate: (&str, u64),
) {
    let seq_len = 50;
    let (seq, qual) = (g.bases(seq_len), g.quals(seq_len));
    let _ = writeln!(
        out,
        "{name}\t{flag}\t{rname}\t{pos}\t60\t{cigar}\t{}\t{}\t0\t{seq}\t{qual}\tNM:i:0",
        mate.0, mate.1
    );
}

/// Name-grouped SAM (as fixmate wants it) with `pairs` pairs.
fn generate(pairs: usize) -> String {
    let mut g = Lcg(42);
    let mut out = String::from("@HD\tVN:1.6\n");
    for (name, len) in REFS {
        let _ = writeln!(out, "@SQ\tSN:{name}\tLN:{len}");
    }
    let cigars = ["50M", "5S45M", "45M5S", "20M2D30M", "3H50M"];
    for i in 0..pairs {
        let name = format!("p{i:04}");
        // Every third pair copies an earlier one's positions: duplicates for markdup.
        let mut pick = Lcg(if i % 3 == 2 { 1000 + i as u64 - 2 } else { 1000 + i as u64 });
        let rname = REFS[pick.next(2) as usize].0;
        let pos1 = STARTS[pick.next(3) as usize] + pick.next(800);
        let pos2 = pos1 + 50 + pick.next(400);
        let c1 = cigars[pick.next(cigars.len() as u64) as usize];
        let c2 = cigars[pick.next(cigars.len() as u64) as usize];
        match i % 10 {
            // Mate unmapped, placed at the read's position.
            7 => {
                line(&mut out, &mut g, &name, 73, rname, pos1, c1, ("=", pos1));
                line(&mut out, &mut g, &name, 133, rname, pos1, "*", ("=", pos1));
            }
            // Mates on the same reference, 3·10⁹ apart: TLEN beyond 32 bits.
            8 => {
                line(&mut out, &mut g, &name, 97, "big1", 1000 + pick.next(100), c1, ("=", pos2));
                line(&mut out, &mut g, &name, 145, "big1", 3_000_001_000, c2, ("=", 1000));
            }
            // One mate on the ordinary reference.
            9 => {
                line(&mut out, &mut g, &name, 97, rname, pos1, c1, ("small", 500));
                line(
                    &mut out,
                    &mut g,
                    &name,
                    145,
                    "small",
                    500 + pick.next(100),
                    c2,
                    (rname, pos1),
                );
            }
            _ => {
                let (f1, f2) = if i % 2 == 0 { (99, 147) } else { (163, 83) };
                line(&mut out, &mut g, &name, f1, rname, pos1, c1, ("=", pos2));
                line(&mut out, &mut g, &name, f2, rname, pos2, c2, ("=", pos1));
            }
        }
    }
    out
}

fn write_input(dir: &Path) -> PathBuf {
    let path = dir.join("large-positions.sam");
    std::fs::write(&path, generate(300)).expect("write SAM");
    path
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Runs `args` under both tools; both must succeed with the same SAM text (`@PG` aside).
fn compare(oracle: &Path, args: &[&str]) -> Vec<u8> {
    let expected = oracle_ok(oracle, args).stdout;
    let got = run(&mdsam_bin(), args);
    assert!(
        got.status.success(),
        "mdsam {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&got.stderr)
    );
    assert_same_sam(&sam_without_pg(&got.stdout), &sam_without_pg(&expected), &args.join(" "));
    expected
}

#[test]
fn sam_commands_match_oracle_beyond_32_bits() {
    let Some(oracle) = oracle() else { return };
    let dir = crate::support::scratch_dir("large_positions_sam");
    let input = write_input(&dir);
    let input = path_str(&input);
    compare(&oracle, &["view", "-h", input]);
    compare(&oracle, &["view", "-h", "-f", "0x10", "-q", "10", input]);
    compare(&oracle, &["sort", "-O", "sam", input]);
    compare(&oracle, &["sort", "-n", "-O", "sam", input]);
    // samtools collate's temporary files are BAM, so only its fast mode (-f) takes this input;
    // mdsam collates it in memory either way.
    compare(&oracle, &["collate", "-f", "--output-fmt", "SAM", "-O", input]);
    let fixed = compare(&oracle, &["fixmate", "-m", "-O", "sam", input, "-"]);
    let field = |l: &str, i: usize| l.split('\t').nth(i).and_then(|f| f.parse::<i64>().ok());
    assert!(
        String::from_utf8_lossy(&fixed)
            .lines()
            .any(|l| field(l, 8).is_some_and(|tlen| tlen.abs() > i32::MAX as i64)),
        "the input should give a TLEN beyond 32 bits"
    );
    // markdup needs coordinate order; both tools read the oracle's sort of fixmate's output.
    let fixed_path = dir.join("fixed.sam");
    std::fs::write(&fixed_path, &fixed).expect("write fixmate output");
    let sorted = oracle_ok(&oracle, &["sort", "-O", "sam", path_str(&fixed_path)]).stdout;
    let sorted_path = dir.join("sorted.sam");
    std::fs::write(&sorted_path, &sorted).expect("write sorted");
    let sorted_path = path_str(&sorted_path);
    compare(&oracle, &["sort", "--template-coordinate", "-O", "sam", path_str(&fixed_path)]);
    let marked = compare(&oracle, &["markdup", "-O", "sam", sorted_path, "-"]);
    assert!(
        String::from_utf8_lossy(&marked)
            .lines()
            .any(|l| field(l, 1).is_some_and(|f| f & 0x400 != 0)),
        "the input should hold duplicates"
    );
    compare(&oracle, &["markdup", "-S", "-r", "-O", "sam", sorted_path, "-"]);
}

#[test]
fn bam_output_fails_and_leaves_no_file() {
    let dir = crate::support::scratch_dir("large_positions_bam");
    let input = write_input(&dir);
    let out = dir.join("out.bam");
    let got = run(&mdsam_bin(), &["view", "-b", "-o", path_str(&out), path_str(&input)]);
    assert_eq!(got.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&got.stderr)
            .contains("[E::bam_write1] Positional data is too large for BAM format"),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert!(!out.exists(), "no output file is left behind");
    let sorted = dir.join("sorted.bam");
    let got = run(&mdsam_bin(), &["sort", "-o", path_str(&sorted), path_str(&input)]);
    assert_eq!(got.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&got.stderr)
            .contains("output format is not compatible with very large references")
    );
    assert!(!sorted.exists());
    // samtools fails the same ways (it leaves a partial BAM behind, mdsam does not).
    if let Some(oracle) = oracle() {
        let theirs = dir.join("theirs.bam");
        let r = run(&oracle, &["view", "-b", "-o", path_str(&theirs), path_str(&input)]);
        assert_eq!(r.status.code(), Some(1));
        let r = run(&oracle, &["sort", "-o", path_str(&theirs), path_str(&input)]);
        assert_eq!(r.status.code(), Some(1));
    }
}
