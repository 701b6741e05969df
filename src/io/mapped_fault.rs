//! A memory-mapped input that shrinks while it is read (another process truncates or rewrites
//! it) makes the next touch of a page past its new end raise SIGBUS, which would kill the
//! process with no message. samtools reads with `read(2)` and reports the short read. Here a
//! SIGBUS handler looks the faulting address up among the registered maps: inside one, it
//! prints one line naming the file and exits with status 1; anywhere else it restores the
//! default action, so the fault repeats and ends the process as before.
//!
//! Reading with `pread` into buffers instead would need a copy of every byte on the hottest
//! path; the handler costs nothing until a fault. Rust has no `sigsetjmp`, so the handler
//! cannot resume the reader with an error; it ends the process from inside the handler with
//! async-signal-safe calls only (`write`, `_exit`).

use std::sync::Once;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Maps registered at once (a merge opens one per input); more are read unprotected.
const SLOTS: usize = 256;

/// One mapped input: its address range and the line to print when it faults. `len` 0 marks a
/// free slot. The message is leaked: the handler may read it at any time.
struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    message: AtomicPtr<u8>,
    message_len: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)] // the initialiser of each array element
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    message: AtomicPtr::new(std::ptr::null_mut()),
    message_len: AtomicUsize::new(0),
};

static MAPS: [Slot; SLOTS] = [FREE; SLOTS];
static INSTALL: Once = Once::new();

/// The registration of one map; dropping it (before the map is unmapped) unregisters it.
pub struct Registration {
    slot: Option<usize>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            MAPS[i].len.store(0, Ordering::Release);
        }
    }
}

/// Registers the map of `name` at `bytes`, so that a fault inside it is reported as the
/// truncation of `name`.
pub fn register(name: &str, bytes: &[u8]) -> Registration {
    install_handler();
    let line =
        format!("samtools: error reading file \"{name}\": it was truncated while being read\n");
    let line: &'static mut [u8] = Box::leak(line.into_bytes().into_boxed_slice());
    for (i, slot) in MAPS.iter().enumerate() {
        // Claim a free slot by moving its length from 0 to a placeholder, then fill it.
        if slot.len.compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            slot.start.store(bytes.as_ptr() as usize, Ordering::Relaxed);
            slot.message_len.store(line.len(), Ordering::Relaxed);
            slot.message.store(line.as_mut_ptr(), Ordering::Relaxed);
            slot.len.store(bytes.len(), Ordering::Release);
            return Registration { slot: Some(i) };
        }
    }
    Registration { slot: None }
}

/// The message of the registered map holding `addr`.
fn message_for(addr: usize) -> Option<(*const u8, usize)> {
    MAPS.iter().find_map(|slot| {
        let len = slot.len.load(Ordering::Acquire);
        let start = slot.start.load(Ordering::Relaxed);
        (len != 0 && len != usize::MAX && addr >= start && addr - start < len).then(|| {
            (
                slot.message.load(Ordering::Relaxed) as *const u8,
                slot.message_len.load(Ordering::Relaxed),
            )
        })
    })
}

#[allow(unsafe_code)] // sigaction
fn install_handler() {
    #[cfg(unix)]
    INSTALL.call_once(|| {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler has the
        // SA_SIGINFO signature and uses only async-signal-safe calls.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

#[cfg(unix)]
#[allow(unsafe_code)] // a signal handler reading siginfo, write(2), _exit(2)
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    match message_for(addr) {
        // SAFETY: the message is a leaked, never-freed buffer of that length; write and _exit
        // are async-signal-safe.
        Some((ptr, len)) => unsafe {
            libc::write(2, ptr.cast(), len);
            libc::_exit(1);
        },
        // Not ours: the default action, which the faulting instruction triggers again.
        // SAFETY: resetting a signal's action is async-signal-safe.
        None => unsafe {
            libc::signal(sig, libc::SIG_DFL);
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(unsafe_code)] // reads the leaked message back
    fn finds_registered_ranges_only_while_registered() {
        let bytes = vec![0u8; 4096];
        let at = bytes.as_ptr() as usize;
        let reg = register("x.bam", &bytes);
        let (ptr, len) = message_for(at + 100).expect("registered");
        // SAFETY: the message is a leaked buffer of that length.
        let text = unsafe { std::slice::from_raw_parts(ptr, len) };
        assert!(text.starts_with(b"samtools: error reading file \"x.bam\""));
        assert!(message_for(at + 4096).is_none());
        drop(reg);
        assert!(message_for(at + 100).is_none());
    }
}
