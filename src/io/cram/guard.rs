//! noodles asserts (panics) on input it cannot handle: malformed containers when decoding,
//! records it cannot place when encoding. [`quietly`] runs such a call with the panic caught and
//! not printed, so that the caller reports it as a one-line error.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Set while this thread is inside [`quietly`]: a panic is then the caller's to report.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Installs, once, a panic hook that stays quiet for panics inside [`quietly`].
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// `f()`, or `None` when it panicked (nothing printed).
pub fn quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    install_hook();
    let was = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    result.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_none_and_a_value_comes_through() {
        assert_eq!(quietly(|| 7), Some(7));
        let v: Vec<u8> = Vec::new();
        assert_eq!(quietly(|| v[3]), None);
    }
}
