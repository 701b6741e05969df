//! The one thread pool a command runs on.

/// Stack of each worker: noodles' rANS Nx16 order-1 decoder keeps its frequency tables on the
/// stack (a CRAM 3.1 container overflowed rayon's default 2 MiB; 4 MiB was enough). Only the
/// pages touched are committed.
pub const WORKER_STACK_BYTES: usize = 16 << 20;

/// A pool of `threads` workers; everything parallel in a command runs inside `install`.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .stack_size(WORKER_STACK_BYTES)
        .thread_name(|i| format!("mdsam-{i}"))
        .build()
        .unwrap_or_else(|_| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .stack_size(WORKER_STACK_BYTES)
                .build()
                .expect("a one-thread pool")
        })
}
