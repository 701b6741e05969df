//! `view` against the samtools 1.24 oracle on simulated data: for each option set both tools run on
//! the same input and must write the same SAM text, `@PG` lines aside. BAM and `.sam.gz` outputs
//! are decoded with the oracle (`view -h --no-PG`) before the comparison, so the check is about
//! content: mdsam's BGZF bytes (libdeflate) are not expected to equal htslib's (zlib).
//!
//! Each test makes one input and runs a table of option sets over it, so the pysam oracle
//! (~0.3 s a start) is called about once per option set, plus twice per compressed output.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, sam_without_pg, scratch_dir, simulated_sam,
    to_sam,
};

/// Realistic data over three short references, so regions and BED intervals hold many reads.
fn simulation(order: Order, seed: u64) -> SimulateOptions {
    SimulateOptions {
        pairs: 3_000,
        seed,
        n_refs: 3,
        ref_len: 200_000,
        order,
        extra_tag_rate: 0.2,
        ..SimulateOptions::default()
    }
}

/// One option set: a label for failure messages and the arguments after `view`.
///
/// In `args`, `{in}` is the input, `{dir}` the scratch directory and `{out}` a path prefix that
/// differs per tool (`{dir}/<label>.mdsam` or `.oracle`); every argument containing `{out}` names
/// an output file that is compared. Without `{in}` the input goes last. `{rg1}`..`{rg4}` are the
/// input's read-group IDs (the simulator's flowcell name depends on the seed).
struct Case {
    label: &'static str,
    args: &'static [&'static str],
}

const fn case(label: &'static str, args: &'static [&'static str]) -> Case {
    Case { label, args }
}

/// What one tool did for a case: its exit status, stdout, and the output files it named.
struct Run {
    output: Output,
    files: Vec<PathBuf>,
}

fn file_label(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// The arguments of `case` for `tool` ("mdsam" or "oracle"), and the output files they name.
fn expand(case: &Case, dir: &Path, input: &Path, tool: &str) -> (Vec<String>, Vec<PathBuf>) {
    let read_groups = read_group_ids(dir);
    let dir_text = dir.to_str().expect("UTF-8 path");
    let out = format!("{dir_text}/{}.{tool}", file_label(case.label));
    let mut files = Vec::new();
    let mut args: Vec<String> = case
        .args
        .iter()
        .map(|a| {
            let mut expanded = a
                .replace("{in}", input.to_str().expect("UTF-8 path"))
                .replace("{dir}", dir_text)
                .replace("{out}", &out);
            for (i, id) in read_groups.iter().enumerate() {
                expanded = expanded.replace(&format!("{{rg{}}}", i + 1), id);
            }
            if a.contains("{out}") {
                files.push(PathBuf::from(&expanded));
            }
            expanded
        })
        .collect();
    if !case.args.iter().any(|a| a.contains("{in}")) {
        args.push(input.to_str().expect("UTF-8 path").to_string());
    }
    (args, files)
}

fn run_tool(program: &Path, args: &[String], stdin: Option<&Path>) -> Output {
    let mut command = Command::new(program);
    command.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        Some(path) => {
            command.stdin(Stdio::piped());
            let mut child = command.spawn().expect("spawn");
            let data = std::fs::read(path).expect("read stdin file");
            let mut pipe = child.stdin.take().expect("stdin pipe");
            let writer = std::thread::spawn(move || {
                let _ = pipe.write_all(&data);
            });
            let output = child.wait_with_output().expect("wait");
            writer.join().expect("stdin writer");
            output
        }
        None => command.output().expect("run"),
    }
}

fn run_case(program: &Path, case: &Case, dir: &Path, input: &Path, tool: &str) -> Run {
    let (mut args, files) = expand(case, dir, input, tool);
    args.insert(0, "view".to_string());
    for file in &files {
        let _ = std::fs::remove_file(file);
    }
    Run { output: run(program, &args.iter().map(String::as_str).collect::<Vec<_>>()), files }
}

/// A file's content as SAM text without `@PG` lines; BAM and gzipped SAM go through the oracle.
fn file_as_sam(oracle: &Path, path: &Path) -> Vec<u8> {
    let name = path.to_string_lossy();
    let text = if name.ends_with(".bam") || name.ends_with(".gz") {
        to_sam(oracle, path)
    } else {
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    };
    sam_without_pg(&text)
}

fn describe(case: &Case) -> String {
    format!("[{}] view {}", case.label, case.args.join(" "))
}

/// Whether a case's output holds a record or a non-zero count, so that agreeing on it means
/// something.
fn selects_something(stdout: &[u8], files: &[PathBuf]) -> bool {
    let has_record = |text: &[u8]| {
        text.split(|&b| b == b'\n').any(|l| !l.is_empty() && !l.starts_with(b"@") && l != b"0")
    };
    has_record(stdout) || files.iter().any(|f| std::fs::metadata(f).is_ok_and(|m| m.len() > 0))
}

/// Checks that both tools succeed and write the same stdout and the same output files.
fn assert_same_runs(oracle: &Path, case: &Case, mdsam: &Run, samtools: &Run) {
    let what = describe(case);
    assert!(
        samtools.output.status.success(),
        "{what}: the oracle failed ({}):\n{}",
        samtools.output.status,
        String::from_utf8_lossy(&samtools.output.stderr)
    );
    assert!(
        mdsam.output.status.success(),
        "{what}: mdsam failed ({}):\n{}",
        mdsam.output.status,
        String::from_utf8_lossy(&mdsam.output.stderr)
    );
    assert_same_sam(
        &sam_without_pg(&mdsam.output.stdout),
        &sam_without_pg(&samtools.output.stdout),
        &format!("{what} (stdout; left mdsam, right samtools)"),
    );
    assert!(selects_something(&samtools.output.stdout, &samtools.files), "{what}: selects nothing");
    for (mine, theirs) in mdsam.files.iter().zip(&samtools.files) {
        assert!(theirs.exists(), "{what}: the oracle wrote no {}", theirs.display());
        assert!(mine.exists(), "{what}: mdsam wrote no {}", mine.display());
        assert_same_sam(
            &file_as_sam(oracle, mine),
            &file_as_sam(oracle, theirs),
            &format!("{what} ({}; left mdsam, right samtools)", mine.display()),
        );
    }
}

/// Runs every case with both tools on `input` and compares them.
fn check_cases(oracle: &Path, dir: &Path, input: &Path, cases: &[Case]) {
    for case in cases {
        let mdsam = run_case(&mdsam_bin(), case, dir, input, "mdsam");
        let samtools = run_case(oracle, case, dir, input, "oracle");
        assert_same_runs(oracle, case, &mdsam, &samtools);
    }
}

/// A simulated SAM and the oracle's BAM of it, in `dir`.
fn simulated_bam(oracle: &Path, dir: &Path, opts: &SimulateOptions) -> (PathBuf, PathBuf) {
    let sam = simulated_sam(dir, opts);
    let bam = sam.with_extension("bam");
    oracle_ok(oracle, &["view", "--no-PG", "-b", "-o", path_str(&bam), path_str(&sam)]);
    (sam, bam)
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// The read names of every `step`-th record of a SAM file, one a line.
fn every_nth_name(sam: &Path, step: usize) -> String {
    let text = std::fs::read_to_string(sam).expect("read SAM");
    let names: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('@'))
        .step_by(step)
        .filter_map(|l| l.split('\t').next())
        .collect();
    names.join("\n") + "\n"
}

/// The read-group IDs that [`write_side_files`] saved for `dir`'s input, if any.
fn read_group_ids(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("rg-all.txt"))
        .map(|text| text.lines().map(String::from).collect())
        .unwrap_or_default()
}

/// Writes the side files the filter cases name: a BED, read-group and tag-value lists, a name
/// list, and every read-group ID of `sam` (`rg-all.txt`, for `{rgN}`).
fn write_side_files(dir: &Path, sam: &Path) {
    let text = std::fs::read_to_string(sam).expect("read SAM");
    let ids: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with('@'))
        .filter(|l| l.starts_with("@RG\t"))
        .filter_map(|l| l.split('\t').find_map(|f| f.strip_prefix("ID:")))
        .collect();
    assert!(ids.len() >= 4, "the simulation should have four read groups");
    std::fs::write(dir.join("rg-all.txt"), ids.join("\n") + "\n").expect("write RG IDs");
    let bed = "# comment\nchr1\t1000\t30000\nchr1\t25000\t60000\nchr2\t150000\t151000\n\
               chr3\t0\t5\nchr3\t90000\t190000\nchrUnknown\t1\t100\n";
    std::fs::write(dir.join("targets.bed"), bed).expect("write BED");
    std::fs::write(dir.join("rg.txt"), format!("{}\n{}\n", ids[0], ids[3])).expect("write RG list");
    std::fs::write(dir.join("rg-values.txt"), format!("{}\n{}\n", ids[1], ids[2]))
        .expect("write values");
    std::fs::write(dir.join("names.txt"), every_nth_name(sam, 7)).expect("write names");
}

/// Filters, edits, counts, sampling and outputs on a name-order BAM from the oracle.
#[test]
fn filters_and_edits_on_bam_input() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("differential_view_filters");
    let (sam, bam) = simulated_bam(&oracle, &dir, &simulation(Order::Name, 21));
    write_side_files(&dir, &sam);
    let cases = [
        case("BAM to SAM with header", &["-h"]),
        case("BAM to SAM records only", &[]),
        case("count", &["-c"]),
        case("count with flag filters", &["-c", "-f", "2", "-F", "0x904"]),
        case("count with mapq and expression", &["-c", "-q", "20", "-e", "!flag.secondary"]),
        case("count threaded", &["-c", "-@", "2", "-F", "UNMAP"]),
        case("require flags", &["-f", "0x41", "-F", "0x100"]),
        case("exclude flag names", &["-h", "-F", "UNMAP,SECONDARY,SUPPLEMENTARY"]),
        case("exclude all of", &["-G", "0x90"]),
        case("include any", &["--rf", "0x900"]),
        case("include any names with -G", &["--rf", "DUP,QCFAIL", "-G", "0x3"]),
        case("min mapq 1", &["-q", "1"]),
        case("min mapq 60", &["-q", "60"]),
        case("BED targets", &["-L", "{dir}/targets.bed"]),
        case("read group", &["-h", "-r", "{rg2}"]),
        case("read group file", &["-h", "-R", "{dir}/rg.txt"]),
        case("read group file negated", &["-h", "-R", "^{dir}/rg.txt"]),
        case("read group and no read group", &["-c", "-n", "-r", "{rg3}"]),
        case("library", &["-l", "LIB2"]),
        case("remove tags", &["-x", "XS,MD", "-x", "XB"]),
        case("keep tags", &["--keep-tag", "RG,NM,XD"]),
        case("keep tags with caret", &["-x", "^AS,XF,XH"]),
        case("-s fraction", &["-h", "-s", "0.25"]),
        case("-s seed and fraction", &["-s", "7.3"]),
        case("subsample with seed", &["-h", "--subsample", "0.4", "--subsample-seed", "3"]),
        case("subsample auto seed", &["--subsample", "0.6"]),
        case("expr flags", &["-e", "flag.paired && flag.proper_pair && !flag.reverse"]),
        case("expr mapq and pos", &["-e", "mapq > 30 && pos < 100000"]),
        case("expr integer tags", &["-e", "[NM] > 2 || [AS] - [XS] > 40"]),
        case("expr string and char tags", &["-e", "[XT] == \"U\" || [RG] =~ \"3$\""]),
        case("expr float tag", &["-e", "[XF] > 0.5"]),
        case("expr qname regex", &["-e", "qname =~ \":1[12][0-9][0-9]:\""]),
        case("expr rlen and cigar", &["-e", "rlen > 150 || sclen > 10 || ncigar > 2"]),
        case("expr missing tag", &["-e", "!([SA]) && exists([XI])"]),
        case("tag present", &["-d", "XT"]),
        case("tag value", &["-d", "RG:{rg1}"]),
        case("tag values from file", &["-D", "RG:{dir}/rg-values.txt"]),
        case("read names", &["-N", "{dir}/names.txt"]),
        case("read names negated", &["-c", "-N", "^{dir}/names.txt"]),
        case("min query length", &["-m", "140"]),
        case("add and remove flags", &["--add-flags", "0x400", "--remove-flags", "PAIRED,REVERSE"]),
        case("unmap rejected", &["-p", "-q", "30"]),
        case("unselected to SAM", &["-q", "30", "-U", "{out}.unselected.sam"]),
        case("unselected to BAM", &["-h", "-f", "2", "-U", "{out}.unselected.bam"]),
        case("BAM to BAM", &["-b", "-F", "4", "-o", "{out}.bam"]),
        case("uncompressed BAM", &["-u", "-o", "{out}.u.bam"]),
        case("fast BAM", &["-1", "-q", "10", "-o", "{out}.fast.bam"]),
        case("BAM level 9", &["--output-fmt-option", "level=9", "-b", "-o", "{out}.9.bam"]),
        case("explicit SAM format", &["-O", "sam", "-h", "-x", "RX"]),
        case("gzipped SAM output", &["-h", "-o", "{out}.sam.gz"]),
        case("-O sam.gz whatever the name", &["-O", "sam.gz", "-h", "-o", "{out}.O.gz"]),
    ];
    check_cases(&oracle, &dir, &bam, &cases);
}

/// SAM input: SAM → SAM, SAM → BAM → SAM, stdin, and thread counts.
#[test]
fn sam_input_and_round_trips() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("differential_view_sam_input");
    let sam = simulated_sam(&dir, &simulation(Order::Coordinate, 22));
    let cases = [
        case("SAM to SAM with header", &["-h"]),
        case("SAM to BAM", &["-b", "-o", "{out}.bam"]),
        case("SAM count with filters", &["-c", "-F", "0x900", "-q", "5"]),
        case("SAM with expression", &["-h", "-e", "tlen > 300 || tlen < -300"]),
    ];
    check_cases(&oracle, &dir, &sam, &cases);

    // SAM → BAM with mdsam, then BAM → SAM with both tools.
    let bam = dir.join("mdsam-made.bam");
    let made = run(&mdsam_bin(), &["view", "-b", "-o", path_str(&bam), path_str(&sam)]);
    assert!(made.status.success(), "mdsam SAM to BAM: {}", String::from_utf8_lossy(&made.stderr));
    check_cases(&oracle, &dir, &bam, &[case("mdsam BAM back to SAM", &["-h"])]);

    // Standard input, SAM and BAM.
    for (label, input) in [("stdin SAM", &sam), ("stdin BAM", &bam)] {
        let args: Vec<String> = ["view", "-h", "-F", "0x4", "-"].map(String::from).to_vec();
        let mine = run_tool(&mdsam_bin(), &args, Some(input));
        let theirs = run_tool(&oracle, &args, Some(input));
        assert!(theirs.status.success(), "[{label}] oracle failed");
        assert!(mine.status.success(), "[{label}] mdsam failed: {}", stderr_text(&mine));
        assert_same_sam(
            &sam_without_pg(&mine.stdout),
            &sam_without_pg(&theirs.stdout),
            &format!("[{label}] view -h -F 0x4 - (left mdsam, right samtools)"),
        );
    }
}

fn stderr_text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `-@ 2` writes the same bytes as `-@ 0`, for SAM and BAM outputs and SAM and BAM inputs.
#[test]
fn thread_count_does_not_change_output() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("differential_view_threads");
    let (sam, bam) = simulated_bam(&oracle, &dir, &simulation(Order::Name, 23));
    for input in [&sam, &bam] {
        for (ext, extra) in [("sam", &["-h"][..]), ("bam", &["-b"][..]), ("u.bam", &["-u"][..])] {
            let mut outputs = Vec::new();
            for threads in ["0", "2"] {
                let out = dir.join(format!("threads-{threads}.{ext}"));
                let mut args = vec!["view", "--no-PG", "-@", threads, "-q", "1", "-x", "XS"];
                args.extend_from_slice(extra);
                args.extend(["-o", path_str(&out), path_str(input)]);
                let result = run(&mdsam_bin(), &args);
                assert!(result.status.success(), "{args:?}: {}", stderr_text(&result));
                outputs.push(std::fs::read(&out).expect("read output"));
            }
            assert!(
                outputs[0] == outputs[1],
                "view {} -> .{ext}: -@ 2 output differs from -@ 0",
                input.display()
            );
        }
    }
}

/// Index queries on a coordinate-sorted BAM indexed by the oracle, with `.bai` and with `.csi`.
#[test]
fn regions_on_indexed_bam() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("differential_view_regions");
    let (sam, bam) = simulated_bam(&oracle, &dir, &simulation(Order::Coordinate, 24));
    write_side_files(&dir, &sam);
    oracle_ok(&oracle, &["index", path_str(&bam)]);
    let csi_bam = dir.join("csi-only.bam");
    std::fs::copy(&bam, &csi_bam).expect("copy BAM");
    oracle_ok(&oracle, &["index", "-c", path_str(&csi_bam)]);
    assert!(!csi_bam.with_extension("bam.bai").exists());

    let bai_cases = [
        case("whole reference", &["{in}", "chr2"]),
        case("one interval", &["-h", "{in}", "chr1:10000-50000"]),
        case(
            "several regions out of order",
            &["{in}", "chr3:5000-9000", "chr1:1-3000", "chr2:150000"],
        ),
        case("overlapping regions", &["{in}", "chr1:1000-20000", "chr1:15000-40000"]),
        case("overlapping regions -M", &["-M", "{in}", "chr1:1000-20000", "chr1:15000-40000"]),
        case("unplaced reads", &["{in}", "*"]),
        case("count in region", &["-c", "-F", "0x400", "{in}", "chr3"]),
        case("open-ended region", &["-c", "{in}", "chr1:150000-"]),
        case(
            "region with filters",
            &["-q", "30", "-e", "[NM] > 1", "{in}", "chr1", "chr2:1-100000"],
        ),
        case("fetch pairs", &["-P", "{in}", "chr1:50000-60000"]),
        case(
            "fetch pairs several",
            &["-P", "-f", "1", "{in}", "chr2:10000-12000", "chr1:80000-81000"],
        ),
        case("BED with -M", &["-M", "-L", "{dir}/targets.bed", "{in}"]),
        case("BED as filter with region", &["-L", "{dir}/targets.bed", "{in}", "chr1"]),
        case(
            "BED with -M and regions",
            &["-M", "-L", "{dir}/targets.bed", "{in}", "chr1:20000-40000"],
        ),
        case("region to BAM", &["-b", "-o", "{out}.bam", "{in}", "chr2:100000-150000", "*"]),
        case("explicit index", &["-X", "{in}", "{in}.bai", "chr3:1-20000"]),
    ];
    check_cases(&oracle, &dir, &bam, &bai_cases);

    let csi_cases = [
        case("csi whole reference", &["{in}", "chr1"]),
        case("csi regions -M", &["-M", "{in}", "chr2:1-50000", "chr2:40000-90000", "chr3"]),
        case("csi count", &["-c", "{in}", "chr3:100000-110000"]),
        case("csi unplaced", &["{in}", "*"]),
        case("csi explicit index", &["-X", "{in}", "{in}.csi", "chr1:1-10000"]),
    ];
    check_cases(&oracle, &dir, &csi_bam, &csi_cases);
}

/// Index queries on a coordinate-sorted `.sam.gz` compressed and indexed (`index -c`) by the
/// oracle: each chunk is read line by line, and lines cross BGZF blocks.
#[test]
fn regions_on_indexed_sam_gz() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("differential_view_sam_gz_regions");
    let sam = simulated_sam(&dir, &simulation(Order::Coordinate, 25));
    write_side_files(&dir, &sam);
    let sam_gz = dir.join("input.sam.gz");
    oracle_ok(
        &oracle,
        &["view", "-h", "--no-PG", "-O", "sam.gz", "-o", path_str(&sam_gz), path_str(&sam)],
    );
    oracle_ok(&oracle, &["index", "-c", path_str(&sam_gz)]);
    assert!(dir.join("input.sam.gz.csi").exists());

    let cases = [
        case("sam.gz whole reference", &["{in}", "chr2"]),
        case("sam.gz one interval with header", &["-h", "{in}", "chr1:10000-50000"]),
        case(
            "sam.gz several regions out of order",
            &["{in}", "chr3:5000-9000", "chr1:1-3000", "chr2:150000"],
        ),
        case("sam.gz overlapping regions", &["{in}", "chr1:1000-20000", "chr1:15000-40000"]),
        case("sam.gz regions -M", &["-M", "{in}", "chr2:1-50000", "chr2:40000-90000", "chr3"]),
        case("sam.gz unplaced", &["{in}", "*"]),
        case("sam.gz count", &["-c", "{in}", "chr3:100000-110000"]),
        case("sam.gz fetch pairs", &["-P", "{in}", "chr1:50000-60000"]),
        case("sam.gz BED with -M", &["-M", "-L", "{dir}/targets.bed", "{in}"]),
        case("sam.gz to BAM", &["-b", "-o", "{out}.bam", "{in}", "chr2:100000-150000"]),
        case("sam.gz explicit index", &["-X", "{in}", "{in}.csi", "chr1:1-10000"]),
        case("sam.gz unknown reference", &["{in}", "chrX:1-10", "chr3:1-2000"]),
    ];
    check_cases(&oracle, &dir, &sam_gz, &cases);
}
