//! Buffered file writes handed to the kernel in pieces of at most [`MAX_WRITE`] bytes.
//!
//! The kernel sizes the page-cache folios of a buffered `write` by its length, and large
//! folios can be very slow to allocate: here (Linux 6.18 in a VM that reports free memory to
//! its host) dd wrote 2 GB to a fresh file with 14.5–14.9 s of system time at 1 MiB a `write`,
//! up to 4.1 s at 512 KiB, and 400 MB with 5.5–5.8 s at 8 MiB (6 runs of 7), but 2 GB with
//! 0.39–0.45 s at 256, 128 or 64 KiB (7 runs of 7; one 400 MB run of 6 at 256 KiB still took
//! 2.1 s). mdsam wrote 8 MiB at a time, and the kernel's copy into the page cache
//! (`copy_folio_from_iter_atomic`) was 14 % of `markdup`'s samples at 0.5 M reads, against
//! 0.3 % of samtools', which writes in small pieces. Capping the length costs one system call
//! per 256 KiB, nothing measurable.

use std::io::Write;

/// The most bytes one buffered `write` system call is given.
pub const MAX_WRITE: usize = 256 << 10;

/// A writer whose every `write` passes at most [`MAX_WRITE`] bytes to the one it wraps;
/// `write_all` loops over pieces as usual.
pub struct CappedWrite<W>(pub W);

impl<W: Write> Write for CappedWrite<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.write(&data[..data.len().min(MAX_WRITE)])
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the length of every `write` it is given.
    struct Lengths(Vec<usize>, Vec<u8>);

    impl Write for Lengths {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.push(data.len());
            self.1.extend_from_slice(data);
            Ok(data.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn large_writes_reach_the_inner_writer_in_capped_pieces() {
        let data: Vec<u8> = (0..MAX_WRITE * 2 + 1000).map(|i| (i * 7 % 251) as u8).collect();
        let mut w = CappedWrite(Lengths(Vec::new(), Vec::new()));
        w.write_all(&data).unwrap();
        w.write_all(b"tail").unwrap();
        assert_eq!(w.0.0, vec![MAX_WRITE, MAX_WRITE, 1000, 4]);
        assert_eq!(w.0.1.len(), data.len() + 4);
        assert_eq!(&w.0.1[..data.len()], &data[..]);
    }
}
