//! mdsam: a samtools-compatible SAM/BAM toolkit built around in-memory record lists.
//!
//! Data flows one way:
//! `bytes → io::bgzf → io::{bam,sam} → record::RecordStore → ops → io::{bam,sam} → io::bgzf → bytes`.
//!
//! Layers, lowest first: `record` → `io` and `ops` (side by side) → `pipeline` → `cli`; each
//! names only the layers below it (`tests/layering.rs` checks it).
//!
//! - [`record`]: what a record is (layout, accessors, header, arena store). No I/O.
//! - [`io`]: bytes ⇄ records (BGZF, BAM, SAM, CRAM, indexes, reading inputs and writing outputs
//!   atomically) and the side files commands read (FASTA, `.fai`, BED, name and value lists).
//! - [`ops`]: what the samtools commands mean, on records only: no files, no threads, no `io`.
//! - [`pipeline`]: wires io → ops → io and owns the threads.
//! - [`cli`]: samtools-compatible argument parsing into option structs; one file per command; it
//!   reads no files.
//!
//! Outside the layers, naming none of them but where `tests/layering.rs` says why:
//! - [`alloc`], [`error`]: the allocator and the error type every layer uses.
//! - [`profile`]: `--profile`'s phases and counters, fed by every layer; it writes its JSON
//!   through `io::output::write_file`.
//! - [`progress`]: the progress bar on an interactive terminal (fed by the readers).
//! - [`simulate`]: a deterministic generator of realistic aligned SAM for tests and benchmarks; a
//!   test tool outside the data flow, using no other module.

// Unsafe code is denied everywhere but here, each place for a reason no safe API covers, and
// every unsafe block says why it is sound (`// SAFETY:`, enforced by clippy):
// - `alloc` (the whole module): the global allocator (`GlobalAlloc` is an unsafe trait), reading
//   the environment with libc's `getenv` before the first allocation, mimalloc's option setter,
//   and `madvise` for huge pages.
// - `bin/mdsam.rs` (`reset_sigpipe`, `give_lazy_threads_worker_stacks`): restoring SIGPIPE's
//   default action, and setting `RUST_MIN_STACK`, both before any thread exists.
// - `io::input` (`Input::open`, `release_behind`): memory-mapping the input file, and dropping
//   its pages behind the read position.
// - `io::mapped_fault` (the whole module): the SIGBUS handler that reports a mapped input
//   truncated while being read (`sigaction`, `write`, `_exit`).
// - `pipeline::threads` (`address_space_limit`): `getrlimit`, to count workers against
//   `RLIMIT_AS` before starting them.
// - `io::output` (`Stdout::write`): whole `write(2)` calls to standard output.
// - `io::direct_write` (`set_direct`): `fcntl` to set and clear `O_DIRECT` on a file.
// - `tempfiles` (`on_signal`, `install_handler`, `lock`, `Drop for Locked`): the signal handler
//   that removes temporary files (`sigaction`, `signal`, `unlink`, `raise`, `pause`,
//   `pthread_sigmask`).
// - `profile` (`cpu_ns`, `peak_rss_bytes`): thread and process CPU clocks, and `getrusage`.
// - `record::prefetch` (`prefetch_bytes`): the x86-64 prefetch intrinsic.
// - `io::bgzf::isal_ffi` (`IsalDeflate`, `IsalInflate`): ISA-L's stateless deflate and inflate
//   through its C API, and the `vzeroupper` intrinsic after them (`clear_upper_vector_state`).
// - `io::open_files` (`open_file_limit`): `getrlimit`, so that a sort merge stages its runs below
//   `RLIMIT_NOFILE`.
// - `io::cram::rans_nx16_simd`: rANS Nx16's AVX2 decoding loop (the intrinsics and the call of
//   the `target_feature` function, made only after the CPU was found to have AVX2).
// - `ops::consensus::vote_sums`: the bayesian consensus' per-read sums with AVX-512 (the
//   intrinsics and the call of the `target_feature` function, made only after the CPU was found
//   to have AVX-512F).
// - `ops::errmod` (`lgamma`): the C library's log-gamma, which htslib's error-model tables are
//   built from (Rust's standard library has no stable one; another may differ in the last bit).
// The binary (`bin/mdsam.rs`) has its own: `reset_sigpipe`.
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[allow(unsafe_code)]
pub mod alloc;
pub mod cli;
pub mod error;
pub mod io;
pub mod ops;
pub mod pipeline;
pub mod profile;
pub mod progress;
pub mod record;
pub mod simulate;
