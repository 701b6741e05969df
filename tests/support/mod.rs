//! Shared helpers for the integration tests: finding the samtools 1.24 oracle and `../shared`,
//! running commands, normalising SAM text, comparing it, and writing simulated inputs.
//!
//! Absence rule: when the oracle or `../shared` is missing, a test prints why and returns early,
//! unless `CI=true`, where absence is a failure.

// Each test module uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use mdsam::simulate::{SimulateOptions, SimulationSummary, write_fasta, write_sam_with_summary};

const ORACLE_VERSION_PREFIX: &[u8] = b"samtools 1.24";
const ORACLE_MISSING: &str = "samtools 1.24 oracle not found (run ../shared/tools/setup-oracle.sh)";

fn running_under_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value == "true")
}

/// Returns `None` after printing the skip reason, or panics under CI.
fn absent<T>(what: &str) -> Option<T> {
    if running_under_ci() {
        panic!("{what}; under CI=true this is a failure");
    }
    eprintln!("skipping: {what}");
    None
}

fn is_oracle(path: &Path) -> bool {
    Command::new(path).arg("version").output().is_ok_and(|output| {
        output.status.success() && output.stdout.starts_with(ORACLE_VERSION_PREFIX)
    })
}

/// The samtools 1.24 binary: `$MDSAM_ORACLE`, else `$HOME/.cache/samtools-oracle/bin/samtools`,
/// checked with `samtools version`. `None` (after printing why) when absent outside CI.
pub fn oracle() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let candidate = match std::env::var_os("MDSAM_ORACLE") {
            Some(path) => PathBuf::from(path),
            None => {
                let home = std::env::var_os("HOME")?;
                PathBuf::from(home).join(".cache/samtools-oracle/bin/samtools")
            }
        };
        is_oracle(&candidate).then_some(candidate)
    });
    match found {
        Some(path) => Some(path.clone()),
        None => absent(ORACLE_MISSING),
    }
}

/// `../shared` next to the repository (design notes, seeds, peer tests).
pub fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if dir.is_dir() { Some(dir) } else { absent(&format!("{} not found", dir.display())) }
}

/// The `mdsam` binary built for these tests.
pub fn mdsam_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mdsam"))
}

/// `mdsam args…` with delegation to a real samtools impossible (`MDSAM_SAMTOOLS=/bin/false`).
pub fn mdsam_native(args: &[&str]) -> Output {
    Command::new(mdsam_bin())
        .args(args)
        .env("MDSAM_SAMTOOLS", "/bin/false")
        .output()
        .expect("run mdsam")
}

/// A fresh, empty directory for one test under cargo's target tmpdir.
pub fn scratch_dir(test_name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test_name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

/// Runs `cmd args…` and returns its output, whatever its exit status.
pub fn run(cmd: &Path, args: &[&str]) -> Output {
    Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", cmd.display()))
}

/// Runs `cmd args…` and panics with its stderr unless it succeeds.
pub fn run_ok(cmd: &Path, args: &[&str]) -> Output {
    let output = run(cmd, args);
    assert!(
        output.status.success(),
        "{} {} failed ({}):\n{}",
        cmd.display(),
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs an oracle subcommand and panics unless it succeeds.
///
/// The pysam shim made by `setup-oracle.sh` crashes (SIGSEGV) on `calmd`, whose output pysam
/// cannot capture with `is_usage=True`; for that subcommand only, the shim's own Python runs
/// samtools with stdout passed straight through instead.
pub fn oracle_ok(oracle: &Path, args: &[&str]) -> Output {
    if args.first() == Some(&"calmd")
        && let Some(python) = pysam_interpreter(oracle)
    {
        const DISPATCH: &str = "import sys\nfrom pysam.libcutils import _pysam_dispatch\n\
            sys.exit(_pysam_dispatch('samtools', sys.argv[1], sys.argv[2:], catch_stdout=False, is_usage=True)[0])";
        let mut full = vec!["-c", DISPATCH];
        full.extend_from_slice(args);
        return run_ok(&python, &full);
    }
    run_ok(oracle, args)
}

/// The interpreter of a pysam shim script, if `oracle` is one.
fn pysam_interpreter(oracle: &Path) -> Option<PathBuf> {
    let script = std::fs::read_to_string(oracle).ok()?;
    if !script.contains("_pysam_dispatch") {
        return None;
    }
    let interpreter = script.lines().next()?.strip_prefix("#!")?.trim();
    Some(PathBuf::from(interpreter))
}

/// `text` without its `@PG` lines.
pub fn sam_without_pg(text: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|&b| b == b'\n') {
        if !line.starts_with(b"@PG\t") {
            kept.extend_from_slice(line);
        }
    }
    kept
}

/// Only the records of SAM `text` (no header lines).
pub fn sam_records(text: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|&b| b == b'\n') {
        if !line.starts_with(b"@") {
            kept.extend_from_slice(line);
        }
    }
    kept
}

/// Any SAM or BAM file as SAM text with its header, as the oracle prints it (`view -h --no-PG`).
pub fn to_sam(oracle: &Path, path: &Path) -> Vec<u8> {
    oracle_ok(oracle, &["view", "-h", "--no-PG", path.to_str().expect("UTF-8 path")]).stdout
}

/// Panics unless mdsam's run (`ours`) and samtools' (`theirs`) printed the same stderr and
/// stdout and exited alike.
pub fn assert_same_outcome(ours: &Output, theirs: &Output, context: &str) {
    assert_eq!(
        String::from_utf8_lossy(&ours.stderr),
        String::from_utf8_lossy(&theirs.stderr),
        "stderr of {context}"
    );
    assert!(ours.stdout == theirs.stdout, "stdout of {context} differs");
    assert_eq!(ours.status.code(), theirs.status.code(), "exit status of {context}");
}

/// Panics with the first differing line (numbered from 1) unless `a` and `b` are the same SAM text.
pub fn assert_same_sam(a: &[u8], b: &[u8], context: &str) {
    if a == b {
        return;
    }
    let (mut a_lines, mut b_lines) = (a.split(|&c| c == b'\n'), b.split(|&c| c == b'\n'));
    for number in 1.. {
        match (a_lines.next(), b_lines.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                let show = |line: Option<&[u8]>| {
                    line.map_or("<end of text>".to_string(), |l| {
                        String::from_utf8_lossy(l).into_owned()
                    })
                };
                panic!(
                    "{context}: SAM differs at line {number}:\n  left:  {}\n  right: {}",
                    show(x),
                    show(y)
                );
            }
        }
    }
}

/// Writes the simulator's SAM for `opts` to `dir/sim-<seed>-<order>.sam` and returns its path and
/// what the generator reported.
pub fn simulated_sam_with_summary(
    dir: &Path,
    opts: &SimulateOptions,
) -> (PathBuf, SimulationSummary) {
    let path =
        dir.join(format!("sim-{}-{:?}-{}.sam", opts.seed, opts.order, opts.pairs).to_lowercase());
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create SAM"));
    let summary = write_sam_with_summary(opts, &mut file).expect("write simulated SAM");
    (path, summary)
}

/// A primer BED over the simulated references: amplicons every 210 bases, a 25-base forward
/// primer at the start and a 25- to 30-base reverse primer 400 bases on.
pub fn primer_bed(dir: &Path, sam: &Path) -> PathBuf {
    let text = std::fs::read_to_string(sam).expect("read SAM");
    let mut bed = String::new();
    for line in text.lines().take_while(|l| l.starts_with('@')).filter(|l| l.starts_with("@SQ")) {
        let field = |key: &str| {
            line.split('\t').find_map(|f| f.strip_prefix(key)).expect("@SQ field").to_string()
        };
        let (name, len): (String, i64) = (field("SN:"), field("LN:").parse().expect("LN"));
        let mut x = 100;
        let mut i = 0;
        while x + 450 < len {
            bed.push_str(&format!("{name}\t{x}\t{}\tamp{i}_LEFT\t60\t+\n", x + 25));
            bed.push_str(&format!(
                "{name}\t{}\t{}\tamp{i}_RIGHT\t60\t-\n",
                x + 400,
                x + 425 + i % 6
            ));
            x += 210;
            i += 1;
        }
    }
    let path = dir.join("primers.bed");
    std::fs::write(&path, bed).expect("write BED");
    path
}

/// Writes the simulator's SAM for `opts` into `dir` and returns its path.
pub fn simulated_sam(dir: &Path, opts: &SimulateOptions) -> PathBuf {
    simulated_sam_with_summary(dir, opts).0
}

/// Writes the reference of `opts` to `dir/ref-<seed>.fa` and returns its path.
pub fn simulated_fasta(dir: &Path, opts: &SimulateOptions) -> PathBuf {
    let path = dir.join(format!("ref-{}.fa", opts.seed));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create FASTA"));
    write_fasta(opts, &mut file).expect("write FASTA");
    path
}

/// An external program found on `PATH` (snakemake, multiqc, tmux), or `None` after printing why
/// (a failure under CI, whose `.ci/run` installs them). `version_flag` must make it exit 0.
pub fn program_on_path(name: &str, version_flag: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|m| m.is_file())
            && Command::new(candidate).arg(version_flag).output().is_ok_and(|o| o.status.success())
    });
    match found {
        Some(p) => Some(p),
        None => absent(&format!("{name} not found on PATH (.ci/run installs it)")),
    }
}
