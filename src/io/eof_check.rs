//! htslib's `hts_check_EOF`: whether a BGZF file ends with the empty EOF block, or a CRAM file
//! with the EOF container, read from the end of the file as htslib seeks there (so a pipe
//! cannot be checked).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use crate::io::bgzf::block::EOF_BLOCK;
use crate::io::cram_header;
use crate::io::detect::{Compression, Detected, Format};

/// `hts_check_EOF`'s answers (-1, 0, 1, 2, 3 in htslib).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EofCheck {
    Error,
    Missing,
    Present,
    NotSeekable,
    /// The format has no EOF marker (plain or gzip text, CRAM before 2.1).
    NoMarkerInFormat,
}

/// Checks the end of the file at `path` (stdin for `-`) as detected.
pub fn check(path: &str, detected: &Detected) -> EofCheck {
    if detected.compression == Compression::Bgzf {
        return match last_bytes(path, EOF_BLOCK.len()) {
            Tail::Bytes(tail) if tail == EOF_BLOCK => EofCheck::Present,
            Tail::Bytes(_) | Tail::TooShort => EofCheck::Missing,
            Tail::NotSeekable => EofCheck::NotSeekable,
            Tail::Error => EofCheck::Error,
        };
    }
    let Format::Cram { major, minor } = detected.format else {
        return EofCheck::NoMarkerInFormat;
    };
    let Some(template) = cram_header::eof_template(major, minor) else {
        return EofCheck::NoMarkerInFormat;
    };
    match last_bytes(path, template.len()) {
        Tail::Bytes(tail) if cram_header::is_eof_container(&tail, template) => EofCheck::Present,
        Tail::Bytes(_) => EofCheck::Missing,
        Tail::NotSeekable => EofCheck::NotSeekable,
        // htslib's CRAM check does not tell a short file from a failed seek.
        Tail::TooShort | Tail::Error => EofCheck::Error,
    }
}

enum Tail {
    Bytes(Vec<u8>),
    /// The seek before the start failed (EINVAL).
    TooShort,
    /// A pipe (ESPIPE).
    NotSeekable,
    Error,
}

/// The last `n` bytes, read through a handle of its own on the file (stdin's descriptor for
/// `-`), so the reader of the header is left where it is.
fn last_bytes(path: &str, n: usize) -> Tail {
    if crate::io::remote::is_url(path) {
        return remote_last_bytes(path, n);
    }
    let file = if path == "-" { stdin_handle() } else { File::open(path) };
    let Ok(mut file) = file else { return Tail::Error };
    match file.seek(SeekFrom::End(-(n as i64))) {
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::ESPIPE) => return Tail::NotSeekable,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Tail::TooShort,
        Err(_) => return Tail::Error,
    }
    let mut tail = vec![0; n];
    match file.read_exact(&mut tail) {
        Ok(()) => Tail::Bytes(tail),
        Err(_) => Tail::Error,
    }
}

/// A URL's last `n` bytes: one range request after the one that opens it.
fn remote_last_bytes(url: &str, n: usize) -> Tail {
    // A server that ignores ranges cannot give the tail alone.
    let Ok(crate::io::remote::Remote::Ranged(reader)) = crate::io::remote::open(url) else {
        return Tail::Error;
    };
    let size = reader.len();
    if size < n as u64 {
        return Tail::TooShort;
    }
    match reader.tail(n as u64) {
        Ok(tail) => Tail::Bytes(tail),
        Err(_) => Tail::Error,
    }
}

#[cfg(unix)]
fn stdin_handle() -> std::io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(std::io::stdin().as_fd().try_clone_to_owned()?))
}

#[cfg(not(unix))]
fn stdin_handle() -> std::io::Result<File> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}
