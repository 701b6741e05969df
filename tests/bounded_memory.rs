//! Memory that must not grow with the input, and `index` from a pipe (issue 43, items 10 and 14):
//! fixmate on one very long template, sort's merge of many small runs (under a low open-file
//! limit too), and `index -` from standard input and from a FIFO.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run_ok, sam_records, scratch_dir, simulated_sam,
    to_sam,
};

/// Runs `cmd` to the end and returns whether it succeeded, its stderr and its peak resident
/// memory in KiB (`ru_maxrss` of the child, from `wait4`).
// The child is reaped by `wait4` (which `Child::wait` would race), not by `wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: Command) -> (bool, String, u64) {
    let err = tempfile_path("stderr");
    cmd.stdout(Stdio::null()).stderr(std::fs::File::create(&err).expect("stderr file"));
    let child = cmd.spawn().expect("spawn");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it and reaps our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4 failed");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    (ok, stderr, usage.ru_maxrss as u64)
}

fn tempfile_path(what: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    dir.join(format!("bounded-{what}-{}-{:?}", std::process::id(), std::thread::current().id()))
}

/// `cmd` with at most `n` open files (set in the child before it runs).
fn with_open_file_limit(cmd: &mut Command, n: u64) {
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: n as libc::rlim_t, rlim_max: n as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// 200,000 records of one name: primaries of both reads, secondary, supplementary and
/// secondary-supplementary records, all one template to fixmate.
fn one_name_sam(path: &Path, records: usize) {
    let mut text = String::from("@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr1\tLN:1000000\n");
    let mut x: u64 = 7;
    for i in 0..records {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut flag = if i % 2 == 0 { 0x41 } else { 0x81 };
        if i % 7 == 3 {
            flag |= 0x100;
        }
        if i % 11 == 5 {
            flag |= 0x800;
        }
        if x >> 63 == 1 {
            flag |= 0x10;
        }
        let pos = 1 + (x >> 33) % 900_000;
        text.push_str(&format!(
            "r\t{flag}\tchr1\t{pos}\t30\t20M\t*\t0\t0\tACGTACGTACGTACGTACGT\tIIIIIIIIIIIIIIIIIIII\n"
        ));
    }
    std::fs::write(path, text).expect("write SAM");
}

/// fixmate held every record of a template: 1 M records of one name took 1.2 GB. Now a long
/// template goes through a temporary file, and the output is still samtools'.
#[test]
fn fixmate_on_one_long_template_stays_small() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("bounded_fixmate_long_template");
    let input = dir.join("one-name.sam");
    one_name_sam(&input, 200_000);
    let (ours, theirs) = (dir.join("mdsam.sam"), dir.join("samtools.sam"));
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(["fixmate", "-m", "-c", "-O", "sam"]).arg(&input).arg(&ours);
    let (ok, stderr, peak_kib) = run_measured(cmd);
    assert!(ok, "mdsam fixmate failed: {stderr}");
    let s = |p: &Path| p.to_str().expect("UTF-8 path").to_string();
    oracle_ok(&oracle, &["fixmate", "-m", "-c", "-O", "sam", &s(&input), &s(&theirs)]);
    let read = |p: &Path| std::fs::read(p).expect("read output");
    assert_same_sam(&sam_records(&read(&ours)), &sam_records(&read(&theirs)), "fixmate");
    assert!(peak_kib < 100 << 10, "fixmate peak RSS {peak_kib} KiB (before: about 280 MiB)");
}

/// A name-ordered simulated BAM of `pairs` pairs.
fn simulated_bam(dir: &Path, pairs: u64, order: Order) -> std::path::PathBuf {
    let sam = simulated_sam(dir, &SimulateOptions { pairs, order, ..Default::default() });
    let bam = sam.with_extension("bam");
    let s = |p: &Path| p.to_str().expect("UTF-8 path").to_string();
    run_ok(&mdsam_bin(), &["view", "-b", "--no-PG", "-o", &s(&bam), &s(&sam)]);
    bam
}

/// `sort -m 1M` writes hundreds of tiny runs. The merge held about 1.9 MB a run and opened all of
/// them at once: with 64 open files allowed it failed. It now merges in stages, in small
/// readers, with samtools' output.
#[test]
fn sort_with_tiny_memory_merges_in_stages_under_a_low_file_limit() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("bounded_sort_tiny_memory");
    let input = simulated_bam(&dir, 50_000, Order::Name);
    let s = |p: &Path| p.to_str().expect("UTF-8 path").to_string();
    let (ours, theirs) = (dir.join("mdsam.bam"), dir.join("samtools.bam"));
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(["sort", "-m", "1M", "-T"]).arg(dir.join("run")).arg("-o").arg(&ours).arg(&input);
    with_open_file_limit(&mut cmd, 64);
    let (ok, stderr, peak_kib) = run_measured(cmd);
    assert!(ok, "mdsam sort -m 1M under 64 open files failed: {stderr}");
    let t = dir.join("samtools-run");
    oracle_ok(&oracle, &["sort", "-m", "1M", "-T", &s(&t), "-o", &s(&theirs), &s(&input)]);
    assert_same_sam(
        &sam_records(&to_sam(&oracle, &ours)),
        &sam_records(&to_sam(&oracle, &theirs)),
        "sort -m 1M",
    );
    assert!(peak_kib < 80 << 10, "sort -m 1M peak RSS {peak_kib} KiB (before: about 130 MiB)");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("run."))
        .collect();
    assert!(left.is_empty(), "temporary runs left behind: {left:?}");
}

/// A BGZF-compressed index inflated (a BAI as it is).
fn inflated(bytes: &[u8]) -> Vec<u8> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes.to_vec();
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out)
        .expect("inflate index");
    out
}

/// `index -` reads standard input and `index FIFO` a named pipe, as samtools does; the index is
/// the file's, byte for byte (BAI and CSI), and without `-o` it is named after the argument.
#[test]
fn index_reads_a_pipe_and_a_fifo() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("bounded_index_pipe");
    let unsorted = simulated_bam(&dir, 3000, Order::Name);
    let bam = dir.join("sorted.bam");
    let s = |p: &Path| p.to_str().expect("UTF-8 path").to_string();
    run_ok(&mdsam_bin(), &["sort", "-o", &s(&bam), &s(&unsorted)]);
    for csi in [false, true] {
        let ext = if csi { "csi" } else { "bai" };
        let flag = if csi { "-c" } else { "-b" };
        // The index of the file: mdsam's, whose content is samtools' (a CSI is BGZF, whose
        // deflate bytes may differ).
        let (of_file, by_oracle) = (dir.join(format!("file.{ext}")), dir.join(format!("o.{ext}")));
        run_ok(&mdsam_bin(), &["index", flag, "-o", &s(&of_file), &s(&bam)]);
        oracle_ok(&oracle, &["index", flag, "-o", &s(&by_oracle), &s(&bam)]);
        let expected = std::fs::read(&of_file).expect("index of the file");
        assert!(inflated(&expected) == inflated(&std::fs::read(&by_oracle).expect("oracle's")));

        // Standard input, with and without -o.
        let piped = dir.join(format!("piped.{ext}"));
        let status = Command::new(mdsam_bin())
            .args(["index", flag, "-o", &s(&piped), "-"])
            .stdin(std::fs::File::open(&bam).expect("open BAM"))
            .status()
            .expect("run mdsam index -");
        assert!(status.success(), "index {flag} -o FILE - failed");
        assert!(std::fs::read(&piped).expect("read") == expected, "index {flag} from a pipe");
        let status = Command::new(mdsam_bin())
            .args(["index", flag, "-"])
            .current_dir(&dir)
            .stdin(std::fs::File::open(&bam).expect("open BAM"))
            .status()
            .expect("run mdsam index -");
        assert!(status.success(), "index {flag} - failed");
        let named = dir.join(format!("-.{ext}"));
        assert!(std::fs::read(&named).expect("-.bai/-.csi") == expected, "index {flag} -");

        // A FIFO, fed by a thread.
        let fifo = dir.join(format!("fifo-{ext}"));
        let c = std::ffi::CString::new(s(&fifo)).expect("path");
        // SAFETY: mkfifo reads the NUL-terminated path only.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        let (from, to) = (bam.clone(), fifo.clone());
        let feeder = std::thread::spawn(move || {
            let mut out = std::fs::OpenOptions::new().write(true).open(to).expect("open FIFO");
            let _ = std::io::copy(&mut std::fs::File::open(from).expect("BAM"), &mut out);
        });
        let status = Command::new(mdsam_bin())
            .args(["index", flag, &s(&fifo)])
            .status()
            .expect("run mdsam index FIFO");
        feeder.join().expect("feeder");
        assert!(status.success(), "index {flag} FIFO failed");
        let named = dir.join(format!("fifo-{ext}.{ext}"));
        assert!(std::fs::read(&named).expect("FIFO index") == expected, "index {flag} FIFO");
    }
}

/// A SAM line of 256 MiB with no TAB cannot parse whatever its end holds: it fails as samtools
/// fails it (too few fields, exit 1) without being held in memory. Before, the line was held
/// about twice (a 1 GiB line peaked at 2.2 GB where samtools took 1.07 GB).
#[test]
fn a_huge_line_that_cannot_parse_is_not_held() {
    let Some(oracle) = oracle() else { return };
    let line_bytes = 256usize << 20;
    let script = format!(
        "{{ printf '@SQ\\tSN:c\\tLN:9\\n'; head -c {line_bytes} /dev/zero | tr '\\0' A; echo; }} | \"$0\" view -"
    );
    let shell = |tool: &Path| {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script, tool.to_str().expect("UTF-8 path")]);
        cmd
    };
    let (ok, stderr, peak_kib) = run_measured(shell(&mdsam_bin()));
    assert!(!ok, "a line of one 256 MiB field was accepted");
    assert!(stderr.contains("parse error at line 2: too few fields"), "{stderr}");
    assert!(peak_kib < 96 << 10, "peak RSS {peak_kib} KiB for a {line_bytes}-byte line");
    // samtools fails the same line.
    let (theirs, their_err, _) = run_measured(shell(&oracle));
    assert!(!theirs && their_err.contains("Parse error at line 2"), "{their_err}");
}
