//! mdsam's entry point. Installed under the name `samtools` (a symlink), it behaves as samtools:
//! the subcommand is the first argument either way, and `@PG` lines record argv[0] as invoked.

fn main() {
    // A closed stdout (e.g. `| head`) must end the program quietly, as samtools does: restore
    // the default SIGPIPE action that Rust's runtime ignores.
    #[cfg(unix)]
    unsafe {
        // SAFETY: called once at start-up before any thread exists; only resets a signal action.
        libc_sigpipe_default();
    }
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    std::process::exit(mdsam::cli::run(argv));
}

#[cfg(unix)]
unsafe fn libc_sigpipe_default() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: `signal` with SIG_DFL is async-signal-safe and has no preconditions.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}
