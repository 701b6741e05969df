//! A writer for tests: everything written lands in a shared `Vec`, readable while the writer
//! (moved into a background thread or a boxed sink) is still alive.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct SharedSink(pub Arc<Mutex<Vec<u8>>>);

impl Write for SharedSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
