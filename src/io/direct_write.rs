//! Large output files written past the page cache (`O_DIRECT`) once they are past a threshold.
//!
//! A buffered `write` copies every byte into freshly allocated page-cache pages, and that copy
//! was the largest single cost of writing big outputs: 24 % of markdup-pipeline `-u`'s CPU at
//! 6 M reads (2.9 GB of output; `copy_folio_from_iter_atomic` under `write`). Measured here with
//! dd, 3 GB went out at 0.34 GB/s buffered (9.2 s of system time) and at 2.0 GB/s with
//! `O_DIRECT` (0.24 s of system time). Most of that buffered cost came from writing 8 MiB a call
//! ([`crate::io::capped_write`]): in 256 KiB calls dd wrote 2 GB buffered with 0.4 s of system
//! time, direct with 0.13 s, so direct still saves CPU, which both cores need. The first
//! [`DIRECT_AFTER`] bytes stay buffered, so a small output is still in the page cache for the
//! next command of a script; past it, the rest of a file that large would only push other data
//! out of the cache.
//!
//! `O_DIRECT` needs the buffer address, the length and the file offset aligned to the device's
//! block size: whole [`ALIGN`]-aligned chunks go direct, the tail goes buffered. A filesystem
//! without `O_DIRECT` (some network and FUSE ones) refuses it at `fcntl` or at the first write;
//! the file is then written buffered to the end. `MDSAM_DIRECT_IO=0` turns it off,
//! `MDSAM_DIRECT_IO=always` turns it on from the first byte.

use std::fs::File;
use std::io::Write;

use crate::io::capped_write::MAX_WRITE;

/// Alignment of buffer, lengths and offsets for `O_DIRECT` (the largest logical block size of
/// common devices).
pub const ALIGN: usize = 4096;
/// Bytes gathered before a write: large enough that a blocking direct write keeps the device
/// busy, a multiple of [`ALIGN`].
const CHUNK: usize = 8 << 20;
/// The smallest chunk of a temporary file's writer: direct writes of 64 KiB ran at 0.7 GB/s on
/// the project's VM, of 1 MiB at 1.1 GB/s.
const MIN_TEMPORARY_CHUNK: usize = 64 << 10;
/// Bytes written buffered before the rest goes direct.
pub const DIRECT_AFTER: u64 = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Buffered until `after` bytes are written, then direct.
    BufferedUntil(u64),
    Direct,
    /// Buffered to the end: turned off, or refused by the filesystem.
    Buffered,
}

/// A file writer that switches to `O_DIRECT` past a threshold.
pub struct DirectWriter {
    file: File,
    /// `chunk + ALIGN` bytes; the chunk is the aligned window at `start`.
    storage: Vec<u8>,
    /// Bytes gathered before a write, a multiple of [`ALIGN`].
    chunk: usize,
    start: usize,
    filled: usize,
    written: u64,
    mode: Mode,
    used_direct: bool,
}

/// Sets or clears `O_DIRECT` on `file`; false when the filesystem refuses.
#[allow(unsafe_code)] // fcntl on the file's own descriptor
pub fn set_direct(file: &File, on: bool) -> bool {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open file `file` for the whole call; F_GETFL/F_SETFL only read and
    // change its status flags.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return false;
        }
        let flags = if on { flags | libc::O_DIRECT } else { flags & !libc::O_DIRECT };
        libc::fcntl(fd, libc::F_SETFL, flags) == 0
    }
}

/// Whether `MDSAM_DIRECT_IO` allows `O_DIRECT` at all.
pub fn direct_allowed() -> bool {
    configured_threshold().is_some()
}

/// The threshold chosen by `MDSAM_DIRECT_IO`: `None` when turned off.
fn configured_threshold() -> Option<u64> {
    match std::env::var("MDSAM_DIRECT_IO").as_deref() {
        Ok("0") | Ok("off") | Ok("no") => None,
        Ok("always") => Some(0),
        _ => Some(DIRECT_AFTER),
    }
}

impl DirectWriter {
    /// Writes `file` (a regular file opened for writing at offset 0), going direct as
    /// `MDSAM_DIRECT_IO` says.
    pub fn new(file: File) -> Self {
        Self::with_threshold(file, configured_threshold())
    }

    /// Writes `file` going direct after `threshold` bytes (`None`: never).
    pub fn with_threshold(file: File, threshold: Option<u64>) -> Self {
        Self::with_chunk(file, threshold, CHUNK)
    }

    /// [`Self::new`] gathering `chunk` bytes (whole blocks) a write instead of 8 MiB: for
    /// outputs whose command holds little else in memory.
    pub fn with_chunk_size(file: File, chunk: usize) -> Self {
        let chunk = chunk.max(ALIGN).next_multiple_of(ALIGN);
        Self::with_chunk(file, configured_threshold(), chunk)
    }

    /// Writes a temporary file that this process reads back once (spilled records): direct from
    /// the first byte unless `MDSAM_DIRECT_IO` turns it off, gathering `chunk` bytes (rounded to
    /// whole blocks, at least 64 KiB) a write. Through the page cache, the kernel copies every
    /// byte into fresh pages, which on the project's VM was the largest cost of spilling
    /// (`copy_folio_from_iter_atomic`: 18 % of markdup-pipeline's samples at 12 M reads under
    /// `--max-memory 1G`); read back with [`crate::io::direct_read`], no page is cached.
    pub fn temporary(file: File, chunk: usize) -> Self {
        let chunk = chunk.max(MIN_TEMPORARY_CHUNK).next_multiple_of(ALIGN);
        Self::with_chunk(file, configured_threshold().map(|_| 0), chunk)
    }

    fn with_chunk(file: File, threshold: Option<u64>, chunk: usize) -> Self {
        let storage = vec![0u8; chunk + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN);
        let mode = threshold.map_or(Mode::Buffered, Mode::BufferedUntil);
        DirectWriter {
            file,
            storage,
            chunk,
            start,
            filled: 0,
            written: 0,
            mode,
            used_direct: false,
        }
    }

    /// Whether the file has been written with `O_DIRECT` (for tests).
    pub fn went_direct(&self) -> bool {
        self.used_direct
    }

    fn set_direct(&self, on: bool) -> bool {
        set_direct(&self.file, on)
    }

    /// Leaves direct mode for good (a refusal, or an unaligned offset after a short write).
    fn fall_back(&mut self) {
        if self.mode == Mode::Direct {
            self.set_direct(false);
        }
        self.mode = Mode::Buffered;
    }

    /// Writes the first `len` gathered bytes: whole blocks direct when the mode allows, the
    /// rest (the tail of a flush) buffered, after which the offset no longer suits direct writes.
    fn write_gathered(&mut self, len: usize) -> std::io::Result<()> {
        if let Mode::BufferedUntil(after) = self.mode
            && self.written >= after
            && self.written.is_multiple_of(ALIGN as u64)
        {
            self.mode = if self.set_direct(true) { Mode::Direct } else { Mode::Buffered };
            self.used_direct |= self.mode == Mode::Direct;
        }
        let mut at = 0;
        if self.mode == Mode::Direct {
            let whole = len / ALIGN * ALIGN;
            while at < whole && self.mode == Mode::Direct {
                at += self.write_once(self.start + at..self.start + whole)?;
            }
            if at < len {
                self.fall_back();
            }
        }
        while at < len {
            at += self.write_once(self.start + at..self.start + len)?;
        }
        Ok(())
    }

    /// One `write` of `range` of the storage; a direct write the filesystem refuses is retried
    /// buffered, and the file stays buffered.
    fn write_once(&mut self, range: std::ops::Range<usize>) -> std::io::Result<usize> {
        loop {
            // A buffered write goes to the kernel in small pieces (see `capped_write`); a direct
            // one allocates no page cache and goes whole.
            let end = match self.mode {
                Mode::Direct => range.end,
                _ => range.end.min(range.start + MAX_WRITE),
            };
            match self.file.write(&self.storage[range.start..end]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.written += n as u64;
                    if self.mode == Mode::Direct && !n.is_multiple_of(ALIGN) {
                        self.fall_back();
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if self.mode == Mode::Direct && e.raw_os_error() == Some(libc::EINVAL) => {
                    self.fall_back();
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Write for DirectWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(self.chunk - self.filled);
        let at = self.start + self.filled;
        self.storage[at..at + n].copy_from_slice(&data[..n]);
        self.filled += n;
        if self.filled == self.chunk {
            self.filled = 0;
            self.write_gathered(self.chunk)?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let len = std::mem::take(&mut self.filled);
        self.write_gathered(len)
    }
}

impl Drop for DirectWriter {
    fn drop(&mut self) {
        // As `BufWriter`: what is gathered is written; callers that care flush first and see
        // the error.
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize, seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect()
    }

    /// Writes `pieces` through a writer going direct after `threshold` bytes, flushing in the
    /// middle when asked; the file must hold exactly the bytes written.
    fn round_trip(threshold: Option<u64>, pieces: &[usize], flush_midway: bool) -> bool {
        let dir = std::env::temp_dir().join(format!("mdsam-direct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("out-{threshold:?}-{}-{flush_midway}", pieces.len()));
        let mut w = DirectWriter::with_threshold(File::create(&path).unwrap(), threshold);
        let mut expected = Vec::new();
        for (i, &len) in pieces.iter().enumerate() {
            let data = pattern(len, i as u32);
            w.write_all(&data).unwrap();
            expected.extend_from_slice(&data);
            if flush_midway && i == pieces.len() / 2 {
                w.flush().unwrap();
            }
        }
        w.flush().unwrap();
        let direct = w.went_direct();
        drop(w);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        std::fs::remove_file(&path).unwrap();
        direct
    }

    #[test]
    fn writes_every_byte_in_order_in_each_mode() {
        // Odd sizes across chunk edges, a tail that is not a whole block, a flush midway.
        let pieces = [1, 65_536, 3_000_001, 7, CHUNK, 12_345_678, 4095, 4097];
        for threshold in [None, Some(0), Some(CHUNK as u64), Some(u64::MAX)] {
            for flush_midway in [false, true] {
                round_trip(threshold, &pieces, flush_midway);
            }
        }
    }

    #[test]
    fn goes_direct_past_the_threshold_where_the_filesystem_allows() {
        // The temporary directory's filesystem may refuse O_DIRECT (tmpfs before Linux 6.6):
        // then the writer must still produce the file, buffered.
        let went = round_trip(Some(CHUNK as u64), &[3 * CHUNK + 100], false);
        let refused = std::env::temp_dir().join("mdsam-direct-probe");
        let probe = File::create(&refused).unwrap();
        let allowed = DirectWriter::with_threshold(probe, None).set_direct(true);
        std::fs::remove_file(&refused).unwrap();
        assert_eq!(went, allowed);
        assert!(!round_trip(None, &[3 * CHUNK], false));
        assert!(!round_trip(Some(u64::MAX), &[3 * CHUNK], false));
    }
}
