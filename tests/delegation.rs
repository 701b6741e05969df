//! Commands mdsam lacks go to the real samtools: a stand-in `samtools` later on PATH than mdsam's
//! own symlink (or named by `MDSAM_SAMTOOLS`) gets argv intact, stdin, and the last word on the
//! exit status; with none, samtools' own message and exit 1, and never a loop. PATH is built
//! here, so whether a samtools is installed on this machine does not matter.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::support::{mdsam_bin, scratch_dir};

/// Prints `$0`, each argument, the loop marker and stdin, one per line; exits 7. Shell builtins
/// only, since PATH holds nothing else.
const STAND_IN: &str = r#"#!/bin/sh
printf '%s\n' "$0" "$@"
printf 'marker=%s\n' "$MDSAM_DELEGATED"
printf '%s\n' '--stdin--'
while IFS= read -r line; do printf '%s\n' "$line"; done
exit 7
"#;

/// A directory with a `samtools` symlink to mdsam, one with a stand-in, one with a second.
struct Layout {
    root: PathBuf,
    own: PathBuf,
    stand_in: PathBuf,
    second: PathBuf,
}

impl Layout {
    fn new(test_name: &str) -> Layout {
        let root = scratch_dir(test_name);
        let dir = |name: &str| {
            let d = root.join(name);
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        let (own, stand_in, second) = (dir("own"), dir("stand-in"), dir("second"));
        std::os::unix::fs::symlink(mdsam_bin(), own.join("samtools")).unwrap();
        write_script(&stand_in.join("samtools"), STAND_IN);
        write_script(&second.join("samtools"), STAND_IN);
        Layout { root, own, stand_in, second }
    }

    fn path(&self, dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    /// mdsam through its `samtools` symlink.
    fn symlink(&self) -> PathBuf {
        self.own.join("samtools")
    }
}

fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `exe args…` with only PATH (and `extra`) from this environment, `stdin` on its stdin;
/// kills it and fails after 60 s, which only a delegation loop could take.
fn run_with<A: AsRef<OsStr> + std::fmt::Debug>(
    exe: &Path,
    args: &[A],
    path: &OsStr,
    extra: &[(&str, &Path)],
    stdin: &[u8],
) -> Output {
    let mut command = Command::new(exe);
    command.args(args).env("PATH", path).env_remove("MDSAM_SAMTOOLS").env_remove("MDSAM_DELEGATED");
    for (key, value) in extra {
        command.env(key, value);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let pid = child.id() as i32;
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output()));
    match receiver.recv_timeout(Duration::from_secs(60)) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) on the child's pid; exec keeps the pid, so a loop is still it.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{} {args:?} did not end within 60 s: a delegation loop?", exe.display());
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What the stand-in at `script` prints for `args` and `stdin`.
fn stand_in_output(script: &Path, args: &[&str], stdin: &str) -> String {
    let mut lines = vec![script.display().to_string()];
    lines.extend(args.iter().map(|a| a.to_string()));
    lines.push(format!("marker={}", script.display()));
    lines.push("--stdin--".into());
    lines.join("\n") + "\n" + stdin
}

const ARGS: &[&str] = &["newcmd", "a b", "", "-@", "2", "--no-progress", "--", "x\ty"];
const STDIN: &str = "first line\nsecond  line\n";

#[test]
fn a_missing_command_reaches_the_next_samtools_on_path_with_argv_intact() {
    let layout = Layout::new("delegation_next_on_path");
    let path = layout.path(&[&layout.own, &layout.stand_in, &layout.second]);
    let script = layout.stand_in.join("samtools");
    for exe in [layout.symlink(), mdsam_bin()] {
        let out = run_with(&exe, ARGS, &path, &[], STDIN.as_bytes());
        assert_eq!(out.status.code(), Some(7), "{}: {}", exe.display(), text(&out.stderr));
        assert_eq!(text(&out.stdout), stand_in_output(&script, ARGS, STDIN), "{}", exe.display());
        assert_eq!(text(&out.stderr), "", "{}", exe.display());
    }
    // An argument that is not UTF-8 arrives as the same bytes.
    use std::os::unix::ffi::OsStrExt;
    let odd = [OsStr::new("newcmd"), OsStr::from_bytes(b"in\xff.bam")];
    let out = run_with(&layout.symlink(), &odd, &path, &[], b"");
    assert_eq!(out.status.code(), Some(7));
    let needle = b"\nin\xff.bam\n";
    assert!(out.stdout.windows(needle.len()).any(|w| w == needle), "{}", text(&out.stdout));
    // `help CMD` for a command mdsam lacks is samtools' help, from samtools.
    let out = run_with(&layout.symlink(), &["help", "newcmd"], &path, &[], b"");
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(text(&out.stdout), stand_in_output(&script, &["help", "newcmd"], ""));
}

#[test]
fn mdsam_samtools_overrides_path() {
    let layout = Layout::new("delegation_override");
    let second = layout.second.join("samtools");
    for dirs in [vec![&layout.own, &layout.stand_in], vec![&layout.own]] {
        let path = layout.path(&dirs.iter().map(|d| d.as_path()).collect::<Vec<_>>());
        let out = run_with(
            &layout.symlink(),
            ARGS,
            &path,
            &[("MDSAM_SAMTOOLS", &second)],
            STDIN.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), stand_in_output(&second, ARGS, STDIN));
    }
    // Pointing it at mdsam itself is refused, not followed.
    let path = layout.path(&[&layout.own, &layout.stand_in]);
    let own = layout.symlink();
    let out = run_with(&mdsam_bin(), &["newcmd"], &path, &[("MDSAM_SAMTOOLS", &own)], b"");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "[mdsam] MDSAM_SAMTOOLS={} is mdsam itself\n[main] unrecognized command 'newcmd'\n",
            own.display()
        )
    );
}

#[test]
fn with_only_mdsam_on_path_the_command_is_unrecognized_and_nothing_loops() {
    let layout = Layout::new("delegation_none");
    let path = layout.path(&[&layout.own]);
    for exe in [layout.symlink(), mdsam_bin()] {
        let out = run_with(&exe, &["newcmd", "in.bam"], &path, &[], b"");
        assert_eq!(out.status.code(), Some(1), "{}", exe.display());
        assert_eq!(text(&out.stderr), "[main] unrecognized command 'newcmd'\n");
        assert_eq!(text(&out.stdout), "");
    }
    let help = run_with(&mdsam_bin(), &["help"], &path, &[], b"");
    assert!(text(&help.stdout).contains("fail: no samtools found"), "{}", text(&help.stdout));
    let version = run_with(&mdsam_bin(), &["--version"], &path, &[], b"");
    assert!(text(&version.stdout).contains("\nOther commands: fail: no samtools found"));
}

#[test]
fn a_wrapper_script_that_leads_back_to_mdsam_does_not_loop() {
    let layout = Layout::new("delegation_wrapper_loop");
    let wrapper = layout.root.join("wrapper");
    std::fs::create_dir_all(&wrapper).unwrap();
    let script = format!("#!/bin/sh\nexec '{}' \"$@\"\n", mdsam_bin().display());
    write_script(&wrapper.join("samtools"), &script);
    // PATH order: mdsam, then a samtools that is mdsam in disguise, then a real one.
    let path = layout.path(&[&layout.own, &wrapper, &layout.stand_in]);
    let out = run_with(&layout.symlink(), &["newcmd", "in.bam"], &path, &[], b"");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("[mdsam] MDSAM_DELEGATED is set"), "{stderr}");
    assert!(stderr.ends_with("\n[main] unrecognized command 'newcmd'\n"), "{stderr}");
    assert!(stderr.contains(&wrapper.join("samtools").display().to_string()), "{stderr}");
}

#[test]
fn native_commands_are_never_delegated() {
    let layout = Layout::new("delegation_native");
    let path = layout.path(&[&layout.own, &layout.stand_in]);
    let second = layout.second.join("samtools");
    let sam = "@SQ\tSN:chr1\tLN:100\nr1\t0\tchr1\t1\t60\t4M\t*\t0\t0\tACGT\tIIII\n";
    for exe in [layout.symlink(), mdsam_bin()] {
        let out =
            run_with(&exe, &["view", "-"], &path, &[("MDSAM_SAMTOOLS", &second)], sam.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "r1\t0\tchr1\t1\t60\t4M\t*\t0\t0\tACGT\tIIII\n");
    }
}

#[test]
fn help_and_version_say_what_is_native_and_where_the_rest_goes() {
    let layout = Layout::new("delegation_help_version");
    let path = layout.path(&[&layout.own, &layout.stand_in]);
    let target = layout.stand_in.join("samtools");
    let help = text(&run_with(&layout.symlink(), &["help"], &path, &[], b"").stdout);
    assert!(help.contains("     view           SAM<->BAM<->CRAM conversion\n"), "{help}");
    let line = format!("delegated to {} (the next samtools on PATH)\n", target.display());
    assert!(help.contains(&line), "{help}");

    let out = run_with(&layout.symlink(), &["--version"], &path, &[], b"");
    assert_eq!(out.status.code(), Some(0));
    let version = text(&out.stdout);
    assert!(version.starts_with("samtools 1.24 (mdsam "), "{version}");
    assert!(
        version.contains(
            "\nNative commands: dict faidx fqidx index calmd fixmate reheader targetcut addreplacerg markdup rmdup ampliconclip collate cat consensus merge mpileup sort split quickcheck fastq fasta bam2fq import reference reset bedcov coverage depth flagstat idxstats cram-size phase stats ampliconstats checksum flags head tview view depad samples; mdsam additions: "
        ),
        "{version}"
    );
    assert!(version.contains(&format!("\nOther commands: {line}")), "{version}");

    let second = layout.second.join("samtools");
    let pinned = run_with(&mdsam_bin(), &["version"], &path, &[("MDSAM_SAMTOOLS", &second)], b"");
    let pinned = text(&pinned.stdout);
    assert!(pinned.contains(&format!("delegated to {} (MDSAM_SAMTOOLS)", second.display())));
}
