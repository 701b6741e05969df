//! Output destinations: stdout, or a file written under a temporary name beside the target and
//! renamed onto it only when the command succeeds. What samtools' `open` would do to the same
//! path is kept: a symlink is written through (the temporary goes beside the link's target), a
//! file that cannot be opened for writing is refused before any work, an existing file keeps its
//! permissions, and one with other hard links is written in place.

use std::io::Write;

use crate::io::background::BackgroundWriter;
use crate::io::capped_write::{CappedWrite, MAX_WRITE};
use crate::io::direct_write::DirectWriter;
use crate::io::tempfiles::{self, TempFile};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A file being written; removed on drop unless committed.
pub struct OutputFile {
    target: PathBuf,
    temp: TempFile,
}

/// Opens `path` for writing (`-` is stdout). The returned guard must be committed after the
/// writer is finished; a file guard that is dropped removes the temporary file. Writes go
/// through a [`BackgroundWriter`], so copying them into the kernel overlaps the caller's work.
pub fn create(path: &str) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    let (w, guard) = create_unbuffered(Path::new(path))?;
    Ok((Box::new(BackgroundWriter::new(w)), guard))
}

/// [`create`] with small buffers (a 256 KiB direct-write chunk, two 256 KiB hand-overs in
/// flight): for text that a command with a small working set writes as it goes (`mpileup`,
/// `consensus`), where [`create`]'s 8 MiB chunk and 4 × 4 MiB queue were most of its memory.
/// Writes of 256 KiB cost the kernel no more per byte than larger ones (see
/// [`crate::io::direct_write`]).
pub fn create_lean(path: &str) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    let (w, guard) = create_with_cache(Path::new(path), PageCache::BypassLargeLean)?;
    Ok((Box::new(BackgroundWriter::with_buffers(w, LEAN_BUFFER, 2)), guard))
}

/// [`create_lean`] without the background thread: for a caller whose own thread only writes
/// (mpileup's blocks), where handing megabytes over to another thread would only copy them.
pub fn create_lean_unbuffered(
    path: &str,
) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    create_with_cache(Path::new(path), PageCache::BypassLargeLean)
}

/// A lean output's hand-over size.
const LEAN_BUFFER: usize = 256 << 10;
/// A lean output's direct-write chunk.
const LEAN_CHUNK: usize = 256 << 10;

/// How a regular output file uses the page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageCache {
    /// Past its first [`crate::io::direct_write::DIRECT_AFTER`] bytes a file is written with `O_DIRECT`
    /// ([`crate::io::direct_write`]): a command's output.
    BypassLarge,
    /// As `BypassLarge`, gathering [`LEAN_CHUNK`] bytes a write ([`create_lean`]).
    BypassLargeLean,
    /// Every byte through the page cache: a temporary file read back by the same command.
    Keep,
    /// Past the page cache from the first byte ([`DirectWriter::temporary`]): a temporary file
    /// this command reads back with [`crate::io::direct_read`].
    Bypass,
}

/// Bytes a direct write of a temporary file gathers.
const TEMPORARY_CHUNK: usize = 4 << 20;

/// The longest file name (bytes) Linux file systems take.
const NAME_MAX: usize = 255;

/// Symlinks followed before giving up, as the kernel's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// Temporary names tried beside one output.
const TEMP_TRIES: usize = 100;

/// As [`create`], but without the background thread: for writers that already write large
/// pieces from a thread of their own (the BGZF deflate stage), where it would only add a copy.
/// A `Path`, as names made from record data (`split -f %!`) need not be UTF-8.
pub fn create_unbuffered(
    path: &Path,
) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    create_with_cache(path, PageCache::BypassLarge)
}

fn create_with_cache(
    path: &Path,
    cache: PageCache,
) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    if path.as_os_str() == "-" {
        return Ok((Box::new(Stdout), None));
    }
    let existing = std::fs::metadata(path).ok();
    let (target, opened) = match &existing {
        None => (resolve_links(path)?, None),
        Some(meta) => {
            // Opening the file refuses what samtools' open refuses (read-only file or file
            // system, immutable file), up front with its error, not by a rename at the end.
            let file = std::fs::OpenOptions::new().write(true).open(path)?;
            // Devices, FIFOs and other special files (`-o /dev/null`, `-o /dev/stdout`, a named
            // pipe) are written in place: renaming a temporary file over them would replace the
            // device.
            if !meta.is_file() {
                return Ok((Box::new(CappedWrite(file)), None));
            }
            let target = resolve_links(path)?;
            // A file with other hard links is truncated and written in place, as samtools
            // writes it: a rename would leave the other names on the old contents. So is one
            // reached through a link that names no path of it (`/proc/self/fd/N`). That write is
            // not atomic: a failed command leaves it partial, as samtools does.
            if hard_links(meta) > 1 || !same_file(&target, meta) {
                return in_place(file, cache);
            }
            (target, Some((file, meta.permissions())))
        }
    };
    // The temporary goes beside the file a symlink points at, and is renamed onto that file:
    // renamed onto the link, it replaced the link with a regular file.
    let temp_name = temp_namer(&target);
    let mut n = 0;
    let next_name = || {
        n += 1;
        temp_name(n - 1)
    };
    let (temp, file) = match (tempfiles::create_unique(next_name, TEMP_TRIES), opened) {
        (Ok(created), opened) => {
            if let Some((_, permissions)) = opened {
                // Renamed into place, the new file keeps the old one's permissions, as a file
                // truncated in place would.
                created.1.set_permissions(permissions)?;
            }
            created
        }
        // A writable file in a directory that takes no new file: written in place, as
        // samtools writes it.
        (Err(e), Some((file, _))) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return in_place(file, cache);
        }
        (Err(e), _) => return Err(e),
    };
    Ok((writer(file, cache), Some(OutputFile { target, temp })))
}

/// Truncates an existing regular `file` and writes it in place: no guard to commit.
fn in_place(
    file: std::fs::File,
    cache: PageCache,
) -> std::io::Result<(Box<dyn Write + Send>, Option<OutputFile>)> {
    file.set_len(0)?;
    Ok((writer(file, cache), None))
}

fn writer(file: std::fs::File, cache: PageCache) -> Box<dyn Write + Send> {
    match cache {
        PageCache::BypassLarge => Box::new(DirectWriter::new(file)),
        PageCache::BypassLargeLean => Box::new(DirectWriter::with_chunk_size(file, LEAN_CHUNK)),
        PageCache::Keep => Box::new(CappedWrite(file)),
        PageCache::Bypass => Box::new(DirectWriter::temporary(file, TEMPORARY_CHUNK)),
    }
}

/// A temporary file this command created and registered
/// ([`crate::io::temp_names::TempNamer::create_next`]) as a writer.
pub fn temporary_writer(file: std::fs::File, cache: PageCache) -> Box<dyn Write + Send> {
    writer(file, cache)
}

#[cfg(unix)]
fn hard_links(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn hard_links(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// Whether `path` (not following a final link) is the file `meta` describes.
#[cfg(unix)]
fn same_file(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
}

#[cfg(not(unix))]
fn same_file(path: &Path, _meta: &std::fs::Metadata) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// `path` with every symlink at its end followed (a dangling one gives the path it names).
fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&path)?;
                let dir = path.parent().unwrap_or(Path::new(""));
                path = dir.join(link);
            }
            _ => return Ok(path),
        }
    }
    Err(std::io::Error::from_raw_os_error(libc::ELOOP))
}

/// Names for `target`'s temporary file in its directory: `.NAME.mdsam-PID.tmp`, then with a
/// number for a name taken; a name too long for that (past [`NAME_MAX`] bytes, as a legal
/// 240-byte output's) becomes a hash of it.
fn temp_namer(target: &Path) -> impl Fn(usize) -> PathBuf + use<> {
    let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = dir.to_path_buf();
    let name = target.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    let pid = std::process::id();
    move |n| {
        let suffix =
            if n == 0 { format!(".mdsam-{pid}.tmp") } else { format!(".mdsam-{pid}-{n}.tmp") };
        let mut temp = OsString::from(".");
        temp.push(&name);
        temp.push(&suffix);
        if temp.len() > NAME_MAX {
            temp = OsString::from(format!(".{:016x}{suffix}", name_hash(&name)));
        }
        dir.join(temp)
    }
}

fn name_hash(name: &std::ffi::OsStr) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
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
    finish_whole(create(path)?, fill)
}

/// Writes a whole file already in memory (counts, JSON, an index) atomically, through the page
/// cache in one call: [`create`]'s writer thread and 8 MiB direct-write chunk would cost 12 MB
/// of buffers to write it (a URL region query's index copy raised its peak RSS from 15 to 23 MB).
pub fn write_file(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let opened = create_with_cache(Path::new(path), PageCache::Keep)?;
    finish_whole(opened, |w| w.write_all(bytes))
}

/// Fills an opened output with `fill`, flushes it and moves it into place.
fn finish_whole(
    (mut w, file): (Box<dyn Write + Send>, Option<OutputFile>),
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    fill(&mut w)?;
    w.flush()?;
    drop(w);
    match file {
        Some(f) => f.commit(),
        None => Ok(()),
    }
}

impl OutputFile {
    /// Moves the finished file into place.
    pub fn commit(self) -> std::io::Result<()> {
        std::fs::rename(self.temp.path(), &self.target)?;
        self.temp.keep();
        Ok(())
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

    fn write_committed(path: &Path, bytes: &[u8]) {
        let (mut w, guard) = create(path.to_str().unwrap()).unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
        drop(w);
        if let Some(g) = guard {
            g.commit().unwrap();
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mdsam-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Through a symlink (dangling or not) the link's target is written; the link stays.
    #[test]
    fn symlinks_are_written_through() {
        let dir = scratch("out-link");
        std::fs::write(dir.join("real"), b"old").unwrap();
        std::os::unix::fs::symlink("real", dir.join("link")).unwrap();
        std::os::unix::fs::symlink("new", dir.join("dangling")).unwrap();
        write_committed(&dir.join("link"), b"y");
        write_committed(&dir.join("dangling"), b"z");
        for link in ["link", "dangling"] {
            assert!(std::fs::symlink_metadata(dir.join(link)).unwrap().file_type().is_symlink());
        }
        assert_eq!(std::fs::read(dir.join("real")).unwrap(), b"y");
        assert_eq!(std::fs::read(dir.join("new")).unwrap(), b"z");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file with another hard link is written in place; a name too long for the usual
    /// temporary name still gets one.
    #[test]
    fn hard_links_and_long_names() {
        let dir = scratch("out-hard-long");
        std::fs::write(dir.join("a"), b"old contents").unwrap();
        std::fs::hard_link(dir.join("a"), dir.join("b")).unwrap();
        write_committed(&dir.join("a"), b"new");
        assert_eq!(std::fs::read(dir.join("b")).unwrap(), b"new");
        let long = dir.join("n".repeat(NAME_MAX));
        write_committed(&long, b"long");
        assert_eq!(std::fs::read(&long).unwrap(), b"long");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
