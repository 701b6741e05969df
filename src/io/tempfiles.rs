//! Temporary files that must not outlive the command: a process-wide registry of paths, removed
//! by their owners on success and on error (drop), and by a signal handler when the process is
//! interrupted (SIGHUP, SIGINT, SIGTERM) or its output pipe closes (SIGPIPE, as in `sort | head`),
//! which then dies of the same signal, as samtools would.

use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static REGISTERED: Mutex<Vec<CString>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();
/// Set by the first handler to run: the files are removed once, and a second signal (SIGPIPE in
/// another writing thread) waits for that first handler to end the process.
static CLEANING: AtomicBool = AtomicBool::new(false);

/// The signals whose default action ends the process and that the handler catches.
#[cfg(unix)]
const CAUGHT: [libc::c_int; 4] = [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGPIPE];

/// How many times the signal handler tries the registry's lock.
#[cfg(unix)]
const SIGNAL_LOCK_TRIES: usize = 1 << 20;

#[cfg(unix)]
#[allow(unsafe_code)] // unlink, signal, raise and pause from the handler
extern "C" fn on_signal(sig: libc::c_int) {
    if CLEANING.swap(true, Ordering::SeqCst) {
        // Another thread's handler is removing the files and will end the process: ending it
        // here (the default action) would cut that short.
        loop {
            // SAFETY: `pause` is async-signal-safe; it only waits.
            unsafe {
                libc::pause();
            }
        }
    }
    // `try_lock`, a bounded number of times: another thread holds the lock only for a push or
    // a removal, so it comes free at once; if the interrupted thread itself holds it, giving up
    // beats deadlocking. (Giving up at the first try left a sort's run files behind when the
    // signal came while a run was being registered.)
    let mut list = REGISTERED.try_lock();
    for _ in 0..SIGNAL_LOCK_TRIES {
        if list.is_ok() {
            break;
        }
        std::hint::spin_loop();
        list = REGISTERED.try_lock();
    }
    if let Ok(list) = &list {
        for p in list.iter() {
            let ptr: *const c_char = p.as_ptr();
            // SAFETY: `unlink` is async-signal-safe and `ptr` is a NUL-terminated path.
            unsafe {
                libc::unlink(ptr);
            }
        }
    }
    // The lock stays held until the process is gone: other threads run on meanwhile, and one
    // must not create a registered file after it was unlinked ([`create_registered`]). The
    // re-raised signal is blocked while this handler runs and only ends the process once it
    // returns, so the guard is leaked, not dropped: dropping it let another thread create a
    // sort run in that gap (`.run.0004.bam.mdsam-PID.tmp` left by SIGTERM).
    // SAFETY: restoring the default action and re-raising ends the process as the signal would.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    std::mem::forget(list);
}

/// Installs the handler once for each of [`CAUGHT`] whose action is not "ignore": a signal the
/// parent ignored (`nohup`, `trap '' INT`, a background job of a script) stays ignored, as it
/// does for samtools, which installs no handler.
#[allow(unsafe_code)] // sigaction
pub fn install_handler() {
    #[cfg(unix)]
    INSTALL.call_once(|| {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        for sig in CAUGHT {
            // SAFETY: `sigaction` with a null new action only reads the current one into `old`,
            // a zeroed plain C struct.
            let ignored = unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
            };
            if ignored {
                continue;
            }
            // SAFETY: the handler only unlinks registered paths and re-raises the signal; the
            // struct is fully set (empty mask, restarted system calls).
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    });
}

fn c_path(path: &Path) -> Option<CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        CString::new(path.as_os_str().as_bytes()).ok()
    }
    #[cfg(not(unix))]
    {
        CString::new(path.to_string_lossy().as_bytes()).ok()
    }
}

/// The registry, locked with this thread's [`CAUGHT`] signals blocked: a signal delivered to
/// the thread holding the lock found it taken by itself, gave up and left every file behind
/// (seen as a sort run left by SIGTERM under load). Blocked here, it goes to another thread,
/// whose handler waits for the lock.
struct Locked {
    guard: Option<std::sync::MutexGuard<'static, Vec<CString>>>,
    #[cfg(unix)]
    old_mask: libc::sigset_t,
}

impl std::ops::Deref for Locked {
    type Target = Vec<CString>;
    fn deref(&self) -> &Vec<CString> {
        self.guard.as_ref().expect("held until drop")
    }
}

impl std::ops::DerefMut for Locked {
    fn deref_mut(&mut self) -> &mut Vec<CString> {
        self.guard.as_mut().expect("held until drop")
    }
}

impl Drop for Locked {
    #[allow(unsafe_code)] // pthread_sigmask
    fn drop(&mut self) {
        self.guard = None;
        // SAFETY: restores the mask saved by `lock`, for this thread only.
        #[cfg(unix)]
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
        }
    }
}

#[allow(unsafe_code)] // sigset_t and pthread_sigmask
fn lock() -> Locked {
    #[cfg(unix)]
    // SAFETY: plain sigset manipulation and a per-thread mask change.
    let old_mask = unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        for sig in CAUGHT {
            libc::sigaddset(&mut block, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
        old
    };
    Locked {
        guard: Some(REGISTERED.lock().unwrap_or_else(|e| e.into_inner())),
        #[cfg(unix)]
        old_mask,
    }
}

/// Creates the file at `path`, which must not exist (`O_EXCL`: an existing file or symlink of
/// that name is left alone, as samtools' `wx` mode leaves it), and registers it, both under the
/// registry's lock, so a signal cannot come between them: the handler waits for the lock, and
/// keeps it until the process ends, so no file is created after it unlinked the registered ones.
fn create_registered(path: &Path) -> std::io::Result<std::fs::File> {
    install_handler();
    let mut list = lock();
    let file = std::fs::File::create_new(path)?;
    if let Some(c) = c_path(path) {
        list.push(c);
    }
    Ok(file)
}

/// Creates a registered file under the first of `names` that does not exist yet (at most
/// `tries` names): concurrent commands sharing one prefix, and files the user keeps there, are
/// skipped, never overwritten. The error is the last name's.
pub fn create_unique(
    mut names: impl FnMut() -> PathBuf,
    tries: usize,
) -> std::io::Result<(TempFile, std::fs::File)> {
    let mut last = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
    for _ in 0..tries.max(1) {
        let path = names();
        match create_registered(&path) {
            Ok(file) => return Ok((TempFile { path }, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Forgets `path` (after it was removed or committed).
fn unregister(path: &Path) {
    if let Some(c) = c_path(path) {
        let mut list = lock();
        if let Some(i) = list.iter().rposition(|p| *p == c) {
            list.swap_remove(i);
        }
    }
}

/// A registered temporary file, removed when dropped.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn path_str(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    /// Keeps the file (it was renamed into place): forgets it without removing anything.
    pub fn keep(mut self) {
        unregister(&self.path);
        self.path = PathBuf::new();
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.path.as_os_str().is_empty() {
            return; // kept
        }
        let _ = std::fs::remove_file(&self.path);
        unregister(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(p: &Path) -> bool {
        lock().iter().any(|c| c.as_bytes() == p.to_str().unwrap().as_bytes())
    }

    /// The file exists and is registered together, or neither when it cannot be created; an
    /// existing file is not created over.
    #[test]
    fn created_files_are_registered_and_failures_are_not() {
        let dir = std::env::temp_dir().join(format!("mdsam-create-reg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names = ["taken.bam", "bin.0000.bam"].map(|n| dir.join(n));
        std::fs::write(&names[0], b"kept").unwrap();
        let mut next = names.iter().cloned();
        let (t, _file) = create_unique(|| next.next().unwrap(), 2).unwrap();
        assert_eq!(t.path(), names[1]);
        assert!(t.path().exists() && registered(t.path()));
        assert!(!registered(&names[0]));
        drop(t);
        assert!(!names[1].exists() && !registered(&names[1]));
        assert_eq!(std::fs::read(&names[0]).unwrap(), b"kept");
        let missing = dir.join("no-such-dir").join("x.bam");
        assert!(create_registered(&missing).is_err());
        assert!(!registered(&missing));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A kept file stays and is forgotten.
    #[test]
    fn kept_file_stays_and_is_unregistered() {
        let dir = std::env::temp_dir().join(format!("mdsam-tempfiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.0000.bam");
        let (t, _file) = create_unique(|| path.clone(), 1).unwrap();
        assert!(registered(&path));
        t.keep();
        assert!(path.exists() && !registered(&path));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
