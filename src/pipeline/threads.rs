//! The one thread pool a command runs on, and the count it is sized by.

/// A thread count as samtools' `-@` gives it: extra threads beside the main one. The one place
/// where "extra" becomes a total, so no command adds the main thread by hand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Threads {
    extra: usize,
}

impl Threads {
    /// `-@ n`: `n` threads besides the main one.
    pub const fn from_extra(extra: usize) -> Self {
        Threads { extra }
    }

    /// The extra threads, as samtools counts them (`-@`).
    pub const fn extra(self) -> usize {
        self.extra
    }

    /// Every thread: the extras and the main one (the size of mdsam's pool).
    pub const fn total(self) -> usize {
        self.extra + 1
    }

    /// The pool of [`Self::total`] workers.
    pub fn pool(self) -> rayon::ThreadPool {
        pool(self.total())
    }
}

/// Stack of each worker: noodles' rANS Nx16 order-1 decoder keeps its frequency tables on the
/// stack (a CRAM 3.1 container overflowed rayon's default 2 MiB; 4 MiB was enough). 8 MiB, the
/// usual `ulimit -s` that samtools' threads get: a stack's whole size counts against a
/// virtual-memory limit (`ulimit -v`, SGE's `h_vmem`) even though only touched pages are
/// committed, and 16 MiB made `flagstat -@ 64` need 4.3 GB of address space.
pub const WORKER_STACK_BYTES: usize = 8 << 20;

/// Address space a worker takes besides its stack: mimalloc's first segment for the thread
/// (32 MiB in v2) and some slack for C libraries' buffers.
const WORKER_OTHER_BYTES: u64 = 40 << 20;

/// A pool of `threads` workers; everything parallel in a command runs inside `install`.
///
/// A pool that cannot start ends the process with htslib's one-line message and exit status 1
/// (samtools: `[E::hts_tpool_init] Couldn't start thread pool worker : …`). Under an address
/// space limit the workers are counted first: spawning them until the limit is hit would leave
/// no memory for anything else (the threads already spawned keep theirs while the pool is torn
/// down), and an allocation failure then aborts instead of reporting.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    let threads = threads.max(1);
    if !fits_address_space(threads) {
        cannot_start(&std::io::Error::from_raw_os_error(libc::ENOMEM));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(WORKER_STACK_BYTES)
        .thread_name(|i| format!("mdsam-{i}"))
        .build()
        .unwrap_or_else(|e| cannot_start(&std::io::Error::other(e.to_string())))
}

fn cannot_start(e: &std::io::Error) -> ! {
    let reason = match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => e.to_string(),
    };
    // htslib prints strerror without Rust's " (os error N)".
    let reason = reason.split(" (os error").next().unwrap_or_default().to_string();
    eprintln!("[E::hts_tpool_init] Couldn't start thread pool worker : {reason}");
    std::process::exit(1);
}

/// Whether `threads` workers fit in what `RLIMIT_AS` leaves (always, without a limit).
fn fits_address_space(threads: usize) -> bool {
    let Some(limit) = address_space_limit() else { return true };
    let used = current_address_space().unwrap_or(0);
    let per_worker = WORKER_STACK_BYTES as u64 + WORKER_OTHER_BYTES;
    used.saturating_add(per_worker.saturating_mul(threads as u64)) <= limit
}

/// The soft `RLIMIT_AS`, when there is one.
#[allow(unsafe_code)] // getrlimit
fn address_space_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit struct that we own.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// The process's mapped address space now (`VmSize`).
fn current_address_space() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_threads_count_the_main_one_once() {
        let threads = Threads::from_extra(3);
        assert_eq!((threads.extra(), threads.total()), (3, 4));
        assert_eq!(Threads::default().total(), 1);
        assert_eq!(threads.pool().current_num_threads(), 4);
    }
}
