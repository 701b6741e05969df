//! Waiting on a channel from a pool worker without idling it.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

/// The next item from `rx`, `None` once the sender is gone. While nothing has arrived, this
/// worker runs the pool's queued jobs (the reader's inflate and parse tasks, the writer's
/// deflates) instead of sleeping in `recv`, which left them to the other workers.
pub(crate) fn next_helping_pool<T>(rx: &Receiver<T>) -> Option<T> {
    loop {
        match rx.try_recv() {
            Ok(item) => return Some(item),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}
