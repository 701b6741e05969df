//! The small commands samtools has and mdsam used to hand to it (issue 42 item 3): `flags`,
//! `samples`, …, run natively (delegation off) and compared with the samtools 1.24 oracle in
//! stdout, stderr and exit status.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support;

/// How a command's standard input is given.
#[derive(Clone, Copy)]
enum Stdin<'a> {
    Bytes(&'a [u8]),
    /// A new pseudo-terminal (through python3's `pty`), as samtools' test_usage runs commands.
    Terminal,
}

/// Runs `program` with stdin on a new pseudo-terminal: python3 opens it and passes the child's
/// outputs and exit status through.
const ON_TERMINAL: &str = "import pty,subprocess,sys\nm,s=pty.openpty()\np=subprocess.run(sys.argv[1:],stdin=s,capture_output=True)\nsys.stdout.buffer.write(p.stdout);sys.stderr.buffer.write(p.stderr);sys.exit(p.returncode)";

/// Runs `program args` in `dir` with `stdin` (or nothing), delegation off.
fn run_in(dir: &Path, program: &Path, args: &[&str], stdin: Option<Stdin>) -> Output {
    let mut command = Command::new(program);
    if let Some(Stdin::Terminal) = stdin {
        command = Command::new("python3");
        command.args(["-c", ON_TERMINAL]).arg(program);
    }
    let mut child = command
        .args(args)
        .current_dir(dir)
        .env("MDSAM_SAMTOOLS", "/bin/false")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let mut input = child.stdin.take().expect("stdin");
    if let Some(Stdin::Bytes(bytes)) = stdin {
        std::io::Write::write_all(&mut input, bytes).expect("write stdin");
    }
    drop(input);
    child.wait_with_output().expect("wait")
}

/// mdsam answers `args` (in `dir`) exactly as the oracle: same bytes out, same bytes on
/// stderr, same exit status.
fn assert_same_as_oracle(oracle: &Path, dir: &Path, args: &[&str], stdin: Option<Stdin>) {
    let mut want = run_in(dir, oracle, args, stdin);
    // The oracle's pysam build renames `stdout` in samtools' texts; samtools' own say `stdout`.
    let unrename = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes).replace("samtools_stdout", "stdout").into_bytes()
    };
    want.stdout = unrename(&want.stdout);
    want.stderr = unrename(&want.stderr);
    let got = run_in(dir, &support::mdsam_bin(), args, stdin);
    let show = |o: &Output| {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(
        want.stdout == got.stdout
            && want.stderr == got.stderr
            && want.status.code() == got.status.code(),
        "samtools {}\n=== samtools\n{}=== mdsam\n{}",
        args.join(" "),
        show(&want),
        show(&got)
    );
}

#[test]
fn flags_converts_numbers_and_names_as_samtools() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_flags");
    for args in [
        &["flags"][..],
        &["flags", "0x3", "paired,DUP", "70000", "0x10abc", "", " 017", "4294967297"],
        &["flags", "UNMAP,UNMAP", "0x"],
        // Mistakes: the lines before, then the message and the usage on stderr, exit 1.
        &["flags", "3", "PAIRED,", "4"],
        &["flags", "-1"],
        &["flags", "2147483648"],
        &["flags", "--help"],
    ] {
        assert_same_as_oracle(&oracle, &dir, args, None);
    }
}

/// A header with `n` read groups whose samples repeat, one without SM and one with only LB.
fn header_with_read_groups(n: usize) -> String {
    let mut text = String::from("@HD\tVN:1.6\n@SQ\tSN:c1\tLN:10\n@SQ\tSN:c2\tLN:4\n");
    for i in 0..n {
        text.push_str(&format!("@RG\tID:g{i}\tSM:sample{}\tLB:lib{}\n", i % (n / 2 + 1), i % 3));
    }
    text.push_str("@RG\tID:bare\n");
    text
}

#[test]
fn samples_lists_read_group_samples_in_samtools_order() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_samples");
    // Enough samples for several khash resizes: the order is the table's.
    std::fs::write(dir.join("many.sam"), header_with_read_groups(61)).unwrap();
    std::fs::write(dir.join("few.sam"), header_with_read_groups(4)).unwrap();
    std::fs::write(dir.join("none.sam"), "@SQ\tSN:c1\tLN:10\n").unwrap();
    std::fs::write(dir.join("match.fa"), ">c1\nACGTACGTAC\n>c2\nACGT\n").unwrap();
    std::fs::write(dir.join("other.fa"), ">c1\nACGTACGTAC\n").unwrap();
    std::fs::write(dir.join("refs.txt"), "other.fa\nmatch.fa\n").unwrap();
    // An index that does not load is no index (N); a real one is (Y).
    std::fs::write(dir.join("many.sam.csi"), b"not empty").unwrap();
    support::run_ok(
        &oracle,
        &[
            "sort",
            "-o",
            dir.join("few.bam").to_str().unwrap(),
            dir.join("few.sam").to_str().unwrap(),
        ],
    );
    support::run_ok(&oracle, &["index", dir.join("few.bam").to_str().unwrap()]);
    std::fs::copy(dir.join("few.bam.bai"), dir.join("few.bai")).unwrap();
    for args in [
        &["samples", "many.sam", "few.sam", "none.sam"][..],
        &["samples", "-h", "-i", "-f", "other.fa", "-f", "match.fa", "many.sam", "few.sam"],
        &["samples", "-h", "-T", "LB", "-F", "refs.txt", "-o", "out.tsv", "few.sam"],
        &["samples", "-T", "LBX", "few.sam"],
        &["samples", "-X", "few.sam"],
        &["samples", "-h", "-i", "-X", "few.sam", "many.sam", "x.bai", "many.sam.csi"],
        &["samples", "-i", "few.bam", "many.sam"],
        &["samples", "-i", "-X", "few.sam", "few.bam", "few.bai", "few.bai"],
        &["samples", "few.sam", "missing.sam", "many.sam"],
        &["samples", "-f", "missing.fa", "few.sam"],
        &["samples", "-Z", "few.sam"],
        &["samples", "-?"],
    ] {
        assert_same_as_oracle(&oracle, &dir, args, None);
    }
    let out = std::fs::read(dir.join("out.tsv")).unwrap();
    assert!(out.starts_with(b"#LB\tPATH\tREFERENCE\n"), "{}", String::from_utf8_lossy(&out));
    // No input named: paths (with -X, path TAB index) come one a line on stdin.
    assert_same_as_oracle(
        &oracle,
        &dir,
        &["samples", "-i"],
        Some(Stdin::Bytes(b"few.sam\nnone.sam\n")),
    );
    assert_same_as_oracle(
        &oracle,
        &dir,
        &["samples", "-X", "-i"],
        Some(Stdin::Bytes(b"few.sam\tx\nnone.sam\tnone.bai\n")),
    );
}

#[test]
fn samples_refuses_a_stdin_line_without_an_index() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_samples_stdin");
    std::fs::write(dir.join("few.sam"), header_with_read_groups(4)).unwrap();
    // samtools' message ends with whatever errno holds; on the first line that is ENOTTY.
    assert_same_as_oracle(
        &oracle,
        &dir,
        &["samples", "-X"],
        Some(Stdin::Bytes(b"few.sam\nfew.sam\tx\n")),
    );
}

/// test_usage's `usage-13-collate`: bare `samtools collate` at a terminal prints the usage on
/// stdout, nothing on stderr, exit 1 (mdsam's usage names one option more, `--max-memory`).
#[test]
fn collate_without_arguments_prints_its_usage_on_stdout_at_a_terminal() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_collate_usage");
    let want = run_in(&dir, &oracle, &["collate"], Some(Stdin::Terminal));
    let got = run_in(&dir, &support::mdsam_bin(), &["collate"], Some(Stdin::Terminal));
    for o in [&want, &got] {
        assert!(o.stdout.starts_with(b"Usage: samtools collate "), "{o:?}");
        assert!(o.stderr.is_empty(), "{o:?}");
        assert_eq!(o.status.code(), Some(1));
    }
    // Not at a terminal: the message and the usage on stderr.
    let got = run_in(&dir, &support::mdsam_bin(), &["collate"], None);
    assert!(got.stdout.is_empty() && got.stderr.starts_with(b"collate: no input filename"));
}

#[test]
fn reference_rebuilds_from_md_and_embedded_cram_references_as_samtools() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_reference");
    let opts = mdsam::simulate::SimulateOptions {
        pairs: 1500,
        n_refs: 3,
        ref_len: 20_000,
        order: mdsam::simulate::Order::Coordinate,
        ..Default::default()
    };
    let sam = support::simulated_sam(&dir, &opts);
    let fasta = support::simulated_fasta(&dir, &opts);
    let (sam, fasta) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    support::run_ok(&oracle, &["view", "-b", "-o", dir.join("a.bam").to_str().unwrap(), sam]);
    support::run_ok(&oracle, &["index", dir.join("a.bam").to_str().unwrap()]);
    let cram = dir.join("e.cram");
    support::run_ok(
        &oracle,
        &[
            "view",
            "-C",
            "-T",
            fasta,
            "--output-fmt-option",
            "embed_ref=1",
            "-o",
            cram.to_str().unwrap(),
            sam,
        ],
    );
    support::run_ok(&oracle, &["index", cram.to_str().unwrap()]);
    // MD and CIGAR that disagree (a deletion in MD where the CIGAR has matches).
    std::fs::write(
        dir.join("bad.sam"),
        "@SQ\tSN:c1\tLN:20\nr1\t0\tc1\t3\t60\t5M\t*\t0\t0\tACGTA\t*\tMD:Z:2^A3\n",
    )
    .unwrap();
    for args in [
        &["reference", "a.bam"][..],
        &["reference", "-q", "a.bam"],
        &["reference", "-r", "chr2:100-5000", "a.bam"],
        &["reference", "-r", "chr3", "a.bam"],
        &["reference", "-r", "chr9", "a.bam"],
        &["reference", "-o", "out.fa", "e.cram"],
        &["reference", "-e", "e.cram"],
        &["reference", "-e", "-r", "chr2:1000-3000", "e.cram"],
        &["reference", "-r", "chr1:19000-19990", "e.cram"],
        &["reference", "-r", "chr1", "bad.sam"],
        &["reference", "bad.sam"],
        &["reference", "-Z", "a.bam"],
    ] {
        assert_same_as_oracle(&oracle, &dir, args, None);
    }
    assert!(std::fs::read(dir.join("out.fa")).unwrap().starts_with(b">chr1\n"));
}

/// `pad2unpad` is samtools' old name for `depad`: the same output, its own name in getopt's
/// messages.
#[test]
fn pad2unpad_is_depad() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_pad2unpad");
    std::fs::write(
        dir.join("p.sam"),
        "@SQ\tSN:c1\tLN:12\nr1\t0\tc1\t1\t60\t4M1P4M\t*\t0\t0\tACGTACGT\t*\n",
    )
    .unwrap();
    let first_line =
        |o: &Output| String::from_utf8_lossy(&o.stderr).lines().next().map(str::to_string);
    let want = run_in(&dir, &oracle, &["pad2unpad", "p.sam", "-T"], None);
    let got = run_in(&dir, &support::mdsam_bin(), &["pad2unpad", "p.sam", "-T"], None);
    assert_eq!(first_line(&got), first_line(&want));
    let got = run_in(&dir, &support::mdsam_bin(), &["pad2unpad", "-s", "p.sam"], None);
    let want = run_in(&dir, &support::mdsam_bin(), &["depad", "-s", "p.sam"], None);
    assert_eq!(got.status.code(), want.status.code());
    // The same SAM but for @PG's command line, which names the command as called.
    let without_pg = |o: &Output| support::sam_without_pg(&o.stdout);
    assert_eq!((without_pg(&got), got.stderr), (without_pg(&want), want.stderr));
}

/// The CRAM header container's text block is gzip-compressed from CRAM 3.0 on, as htslib
/// writes it: a raw one made a CRAM with a large header (peer cramsize-01's 138 KB) 2.5 times
/// samtools' size.
#[test]
fn cram_with_a_large_header_is_about_samtools_size() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_cram_header_size");
    let mut sam = String::from("@HD\tVN:1.6\n");
    for i in 0..3000 {
        sam.push_str(&format!("@SQ\tSN:contig{i}\tLN:{}\n", 1000 + i));
    }
    for i in 0..200 {
        sam.push_str(&format!("read{i}\t4\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII\n"));
    }
    std::fs::write(dir.join("in.sam"), sam).unwrap();
    let size = |program: &Path, name: &str| {
        let out = run_in(&dir, program, &["view", "-C", "-o", name, "in.sam"], None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::metadata(dir.join(name)).unwrap().len()
    };
    let (theirs, ours) =
        (size(&oracle, "samtools.cram"), size(&support::mdsam_bin(), "mdsam.cram"));
    assert!(ours * 10 <= theirs * 11, "mdsam {ours} bytes, samtools {theirs}");
    // And it reads back.
    let back = run_in(&dir, &support::mdsam_bin(), &["view", "-c", "mdsam.cram"], None);
    assert_eq!(String::from_utf8_lossy(&back.stdout).trim(), "200");
}

#[test]
fn rmdup_keeps_and_drops_the_reads_samtools_does() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("small_rmdup");
    let opts = mdsam::simulate::SimulateOptions {
        pairs: 3000,
        n_refs: 3,
        ref_len: 30_000,
        dup_rate: 0.3,
        order: mdsam::simulate::Order::Coordinate,
        ..Default::default()
    };
    let sam = support::simulated_sam(&dir, &opts);
    std::fs::rename(&sam, dir.join("in.sam")).unwrap();
    for mode in [&[][..], &["-s"], &["-S"]] {
        let mut args = vec!["rmdup"];
        args.extend_from_slice(mode);
        args.extend(["in.sam", "out.sam"]);
        let want = run_in(&dir, &oracle, &args, None);
        let want_sam = std::fs::read(dir.join("out.sam")).unwrap();
        let got = run_in(&dir, &support::mdsam_bin(), &args, None);
        let got_sam = std::fs::read(dir.join("out.sam")).unwrap();
        assert_eq!(got.status.code(), want.status.code(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&got.stderr), String::from_utf8_lossy(&want.stderr));
        assert!(got_sam == want_sam, "rmdup {mode:?}: SAM output differs");
    }
    for args in
        [&["rmdup"][..], &["rmdup", "-Z", "in.sam", "x.sam"], &["rmdup", "missing.bam", "x.bam"]]
    {
        assert_same_as_oracle(&oracle, &dir, args, None);
    }
}
