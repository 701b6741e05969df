//! `ampliconstats` and `bam2fq` against the samtools 1.24 oracle: simulated coordinate-sorted
//! reads (SAM and BAM) over a generated primer BED, one and two inputs, the main option sets
//! (depths, template coordinate binning and counts, margins, flags, single-reference layout,
//! sample names, `-o`), and bad BEDs, inputs and options: report, stderr and exit status.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, oracle_ok, primer_bed, run, scratch_dir, simulated_sam};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The report without its version line (the oracle's names its pysam build).
fn without_version(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|l| !l.starts_with("SS\tSamtools version:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs `ampliconstats ARGS` with both (`{dir}` in an argument is the scratch directory);
/// the report (or `-o` file `out`), stderr and exit status must agree.
fn same_stats(oracle: &Path, dir: &Path, args: &[&str], out: Option<&str>) {
    let mut results = Vec::new();
    for (who, program) in [("mdsam", mdsam_bin()), ("oracle", oracle.to_path_buf())] {
        let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", s(dir))).collect();
        let mut argv = vec!["ampliconstats"];
        argv.extend(args.iter().map(String::as_str));
        let o = run(&program, &argv);
        let report = match out {
            Some(name) => std::fs::read(dir.join(name)).unwrap_or_default(),
            None => o.stdout.clone(),
        };
        results.push((who, without_version(&report), o.stderr, o.status.code()));
    }
    let (m, o) = (&results[0], &results[1]);
    assert_eq!(m.3, o.3, "exit status of ampliconstats {args:?}");
    assert_eq!(
        String::from_utf8_lossy(&m.2),
        String::from_utf8_lossy(&o.2),
        "stderr of ampliconstats {args:?}"
    );
    if m.1 != o.1 {
        let line = m.1.lines().zip(o.1.lines()).position(|(a, b)| a != b);
        panic!(
            "ampliconstats {args:?}: reports differ (line {line:?}; {} and {} lines)",
            m.1.lines().count(),
            o.1.lines().count()
        );
    }
}

/// Two simulated coordinate-sorted inputs over two short references (SAM, and BAM made by the
/// oracle), and the primer BED over them.
fn inputs(dir: &Path, oracle: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let opts = |seed| SimulateOptions {
        pairs: 4000,
        seed,
        n_refs: 2,
        ref_len: 30_000,
        order: Order::Coordinate,
        ..Default::default()
    };
    let first = simulated_sam(dir, &opts(5));
    let second_sam = simulated_sam(dir, &opts(9));
    let second = dir.join("second.bam");
    oracle_ok(oracle, &["view", "-b", "-o", s(&second), s(&second_sam)]);
    let bed = primer_bed(dir, &first);
    (first, second, bed)
}

/// The BED's lines for the first reference only.
fn first_reference_bed(dir: &Path, bed: &Path) -> PathBuf {
    let text = std::fs::read_to_string(bed).unwrap();
    let first = text.split('\t').next().unwrap().to_string();
    let lines: String = text
        .lines()
        .filter(|l| l.starts_with(&format!("{first}\t")))
        .map(|l| l.to_string() + "\n")
        .collect();
    let path = dir.join("one_ref.bed");
    std::fs::write(&path, lines).unwrap();
    path
}

/// The BED with an alternative primer beside every third amplicon's primers.
fn alternative_primer_bed(dir: &Path, bed: &Path) -> PathBuf {
    let mut out = String::new();
    for (i, line) in std::fs::read_to_string(bed).unwrap().lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if i % 6 < 2 {
            let f: Vec<&str> = line.split('\t').collect();
            let (l, r): (i64, i64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
            let shift = if f[5] == "+" { 7 } else { -5 };
            out.push_str(&format!(
                "{}\t{}\t{}\t{}_alt\t60\t{}\n",
                f[0],
                l + shift,
                r + shift,
                f[3],
                f[5]
            ));
        }
    }
    let path = dir.join("alt.bed");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn ampliconstats_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("ampliconstats_options");
    let (first, second, bed) = inputs(&dir, &oracle);
    let (first, second, bed) = (s(&first), s(&second), s(&bed));
    let one_ref = first_reference_bed(&dir, Path::new(bed));
    let alt = alternative_primer_bed(&dir, Path::new(bed));
    same_stats(&oracle, &dir, &[bed, first], None);
    same_stats(&oracle, &dir, &["-c", "1", bed, first, second], None);
    same_stats(
        &oracle,
        &dir,
        &["-@", "2", "-c", "0", "-d", "1,5,20", s(&alt), second, first],
        None,
    );
    same_stats(&oracle, &dir, &["-S", "-t", "50", "-c", "2", "-m", "10", s(&one_ref), first], None);
    same_stats(&oracle, &dir, &["-b", "20", "-c", "0", "-D", "0.2", bed, first, second], None);
    same_stats(&oracle, &dir, &["-b", "5", "-c", "1", "-m", "5", s(&one_ref), second, first], None);
    same_stats(
        &oracle,
        &dir,
        &["-s", "-F", "0x904", "-f", "PAIRED", "-a", "400", bed, first],
        None,
    );
    same_stats(&oracle, &dir, &["-F", "0", "--tcoord-min-count=3", bed, second], None);
    same_stats(&oracle, &dir, &["-o", "{dir}/out.txt", bed, first, second], Some("out.txt"));
}

#[test]
fn ampliconstats_fails_as_the_oracle_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("ampliconstats_bad");
    let (first, _, bed) = inputs(&dir, &oracle);
    let (first, bed) = (s(&first), s(&bed));
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let short = write("short.bed", "chr1\t10\t30\n");
    let strand = write("strand.bed", "chr1\t10\t30\tp\t1\t*\n");
    let empty = write("empty.bed", "");
    let reverse_first = write("rev.bed", "chr1\t10\t30\tp\t1\t-\nchr1\t300\t330\tq\t1\t+\n");
    let open_end = write("open.bed", "chr1\t10\t30\tp\t1\t+\n");
    let garbage = write("garbage.bin", "\u{1}\u{2}garbage");
    for args in [
        vec!["{dir}/missing.bed", first],
        vec![short.as_str(), first],
        vec![strand.as_str(), first],
        vec![empty.as_str(), first],
        vec![reverse_first.as_str(), first],
        vec![open_end.as_str(), first],
        vec![bed, first, "{dir}/missing.bam"],
        vec![bed, garbage.as_str()],
        vec![bed, bed],
        vec!["-S", bed, first],
        vec!["-a", "10", bed, first],
        vec!["-l", "300", bed, first],
        vec!["-f", "nonsense", bed, first],
        vec!["-o", "{dir}/no/such/dir", bed, first],
        vec!["--bogus", bed, first],
        vec!["-h"],
        vec![],
    ] {
        same_stats(&oracle, &dir, &args, None);
    }
}

/// `bam2fq` is `fastq` under its old name: the same reads, a usage naming `bam2fq`.
#[test]
fn bam2fq_is_fastq_under_its_old_name() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("ampliconstats_bam2fq");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 500, seed: 4, ..Default::default() });
    for args in [
        vec!["bam2fq", s(&sam)],
        vec!["bam2fq", "-n", "-F", "0x900", s(&sam)],
        vec!["bam2fq", "--bogus"],
    ] {
        let m = run(&mdsam_bin(), &args);
        let o = run(&oracle, &args);
        assert_eq!(m.status.code(), o.status.code(), "{args:?}");
        assert!(m.stdout == o.stdout, "stdout of {args:?}");
        assert_eq!(
            String::from_utf8_lossy(&m.stderr),
            String::from_utf8_lossy(&o.stderr),
            "{args:?}"
        );
    }
}
