//! `tview -d T` / `-d H` natively (issue 42), compared byte for byte with samtools' own tview.
//! The pysam oracle has no tview, so the reference here is the native samtools 1.23.1
//! (`$HOME/.cache/samtools-native/bin/samtools`; tview is unchanged in 1.24); the comparisons
//! are skipped where it is absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{mdsam_bin, run_ok, scratch_dir};

/// The native samtools with tview, or `None` after saying why the comparison is skipped.
fn native() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path = PathBuf::from(home).join(".cache/samtools-native/bin/samtools");
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipping: no native samtools with tview at {}", path.display());
        None
    }
}

/// `prog tview args…` in `dir` with `COLUMNS` set (or unset). Delegation is off
/// (`MDSAM_SAMTOOLS=/bin/false`): mdsam must draw the screen itself.
fn tview(prog: &Path, dir: &Path, columns: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(prog);
    cmd.current_dir(dir).arg("tview").args(args).env("MDSAM_SAMTOOLS", "/bin/false");
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    cmd.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", prog.display()))
}

/// Asserts that mdsam and samtools print the same bytes on both streams, with the same status.
fn assert_same(samtools: &Path, dir: &Path, columns: Option<&str>, args: &[&str]) {
    let want = tview(samtools, dir, columns, args);
    let got = tview(&mdsam_bin(), dir, columns, args);
    let shown = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(shown(&got), shown(&want), "stdout of tview {args:?} (COLUMNS={columns:?})");
    assert_eq!(
        String::from_utf8_lossy(&got.stderr),
        String::from_utf8_lossy(&want.stderr),
        "stderr of tview {args:?}"
    );
    assert_eq!(got.status.code(), want.status.code(), "status of tview {args:?}");
}

/// A small deterministic generator (the same inputs every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
    fn base(&mut self) -> char {
        b"ACGT"[self.next(4) as usize] as char
    }
}

/// A hand-made BAM over a 400-base reference: mismatches, insertions, deletions, reference
/// skips, pads, soft and hard clips, both strands, improper pairs, secondary and unmapped reads,
/// MAPQ 255, `=` bases, reads without SEQ, coverage gaps, a lower-case and IUPAC stretch in the
/// reference, two read groups, and one column over 255 reads deep. Returns (BAM, FASTA).
fn hand_made(dir: &Path) -> (String, String) {
    let mut g = Lcg(42);
    let mut reference: String = (0..400).map(|_| g.base()).collect();
    reference.replace_range(50..60, &reference[50..60].to_lowercase());
    reference.replace_range(70..75, "NNRYK");
    let upper = reference.to_uppercase();
    let fasta = format!(">c1\n{}\n>c2\n{}\n", reference, &reference[..200]);
    let mut reads = Vec::new();
    for i in 0..240 {
        let (tid, pos) = if i % 9 == 8 { ("c2", 1 + g.next(140)) } else { ("c1", 1 + g.next(330)) };
        let r = &upper[pos as usize - 1..];
        let (cigar, mut seq) = match i % 10 {
            0 => ("10M2I20M".to_string(), format!("{}GT{}", &r[..10], &r[10..30])),
            1 => ("12M3D18M".into(), format!("{}{}", &r[..12], &r[15..33])),
            2 => ("8M40N15M".into(), format!("{}{}", &r[..8], &r[48..63])),
            3 => ("5S25M3S".into(), format!("TTTTT{}GGG", &r[..25])),
            4 => ("3H10M1P2I1P15M".into(), format!("{}CA{}", &r[..10], &r[10..25])),
            5 => ("15M1D1I10M".into(), format!("{}A{}", &r[..15], &r[16..26])),
            6 => ("10M4I".into(), format!("{}ACGT", &r[..10])),
            7 => ("2I20M".into(), format!("CC{}", &r[..20])),
            _ => {
                let len = 20 + g.next(30) as usize;
                (format!("{len}M"), r[..len].to_string())
            }
        };
        seq = seq.chars().map(|c| if g.next(20) == 0 { g.base() } else { c }).collect();
        if g.next(20) == 0 {
            seq.replace_range(3..4, "=");
        }
        let qual: String = seq
            .chars()
            .map(|_| (33 + [2, 8, 15, 20, 30, 40][g.next(6) as usize]) as u8 as char)
            .collect();
        let (seq, qual) = if g.next(30) == 0 { ("*".into(), "*".into()) } else { (seq, qual) };
        let flag = [0, 16, 99, 147, 83, 163, 1, 17, 256, 1024, 512, 65][g.next(12) as usize];
        let mapq = [0, 5, 12, 25, 37, 60, 255][g.next(7) as usize];
        let rg = match g.next(5) {
            0 => String::new(),
            k => format!("\tRG:Z:g{}", 1 + k % 2),
        };
        reads.push((
            tid,
            pos,
            format!("r{i}\t{flag}\t{tid}\t{pos}\t{mapq}\t{cigar}\t*\t0\t0\t{seq}\t{qual}{rg}"),
        ));
    }
    // Over 255 reads in a column: htslib's error model shuffles them (drand48) and keeps 255.
    for i in 0..300 {
        let seq: String =
            upper[299..329].chars().map(|c| if g.next(3) == 0 { g.base() } else { c }).collect();
        reads.push((
            "c1",
            300,
            format!("d{i}\t0\tc1\t300\t60\t30M\t*\t0\t0\t{seq}\t{}", "I".repeat(30)),
        ));
    }
    reads.push(("c1", 5, "un\t4\tc1\t5\t0\t*\t*\t0\t0\tACGT\tIIII".into()));
    reads.sort_by_key(|(tid, pos, _)| (*tid, *pos));
    let mut sam =
        String::from("@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c1\tLN:400\n@SQ\tSN:c2\tLN:200\n");
    sam.push_str("@SQ\tSN:c3\tLN:100\n@RG\tID:g1\tSM:s1\n@RG\tID:g2\tSM:s2\n");
    for (_, _, line) in &reads {
        sam.push_str(line);
        sam.push('\n');
    }
    std::fs::write(dir.join("hand.sam"), sam).unwrap();
    std::fs::write(dir.join("hand.fa"), fasta).unwrap();
    let mdsam = mdsam_bin();
    let d = dir.to_str().unwrap();
    run_ok(&mdsam, &["view", "-b", "-o", &format!("{d}/hand.bam"), &format!("{d}/hand.sam")]);
    run_ok(&mdsam, &["index", &format!("{d}/hand.bam")]);
    ("hand.bam".into(), "hand.fa".into())
}

#[test]
fn tview_text_and_html_match_samtools_on_simulated_reads() {
    let Some(samtools) = native() else { return };
    let dir = scratch_dir("tview_simulated");
    let d = dir.to_str().unwrap();
    let mdsam = mdsam_bin();
    let (bam, fa) = (format!("{d}/sim.bam"), format!("{d}/ref.fa"));
    run_ok(
        &mdsam,
        &["simulate", "-n", "600", "--refs", "2", "--ref-length", "6000"]
            .iter()
            .copied()
            .chain(["--order", "coordinate", "--fasta", &fa, "-o", &bam])
            .collect::<Vec<_>>(),
    );
    run_ok(&mdsam, &["index", &bam]);
    for p in ["chr1:1", "chr1:2500", "chr2:100", "chr2:4150", "chr1:5990"] {
        for d in ["T", "H"] {
            assert_same(&samtools, &dir, Some("80"), &["-d", d, "-p", p, "sim.bam", "ref.fa"]);
            assert_same(&samtools, &dir, None, &["-d", d, "-w", "57", "-p", p, "sim.bam"]);
        }
    }
    // No -p: the first reference the FASTA has; -s: one read group, or a whole sample.
    assert_same(&samtools, &dir, Some("120"), &["-d", "T", "sim.bam", "ref.fa"]);
    let rg = "HR46TDSXY.2";
    assert_same(&samtools, &dir, Some("5"), &["-d", "T", "-s", rg, "-p", "chr1:3000", "sim.bam"]);
    assert_same(&samtools, &dir, None, &["-d", "T", "-s", "SIM1", "-p", "chr1:3000", "sim.bam"]);
}

#[test]
fn tview_draws_indels_pads_clips_skips_and_strands_as_samtools() {
    let Some(samtools) = native() else { return };
    let dir = scratch_dir("tview_hand_made");
    let (bam, fa) = hand_made(&dir);
    for p in ["c1:1", "c1:45", "c1:280", "c1:395", "c2:1", "c3:1", "c1:2000"] {
        for d in ["T", "H"] {
            assert_same(&samtools, &dir, Some("100"), &["-d", d, "-p", p, &bam, &fa]);
            assert_same(&samtools, &dir, Some("70"), &["-d", d, "-i", "-p", p, &bam]);
            assert_same(&samtools, &dir, None, &["-d", d, "-s", "s2", "-p", p, &bam, &fa]);
            let filter = "filter=mapq>=20 && !flag.reverse";
            assert_same(
                &samtools,
                &dir,
                None,
                &["-d", d, "--input-fmt-option", filter, "-p", p, &bam],
            );
        }
    }
    // The windows compared do hold what they are meant to: pads/deletions, skips, both strands.
    let screen = tview(&mdsam_bin(), &dir, Some("100"), &["-d", "T", "-p", "c1:45", &bam, &fa]);
    let text = String::from_utf8_lossy(&screen.stdout);
    for c in ['*', ',', '.'] {
        assert!(text.contains(c), "no {c:?} in\n{text}");
    }
    assert!(text.contains('>') || text.contains('<'), "no reference skip in\n{text}");
    // The same window from BGZF SAM (with a CSI) and from CRAM.
    let d = dir.to_str().unwrap();
    let mdsam = mdsam_bin();
    run_ok(
        &mdsam,
        &[
            "view",
            "-h",
            "-O",
            "sam.gz",
            "-o",
            &format!("{d}/hand.sam.gz"),
            &format!("{d}/hand.bam"),
        ],
    );
    run_ok(&mdsam, &["index", "-c", &format!("{d}/hand.sam.gz")]);
    assert_same(&samtools, &dir, Some("90"), &["-d", "T", "-p", "c1:280", "hand.sam.gz", &fa]);
    run_ok(
        &mdsam,
        &[
            "view",
            "-C",
            "-T",
            &format!("{d}/hand.fa"),
            "-o",
            &format!("{d}/hand.cram"),
            &format!("{d}/hand.bam"),
        ],
    );
    run_ok(&mdsam, &["index", &format!("{d}/hand.cram")]);
    assert_same(&samtools, &dir, Some("90"), &["-d", "H", "-p", "c1:280", "hand.cram", &fa]);
}

#[test]
fn tview_mistakes_fail_as_samtools_does() {
    let Some(samtools) = native() else { return };
    let dir = scratch_dir("tview_mistakes");
    let (bam, fa) = hand_made(&dir);
    std::fs::copy(dir.join(&bam), dir.join("noindex.bam")).unwrap();
    std::fs::write(dir.join("other.fa"), ">zz\nACGT\n").unwrap();
    let cases: &[&[&str]] = &[
        &[],
        &["-d", "T", "missing.bam"],
        &["-d", "T", "hand.fa"],
        &["-d", "T", "noindex.bam"],
        // The index is loaded first: its failure comes before the others.
        &["-d", "T", "-p", "nope:1", "noindex.bam"],
        &["-d", "T", "noindex.bam", "missing.fa"],
        &["-d", "T", "-p", "nope:5", &bam],
        &["-d", "T", "-p", "c1:0", &bam],
        &["-d", "T", "-w", "0", &bam],
        &["-d", "T", "-w", "12x", &bam],
        &["-w", "30", &bam],
        &["-d", "T", "-z", &bam],
        &["-d", "T", "--threads", "2", &bam],
        &["-d", "T", "-s", "nobody", &bam],
        &["-d", "T", &bam, "missing.fa"],
        &["-d", "T", &bam, "other.fa"],
        &["-d", "T", "-p", "c1:100", &bam, "other.fa"],
        &["-d", "T", "-X", &bam],
        &["-d", "T", "-X", &bam, "missing.bai"],
        &["-d", "T", "--reference", &fa, &bam],
        &["-d", "T", "--input-fmt-option", "nope=1", &bam],
        &["--help"],
        &["-d", "T", "--input-fmt-option", "filter=mapq>", "-p", "c1:280", &bam],
    ];
    for args in cases {
        assert_same(&samtools, &dir, Some("60"), args);
    }
}

#[test]
fn tview_interactive_screen_without_samtools_is_one_line_and_status_1() {
    let dir = scratch_dir("tview_interactive");
    let (bam, _) = hand_made(&dir);
    for args in [&["-p", "c1:5", bam.as_str()][..], &["-d", "C", bam.as_str()]] {
        let out = Command::new(mdsam_bin())
            .current_dir(&dir)
            .arg("tview")
            .args(args)
            .env("MDSAM_SAMTOOLS", dir.join("no-such-samtools"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("-d T") && err.starts_with("samtools tview: "), "{err}");
    }
}

#[test]
fn tview_text_on_a_terminal_has_samtools_colours() {
    let Some(samtools) = native() else { return };
    let Some(script) =
        ["/usr/bin/script", "/bin/script"].into_iter().find(|p| Path::new(p).is_file())
    else {
        eprintln!("skipping: no script(1) to give tview a terminal");
        return;
    };
    let dir = scratch_dir("tview_terminal");
    let (bam, fa) = hand_made(&dir);
    // script(1) runs the command on a pseudo-terminal: stdout is a tty, as samtools tests.
    let on_terminal = |prog: &Path| {
        let line = format!("{} tview -d T -p c1:280 {bam} {fa}", prog.display());
        let out = Command::new(script)
            .current_dir(&dir)
            .args(["-qec", &line, "/dev/null"])
            .env("COLUMNS", "70")
            .env("MDSAM_SAMTOOLS", "/bin/false")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    let (want, got) = (on_terminal(&samtools), on_terminal(&mdsam_bin()));
    assert!(want.windows(5).any(|w| w == b"\x1b[34m"), "samtools drew no colours");
    assert!(got == want, "the coloured screens differ");
}
