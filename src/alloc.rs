//! The global allocator, chosen at run time: `system`, `mimalloc`, `jemalloc` or `bump`.
//!
//! Every allocation must be freed by the allocator that made it, so the choice is made once,
//! before the first allocation, and never changes: the first call into [`Dispatch`] reads
//! `MDSAM_ALLOCATOR` with libc's `getenv` (which does not allocate) and stores the answer.
//! `mdsam --allocator NAME …` therefore re-executes itself with the variable set (see
//! `bin/mdsam.rs`) instead of switching mid-run.
//!
//! `bump` is the seed paper's experimental allocator: large per-thread chunks, a pointer bump per
//! allocation, nothing ever freed. It shows what allocation costs when it costs nothing; it is
//! not for production runs (memory only grows).
//!
//! With `MDSAM_COUNT_ALLOCS=1` every allocation is counted, for the load benchmark's
//! allocations-per-record figure.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    System = 1,
    Mimalloc = 2,
    Jemalloc = 3,
    Bump = 4,
}

impl Choice {
    pub fn name(self) -> &'static str {
        match self {
            Choice::System => "system",
            Choice::Mimalloc => "mimalloc",
            Choice::Jemalloc => "jemalloc",
            Choice::Bump => "bump",
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Choice> {
        match name {
            b"system" => Some(Choice::System),
            b"mimalloc" => Some(Choice::Mimalloc),
            b"jemalloc" => Some(Choice::Jemalloc),
            b"bump" | b"arena" => Some(Choice::Bump),
            _ => None,
        }
    }

    fn from_code(c: u8) -> Choice {
        match c {
            2 => Choice::Mimalloc,
            3 => Choice::Jemalloc,
            4 => Choice::Bump,
            _ => Choice::System,
        }
    }
}

/// The default when MDSAM_ALLOCATOR is unset.
pub const DEFAULT: Choice = Choice::Mimalloc;

static CHOICE: AtomicU8 = AtomicU8::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// Declared here because neither libc nor the `mimalloc` crate exports it (libmimalloc-sys does
// only behind its `extended` feature, and without the option numbers used below).
unsafe extern "C" {
    /// mimalloc's option setter (exported by the static library the `mimalloc` crate links).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in mimalloc v2's `mi_option_t`.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// mimalloc's `purge_delay` for never giving freed memory back to the OS before exit.
///
/// Its default (purge after 10 ms) hands the pages of every freed multi-MiB read, format or
/// write buffer back to the kernel, so the next buffer faults them in again and the kernel
/// clears them (with transparent huge pages, 2 MiB at a time): under perf that was 10 % of
/// `view -c` and of BAM→SAM time (`clear_page_erms`). Without purging, BAM→SAM of 1.5 M reads
/// took 625 page faults instead of 162 000 (a 1 s delay still left 162 000: huge blocks are
/// purged on the arena's own clock). The price is resident memory: freed pages count until
/// reused, 2–14 % more peak RSS in view, markdup and the pipeline. `MIMALLOC_PURGE_DELAY` in the
/// environment wins.
const NEVER_PURGE: std::ffi::c_long = -1;

/// Reads an environment variable without allocating.
fn env_bytes(name: &std::ffi::CStr) -> Option<&'static [u8]> {
    // SAFETY: getenv returns NULL or a NUL-terminated string owned by the environment, which
    // mdsam never modifies while running.
    unsafe {
        let p = libc::getenv(name.as_ptr());
        (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_bytes())
    }
}

/// `mi_option_arena_eager_commit` in mimalloc v2's `mi_option_t`.
const MI_OPTION_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;

/// `mi_option_arena_reserve` in mimalloc v2's `mi_option_t` (its value is in KiB).
const MI_OPTION_ARENA_RESERVE: std::ffi::c_int = 23;

/// The arena reservation mimalloc makes at a time: 128 MiB (mimalloc's default is 1 GiB).
const ARENA_RESERVE_KIB: std::ffi::c_long = 128 << 10;

#[cold]
fn decide() -> u8 {
    let choice = env_bytes(c"MDSAM_ALLOCATOR").and_then(Choice::from_name).unwrap_or(DEFAULT);
    if choice == Choice::Mimalloc && env_bytes(c"MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
        // Commit the arena on demand. Committed up front (mimalloc's default where the OS
        // overcommits), a purge only resets pages (MADV_FREE), which stay in the resident set
        // until the kernel is short of memory: markdup-pipeline's peak was 240 MB against
        // 217 MB on 0.4 M reads, at the same speed. Set before mimalloc's first allocation,
        // which reserves the arena.
        // SAFETY: sets a plain option value; mimalloc reads it when it reserves an arena.
        unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
    }
    if choice == Choice::Mimalloc && env_bytes(c"MIMALLOC_ARENA_RESERVE").is_none() {
        // Reserve arenas of 128 MiB, not 1 GiB: a reservation is address space that a
        // virtual-memory limit (`ulimit -v`, SGE's `h_vmem`) counts in full, and `view` held
        // 1.6 GB of address space at 30 MB resident. Later arenas still grow (mimalloc doubles
        // the size every 8 arenas).
        // SAFETY: sets a plain option value (KiB); mimalloc reads it when it reserves an arena.
        unsafe { mi_option_set(MI_OPTION_ARENA_RESERVE, ARENA_RESERVE_KIB) };
    }
    if choice != Choice::System {
        // Only C libraries (libdeflate, ISA-L, pthread internals) call glibc's malloc then,
        // rarely; without a cap every thread that does gets its own arena and 64 MiB of
        // reserved address space (7 threads: 440 MB of `VmSize`).
        // SAFETY: mallopt sets a malloc tunable; it allocates nothing through this allocator.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) };
    }
    COUNTING.store(env_bytes(c"MDSAM_COUNT_ALLOCS").is_some_and(|v| v == b"1"), Ordering::Relaxed);
    match CHOICE.compare_exchange(0, choice as u8, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => choice as u8,
        Err(already) => already,
    }
}

#[inline]
fn current() -> u8 {
    match CHOICE.load(Ordering::Acquire) {
        0 => decide(),
        c => c,
    }
}

/// Keeps freed memory for reuse instead of returning it to the OS (see [`NEVER_PURGE`]). For
/// commands without a memory budget that reuse their buffers: `view`, `fixmate` and `markdup`.
/// `sort` and `collate` keep mimalloc's prompt purging, because a retained free page still counts
/// against their budget (with it, a spilling `sort` under a
/// 160 MiB budget peaked 10 MiB higher).
pub fn keep_freed_memory() {
    set_purge_delay(NEVER_PURGE);
}

/// Purges freed memory at once (mimalloc's default waits 10 ms), unless `MIMALLOC_PURGE_DELAY`
/// says otherwise. For load-all `markdup-pipeline`, whose steps free memory that the next step,
/// allocating in other sizes on other threads, does not take again.
pub fn purge_freed_memory() {
    set_purge_delay(0);
}

/// Purges freed memory after `ms` milliseconds, unless `MIMALLOC_PURGE_DELAY` says otherwise.
pub fn purge_freed_memory_after(ms: u32) {
    set_purge_delay(ms.into());
}

/// mimalloc's `purge_delay` (ms; −1: never), unless `MIMALLOC_PURGE_DELAY` sets it.
fn set_purge_delay(delay: std::ffi::c_long) {
    if active() == Choice::Mimalloc && env_bytes(c"MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a plain option value, which mimalloc reads each time it considers a purge.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, delay) };
    }
}

/// The allocator in use.
pub fn active() -> Choice {
    Choice::from_code(current())
}

/// Starts or stops counting allocations (`--profile` counts them per phase).
pub fn count_allocations(on: bool) {
    current();
    COUNTING.store(on, Ordering::Relaxed);
}

/// Allocations made so far (0 unless `MDSAM_COUNT_ALLOCS=1` or `--profile`).
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Per-thread bump chunks: (next free address, end of chunk).
mod bump {
    use super::*;

    const CHUNK_BYTES: usize = 64 << 20;

    thread_local! {
        static CURSOR: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    /// A block for `layout` from this thread's chunk (never freed).
    ///
    /// # Safety
    ///
    /// `layout` must have a non-zero size, as for [`GlobalAlloc::alloc`].
    pub unsafe fn alloc(layout: Layout) -> *mut u8 {
        if layout.size() > CHUNK_BYTES / 8 {
            // SAFETY: forwarded with the caller's valid layout.
            return unsafe { System.alloc(layout) };
        }
        let got = CURSOR.try_with(|c| {
            let (mut next, mut end) = c.get();
            let mut start = (next + layout.align() - 1) & !(layout.align() - 1);
            if next == 0 || start + layout.size() > end {
                // SAFETY: CHUNK_BYTES is non-zero and 4096 a power of two, so the layout is
                // valid and non-zero.
                let chunk =
                    unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK_BYTES, 4096)) };
                if chunk.is_null() {
                    return std::ptr::null_mut();
                }
                next = chunk as usize;
                end = next + CHUNK_BYTES;
                start = (next + layout.align() - 1) & !(layout.align() - 1);
            }
            c.set((start + layout.size(), end));
            start as *mut u8
        });
        // A thread being torn down has no TLS left: fall back to the system allocator (never freed).
        // SAFETY: forwarded with the caller's valid layout.
        got.unwrap_or_else(|_| unsafe { System.alloc(layout) })
    }
}

/// Dispatches every call to the allocator chosen at start-up.
pub struct Dispatch;

// SAFETY: each method forwards to one allocator, the same one for the life of the process, so
// memory is always freed or resized by the allocator that produced it; `bump` never frees.
unsafe impl GlobalAlloc for Dispatch {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let choice = current();
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout is forwarded unchanged.
        unsafe {
            match choice {
                2 => mimalloc::MiMalloc.alloc(layout),
                3 => tikv_jemallocator::Jemalloc.alloc(layout),
                4 => bump::alloc(layout),
                _ => System.alloc(layout),
            }
        }
    }

    /// Forwarded rather than left to the default (alloc, then memset): each allocator knows when
    /// its memory is fresh from the OS and already zero, so a large zeroed buffer (an inflated
    /// piece) costs no memset.
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let choice = current();
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout is forwarded unchanged; bump memory is zeroed here.
        unsafe {
            match choice {
                2 => mimalloc::MiMalloc.alloc_zeroed(layout),
                3 => tikv_jemallocator::Jemalloc.alloc_zeroed(layout),
                4 => {
                    let p = bump::alloc(layout);
                    if !p.is_null() {
                        std::ptr::write_bytes(p, 0, layout.size());
                    }
                    p
                }
                _ => System.alloc_zeroed(layout),
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the same allocator (the choice never changes).
        unsafe {
            match current() {
                2 => mimalloc::MiMalloc.dealloc(ptr, layout),
                3 => tikv_jemallocator::Jemalloc.dealloc(ptr, layout),
                4 => {}
                _ => System.dealloc(ptr, layout),
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let choice = current();
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr`/`layout` describe a block from this same allocator; `new_size` with
        // `layout`'s alignment is a valid layout (realloc's contract), and bump copies only the
        // bytes both blocks hold.
        unsafe {
            match choice {
                2 => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
                3 => tikv_jemallocator::Jemalloc.realloc(ptr, layout, new_size),
                4 => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = bump::alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    }
                    new
                }
                _ => System.realloc(ptr, layout, new_size),
            }
        }
    }
}

/// Asks for transparent huge pages (2 MiB) under the whole 2 MiB-aligned part of `buf`'s
/// capacity, before it is written, when [`huge_pages_wanted`]: one page fault per 2 MiB instead
/// of 512 (the kernel here gives huge pages only where asked, `madvise` mode).
pub fn advise_huge_pages(buf: &mut Vec<u8>) {
    #[cfg(target_os = "linux")]
    if huge_pages_wanted() {
        const HUGE: usize = 2 << 20;
        let start = buf.as_mut_ptr() as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + buf.capacity()) / HUGE * HUGE;
        if end > first {
            // SAFETY: the range lies inside `buf`'s own allocation and is page-aligned;
            // MADV_HUGEPAGE only changes how later faults are served, never the contents.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

/// Huge pages only with `MDSAM_HUGE_PAGES=1`. A huge page is a 2 MiB clear of memory the kernel
/// must find contiguous, and on the project's VM that memory is often cold on the host: in
/// alternating runs on 0.5 M reads, markdup-pipeline `-u` took 2.6-2.9 s with them in two runs of
/// three (2.4 s of system time in `clear_page_erms`) against 0.89-0.92 s without, and sort
/// 2.9-3.2 s against 1.8-2.3 s. When they were added (e2ea513) they saved 10-15 %.
fn huge_pages_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var_os("MDSAM_HUGE_PAGES").is_some_and(|v| v == "1"))
}

/// Gives the pages of `buf`'s capacity past its length back to the kernel (`MADV_DONTNEED`):
/// a recycled buffer larger than what was written into it then holds no resident memory for
/// its unused tail. The contents up to the length are untouched; the tail reads as zeros.
pub fn release_unused_tail(buf: &mut Vec<u8>) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = buf.as_mut_ptr() as usize;
        let first = (start + buf.len()).next_multiple_of(PAGE);
        let end = (start + buf.capacity()) / PAGE * PAGE;
        if end > first {
            // SAFETY: the range lies inside `buf`'s own allocation, past its initialised bytes,
            // and is page-aligned; no live data is there, and the allocator's metadata is not.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}
