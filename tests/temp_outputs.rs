//! Temporary files and outputs as samtools treats them (issue 43): spill files created
//! exclusively where samtools puts them, removed on every way the process ends (SIGPIPE
//! included), signals the parent ignored kept ignored, and outputs written through symlinks, onto
//! hard links and into long names, or refused up front as samtools refuses them.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mdsam::simulate::SimulateOptions;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, scratch_dir, simulated_sam,
};

/// About 2 MB of SAM: several runs under `-m 1M`, a second or two in a debug build.
fn input(dir: &Path, seed: u64) -> PathBuf {
    simulated_sam(dir, &SimulateOptions { pairs: 6_000, seed, ..SimulateOptions::default() })
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// The oracle's coordinate sort of `input` as SAM without `@PG`.
fn oracle_sorted(oracle: &Path, input: &Path) -> Vec<u8> {
    oracle_ok(oracle, &["sort", "--no-PG", "-O", "SAM", s(input)]).stdout
}

/// `file` (SAM or BAM) as SAM text with its header, read by the oracle.
fn as_sam(oracle: &Path, file: &Path) -> Vec<u8> {
    crate::support::to_sam(oracle, file)
}

/// Polls `dir` while `child` runs and returns whether a name `seen` accepts ever appeared.
fn watch(child: &mut std::process::Child, dir: &Path, seen: impl Fn(&str) -> bool) -> bool {
    let start = Instant::now();
    let mut found = false;
    while child.try_wait().unwrap().is_none() {
        found = found || names_in(dir).iter().any(|n| seen(n));
        assert!(start.elapsed() < Duration::from_secs(300), "command did not finish");
        std::thread::sleep(Duration::from_millis(1));
    }
    found
}

/// Two sorts started together with one `-T` prefix each write their own records (they took
/// each other's runs when run names were not created exclusively).
#[test]
fn concurrent_sorts_sharing_a_prefix_keep_their_own_records() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_concurrent");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let prefix = format!("{}/pre", tmp.display());
    let inputs = [input(&dir, 1), input(&dir, 2)];
    let outputs = [dir.join("a.sam"), dir.join("b.sam")];
    let children: Vec<_> = inputs
        .iter()
        .zip(&outputs)
        .map(|(i, o)| {
            Command::new(mdsam_bin())
                .args(["sort", "--no-PG", "-m", "1M", "-T", &prefix, "-o", s(o), s(i)])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    for (i, o) in inputs.iter().zip(&outputs) {
        let expected = oracle_sorted(&oracle, i);
        assert_same_sam(&std::fs::read(o).unwrap(), &expected, &format!("sort of {}", s(i)));
    }
    assert!(names_in(&tmp).is_empty(), "temporary files left: {:?}", names_in(&tmp));
}

/// A file and a symlink named as the first runs are left alone (they were renamed over and
/// then deleted).
#[test]
fn existing_run_names_and_symlinks_survive() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_existing");
    let input = input(&dir, 3);
    let mine = dir.join("pre.0000.bam");
    let victim = dir.join("victim.txt");
    let link = dir.join("pre.0001.bam");
    std::fs::write(&mine, b"mine").unwrap();
    std::fs::write(&victim, b"victim").unwrap();
    std::os::unix::fs::symlink("victim.txt", &link).unwrap();
    let out = dir.join("out.sam");
    let prefix = format!("{}/pre", dir.display());
    run_ok(&mdsam_bin(), &["sort", "--no-PG", "-m", "1M", "-T", &prefix, "-o", s(&out), s(&input)]);
    assert_same_sam(&std::fs::read(&out).unwrap(), &oracle_sorted(&oracle, &input), "sort");
    assert_eq!(std::fs::read(&mine).unwrap(), b"mine");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim");
    let input_name = input.file_name().unwrap().to_string_lossy().into_owned();
    let mut expected = vec![input_name.as_str(), "out.sam", "pre.0000.bam", "pre.0001.bam"];
    expected.push("victim.txt");
    expected.sort();
    assert_eq!(names_in(&dir), expected, "temporary files left");
}

/// `nohup` and a script's background job start mdsam with SIGHUP or SIGINT ignored: it keeps
/// them ignored and finishes (it died of them, status 129 for SIGHUP).
#[test]
fn ignored_hangup_and_interrupt_stay_ignored() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_nohup");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let input = input(&dir, 4);
    let out = dir.join("out.sam");
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(["sort", "--no-PG", "-m", "1M", "-T", &format!("{}/run", tmp.display())]).args([
        "-o",
        s(&out),
        s(&input),
    ]);
    #[allow(unsafe_code)]
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, is called.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // Once a run exists the temporary-file handler is installed: signal then.
    let start = Instant::now();
    while names_in(&tmp).is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "sort finished before a run appeared");
        assert!(start.elapsed() < Duration::from_secs(120), "no run appeared");
        std::thread::sleep(Duration::from_millis(1));
    }
    for sig in [libc::SIGHUP, libc::SIGINT] {
        #[allow(unsafe_code)]
        // SAFETY: `kill` sends a signal to the child, which has not been reaped yet.
        let sent = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        assert_eq!(sent, 0);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_same_sam(&std::fs::read(&out).unwrap(), &oracle_sorted(&oracle, &input), "sort");
    assert!(names_in(&tmp).is_empty(), "temporary files left: {:?}", names_in(&tmp));
}

/// Without `-T`, spill files go where samtools puts them, never to `$TMPDIR` (a missing
/// directory here, so any file there fails the command): sort's and markdup's beside the output
/// (`OUT.tmp.NNNN.bam`, `OUT.samtools.PID…`), into the current directory for standard output;
/// collate's beside an `-o` file (`OUT.collatePID…`).
#[test]
fn spill_files_go_beside_the_output() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_beside");
    let input = input(&dir, 5);
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let missing_tmp = dir.join("no-such-tmpdir");
    let spawn = |args: &[&str], cwd: &Path| {
        Command::new(mdsam_bin())
            .args(args)
            .env("TMPDIR", &missing_tmp)
            .current_dir(cwd)
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    // sort -o FILE: `FILE.tmp.NNNN.bam`.
    let out = out_dir.join("sorted.bam");
    let mut child = spawn(&["sort", "--no-PG", "-m", "1M", "-o", s(&out), s(&input)], &dir);
    let seen =
        watch(&mut child, &out_dir, |n| n.starts_with("sorted.bam.tmp.") && n.ends_with(".bam"));
    assert!(child.wait().unwrap().success());
    assert!(seen, "no run beside the output");
    assert_same_sam(&as_sam(&oracle, &out), &oracle_sorted(&oracle, &input), "sort -o");
    assert_eq!(names_in(&out_dir), ["sorted.bam"]);
    // sort to standard output: the current directory.
    let mut child = spawn(&["sort", "--no-PG", "-m", "1M", s(&input)], &out_dir);
    let seen = watch(&mut child, &out_dir, |n| n.contains(".tmp.") && n.ends_with(".bam"));
    assert!(child.wait().unwrap().success());
    assert!(seen, "no run in the current directory");
    assert_eq!(names_in(&out_dir), ["sorted.bam"]);
    // collate -o FILE past its budget: `FILE.collateHEXPID.NNNN.bam`.
    let collated = out_dir.join("collated.bam");
    let args = ["collate", "--no-PG", "--max-memory", "400K", "-o", s(&collated), s(&input)];
    let mut child = spawn(&args, &dir);
    let seen = watch(&mut child, &out_dir, |n| n.starts_with("collated.bam.collate"));
    assert!(child.wait().unwrap().success());
    assert!(seen, "no bin beside the output");
    assert_eq!(names_in(&out_dir), ["collated.bam", "sorted.bam"]);
    // collate's prefix argument wins over `-T` (here a missing directory), as in samtools.
    let bad = dir.join("missing").join("bins");
    let prefix = out_dir.join("by-prefix");
    let args = ["collate", "--no-PG", "--max-memory", "400K", "-T", s(&bad), s(&input), s(&prefix)];
    let mut child = spawn(&args, &dir);
    let seen = watch(&mut child, &out_dir, |n| n.starts_with("by-prefix.0"));
    assert!(child.wait().unwrap().success());
    assert!(seen, "no bin under the prefix argument");
    std::fs::remove_file(out_dir.join("by-prefix.bam")).unwrap();
    // markdup -S: `OUT.mdsam.PID.N.tmp.0000.bam` beside the output.
    let fixed = dir.join("fixed.bam");
    let sorted = dir.join("fixed-sorted.bam");
    run_ok(&mdsam_bin(), &["fixmate", "-m", s(&collated), s(&fixed)]);
    run_ok(&mdsam_bin(), &["sort", "-o", s(&sorted), s(&fixed)]);
    let marked = out_dir.join("marked.bam");
    let mut child = spawn(&["markdup", "--no-PG", "-S", s(&sorted), s(&marked)], &dir);
    let seen = watch(&mut child, &out_dir, |n| n.starts_with("marked.bam.mdsam."));
    assert!(child.wait().unwrap().success());
    assert!(seen, "no temporary file beside markdup's output");
    let expected = dir.join("expected-marked.bam");
    oracle_ok(&oracle, &["markdup", "--no-PG", "-S", s(&sorted), s(&expected)]);
    assert_same_sam(&as_sam(&oracle, &marked), &as_sam(&oracle, &expected), "markdup");
    assert_eq!(names_in(&out_dir), ["collated.bam", "marked.bam", "sorted.bam"]);
    assert!(!missing_tmp.exists());
}

/// `sort | head -c 1000`: mdsam dies of SIGPIPE as samtools does (141 in the shell; samtools
/// installs no handler) and leaves no run behind, under `-T` and in the default place (the
/// current directory for standard output).
#[test]
fn closed_pipe_leaves_no_runs() {
    let dir = scratch_dir("temp_outputs_sigpipe");
    let input = input(&dir, 6);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    for tmp_arg in [format!("-T '{}/run'", work.display()), String::new()] {
        let script = format!(
            "'{}' sort -m 1M {tmp_arg} -O SAM '{}' | head -c 1000 > /dev/null; exit ${{PIPESTATUS[0]}}",
            mdsam_bin().display(),
            input.display()
        );
        let out = Command::new("bash").arg("-c").arg(&script).current_dir(&work).output().unwrap();
        assert_eq!(out.status.code(), Some(128 + libc::SIGPIPE), "{out:?}");
        assert!(names_in(&work).is_empty(), "runs left ({tmp_arg}): {:?}", names_in(&work));
    }
}

/// The outputs' cases, each set up twice, for mdsam and for the oracle, in `dir/mdsam` and
/// `dir/samtools`.
fn both(dir: &Path, setup: impl Fn(&Path)) -> [PathBuf; 2] {
    ["mdsam", "samtools"].map(|who| {
        let d = dir.join(who);
        std::fs::create_dir_all(&d).unwrap();
        setup(&d);
        d
    })
}

/// A symlinked output is written through the link, as samtools writes it, dangling or not (the
/// link was replaced by a regular file).
#[test]
fn symlinked_output_is_written_through_the_link() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_symlink");
    let input = input(&dir, 7);
    let dirs = both(&dir, |d| {
        std::fs::create_dir_all(d.join("real")).unwrap();
        std::fs::write(d.join("real/target.sam"), b"old").unwrap();
        std::os::unix::fs::symlink("real/target.sam", d.join("link.sam")).unwrap();
        std::os::unix::fs::symlink("real/new.sam", d.join("dangling.sam")).unwrap();
    });
    for (d, bin) in dirs.iter().zip([mdsam_bin(), oracle.clone()]) {
        for link in ["link.sam", "dangling.sam"] {
            run_ok(&bin, &["view", "-h", "--no-PG", "-o", s(&d.join(link)), s(&input)]);
        }
    }
    for name in ["link.sam", "dangling.sam"] {
        for d in &dirs {
            let meta = std::fs::symlink_metadata(d.join(name)).unwrap();
            assert!(meta.file_type().is_symlink(), "{name} is no longer a link in {}", d.display());
        }
    }
    for name in ["real/target.sam", "real/new.sam"] {
        let [a, b] = dirs.clone().map(|d| std::fs::read(d.join(name)).unwrap());
        assert_same_sam(&a, &b, name);
    }
    assert_eq!(names_in(&dirs[0].join("real")), names_in(&dirs[1].join("real")));
}

/// An output mdsam may not open for writing is refused before any work, with samtools' message
/// and exit status (it was renamed over). As root a read-only mode is no obstacle, so the file is
/// made immutable instead (`chattr +i`); the test is skipped where neither works.
#[test]
fn unwritable_output_is_refused_like_samtools() {
    let Some(oracle) = oracle() else { return };
    let name = "temp_outputs_readonly";
    // An immutable file left by an interrupted run would stop the scratch directory's removal.
    let _ = Command::new("chattr").arg("-i").arg(target_tmp().join(name).join("ro.bam")).output();
    let dir = scratch_dir(name);
    let input = input(&dir, 8);
    let out = dir.join("ro.bam");
    std::fs::write(&out, b"keep").unwrap();
    let immutable = Command::new("chattr").arg("+i").arg(&out).status().is_ok_and(|s| s.success());
    let _thaw = Thaw(out.clone());
    let is_root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !immutable {
        if is_root {
            eprintln!("skipping: chattr +i unavailable and root ignores a read-only mode");
            return;
        }
        let mut perms = std::fs::metadata(&out).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o444);
        std::fs::set_permissions(&out, perms).unwrap();
    }
    for cmd in [&["sort", "-o"][..], &["view", "-b", "-o"]] {
        let args: Vec<&str> = cmd.iter().copied().chain([s(&out), s(&input)]).collect();
        let (ours, theirs) = (run(&mdsam_bin(), &args), run(&oracle, &args));
        assert_eq!(ours.status.code(), theirs.status.code(), "{cmd:?}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&theirs.stderr),
            "{cmd:?}"
        );
    }
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    assert_eq!(names_in(&dir).len(), 2, "temporary files left: {:?}", names_in(&dir));
}

fn target_tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// Makes its file mutable again when dropped, the test failed or not.
struct Thaw(PathBuf);

impl Drop for Thaw {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).output();
    }
}

/// An output with another hard link is written in place, as samtools truncates and writes it:
/// both names show the new contents (a rename left the other name on the old file). An
/// existing output keeps its permissions either way.
#[test]
fn hard_linked_output_keeps_its_links_and_modes() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_hardlink");
    let input = input(&dir, 9);
    let dirs = both(&dir, |d| {
        std::fs::write(d.join("a.sam"), b"old").unwrap();
        std::fs::hard_link(d.join("a.sam"), d.join("b.sam")).unwrap();
        std::fs::write(d.join("single.sam"), b"old").unwrap();
        for name in ["a.sam", "single.sam"] {
            let mut perms = std::fs::metadata(d.join(name)).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o640);
            std::fs::set_permissions(d.join(name), perms).unwrap();
        }
    });
    for (d, bin) in dirs.iter().zip([mdsam_bin(), oracle.clone()]) {
        for name in ["a.sam", "single.sam"] {
            run_ok(&bin, &["view", "-h", "--no-PG", "-o", s(&d.join(name)), s(&input)]);
        }
    }
    for name in ["a.sam", "b.sam", "single.sam"] {
        let [a, b] = dirs.clone().map(|d| std::fs::read(d.join(name)).unwrap());
        assert_same_sam(&a, &b, name);
        let [ma, mb] = dirs.clone().map(|d| std::fs::metadata(d.join(name)).unwrap());
        assert_eq!((ma.nlink(), ma.mode() & 0o7777), (mb.nlink(), mb.mode() & 0o7777), "{name}");
    }
    let [a, b] = ["a.sam", "b.sam"].map(|n| std::fs::metadata(dirs[0].join(n)).unwrap().ino());
    assert_eq!(a, b, "the names are one file");
    assert_eq!(names_in(&dirs[0]), names_in(&dirs[1]));
}

/// A legal 240-byte output name works, spilled runs beside it included (its temporary name was
/// too long: `File name too long`).
#[test]
fn long_output_name_works() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_long_name");
    let input = input(&dir, 10);
    let name = format!("{}.bam", "x".repeat(236));
    assert_eq!(name.len(), 240);
    let out = dir.join(&name);
    run_ok(&mdsam_bin(), &["sort", "--no-PG", "-m", "1M", "-o", s(&out), s(&input)]);
    assert_same_sam(&as_sam(&oracle, &out), &oracle_sorted(&oracle, &input), "sort");
    run_ok(&mdsam_bin(), &["view", "-b", "--no-PG", "-o", s(&out), s(&input)]);
    assert_same_sam(&as_sam(&oracle, &out), &as_sam(&oracle, &input), "view");
    assert_eq!(names_in(&dir).len(), 2, "temporary files left: {:?}", names_in(&dir));
}

/// A writable output in a directory where no file can be created is written in place, as
/// samtools writes it (its temporary could not be created). As root, mdsam runs as `nobody`,
/// for whom the scratch directory is closed; otherwise the directory is made read-only.
#[test]
fn writable_output_in_a_closed_directory_is_written_in_place() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("temp_outputs_closed_dir");
    let input = input(&dir, 11);
    let closed = dir.join("closed");
    std::fs::create_dir_all(&closed).unwrap();
    let out = closed.join("out.sam");
    std::fs::write(&out, b"old").unwrap();
    let is_root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(["view", "-h", "--no-PG", "-o", s(&out), s(&input)]);
    let set_mode = |mode: u32| {
        let mut perms = std::fs::metadata(&closed).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, mode);
        std::fs::set_permissions(&closed, perms).unwrap();
    };
    const NOBODY: u32 = 65534;
    if is_root {
        std::os::unix::fs::chown(&out, Some(NOBODY), Some(NOBODY)).unwrap();
        #[allow(unsafe_code)]
        // SAFETY: between fork and exec only `setgid` and `setuid`, async-signal-safe calls.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setgid(NOBODY) != 0 || libc::setuid(NOBODY) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        set_mode(0o555);
    }
    let result = cmd.output().unwrap();
    set_mode(0o755);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let expected = oracle_ok(&oracle, &["view", "-h", "--no-PG", s(&input)]).stdout;
    assert_same_sam(&std::fs::read(&out).unwrap(), &expected, "view -o");
    assert_eq!(names_in(&closed), ["out.sam"]);
}
