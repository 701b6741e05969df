//! Every command on the bad-input corpus `fixtures/bad/` (made by `fixtures/bad/make.py`,
//! described in `fixtures/README.md`): every broken file must end the run within a time limit,
//! with samtools' exit status, one error line that names the file and says what is wrong
//! (htslib-style `[W::` warnings before it are fine), no panic, and no output or temporary file
//! left behind.
//!
//! The expected statuses are those of samtools 1.24 except the differences listed in
//! `fixtures/README.md`; `statuses_match_the_oracle` checks them against the oracle.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{mdsam_bin, oracle, scratch_dir};

const TIME_LIMIT: Duration = Duration::from_secs(20);

/// The commands run on every file, in the column order of [`BadFile`]'s status arrays.
#[derive(Clone, Copy, Debug)]
enum Cmd {
    ViewSam,
    ViewBam,
    ViewCount,
    Sort,
    SortByName,
    Collate,
    Fixmate,
    Markdup,
    Index,
    /// mdsam only: samtools has no such command.
    MarkdupPipeline,
}

const COMMANDS: [Cmd; 10] = [
    Cmd::ViewSam,
    Cmd::ViewBam,
    Cmd::ViewCount,
    Cmd::Sort,
    Cmd::SortByName,
    Cmd::Collate,
    Cmd::Fixmate,
    Cmd::Markdup,
    Cmd::Index,
    Cmd::MarkdupPipeline,
];

impl Cmd {
    /// The arguments, and the file a successful run writes into `out_dir`. Temporary files go to
    /// `out_dir` too, so the test sees any left behind.
    fn args(self, input: &Path, out_dir: &Path) -> (Vec<String>, &'static str) {
        let path = |name: &str| out_dir.join(name).to_str().expect("UTF-8 path").to_string();
        let input = input.to_str().expect("UTF-8 path").to_string();
        let tmp = path("tmp");
        let (args, written): (Vec<String>, _) = match self {
            Cmd::ViewSam => (vec!["view".into(), "-o".into(), path("out.sam"), input], "out.sam"),
            Cmd::ViewBam => {
                (vec!["view".into(), "-b".into(), "-o".into(), path("out.bam"), input], "out.bam")
            }
            Cmd::ViewCount => (
                vec!["view".into(), "-c".into(), "-o".into(), path("count.txt"), input],
                "count.txt",
            ),
            Cmd::Sort => (
                vec!["sort".into(), "-T".into(), tmp, "-o".into(), path("out.bam"), input],
                "out.bam",
            ),
            Cmd::SortByName => (
                vec![
                    "sort".into(),
                    "-n".into(),
                    "-T".into(),
                    tmp,
                    "-o".into(),
                    path("out.bam"),
                    input,
                ],
                "out.bam",
            ),
            Cmd::Collate => {
                (vec!["collate".into(), "-o".into(), path("out.bam"), input, tmp], "out.bam")
            }
            Cmd::Fixmate => (vec!["fixmate".into(), input, path("out.bam")], "out.bam"),
            Cmd::Markdup => {
                (vec!["markdup".into(), "-T".into(), tmp, input, path("out.bam")], "out.bam")
            }
            Cmd::Index => (vec!["index".into(), "-o".into(), path("out.bai"), input], "out.bai"),
            Cmd::MarkdupPipeline => {
                (vec!["markdup-pipeline".into(), input, path("out.bam")], "out.bam")
            }
        };
        (args, written)
    }
}

/// Refusals that come before a command reads the broken part: the corpus header says
/// `SO:coordinate`, which fixmate refuses, and its records have no `MC` tag, which markdup needs;
/// `index` refuses SAM. samtools refuses with the same words.
const REFUSALS: [&str; 3] = [
    "[bam_mating_core] ERROR: Coordinate sorted, require grouped/sorted by queryname.",
    "samtools markdup: error, no MC tag. Please run samtools fixmate on file first.",
    "is in a format that cannot be usefully indexed",
];
/// What markdup prints after its `no MC tag` refusal, as samtools does.
const MARKDUP_FOLLOW_UP: &str = "samtools markdup: error, unable to assign pair hash key.";

/// Not applicable: samtools has no `markdup-pipeline`.
const NA: i32 = -1;

/// One file of the corpus: the exit status per [`COMMANDS`] entry for mdsam and for samtools
/// 1.24, and a phrase mdsam's error line must contain.
struct BadFile {
    name: &'static str,
    mdsam: [i32; 10],
    samtools: [i32; 10],
    says: &'static str,
}

const ALL_FAIL: [i32; 10] = [1; 10];
const SAMTOOLS_ALL_FAIL: [i32; 10] = [1, 1, 1, 1, 1, 1, 1, 1, 1, NA];
/// A readable file of the corpus: fixmate and markdup refuse it (see [`REFUSALS`]); index
/// refuses SAM.
const READ_BAM: [i32; 10] = [0, 0, 0, 0, 0, 0, 1, 1, 0, 0];
const READ_SAM: [i32; 10] = [0, 0, 0, 0, 0, 0, 1, 1, 1, 0];
/// A SAM file with a position beyond 32 bits: SAM output and counts work, BAM output fails
/// with [`POSITION_TOO_LARGE`] (fixmate, markdup and index refuse it first, see [`REFUSALS`]).
/// markdup-pipeline's fixmate step resets the values (the read is past its reference's end, or
/// has no mate), so its BAM output succeeds.
const SAM_ONLY: [i32; 10] = [0, 1, 0, 1, 1, 1, 1, 1, 1, 0];
/// htslib's `bam_write1` refusal, printed as it is.
const POSITION_TOO_LARGE: &str = "[E::bam_write1] Positional data is too large for BAM format";
/// Refusals about the output, as samtools words them: they do not name the input.
const OUTPUT_REFUSALS: [&str; 2] =
    [POSITION_TOO_LARGE, "output format is not compatible with very large references"];

const fn with_na(mut statuses: [i32; 10]) -> [i32; 10] {
    statuses[9] = NA;
    statuses
}

const fn fails(name: &'static str, says: &'static str) -> BadFile {
    BadFile { name, mdsam: ALL_FAIL, samtools: SAMTOOLS_ALL_FAIL, says }
}

/// A BAM samtools reads (with at most a warning).
const fn reads_bam(name: &'static str) -> BadFile {
    BadFile { name, mdsam: READ_BAM, samtools: with_na(READ_BAM), says: "" }
}

/// A SAM samtools reads (with at most a warning).
const fn reads_sam(name: &'static str) -> BadFile {
    BadFile { name, mdsam: READ_SAM, samtools: with_na(READ_SAM), says: "" }
}

/// A BAM compressed with plain gzip: read like BGZF, but `index` refuses it ("not BGZF").
const fn plain_gzip_bam(name: &'static str) -> BadFile {
    BadFile { name, mdsam: READ_SAM, samtools: with_na(READ_SAM), says: "not BGZF compressed" }
}

/// Known difference: samtools decodes aux data only to print SAM (and in fixmate/markdup), so
/// its other commands pass a record with a broken aux block through; mdsam validates whole
/// records as it reads them.
const fn bad_aux_bam(name: &'static str) -> BadFile {
    BadFile {
        name,
        mdsam: ALL_FAIL,
        samtools: [1, 0, 0, 0, 0, 0, 1, 1, 0, NA],
        says: "malformed aux data",
    }
}

const CORPUS: &[BadFile] = &[
    // BGZF
    fails("truncated-mid-block.bam", "truncated BGZF block"),
    fails("truncated-at-block-boundary.bam", "truncated BAM record"),
    fails("truncated-in-bgzf-header.bam", "truncated BGZF block"),
    fails("truncated-in-bgzf-footer.bam", "truncated BGZF block"),
    reads_bam("no-eof-marker.bam"),
    fails("bad-crc32.bam", "CRC32 mismatch"),
    reads_bam("wrong-isize.bam"),
    fails("corrupt-deflate.bam", "corrupt deflate data"),
    fails("bsize-too-small.bam", "not a BGZF block"),
    fails("bsize-past-end.bam", "truncated BGZF block"),
    fails("garbage-after-first-block.bam", "not a BGZF block"),
    fails("bgzf-garbage.bam", "unknown file format"),
    fails("eof-block-only.bam", "truncated BAM header"),
    // Plain gzip reads like BGZF, but has no virtual offsets to index.
    plain_gzip_bam("gzip-not-bgzf.bam"),
    plain_gzip_bam("no-bc-subfield.bam"),
    fails("gzip-not-bgzf-truncated.bam", "incomplete deflate stream"),
    // BAM header
    fails("truncated-in-magic.bam", "too few fields"),
    fails("truncated-in-l-text.bam", "truncated BAM header"),
    fails("truncated-in-header-text.bam", "truncated BAM header"),
    fails("truncated-in-reference-list.bam", "truncated BAM header"),
    fails("truncated-header.bam", "truncated BAM header"),
    fails("l-text-negative.bam", "truncated BAM header"),
    fails("bad-magic.bam", "unknown file format"),
    fails("n-ref-negative.bam", "negative reference count"),
    // The count runs into the records, whose bytes read as a reference of name length 0.
    fails("n-ref-huge.bam", "empty reference name"),
    fails("ref-l-name-0.bam", "empty reference name"),
    fails("ref-l-name-huge.bam", "truncated BAM header"),
    // A negative length read as u32 is beyond 2^31 - 1: sort refuses BAM output as samtools
    // does ("very large references").
    BadFile {
        name: "ref-length-negative.bam",
        mdsam: [0, 0, 0, 1, 1, 0, 1, 1, 0, 0],
        samtools: [0, 0, 0, 1, 1, 0, 1, 1, 0, NA],
        says: "",
    },
    // References come from the text's @SQ lines, as samtools' view to SAM or BAM and collate
    // read them; its `view -c`, sort and index fail ("Numerical result out of range").
    BadFile {
        name: "header-without-references.bam",
        mdsam: READ_BAM,
        samtools: [0, 0, 1, 1, 1, 0, 1, 1, 1, NA],
        says: "",
    },
    // BAM records
    fails("truncated-in-block-size.bam", "truncated BAM record 3"),
    fails("truncated-in-record-body.bam", "truncated BAM record 3"),
    fails("block-size-past-end.bam", "truncated BAM record"),
    fails("block-size-negative.bam", "truncated BAM record"),
    fails("block-size-too-small.bam", "block_size 20 is too small"),
    fails("l-read-name-0.bam", "l_read_name is 0"),
    fails("read-name-unterminated.bam", "read name is not NUL-terminated"),
    fails("n-cigar-op-past-end.bam", "runs past the end of the record"),
    fails("l-seq-past-end.bam", "runs past the end of the record"),
    fails("l-seq-negative.bam", "l_seq is negative"),
    bad_aux_bam("bad-aux-type.bam"),
    bad_aux_bam("aux-z-unterminated.bam"),
    bad_aux_bam("aux-b-count-huge.bam"),
    bad_aux_bam("aux-truncated.bam"),
    fails("tid-past-n-ref.bam", "reference id 5 is not in the header"),
    fails("tid-below-minus-one.bam", "reference id -2 is not in the header"),
    fails("mate-tid-past-n-ref.bam", "reference id 7 is not in the header"),
    // SAM header
    fails("sq-without-ln.sam", "@SQ line without SN or with a bad LN"),
    reads_sam("sq-bad-ln.sam"),
    fails("header-bad-record-type.sam", "invalid header line"),
    // A NUL ends a header line, here before LN.
    fails("nul-in-header.sam", "@SQ line without SN or with a bad LN"),
    // SAM records
    fails("too-few-fields.sam", "line 7: too few fields"),
    fails("truncated-mid-record.sam", "line 9: too few fields"),
    reads_sam("qname-empty.sam"),
    fails("qname-too-long.sam", "line 8: query name is longer than 254 characters"),
    fails("bad-flag.sam", "line 8: invalid FLAG"),
    fails("flag-too-large.sam", "line 8: invalid FLAG"),
    reads_sam("unknown-rname.sam"),
    fails("bad-pos.sam", "line 8: invalid POS"),
    fails("pos-negative.sam", "line 8: invalid POS"),
    // 64-bit positions (htslib's hts_pos_t): SAM output and counts work, BAM output fails.
    BadFile {
        name: "pos-too-large.sam",
        mdsam: SAM_ONLY,
        samtools: with_na(SAM_ONLY),
        says: POSITION_TOO_LARGE,
    },
    fails("bad-mapq.sam", "line 8: invalid MAPQ"),
    fails("mapq-too-large.sam", "line 8: invalid MAPQ"),
    fails("bad-cigar.sam", "line 8: invalid CIGAR operation"),
    reads_sam("unknown-rnext.sam"),
    fails("bad-pnext.sam", "line 8: invalid PNEXT"),
    fails("bad-tlen.sam", "line 8: invalid TLEN"),
    BadFile {
        name: "tlen-too-large.sam",
        mdsam: SAM_ONLY,
        samtools: with_na(SAM_ONLY),
        says: POSITION_TOO_LARGE,
    },
    reads_sam("seq-bad-characters.sam"),
    fails("seq-qual-mismatch.sam", "SEQ and QUAL are of different length"),
    fails("cigar-seq-mismatch.sam", "CIGAR and query sequence are of different length"),
    fails("bad-aux.sam", "line 8: invalid aux field"),
    fails("aux-bad-type.sam", "line 8: invalid aux field 'XX:Q:1'"),
    // Known difference: htslib reads `NM:i` with no value by taking the next field as its value
    // (and losing that field); mdsam refuses it.
    BadFile {
        name: "aux-no-value.sam",
        mdsam: ALL_FAIL,
        samtools: with_na(READ_SAM),
        says: "line 8: invalid aux field 'NM:i'",
    },
    fails("aux-int-too-large.sam", "line 8: invalid aux field"),
    fails("aux-bad-hex.sam", "line 8: invalid aux field 'XH:H:ABC'"),
    reads_sam("aux-bad-float.sam"),
    reads_sam("aux-bad-char.sam"),
    fails("nul-in-aux.sam", "line 45: NUL byte in SAM text"),
    fails("empty-line.sam", "line 8: too few fields"),
    BadFile {
        name: "no-header-unmapped.sam",
        mdsam: [0, 0, 0, 0, 0, 0, 0, 0, 1, 0],
        samtools: [0, 0, 0, 0, 0, 0, 0, 0, 1, NA],
        says: "",
    },
    fails("no-header-mapped.sam", "no SQ lines present in the header"),
    // Not alignment files
    fails("empty.sam", "the file is empty"),
    fails("garbage.bin", "unknown file format"),
    fails("cram-magic.cram", "invalid CRAM header"),
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bad")
}

/// Runs `program args…`, killing it after [`TIME_LIMIT`]; `None` when it did not finish.
fn run_with_time_limit(program: &Path, args: &[String]) -> Option<Output> {
    let mut child = Command::new(program)
        .args(args)
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
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Some(Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    })
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read output directory")
        .map(|e| e.expect("directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `job(i)` for every `i < count` on a few threads; returns the failure messages.
fn run_in_parallel(count: usize, job: impl Fn(usize) -> Result<(), String> + Sync) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    if let Err(message) = job(i) {
                        failures.lock().expect("failure list").push(message);
                    }
                }
            });
        }
    });
    failures.into_inner().expect("failure list")
}

/// The status, stderr and output-directory checks for one file and command.
fn check_mdsam_run(file: &BadFile, cmd_index: usize, scratch: &Path) -> Result<(), String> {
    let cmd = COMMANDS[cmd_index];
    let out_dir = scratch.join(format!("{}-{cmd:?}", file.name));
    std::fs::create_dir_all(&out_dir).expect("create output directory");
    let (args, written) = cmd.args(&corpus_dir().join(file.name), &out_dir);
    let Some(output) = run_with_time_limit(&mdsam_bin(), &args) else {
        return Err(format!(
            "{}: {} did not finish within {TIME_LIMIT:?}",
            file.name,
            args.join(" ")
        ));
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    let what = format!("{} ({cmd:?}): mdsam {}\nstderr:\n{stderr}", file.name, args.join(" "));
    let expected = file.mdsam[cmd_index];
    let check = |ok: bool, why: &str| if ok { Ok(()) } else { Err(format!("{what}: {why}")) };
    check(output.status.code() == Some(expected), &format!("expected status {expected}"))?;
    check(!stderr.contains("panicked"), "panicked")?;
    let errors: Vec<&str> =
        stderr.lines().filter(|l| !l.starts_with("[W::") && !l.trim().is_empty()).collect();
    let left = entries(&out_dir);
    if expected == 0 {
        check(errors.is_empty(), "only warnings expected")?;
        return check(left == [written], &format!("output directory holds {left:?}"));
    }
    check(left.is_empty(), &format!("left behind {left:?}"))?;
    if let Some(refusal) = REFUSALS.iter().find(|r| errors.first().is_some_and(|e| e.contains(*r)))
    {
        let follow_up = errors.get(1).is_some_and(|e| *e == MARKDUP_FOLLOW_UP);
        let expected_lines = if follow_up { 2 } else { 1 };
        return check(
            errors.len() == expected_lines,
            &format!("more than the refusal {refusal:?}"),
        );
    }
    check(errors.len() == 1, "expected one error line")?;
    if OUTPUT_REFUSALS.iter().any(|r| errors[0].contains(r)) {
        return check(
            errors[0].contains(file.says),
            &format!("the error does not say {:?}", file.says),
        );
    }
    check(errors[0].contains(file.name), "the error does not name the input")?;
    check(errors[0].contains(file.says), &format!("the error does not say {:?}", file.says))
}

#[test]
fn every_command_fails_cleanly_on_bad_input() {
    let scratch = scratch_dir("bad_input_mdsam");
    for file in CORPUS {
        assert!(
            corpus_dir().join(file.name).exists(),
            "{} is missing: run fixtures/bad/make.py",
            file.name
        );
    }
    let cells = CORPUS.len() * COMMANDS.len();
    let failures = run_in_parallel(cells, |i| {
        check_mdsam_run(&CORPUS[i / COMMANDS.len()], i % COMMANDS.len(), &scratch)
    });
    assert!(
        failures.is_empty(),
        "{} of {cells} runs failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
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

/// The samtools statuses in [`CORPUS`] are samtools 1.24's. `view` to SAM runs on every file;
/// every command runs on the first file with each distinct row of statuses (the others share
/// its pattern; each oracle call costs ~0.3 s).
#[test]
fn statuses_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let scratch = scratch_dir("bad_input_oracle");
    let first_with_row = |f: usize| CORPUS.iter().position(|o| o.samtools == CORPUS[f].samtools);
    let cells: Vec<(usize, usize)> = (0..CORPUS.len())
        .flat_map(|f| {
            let all_commands = first_with_row(f) == Some(f);
            (0..COMMANDS.len())
                .filter(move |&c| CORPUS[f].samtools[c] != NA && (c == 0 || all_commands))
                .map(move |c| (f, c))
        })
        .collect();
    let failures = run_in_parallel(cells.len(), |i| {
        let (file, cmd) = (&CORPUS[cells[i].0], COMMANDS[cells[i].1]);
        let out_dir = scratch.join(format!("{}-{cmd:?}", file.name));
        std::fs::create_dir_all(&out_dir).expect("create output directory");
        let (args, _) = cmd.args(&corpus_dir().join(file.name), &out_dir);
        let output = run_with_time_limit(&oracle, &args)
            .ok_or_else(|| format!("{} ({cmd:?}): samtools did not finish", file.name))?;
        let expected = file.samtools[cells[i].1];
        if output.status.code() == Some(expected) {
            return Ok(());
        }
        Err(format!(
            "{} ({cmd:?}): samtools exits {:?}, the table says {expected}; stderr:\n{}",
            file.name,
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        ))
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
