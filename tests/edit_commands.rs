//! `reset`, `addreplacerg`, `reheader` and `calmd` against the samtools 1.24 oracle on simulated
//! coordinate-sorted data (secondary and supplementary records, unmapped reads and mates, reads
//! with no bases): SAM output and stderr for each command's main options, mdsam at `-@ 0` and
//! `-@ 2`.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, scratch_dir, simulated_fasta,
    simulated_sam, to_sam,
};

fn options() -> SimulateOptions {
    SimulateOptions {
        pairs: 2_000,
        seed: 23,
        n_refs: 3,
        ref_len: 100_000,
        order: Order::Coordinate,
        mate_unmapped_rate: 0.05,
        unmapped_pair_rate: 0.02,
        chimeric_rate: 0.05,
        ..SimulateOptions::default()
    }
}

/// The simulated SAM, its BAM (made by the oracle) and the reference.
fn inputs(dir: &Path, oracle: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let opts = options();
    let sam = simulated_sam(dir, &opts);
    let fasta = simulated_fasta(dir, &opts);
    let bam = dir.join("in.bam");
    oracle_ok(oracle, &["view", "-b", "--no-PG", "-o", s(&bam), s(&sam)]);
    (sam, bam, fasta)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Runs `command args… input` (then `extra` arguments) with both tools, writing SAM to stdout,
/// and compares stdout and stderr; mdsam at `-@ 0` and `-@ 2` where `threads` allows.
fn compare_stdout(oracle: &Path, command: &str, args: &[&str], tail: &[&str], threads: bool) {
    let mut full = vec![command];
    full.extend_from_slice(args);
    full.extend_from_slice(tail);
    let expected = oracle_ok(oracle, &full);
    // The oracle's way of running calmd for its stdout loses its stderr: run it again for that,
    // its stdout to /dev/null.
    let expected_stderr = if command == "calmd" {
        let mut shell = vec!["-c", "\"$0\" \"$@\" > /dev/null", s(oracle)];
        shell.extend_from_slice(&full);
        run(Path::new("sh"), &shell).stderr
    } else {
        expected.stderr
    };
    let counts: &[&str] = if threads { &["0", "2"] } else { &["0"] };
    for n in counts {
        let mut mine = vec![command];
        if threads {
            mine.extend_from_slice(&["-@", n]);
        }
        mine.extend_from_slice(args);
        mine.extend_from_slice(tail);
        let got = run_ok(&mdsam_bin(), &mine);
        let context = format!("{} (-@ {n})", full.join(" "));
        assert_same_sam(&got.stdout, &expected.stdout, &context);
        assert_eq!(
            String::from_utf8_lossy(&got.stderr),
            String::from_utf8_lossy(&expected_stderr),
            "{context}: stderr"
        );
    }
}

#[test]
fn reset_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("edit_commands_reset");
    let (sam, bam, _) = inputs(&dir, &oracle);
    for input in [&sam, &bam] {
        for args in [
            &[][..],
            &["--dupflag"],
            &["--no-RG"],
            &["--keep-tag", "MD,RG"],
            &["-x", "XS,BC"],
            &["-x", "^NM"],
            &["--reject-PG", "bwa"],
        ] {
            let mut with = vec!["--no-PG"];
            with.extend_from_slice(args);
            compare_stdout(&oracle, "reset", &with, &[s(input)], true);
        }
    }
    // BAM output, compared as SAM.
    for (tool, name) in [(oracle.clone(), "o.bam"), (mdsam_bin(), "m.bam")] {
        let out = dir.join(name);
        run_ok(&tool, &["reset", "--no-PG", "-O", "bam", "-o", s(&out), s(&bam)]);
    }
    let (o, m) = (to_sam(&oracle, &dir.join("o.bam")), to_sam(&oracle, &dir.join("m.bam")));
    assert_same_sam(&m, &o, "reset -O bam");
}

#[test]
fn addreplacerg_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("edit_commands_addreplacerg");
    let (sam, bam, _) = inputs(&dir, &oracle);
    // The second read group's ID, as the simulator names it.
    let text = std::fs::read_to_string(&sam).unwrap();
    let existing = text
        .lines()
        .filter_map(|l| l.strip_prefix("@RG\tID:"))
        .nth(1)
        .and_then(|rest| rest.split('\t').next())
        .expect("a second @RG line")
        .to_string();
    let existing = existing.as_str();
    for input in [&sam, &bam] {
        for args in [
            &["-r", r"@RG\tID:new\tSM:x"][..],
            &["-r", "ID:new", "-r", "SM:y", "-m", "orphan_only"],
            &["-R", existing],
            &["-R", existing, "-m", "orphan_only"],
            &["-m", "orphan_only"],
            &["-w", "-r", &format!(r"ID:{existing}\tSM:z")],
        ] {
            let mut with = vec!["--no-PG", "-O", "sam"];
            with.extend_from_slice(args);
            compare_stdout(&oracle, "addreplacerg", &with, &[s(input)], true);
        }
    }
    // Refusals: stderr and status.
    for args in [&["-r", "ID:x", "-R", "y"][..], &["-r", "SM:x"], &["-R", "absent"]] {
        let mut full = vec!["addreplacerg"];
        full.extend_from_slice(args);
        full.push(s(&sam));
        let (o, m) = (run(&oracle, &full), run(&mdsam_bin(), &full));
        assert_eq!(m.status.code(), o.status.code(), "{full:?}");
        assert_eq!(String::from_utf8_lossy(&m.stderr), String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn reheader_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("edit_commands_reheader");
    let (sam, bam, _) = inputs(&dir, &oracle);
    let header = dir.join("new.sam");
    let mut text = run_ok(&oracle, &["view", "-H", "--no-PG", s(&sam)]).stdout;
    text.extend_from_slice(b"@CO\tnew header\n");
    std::fs::write(&header, text).unwrap();
    let runs: [&[&str]; 3] = [
        &["-P", s(&header), s(&bam)],
        &["--no-PG", "-c", "sed s/SM:SIM1/SM:renamed/", s(&bam)],
        &["-c", "grep -v ^@RG", s(&bam)],
    ];
    for args in runs {
        let mut full = vec!["reheader"];
        full.extend_from_slice(args);
        let (o, m) = (dir.join("o.bam"), dir.join("m.bam"));
        std::fs::write(&o, oracle_ok(&oracle, &full).stdout).unwrap();
        std::fs::write(&m, run_ok(&mdsam_bin(), &full).stdout).unwrap();
        let strip_cl = |t: Vec<u8>| crate::support::sam_without_pg(&t);
        assert_same_sam(
            &strip_cl(to_sam(&oracle, &m)),
            &strip_cl(to_sam(&oracle, &o)),
            &full.join(" "),
        );
    }
    // SAM input is refused as samtools refuses it.
    let full = ["reheader", s(&header), s(&sam)];
    let (o, m) = (run(&oracle, &full), run(&mdsam_bin(), &full));
    assert_eq!(m.status.code(), o.status.code());
    assert_eq!(String::from_utf8_lossy(&m.stderr), String::from_utf8_lossy(&o.stderr));
}

#[test]
fn calmd_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("edit_commands_calmd");
    let (sam, bam, fasta) = inputs(&dir, &oracle);
    for input in [&sam, &bam] {
        for args in
            [&[][..], &["-e"], &["-A"], &["-Q"], &["-d"], &["-q"], &["-n", "3"], &["-N", "-e"]]
        {
            let mut with = vec!["--no-PG"];
            with.extend_from_slice(args);
            compare_stdout(&oracle, "calmd", &with, &[s(input), s(&fasta)], true);
        }
    }
    // A second pass over `-e` output reads `=` as a match.
    let equal = dir.join("equal.sam");
    let first = run_ok(&mdsam_bin(), &["calmd", "-Q", "-e", "--no-PG", s(&sam), s(&fasta)]);
    std::fs::write(&equal, first.stdout).unwrap();
    compare_stdout(&oracle, "calmd", &["--no-PG"], &[s(&equal), s(&fasta)], true);
}
