//! `view` on the bad-input corpus `fixtures/bad/` (made by `fixtures/bad/make.py`, described in
//! `fixtures/README.md`): every broken file must end the run within a time limit, with samtools'
//! exit status, one error line that names the file and says what is wrong (htslib-style `[W::`
//! warnings before it are fine), no panic, and no output or temporary file left behind.
//!
//! The expected statuses are those of samtools 1.24; `statuses_match_the_oracle` checks them
//! against the oracle, one call per file and mode that needs it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{mdsam_bin, oracle, scratch_dir};

const TIME_LIMIT: Duration = Duration::from_secs(20);

/// How `view` is run: SAM to a file, BAM to a file, or a count to a file.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Sam,
    Bam,
    Count,
}

const MODES: [Mode; 3] = [Mode::Sam, Mode::Bam, Mode::Count];

impl Mode {
    fn args(self, out_dir: &Path) -> Vec<String> {
        let out = |name: &str| out_dir.join(name).to_str().expect("UTF-8 path").to_string();
        match self {
            Mode::Sam => vec!["-o".into(), out("out.sam")],
            Mode::Bam => vec!["-b".into(), "-o".into(), out("out.bam")],
            Mode::Count => vec!["-c".into(), "-o".into(), out("count.txt")],
        }
    }
}

/// One file of the corpus: the exit status per [`MODES`] entry, for mdsam and for samtools 1.24,
/// and a phrase mdsam's error line must contain.
struct BadFile {
    name: &'static str,
    mdsam: [i32; 3],
    samtools: [i32; 3],
    says: &'static str,
}

const fn fails(name: &'static str, says: &'static str) -> BadFile {
    BadFile { name, mdsam: [1; 3], samtools: [1; 3], says }
}

/// Files samtools reads (with at most a warning).
const fn reads(name: &'static str) -> BadFile {
    BadFile { name, mdsam: [0; 3], samtools: [0; 3], says: "" }
}

const CORPUS: &[BadFile] = &[
    // BGZF
    fails("truncated-mid-block.bam", "truncated BGZF block"),
    fails("truncated-at-block-boundary.bam", "truncated BAM record"),
    reads("no-eof-marker.bam"),
    fails("bad-crc32.bam", "CRC32 mismatch"),
    reads("wrong-isize.bam"),
    fails("corrupt-deflate.bam", "corrupt deflate data"),
    reads("gzip-not-bgzf.bam"),
    // BAM
    fails("block-size-past-end.bam", "truncated BAM record"),
    fails("l-read-name-0.bam", "l_read_name is 0"),
    fails("n-cigar-op-past-end.bam", "runs past the end of the record"),
    fails("l-seq-past-end.bam", "runs past the end of the record"),
    // Known difference: samtools decodes aux data only to print SAM, so `-b` and `-c` pass a
    // record with a bad aux type through; mdsam validates whole records as it reads them.
    BadFile {
        name: "bad-aux-type.bam",
        mdsam: [1; 3],
        samtools: [1, 0, 0],
        says: "malformed aux data",
    },
    fails("truncated-header.bam", "truncated BAM header"),
    fails("bad-magic.bam", "unknown file format"),
    fails("tid-past-n-ref.bam", "reference id 5 is not in the header"),
    fails("mate-tid-past-n-ref.bam", "reference id 7 is not in the header"),
    // SAM
    fails("too-few-fields.sam", "line 7: too few fields"),
    fails("bad-flag.sam", "line 8: invalid FLAG"),
    fails("bad-pos.sam", "line 8: invalid POS"),
    fails("bad-mapq.sam", "line 8: invalid MAPQ"),
    fails("bad-cigar.sam", "line 8: invalid CIGAR operation"),
    fails("seq-qual-mismatch.sam", "SEQ and QUAL are of different length"),
    fails("cigar-seq-mismatch.sam", "CIGAR and query sequence are of different length"),
    fails("bad-aux.sam", "line 8: invalid aux field"),
    fails("empty-line.sam", "line 8: too few fields"),
    reads("no-header-unmapped.sam"),
    fails("no-header-mapped.sam", "no SQ lines present in the header"),
    // Not alignment files
    fails("empty.sam", "the file is empty"),
    fails("garbage.bin", "unknown file format"),
    fails("cram-magic.cram", "CRAM is not supported"),
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bad")
}

/// Runs `program view args… input`, killing it after [`TIME_LIMIT`].
fn run_with_time_limit(program: &Path, args: &[String], input: &Path) -> Output {
    let mut child = Command::new(program)
        .arg("view")
        .args(args)
        .arg(input)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout pipe")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr pipe")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "view {} {} did not finish within {TIME_LIMIT:?}",
                args.join(" "),
                input.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read output directory")
        .map(|e| e.expect("directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The status, stderr and output-directory checks for one file and mode.
fn check_mdsam_run(file: &BadFile, mode_index: usize, scratch: &Path) {
    let mode = MODES[mode_index];
    let out_dir = scratch.join(format!("{}-{mode:?}", file.name));
    std::fs::create_dir_all(&out_dir).expect("create output directory");
    let input = corpus_dir().join(file.name);
    let args = mode.args(&out_dir);
    let output = run_with_time_limit(&mdsam_bin(), &args, &input);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let what = format!("{} ({mode:?}): view {}\nstderr:\n{stderr}", file.name, args.join(" "));
    let expected = file.mdsam[mode_index];
    assert_eq!(output.status.code(), Some(expected), "{what}");
    assert!(!stderr.contains("panicked"), "{what}");
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("[W::")).collect();
    let left = entries(&out_dir);
    if expected == 0 {
        assert!(errors.is_empty(), "{what}: only warnings expected");
        let written = ["out.sam", "out.bam", "count.txt"][mode_index];
        assert_eq!(left, [written], "{what}: output directory");
        return;
    }
    assert_eq!(errors.len(), 1, "{what}: expected one error line");
    assert!(errors[0].contains(file.name), "{what}: the error does not name the input");
    assert!(errors[0].contains(file.says), "{what}: the error does not say {:?}", file.says);
    assert!(left.is_empty(), "{what}: left behind {left:?}");
}

#[test]
fn view_fails_cleanly_on_bad_input() {
    let scratch = scratch_dir("bad_input_mdsam");
    for file in CORPUS {
        assert!(
            corpus_dir().join(file.name).exists(),
            "{} is missing: run fixtures/bad/make.py",
            file.name
        );
        for mode_index in 0..MODES.len() {
            check_mdsam_run(file, mode_index, &scratch);
        }
    }
}

/// Every corpus file is in [`CORPUS`], so a file added to `make.py` gets checked.
#[test]
fn corpus_table_lists_every_file() {
    let mut on_disk: Vec<String> =
        entries(&corpus_dir()).into_iter().filter(|n| n != "make.py").collect();
    let mut listed: Vec<String> = CORPUS.iter().map(|f| f.name.to_string()).collect();
    on_disk.sort();
    listed.sort();
    assert_eq!(on_disk, listed);
}

/// The statuses in [`CORPUS`] are samtools 1.24's. The SAM mode runs for every file; the other
/// modes only where the table says they differ from it (each oracle call costs ~0.3 s).
#[test]
fn statuses_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let scratch = scratch_dir("bad_input_oracle");
    for file in CORPUS {
        for (mode_index, mode) in MODES.iter().enumerate() {
            if mode_index > 0 && file.samtools[mode_index] == file.samtools[0] {
                continue;
            }
            let out_dir = scratch.join(format!("{}-{mode:?}", file.name));
            std::fs::create_dir_all(&out_dir).expect("create output directory");
            let output =
                run_with_time_limit(&oracle, &mode.args(&out_dir), &corpus_dir().join(file.name));
            assert_eq!(
                output.status.code(),
                Some(file.samtools[mode_index]),
                "{} ({mode:?}): samtools stderr:\n{}",
                file.name,
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}
