//! Temporary files read back whole past the page cache (`O_DIRECT`): the other half of
//! [`DirectWriter::temporary`](crate::io::direct_write::DirectWriter::temporary).
//!
//! A buffered read of a file that is not cached fills fresh page-cache pages and copies them out
//! again: 1.8 s, all of it system time, for 0.9 GB on the project's VM, against 0.5 s and no
//! CPU for the same read with `O_DIRECT`. A spill reads each temporary file once, so caching it
//! buys nothing.
//!
//! `O_DIRECT` wants the buffer address and the length aligned: the bytes land at an aligned
//! offset inside the returned buffer, which the caller starts from. Where the filesystem or
//! `MDSAM_DIRECT_IO` says no, the file is read buffered at offset 0.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::io::direct_write::{ALIGN, direct_allowed, set_direct};

/// A whole file's bytes: `data[offset..]`.
pub struct WholeFile {
    pub data: Vec<u8>,
    pub offset: usize,
}

/// Reads the file at `path` whole, directly where allowed, into a buffer from the shared
/// recycler ([`crate::io::recycle`]).
pub fn read_whole(path: &Path) -> std::io::Result<WholeFile> {
    read_whole_into(path, whole_file_buffer(path)?)
}

/// A buffer from the shared recycler for [`read_whole_into`] the file at `path`: a thread that
/// only reads is given its buffers by the thread that frees them. (Buffers a reader thread
/// allocated and markdup-pipeline's main thread freed raised its peak by 400 MB at 12 M reads:
/// mimalloc returns memory freed by another thread only to the heap of the thread that
/// allocated it.)
pub fn whole_file_buffer(path: &Path) -> std::io::Result<Vec<u8>> {
    let len = usize::try_from(std::fs::metadata(path)?.len()).map_err(std::io::Error::other)?;
    // Room for the aligned start and for the last block read whole.
    Ok(crate::io::recycle::take_for_overwrite(len + 2 * ALIGN))
}

/// As [`read_whole`], into `data` from [`whole_file_buffer`].
pub fn read_whole_into(path: &Path, mut data: Vec<u8>) -> std::io::Result<WholeFile> {
    let mut file = File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
    if data.len() < len + 2 * ALIGN {
        return Err(std::io::Error::other("the file grew after it was sized"));
    }
    let offset = data.as_ptr().align_offset(ALIGN);
    let mut direct = direct_allowed() && set_direct(&file, true);
    let mut got = 0;
    loop {
        let at = offset + got;
        // A direct read must cover whole blocks; the buffer has room past the end of the file.
        let end = if direct { at + (len - got).next_multiple_of(ALIGN) } else { offset + len };
        if at == end {
            break;
        }
        match read_once(&mut file, &mut data[at..end], &mut direct)? {
            0 => break,
            n => got += n,
        }
        if got >= len {
            break;
        }
    }
    if got != len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("read {got} of {len} bytes"),
        ));
    }
    data.truncate(offset + len);
    Ok(WholeFile { data, offset })
}

/// A temporary file read in order, directly where allowed, `chunk` bytes a read (a sorted run
/// in a merge). Reading from a file that is partly in the page cache is still right: the kernel
/// writes cached pages back before it reads past them.
pub struct DirectReader {
    file: File,
    /// `chunk + ALIGN` bytes; reads land in the aligned window at `start`.
    storage: Vec<u8>,
    start: usize,
    chunk: usize,
    /// The unread bytes of the window: `storage[start + pos..start + filled]`.
    pos: usize,
    filled: usize,
    direct: bool,
}

impl DirectReader {
    pub fn open(path: &Path, chunk: usize) -> std::io::Result<DirectReader> {
        let file = File::open(path)?;
        let chunk = chunk.next_multiple_of(ALIGN).max(ALIGN);
        let storage = vec![0u8; chunk + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN);
        let direct = direct_allowed() && set_direct(&file, true);
        Ok(DirectReader { file, storage, start, chunk, pos: 0, filled: 0, direct })
    }

    /// Reads the next window; 0 at the end of the file.
    fn refill(&mut self) -> std::io::Result<usize> {
        self.pos = 0;
        self.filled = 0;
        let window = self.start..self.start + self.chunk;
        self.filled = read_once(&mut self.file, &mut self.storage[window], &mut self.direct)?;
        Ok(self.filled)
    }
}

/// One `read` into `buf`, directly while `direct` holds. A read the filesystem refuses direct
/// is retried buffered, and a short direct read (only the end of the file makes one) leaves the
/// offset unaligned: either way the file is read buffered from then on.
fn read_once(file: &mut File, buf: &mut [u8], direct: &mut bool) -> std::io::Result<usize> {
    loop {
        match file.read(buf) {
            Ok(n) => {
                if *direct && !n.is_multiple_of(ALIGN) {
                    *direct = !set_direct(file, false);
                }
                return Ok(n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if *direct && e.raw_os_error() == Some(libc::EINVAL) => {
                *direct = !set_direct(file, false);
                if *direct {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

impl Read for DirectReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.filled && self.refill()? == 0 {
            return Ok(0);
        }
        let n = out.len().min(self.filled - self.pos);
        let at = self.start + self.pos;
        out[..n].copy_from_slice(&self.storage[at..at + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::direct_write::DirectWriter;
    use std::io::Write;

    #[test]
    fn reads_back_what_a_temporary_writer_wrote() {
        let dir = std::env::temp_dir().join(format!("mdsam-direct-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (i, len) in
            [0usize, 1, 4095, 4096, 4097, 3 * 65536 + 17, 1_000_003].into_iter().enumerate()
        {
            let path = dir.join(format!("t{i}"));
            let bytes: Vec<u8> = (0..len).map(|j| (j * 7 + i) as u8).collect();
            let mut w = DirectWriter::temporary(File::create(&path).unwrap(), 64 << 10);
            // Pieces of odd sizes, as records are appended.
            for piece in bytes.chunks(999) {
                w.write_all(piece).unwrap();
            }
            w.flush().unwrap();
            drop(w);
            let whole = read_whole(&path).unwrap();
            assert_eq!(&whole.data[whole.offset..], &bytes[..], "length {len}");
            assert!(whole.offset < ALIGN);
            // In order, in reads of odd sizes that cross the reader's windows.
            let mut reader = DirectReader::open(&path, 8192).unwrap();
            let (mut back, mut piece) = (Vec::new(), vec![0u8; 3001]);
            loop {
                let n = reader.read(&mut piece).unwrap();
                if n == 0 {
                    break;
                }
                back.extend_from_slice(&piece[..n]);
            }
            assert_eq!(back, bytes, "length {len}, read in order");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_is_an_error() {
        assert!(read_whole(Path::new("/nonexistent/mdsam-direct-read")).is_err());
    }
}
