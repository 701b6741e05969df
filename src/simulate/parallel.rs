//! Ordered parallel chunks: worker threads produce chunk results in any order, the calling thread
//! consumes them in chunk order. Output therefore never depends on the thread count.
//!
//! Algorithm: workers take chunk indices from an atomic counter and send `(index, result)` through a
//! bounded channel (two slots per worker, which limits how far they run ahead); the caller parks
//! early arrivals in a map until their turn. After a consumer error the workers stop taking chunks
//! and the caller drains the channel so none stays blocked.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;

/// Calls `produce(i)` for `i` in `0..chunks` on `threads` threads (inline for one) and hands each
/// result to `consume` in index order.
pub fn for_each_ordered<T: Send>(
    threads: usize,
    chunks: u64,
    produce: impl Fn(u64) -> T + Sync,
    mut consume: impl FnMut(T) -> io::Result<()>,
) -> io::Result<()> {
    if threads <= 1 {
        for index in 0..chunks {
            consume(produce(index))?;
        }
        return Ok(());
    }
    let next_chunk = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<(u64, T)>(2 * threads);
        for _ in 0..threads {
            let sender = sender.clone();
            let (next_chunk, stop, produce) = (&next_chunk, &stop, &produce);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let index = next_chunk.fetch_add(1, Ordering::Relaxed);
                    if index >= chunks || sender.send((index, produce(index))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut early = BTreeMap::new();
        let mut expected = 0u64;
        let mut result = Ok(());
        for (index, item) in receiver {
            early.insert(index, item);
            while let Some(item) = early.remove(&expected) {
                expected += 1;
                if result.is_ok() {
                    result = consume(item);
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_for_any_thread_count() {
        for threads in 1..=4 {
            let mut seen = Vec::new();
            for_each_ordered(
                threads,
                50,
                |i| i * i,
                |v| {
                    seen.push(v);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen, (0..50).map(|i| i * i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn consumer_errors_stop_the_run() {
        let mut consumed = 0;
        let result = for_each_ordered(
            2,
            1_000,
            |i| i,
            |v| {
                consumed += 1;
                if v == 3 { Err(io::Error::other("full")) } else { Ok(()) }
            },
        );
        assert!(result.is_err());
        assert_eq!(consumed, 4);
    }
}
