//! mdsam's entry point. Installed under the name `samtools` (a symlink), it behaves as samtools:
//! the subcommand is the first argument either way, and `@PG` lines record argv[0] as invoked.

// Unsafe code only where listed in lib.rs's unsafe policy: here `reset_sigpipe` and
// `give_lazy_threads_worker_stacks`.
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

use mdsam::alloc::{self, Choice, Dispatch};

#[global_allocator]
static GLOBAL: Dispatch = Dispatch;

fn main() {
    // A closed stdout (e.g. `| head`) must end the program quietly, as samtools does: restore
    // the default SIGPIPE action that Rust's runtime ignores.
    #[cfg(unix)]
    reset_sigpipe();
    #[cfg(unix)]
    give_lazy_threads_worker_stacks();
    let mut argv: Vec<String> =
        std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    if argv.get(1).is_some_and(|a| a == "--allocator" || a.starts_with("--allocator=")) {
        let (name, used) = match argv[1].split_once('=') {
            Some((_, n)) => (n.to_string(), 1),
            None => (argv.get(2).cloned().unwrap_or_default(), 2),
        };
        let Some(choice) = Choice::from_name(name.as_bytes()) else {
            eprintln!("mdsam: unknown allocator \"{name}\" (system, mimalloc, jemalloc, bump)");
            std::process::exit(1);
        };
        argv.drain(1..1 + used);
        if choice != alloc::active() {
            reexec_with(choice, &argv);
        }
    }
    if alloc::active() == Choice::Bump {
        eprintln!(
            "[mdsam] warning: the bump allocator never frees memory; it is for experiments only"
        );
    }
    // URLs lose their credentials here, before any message, `@PG` line or profile names them.
    let argv = argv.iter().map(|a| mdsam::io::remote::hide_credentials(a)).collect();
    std::process::exit(mdsam::cli::run(argv));
}

/// Runs this program again with `MDSAM_ALLOCATOR` set, so the new allocator serves every
/// allocation from the first one on.
#[cfg(unix)]
fn reexec_with(choice: Choice, argv: &[String]) -> ! {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().unwrap_or_else(|_| argv[0].clone().into());
    let err = std::process::Command::new(exe)
        .arg0(&argv[0])
        .args(&argv[1..])
        .env("MDSAM_ALLOCATOR", choice.name())
        .exec();
    eprintln!("mdsam: could not restart with allocator {}: {err}", choice.name());
    std::process::exit(1);
}

#[cfg(unix)]
#[allow(unsafe_code)] // signal
fn reset_sigpipe() {
    // SAFETY: called once at start-up before any thread exists; `signal` with SIG_DFL only
    // resets a signal action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Work run outside a command's pool lands on rayon's global pool, which rayon starts on its
/// first use with std's default stack size: `RUST_MIN_STACK` gives it the workers' stacks
/// (CRAM decoding needs more than the default; see `WORKER_STACK_BYTES`) without starting it.
/// Built at start-up instead (`build_global`), it spawned a thread per CPU in every run, used or
/// not: 0.5 ms of a 5 ms region query on 2 CPUs, and 64 threads a run on a 64-core node.
#[cfg(unix)]
#[allow(unsafe_code)] // set_var
fn give_lazy_threads_worker_stacks() {
    if std::env::var_os("RUST_MIN_STACK").is_none() {
        let bytes = mdsam::pipeline::threads::WORKER_STACK_BYTES.to_string();
        // SAFETY: called once at start-up before any thread exists, so no other thread reads
        // the environment while it changes.
        unsafe { std::env::set_var("RUST_MIN_STACK", bytes) };
    }
}
