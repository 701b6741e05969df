//! Output destinations: stdout, or a file written under a temporary name in the target's
//! directory and renamed into place only when the command succeeds.

use std::io::Write;

use crate::io::background::BackgroundWriter;
use crate::io::capped_write::{CappedWrite, MAX_WRITE};
use crate::io::direct_write::DirectWriter;
use std::path::{Path, PathBuf};

/// A file being written; removed on drop unless committed.
pub struct OutputFile {
    target: PathBuf,
    temp: PathBuf,
    committed: bool,
}

/// Opens `path` for writing (`-` is stdout). The returned guard must be committed after the
/// writer is finished; a file guard that is dropped removes the temporary file. Writes go
/// through a [`BackgroundWriter`], so copying them into the kernel overlaps the caller's work.
pub fn create(path: &str) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    let (w, guard) = create_unbuffered(Path::new(path), PageCache::BypassLarge)?;
    Ok((Box::new(BackgroundWriter::new(w)), guard))
}

/// How a regular output file uses the page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageCache {
    /// Past its first [`crate::io::direct_write::DIRECT_AFTER`] bytes a file is written with `O_DIRECT`
    /// ([`crate::io::direct_write`]): a command's output.
    BypassLarge,
    /// Every byte through the page cache: a temporary file read back by the same command.
    Keep,
    /// Past the page cache from the first byte ([`DirectWriter::temporary`]): a temporary file
    /// this command reads back with [`crate::io::direct_read`].
    Bypass,
}

/// Bytes a direct write of a temporary file gathers.
const TEMPORARY_CHUNK: usize = 4 << 20;

/// As [`create`], but without the background thread: for writers that already write large
/// pieces from a thread of their own (the BGZF deflate stage), where it would only add a copy.
/// A `Path`, as names made from record data (`split -f %!`) need not be UTF-8.
pub fn create_unbuffered(
    path: &Path,
    cache: PageCache,
) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    if path.as_os_str() == "-" {
        return Ok((Box::new(Stdout), None));
    }
    let target = path.to_path_buf();
    // Devices, FIFOs and other special files (`-o /dev/null`, `-o /dev/stdout`, a named pipe)
    // are written in place: renaming a temporary file over them would replace the device.
    if std::fs::metadata(&target).is_ok_and(|m| !m.is_file()) {
        let file = std::fs::OpenOptions::new().write(true).open(&target)?;
        return Ok((Box::new(CappedWrite(file)), None));
    }
    let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // Built from the raw name: a lossy one would give names differing only in invalid UTF-8
    // the same temporary file.
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(target.file_name().unwrap_or_default());
    temp_name.push(format!(".mdsam-{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let file = crate::io::tempfiles::create_registered(&temp)?;
    let guard = OutputFile { target, temp, committed: false };
    let writer: Box<dyn Write + Send> = match cache {
        PageCache::BypassLarge => Box::new(DirectWriter::new(file)),
        PageCache::Keep => Box::new(CappedWrite(file)),
        PageCache::Bypass => Box::new(DirectWriter::temporary(file, TEMPORARY_CHUNK)),
    };
    Ok((writer, Some(guard)))
}

/// Standard output written with whole `write` calls: `std::io::Stdout` is line-buffered, which
/// cuts binary output at every newline byte. Each call passes at most [`MAX_WRITE`] bytes, for
/// a redirection to a file (see [`crate::io::capped_write`]).
struct Stdout;

impl Write for Stdout {
    #[allow(unsafe_code)] // write(2) to fd 1
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let len = data.len().min(MAX_WRITE);
        // SAFETY: writes from a valid slice (its first `len` bytes) to file descriptor 1, which
        // stays open.
        let n = unsafe { libc::write(libc::STDOUT_FILENO, data.as_ptr().cast(), len) };
        if n < 0 { Err(std::io::Error::last_os_error()) } else { Ok(n as usize) }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes a whole file atomically with `fill` (or to stdout for `-`).
pub fn write_with(
    path: &str,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (mut w, file) = create(path)?;
    fill(&mut w)?;
    w.flush()?;
    drop(w);
    match file {
        Some(f) => f.commit(),
        None => Ok(()),
    }
}

/// Writes a small whole file (counts, JSON) atomically.
pub fn write_file(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

impl OutputFile {
    /// Moves the finished file into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.temp, &self.target)?;
        crate::io::tempfiles::unregister(&self.temp);
        self.committed = true;
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
            crate::io::tempfiles::unregister(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_written_in_place() {
        let (mut w, guard) = create("/dev/null").unwrap();
        assert!(guard.is_none(), "no temporary file for a device");
        w.write_all(b"discarded").unwrap();
        w.flush().unwrap();
        drop(w);
        let meta = std::fs::metadata("/dev/null").unwrap();
        assert!(!meta.is_file(), "/dev/null must still be a device");
    }

    #[test]
    fn file_appears_only_on_commit() {
        let dir = std::env::temp_dir().join(format!("mdsam-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        let p = path.to_str().unwrap();
        let (mut w, guard) = create(p).unwrap();
        w.write_all(b"x").unwrap();
        w.flush().unwrap();
        drop(w);
        drop(guard);
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let (mut w, guard) = create(p).unwrap();
        w.write_all(b"y").unwrap();
        w.flush().unwrap();
        drop(w);
        guard.unwrap().commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"y");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
