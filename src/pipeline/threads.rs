//! The one thread pool a command runs on.

/// A pool of `threads` workers; everything parallel in a command runs inside `install`.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("mdsam-{i}"))
        .build()
        .unwrap_or_else(|_| {
            rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a one-thread pool")
        })
}
