//! How many files this process may hold open at once (`RLIMIT_NOFILE`), for a merge that opens
//! every input side by side.

/// The soft limit on open file descriptors, `None` when unlimited or unknown.
#[allow(unsafe_code)] // getrlimit
pub fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit only writes the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
        // `rlim_t` is not 64-bit everywhere.
        #[allow(clippy::unnecessary_cast)]
        let soft = limit.rlim_cur as u64;
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}
