//! Commands mdsam does not implement run the real samtools, so a script that has mdsam installed
//! as `samtools` keeps working on the lines mdsam has no native answer for (`depth` right
//! after a sort, `mpileup` on the reference).
//!
//! The rules, and why each exists:
//!
//! - **Which samtools.** `MDSAM_SAMTOOLS` when set and not empty (a path, or a bare name looked up
//!   on PATH), so a site, a workflow or a test can pin one whatever PATH says. Else the first
//!   `samtools` on PATH that is not mdsam: the one the shell would have run had mdsam's symlink
//!   not come first. Like `execvp`, a PATH entry that is not an executable file is passed over.
//! - **Not mdsam itself.** A candidate whose canonical path, or whose device and inode, are those
//!   of the running executable is mdsam (the symlink `mdsam install-shim` makes, a hard link):
//!   running it would only come back here, so the search goes on past it. An `MDSAM_SAMTOOLS`
//!   that is mdsam is refused rather than replaced by a PATH search the user did not ask for.
//! - **Never twice.** The child runs with `MDSAM_DELEGATED` set to the samtools it was sent to.
//!   A wrapper script that leads back to mdsam cannot be seen by comparing files; an mdsam that
//!   finds the marker and does not have the command fails at once instead of delegating again,
//!   so no loop can form whatever PATH holds.
//! - **exec, not spawn.** On unix the process image is replaced: stdin, stdout and stderr, signals
//!   (Ctrl-C, a closed pipe), the process id and the exit status are samtools' own, with nothing
//!   of mdsam in between. argv[0] is the samtools path; the other arguments are mdsam's as given,
//!   subcommand included, as the operating system's bytes (a non-UTF-8 file name survives). Only
//!   mdsam's leading `--allocator NAME`, which the binary takes out first, is not passed on.
//! - **None found.** samtools' own `[main] unrecognized command 'X'` and exit 1, what samtools
//!   says for a command it lacks, so a script fails the same way with or without mdsam. When a
//!   samtools was refused (the marker, an `MDSAM_SAMTOOLS` that is mdsam or missing) one line
//!   before it says why.
//!
//! `mdsam help` and `mdsam --version` show where the other commands go ([`summary`]).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::catalog;

/// Names the samtools to use instead of searching PATH.
pub const OVERRIDE_VARIABLE: &str = "MDSAM_SAMTOOLS";
/// Set for the delegated child: an mdsam that sees it never delegates again.
pub const MARKER_VARIABLE: &str = "MDSAM_DELEGATED";

/// Commands mdsam answers that have no catalog entry: samtools' old names for `collate` and
/// `depad`, and mdsam's `hw-model` and `load` (documented elsewhere).
const NATIVE_OUTSIDE_CATALOG: &[&str] = &["bamshuf", "pad2unpad", "hw-model", "load"];

/// Whether mdsam runs `command` itself.
pub fn is_native(command: &str) -> bool {
    catalog::find(command).is_some() || NATIVE_OUTSIDE_CATALOG.contains(&command)
}

/// The native commands as `mdsam help` groups them: samtools' and mdsam's additions (there,
/// `hw-model` too; `bamshuf` and `load` stay unlisted).
pub fn native_commands() -> (Vec<&'static str>, Vec<&'static str>) {
    let from_samtools = catalog::COMMANDS.iter().filter(|c| c.from_samtools).map(|c| c.name);
    let additions = catalog::COMMANDS.iter().filter(|c| !c.from_samtools).map(|c| c.name);
    (from_samtools.collect(), additions.chain(["hw-model"]).collect())
}

/// Where a command mdsam lacks goes.
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    /// This samtools; `pinned` when `MDSAM_SAMTOOLS` named it.
    Samtools { path: PathBuf, pinned: bool },
    /// Nowhere: the command fails as samtools fails for an unknown one.
    Nowhere(Refusal),
}

/// Why no samtools is used.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No `samtools` on PATH but mdsam, and no `MDSAM_SAMTOOLS`.
    NoneOnPath,
    /// This mdsam was itself run by a delegating mdsam: delegating again could loop.
    AlreadyDelegated(OsString),
    /// `MDSAM_SAMTOOLS` is mdsam itself.
    OverrideIsMdsam(PathBuf),
    /// `MDSAM_SAMTOOLS` names no executable file (a path), or none on PATH (a bare name).
    OverrideNotExecutable(OsString),
}

impl Refusal {
    /// The line printed before samtools' own message, when there is more to say than it does.
    fn reason(&self) -> Option<String> {
        match self {
            Refusal::NoneOnPath => None,
            Refusal::AlreadyDelegated(path) => Some(format!(
                "{MARKER_VARIABLE} is set: this mdsam was started through {}, which leads back to mdsam; not delegating again",
                Path::new(path).display()
            )),
            Refusal::OverrideIsMdsam(path) => {
                Some(format!("{OVERRIDE_VARIABLE}={} is mdsam itself", path.display()))
            }
            Refusal::OverrideNotExecutable(value) => Some(format!(
                "{OVERRIDE_VARIABLE}={}: no such executable",
                Path::new(value).display()
            )),
        }
    }
}

/// Where commands mdsam lacks go, from the environment of this process.
pub fn target() -> Target {
    target_from(
        std::env::var_os(MARKER_VARIABLE),
        std::env::var_os(OVERRIDE_VARIABLE),
        std::env::var_os("PATH"),
        &Identity::of_current_exe(),
    )
}

fn target_from(
    marker: Option<OsString>,
    override_value: Option<OsString>,
    path_variable: Option<OsString>,
    mdsam: &Identity,
) -> Target {
    if let Some(marker) = marker {
        return Target::Nowhere(Refusal::AlreadyDelegated(marker));
    }
    let search = |name: &OsStr| {
        let dirs = search_dirs(path_variable.as_deref());
        dirs.into_iter().map(|dir| dir.join(name)).find(|c| runnable_other(c, mdsam))
    };
    match override_value.filter(|value| !value.is_empty()) {
        // As for execvp: a name with a slash is a path, any other is looked up on PATH.
        Some(value) if value.as_encoded_bytes().contains(&b'/') => {
            let path = PathBuf::from(&value);
            if !is_executable_file(&path) {
                Target::Nowhere(Refusal::OverrideNotExecutable(value))
            } else if mdsam.is(&path) {
                Target::Nowhere(Refusal::OverrideIsMdsam(path))
            } else {
                Target::Samtools { path, pinned: true }
            }
        }
        Some(name) => match search(&name) {
            Some(path) => Target::Samtools { path, pinned: true },
            None => Target::Nowhere(Refusal::OverrideNotExecutable(name)),
        },
        None => match search(OsStr::new("samtools")) {
            Some(path) => Target::Samtools { path, pinned: false },
            None => Target::Nowhere(Refusal::NoneOnPath),
        },
    }
}

/// PATH's directories in order; an empty entry is the current directory, as "." so that a
/// file found there is a path to exec, not a name that would be searched for on PATH again.
fn search_dirs(path_variable: Option<&OsStr>) -> Vec<PathBuf> {
    let dirs = path_variable.map(std::env::split_paths).into_iter().flatten();
    dirs.map(|dir| if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir }).collect()
}

fn runnable_other(candidate: &Path, mdsam: &Identity) -> bool {
    is_executable_file(candidate) && !mdsam.is(candidate)
}

fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

/// What identifies the running executable on disk.
#[derive(Debug, Default)]
pub struct Identity {
    canonical: Option<PathBuf>,
    /// Device and inode.
    file_id: Option<(u64, u64)>,
}

impl Identity {
    fn of_current_exe() -> Identity {
        let Ok(exe) = std::env::current_exe() else { return Identity::default() };
        Identity::of(&exe)
    }

    fn of(path: &Path) -> Identity {
        Identity { canonical: std::fs::canonicalize(path).ok(), file_id: file_id(path) }
    }

    /// Whether `path` (after symlinks) is this executable.
    fn is(&self, path: &Path) -> bool {
        let other = Identity::of(path);
        let same_path = self.canonical.is_some() && self.canonical == other.canonical;
        let same_file = self.file_id.is_some() && self.file_id == other.file_id;
        same_path || same_file
    }
}

#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &Path) -> Option<(u64, u64)> {
    None
}

/// One line on where the commands mdsam lacks go, for `mdsam help` and `mdsam --version`.
pub fn summary() -> String {
    match target() {
        Target::Samtools { path, pinned: true } => {
            format!("delegated to {} ({OVERRIDE_VARIABLE})", path.display())
        }
        Target::Samtools { path, pinned: false } => {
            format!("delegated to {} (the next samtools on PATH)", path.display())
        }
        Target::Nowhere(Refusal::NoneOnPath) => {
            format!("fail: no samtools found ({OVERRIDE_VARIABLE} unset, none on PATH but mdsam)")
        }
        Target::Nowhere(refusal) => {
            format!("fail: {}", refusal.reason().unwrap_or_default())
        }
    }
}

/// Runs the real samtools for `command`, which mdsam lacks, with `argv` (mdsam's own, argv[0]
/// first); returns only when there is none or it cannot be started, with the exit status.
pub fn run(argv: &[String], command: &str) -> i32 {
    let refusal = match target() {
        Target::Samtools { path, .. } => {
            let error = exec(&path, &os_arguments(argv));
            eprintln!("[mdsam] cannot run {} for '{command}': {error}", path.display());
            return 1;
        }
        Target::Nowhere(refusal) => refusal,
    };
    if let Some(reason) = refusal.reason() {
        eprintln!("[mdsam] {reason}");
    }
    eprintln!("[main] unrecognized command '{command}'");
    1
}

/// The arguments after argv[0]: the process's own bytes when `argv` ends with them (the binary
/// only takes options out after argv[0]), else `argv` as given.
fn os_arguments(argv: &[String]) -> Vec<OsString> {
    let given = argv.get(1..).unwrap_or_default();
    let process: Vec<OsString> = std::env::args_os().skip(1).collect();
    if let Some(start) = process.len().checked_sub(given.len()) {
        let tail = &process[start..];
        if tail.iter().zip(given).all(|(os, s)| os.to_string_lossy() == *s) {
            return tail.to_vec();
        }
    }
    given.iter().map(OsString::from).collect()
}

#[cfg(unix)]
fn exec(path: &Path, arguments: &[OsString]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(path).arg0(path).args(arguments).env(MARKER_VARIABLE, path).exec()
}

#[cfg(not(unix))]
fn exec(path: &Path, arguments: &[OsString]) -> std::io::Error {
    match std::process::Command::new(path).args(arguments).env(MARKER_VARIABLE, path).status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mdsam-delegate-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    fn executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn every_catalog_command_and_the_unlisted_ones_are_native() {
        for c in catalog::COMMANDS {
            assert!(is_native(c.name), "{}", c.name);
        }
        for name in ["bamshuf", "hw-model", "load", "view", "sort", "stats"] {
            assert!(is_native(name), "{name}");
        }
        for name in ["mpileup", "help", "--version", ""] {
            assert!(!is_native(name), "{name}");
        }
        let (from_samtools, additions) = native_commands();
        assert!(from_samtools.contains(&"view") && !from_samtools.contains(&"simulate"));
        assert!(additions.contains(&"hw-model") && additions.contains(&"markdup-pipeline"));
    }

    #[cfg(unix)]
    #[test]
    fn the_search_passes_over_mdsam_and_non_executables() {
        let dir = scratch("search");
        let (own, plain, other) = (dir.join("own"), dir.join("plain"), dir.join("other"));
        for d in [&own, &plain, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mdsam = dir.join("mdsam");
        executable(&mdsam);
        std::os::unix::fs::symlink(&mdsam, own.join("samtools")).unwrap();
        std::fs::write(plain.join("samtools"), "not executable").unwrap();
        executable(&other.join("samtools"));
        let me = Identity::of(&mdsam);
        let path = std::env::join_paths([&own, &plain, &other]).unwrap();
        let found = target_from(None, None, Some(path.clone()), &me);
        assert_eq!(found, Target::Samtools { path: other.join("samtools"), pinned: false });

        // A hard link is mdsam too (same device and inode, another canonical path).
        std::fs::hard_link(&mdsam, plain.join("samtools-hard")).unwrap();
        assert!(me.is(&plain.join("samtools-hard")));

        let only_own = std::env::join_paths([&own, &plain]).unwrap();
        let none = target_from(None, None, Some(only_own.clone()), &me);
        assert_eq!(none, Target::Nowhere(Refusal::NoneOnPath));
        assert_eq!(target_from(None, None, None, &me), Target::Nowhere(Refusal::NoneOnPath));

        let pinned = target_from(None, Some(mdsam.clone().into()), Some(path.clone()), &me);
        assert_eq!(pinned, Target::Nowhere(Refusal::OverrideIsMdsam(mdsam.clone())));
        let by_link = own.join("samtools");
        let pinned = target_from(None, Some(by_link.clone().into()), Some(path.clone()), &me);
        assert_eq!(pinned, Target::Nowhere(Refusal::OverrideIsMdsam(by_link)));
        let missing = dir.join("missing").into_os_string();
        let pinned = target_from(None, Some(missing.clone()), Some(path.clone()), &me);
        assert_eq!(pinned, Target::Nowhere(Refusal::OverrideNotExecutable(missing)));
        let by_name = target_from(None, Some("samtools".into()), Some(path.clone()), &me);
        assert_eq!(by_name, Target::Samtools { path: other.join("samtools"), pinned: true });
        let empty = target_from(None, Some("".into()), Some(path.clone()), &me);
        assert_eq!(empty, Target::Samtools { path: other.join("samtools"), pinned: false });

        let marker = target_from(Some("/x/samtools".into()), None, Some(path), &me);
        assert_eq!(marker, Target::Nowhere(Refusal::AlreadyDelegated("/x/samtools".into())));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_empty_path_entry_is_the_current_directory() {
        let dirs = search_dirs(Some(OsStr::new("/a::b:")));
        assert_eq!(dirs, [Path::new("/a"), Path::new("."), Path::new("b"), Path::new(".")]);
        assert_eq!(PathBuf::from(".").join("samtools"), Path::new("./samtools"));
        assert!(search_dirs(None).is_empty());
    }

    #[test]
    fn arguments_fall_back_to_argv_when_it_is_not_the_process_tail() {
        let argv: Vec<String> = ["samtools", "flagstat", "a b"].map(String::from).to_vec();
        assert_eq!(os_arguments(&argv), [OsString::from("flagstat"), OsString::from("a b")]);
        assert!(os_arguments(&argv[..1]).is_empty());
        assert!(os_arguments(&[]).is_empty());
    }
}
