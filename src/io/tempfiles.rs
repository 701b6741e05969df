//! Temporary files that must not outlive the command: a process-wide registry of paths, removed
//! by their owners on success and on error (drop), and by a SIGINT/SIGTERM handler when the
//! process is interrupted, which then dies of the same signal.

use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

static REGISTERED: Mutex<Vec<CString>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// How many times the signal handler tries the registry's lock.
#[cfg(unix)]
const SIGNAL_LOCK_TRIES: usize = 1 << 20;

#[cfg(unix)]
#[allow(unsafe_code)] // unlink, signal and raise from the handler
extern "C" fn on_signal(sig: libc::c_int) {
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

/// Installs the handler once (SIGHUP, SIGINT and SIGTERM).
#[allow(unsafe_code)] // signal
pub fn install_handler() {
    #[cfg(unix)]
    INSTALL.call_once(|| {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: the handler only unlinks registered paths and re-raises the signal.
        unsafe {
            for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
                libc::signal(sig, handler);
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

/// The registry, locked with this thread's SIGHUP/SIGINT/SIGTERM blocked: a signal delivered to
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
        for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
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

/// Adds `path` to the files removed on SIGINT/SIGTERM (and installs the handler).
pub fn register(path: &Path) {
    install_handler();
    if let Some(c) = c_path(path) {
        lock().push(c);
    }
}

/// Creates (truncates) the file at `path` and registers it, both under the registry's lock, so a
/// signal cannot come between them: the handler waits for the lock, and keeps it until the
/// process ends, so no file is created after it unlinked the registered ones.
pub fn create_registered(path: &Path) -> std::io::Result<std::fs::File> {
    install_handler();
    let mut list = lock();
    let file = std::fs::File::create(path)?;
    if let Some(c) = c_path(path) {
        list.push(c);
    }
    Ok(file)
}

/// Forgets `path` (after it was removed or committed).
pub fn unregister(path: &Path) {
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
    /// Registers `path`; the file itself is created by the caller.
    pub fn new(path: PathBuf) -> TempFile {
        register(&path);
        TempFile { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn path_str(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        unregister(&self.path);
    }
}

/// Names temporary files `PREFIX.NNNN.bam` as samtools does. `-T PREFIX` is used as given unless
/// it names a directory (then `DIR/mdsam.PID.tmp`); without `-T`, `$TMPDIR` (or `/tmp`).
#[derive(Debug, Clone)]
pub struct TempNamer {
    prefix: String,
    next: usize,
}

impl TempNamer {
    pub fn new(tmp_prefix: Option<&str>, what: &str) -> TempNamer {
        let pid = std::process::id();
        let prefix = match tmp_prefix {
            Some(p) if !Path::new(p).is_dir() => p.to_string(),
            Some(dir) => format!("{}/mdsam.{what}.{pid}.tmp", dir.trim_end_matches('/')),
            None => {
                let dir = std::env::var("TMPDIR")
                    .ok()
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| "/tmp".to_string());
                format!("{}/mdsam.{what}.{pid}.tmp", dir.trim_end_matches('/'))
            }
        };
        TempNamer { prefix, next: 0 }
    }

    /// The next `PREFIX.NNNN.bam`, registered.
    pub fn next_file(&mut self) -> TempFile {
        TempFile::new(self.next_path())
    }

    /// The next `PREFIX.NNNN.bam`, created and registered at once (see [`create_registered`]).
    pub fn create_next(&mut self) -> std::io::Result<(TempFile, std::fs::File)> {
        let path = self.next_path();
        let file = create_registered(&path)?;
        Ok((TempFile { path }, file))
    }

    /// The name given last, for messages.
    pub fn last_path(&self) -> String {
        self.name(self.next.saturating_sub(1))
    }

    fn next_path(&mut self) -> PathBuf {
        let path = PathBuf::from(self.name(self.next));
        self.next += 1;
        path
    }

    /// `PREFIX.NNNN.bam` for `n`.
    fn name(&self, n: usize) -> String {
        format!("{}.{:04}.bam", self.prefix, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(p: &Path) -> bool {
        lock().iter().any(|c| c.as_bytes() == p.to_str().unwrap().as_bytes())
    }

    /// The file exists and is registered together, or neither when it cannot be created.
    #[test]
    fn created_files_are_registered_and_failures_are_not() {
        let dir = std::env::temp_dir().join(format!("mdsam-create-reg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut namer = TempNamer::new(Some(&format!("{}/bin", dir.display())), "collate");
        let (t, _file) = namer.create_next().unwrap();
        assert!(t.path().exists() && registered(t.path()));
        assert!(namer.last_path().ends_with("/bin.0000.bam"), "{}", namer.last_path());
        let p = t.path().to_path_buf();
        drop(t);
        assert!(!p.exists() && !registered(&p));
        let missing = dir.join("no-such-dir").join("x.bam");
        assert!(create_registered(&missing).is_err());
        assert!(!registered(&missing));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_file_removed_on_drop_and_unregistered() {
        let dir = std::env::temp_dir().join(format!("mdsam-tempfiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut namer = TempNamer::new(Some(&format!("{}/run", dir.display())), "sort");
        let t = namer.next_file();
        assert!(t.path_str().ends_with("/run.0000.bam"));
        std::fs::write(t.path(), b"x").unwrap();
        let p = t.path().to_path_buf();
        assert!(lock().iter().any(|c| c.as_bytes() == p.to_str().unwrap().as_bytes()));
        drop(t);
        assert!(!p.exists());
        assert!(!lock().iter().any(|c| c.as_bytes() == p.to_str().unwrap().as_bytes()));
        assert!(namer.next_file().path_str().ends_with("/run.0001.bam"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
