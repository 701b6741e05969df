//! An input file or stdin as bytes to peek at and consume: regular files are memory-mapped,
//! pipes and stdin are read through a growing buffer. Both give the same `peek`/`consume` view,
//! so the BGZF, BAM and SAM readers have one code path. A URL (`io::remote`) is a stream that
//! can also seek.

use std::fs::File;
use std::io::Read;

use memmap2::Mmap;

pub struct Input {
    name: String,
    src: Source,
    consumed: u64,
}

enum Source {
    /// `released`: the start of the mapped bytes not yet handed back to the kernel.
    /// `_fault` is declared first so that it is dropped (unregistered) before the map is unmapped.
    Mapped { _fault: super::mapped_fault::Registration, map: Mmap, pos: usize, released: usize },
    /// `buf[start..end]` holds the bytes read and not consumed; `buf[end..]` is zeroed room
    /// for the next read, kept between reads so that each byte is zeroed once (zeroing the
    /// whole room again after every short pipe read made one huge line quadratic).
    /// `read_size`: the least asked of `reader` at a time.
    Stream {
        reader: StreamReader,
        buf: Vec<u8>,
        start: usize,
        end: usize,
        eof: bool,
        read_size: usize,
    },
}

/// What a stream input reads from: any reader, or a remote file (which can seek).
enum StreamReader {
    Plain(Box<dyn Read + Send>),
    Remote(Box<super::remote::RemoteReader>),
}

impl Read for StreamReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            StreamReader::Plain(r) => r.read(buf),
            StreamReader::Remote(r) => r.read(buf),
        }
    }
}

impl Input {
    /// Opens `path`, or stdin for `-`; a regular file is memory-mapped.
    pub fn open(path: &str) -> std::io::Result<Input> {
        Input::open_as(path, true, STREAM_READ_BYTES)
    }

    /// As [`Input::open`], but a regular file too is read with `read`: for bytes that are only
    /// written out again, where `write` from a mapped file spent its time faulting the map in.
    pub fn open_unmapped(path: &str) -> std::io::Result<Input> {
        Input::open_as(path, false, STREAM_READ_BYTES)
    }

    /// As [`Input::open_unmapped`], reading `read_size` bytes at a time (a command with a
    /// small working set: the buffer holds about two reads).
    pub fn open_unmapped_in_reads_of(path: &str, read_size: usize) -> std::io::Result<Input> {
        Input::open_as(path, false, read_size)
    }

    #[allow(unsafe_code)] // memory-maps the file
    fn open_as(path: &str, map_files: bool, read_size: usize) -> std::io::Result<Input> {
        // `DATA##idx##INDEX` names an index beside the data, as htslib reads it.
        let path = path.split_once("##idx##").map_or(path, |(data, _)| data);
        if path == "-" {
            return Ok(Input::from_reader(path, Box::new(std::io::stdin())));
        }
        if super::remote::is_url(path) {
            let reader = match super::remote::open_input(path)? {
                super::remote::Remote::Ranged(reader) => reader,
                // A server that ignores ranges: read as a pipe is.
                super::remote::Remote::Whole(body) => return Ok(Input::from_reader(path, body)),
            };
            let mut input = Input::from_reader(path, Box::new(std::io::empty()));
            if let Source::Stream { reader: r, .. } = &mut input.src {
                *r = StreamReader::Remote(Box::new(reader));
            }
            return Ok(input);
        }
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if map_files && meta.is_file() && meta.len() > 0 {
            // SAFETY: the map is read-only and private to this process. Should another process
            // truncate the file while we read it, touching the lost pages raises SIGBUS, which
            // `mapped_fault` turns into an error message and exit status 1.
            let map = unsafe { Mmap::map(&file)? };
            let fault = super::mapped_fault::register(path, &map);
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            return Ok(Input {
                name: path.to_string(),
                src: Source::Mapped { _fault: fault, map, pos: 0, released: 0 },
                consumed: 0,
            });
        }
        if meta.is_dir() {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a directory"));
        }
        Ok(Input::from_reader_in_reads_of(path, Box::new(file), read_size))
    }

    /// An input over any reader (pipes, stdin, tests).
    pub fn from_reader(name: &str, reader: Box<dyn Read + Send>) -> Input {
        Input::from_reader_in_reads_of(name, reader, STREAM_READ_BYTES)
    }

    /// [`Input::from_reader`] asking `reader` for at least `read_size` bytes at a time (less
    /// than the usual MiB for the many side-by-side inputs of a merge: the buffer holds about
    /// two reads).
    pub fn from_reader_in_reads_of(
        name: &str,
        reader: Box<dyn Read + Send>,
        read_size: usize,
    ) -> Input {
        let read_size = read_size.max(1);
        Input {
            name: name.to_string(),
            src: Source::Stream {
                reader: StreamReader::Plain(reader),
                buf: Vec::new(),
                start: 0,
                end: 0,
                eof: false,
                read_size,
            },
            consumed: 0,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes consumed so far (the offset of the next byte in the file).
    pub fn position(&self) -> u64 {
        self.consumed
    }

    /// The whole file, when it is memory-mapped.
    pub fn mapped(&self) -> Option<&[u8]> {
        match &self.src {
            Source::Mapped { map, .. } => Some(map),
            Source::Stream { .. } => None,
        }
    }

    /// Whether the input is a remote file.
    pub fn is_remote(&self) -> bool {
        matches!(&self.src, Source::Stream { reader: StreamReader::Remote(_), .. })
    }

    /// Whether the file ends with `bytes`: `None` for pipes and stdin, which cannot tell.
    pub fn ends_with(&self, bytes: &[u8]) -> Option<std::io::Result<bool>> {
        match &self.src {
            Source::Mapped { map, .. } => Some(Ok(map.ends_with(bytes))),
            Source::Stream { reader: StreamReader::Remote(r), .. } => Some(r.ends_with(bytes)),
            Source::Stream { .. } => None,
        }
    }

    /// Moves to absolute offset `at` (mapped and remote inputs only).
    pub fn seek(&mut self, at: u64) -> std::io::Result<()> {
        self.seek_until(at, None)
    }

    /// [`Self::seek`], saying where the bytes wanted next end when that is known (an index
    /// chunk): a remote input then fetches up to there in parallel and little past it.
    pub fn seek_until(&mut self, at: u64, until: Option<u64>) -> std::io::Result<()> {
        match &mut self.src {
            Source::Mapped { map, pos, released, .. } => {
                let at = (at as usize).min(map.len());
                release_before_seek(map, (*pos, at), released);
                *pos = at;
                self.consumed = *pos as u64;
                Ok(())
            }
            Source::Stream { reader: StreamReader::Remote(r), start, end, eof, .. } => {
                r.seek(at, until);
                (*start, *end, *eof) = (0, 0, false);
                self.consumed = at.min(r.len());
                Ok(())
            }
            Source::Stream { .. } => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                if super::remote::is_url(&self.name) {
                    "the server ignores range requests, which random access needs"
                } else {
                    "random access needs a regular file"
                },
            )),
        }
    }

    /// Says which byte ranges the next seeks will read (a region query's chunks): a remote
    /// input asks for them all at once. Other inputs need no notice.
    pub fn plan(&mut self, ranges: &[(u64, u64)]) {
        if let Source::Stream { reader: StreamReader::Remote(r), .. } = &mut self.src {
            r.plan(ranges);
        }
    }

    /// Up to `n` bytes from the current position; fewer only at end of input.
    pub fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        match &mut self.src {
            Source::Mapped { map, pos, .. } => Ok(&map[*pos..(*pos + n).min(map.len())]),
            Source::Stream { reader, buf, start, end, eof, read_size } => {
                while *end - *start < n && !*eof {
                    if *start > 0 && *start >= *end / 2 {
                        buf.copy_within(*start..*end, 0);
                        *end -= *start;
                        *start = 0;
                    }
                    let room = (*start + n).max(*end + *read_size);
                    if buf.len() < room {
                        buf.resize(room, 0);
                    }
                    let got = loop {
                        match reader.read(&mut buf[*end..]) {
                            Ok(g) => break g,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(e) => return Err(e),
                        }
                    };
                    *end += got;
                    *eof = got == 0;
                }
                let stop = (*start + n).min(*end);
                Ok(&buf[*start..stop])
            }
        }
    }

    /// Skips `n` bytes that were peeked.
    pub fn consume(&mut self, n: usize) {
        self.consumed += n as u64;
        match &mut self.src {
            Source::Mapped { map, pos, released, .. } => {
                *pos = (*pos + n).min(map.len());
                release_behind(map, *pos, released);
            }
            Source::Stream { start, end, .. } => *start = (*start + n).min(*end),
        }
    }
}

/// The whole of a small side file (an index), local or remote.
pub fn read_whole(path: &str) -> std::io::Result<Vec<u8>> {
    if super::remote::is_url(path) { super::remote::read_all(path) } else { std::fs::read(path) }
}

/// Bytes consumed between two hand-backs of mapped pages: the mapped input's resident window
/// is one to two of these. 1 MiB (was 4): a pileup reading 0.5 M reads kept 8 MB of the BAM
/// resident beside its 3 MB of work (samtools: 3 MB in all); one more madvise a MiB is nothing.
const RELEASE_EVERY: usize = 1 << 20;

/// Drops the resident pages of a mapped input well behind the read position, so that reading a
/// large file sequentially does not grow the resident set by the whole file (what a memory
/// budget measures). The pages are file-backed and read-only: touching them again (a seek back)
/// reads them from the file again.
#[allow(unsafe_code)] // madvise(MADV_DONTNEED) on the map
fn release_behind(map: &Mmap, pos: usize, released: &mut usize) {
    if pos < *released + 2 * RELEASE_EVERY {
        return;
    }
    let end = (pos - RELEASE_EVERY) & !0xfff_usize;
    if end <= *released {
        return;
    }
    #[cfg(unix)]
    // SAFETY: the map is a private read-only file mapping; `DontNeed` only drops pages, which
    // are re-read from the file if touched again, and no slice of them is borrowed here.
    unsafe {
        let _ = map.unchecked_advise_range(
            memmap2::UncheckedAdvice::DontNeed,
            *released,
            end - *released,
        );
    }
    *released = end;
}

/// How far around the bytes read a fault may have mapped pages: a kernel with large folios in
/// the page cache (ext4 on Linux 6.18 here) maps a whole folio, up to a PMD (2 MiB), at one
/// touch. mpileup's blocks left 384 KiB of every other block resident in each worker's map this
/// way (43 MB of a 79 MB BAM) while the bytes actually read were handed back.
const FOLIO_SLACK: usize = 2 << 20;

/// [`release_behind`] for a seek from `from` to `to`: what was read since the last hand-back
/// goes back, with the folios around it, when it is a quarter of [`RELEASE_EVERY`] or more, or
/// when the seek goes back before it (mpileup's blocks, each a query, kept the whole BAM
/// resident). Small reads between forward seeks stay until the position passes them, as before;
/// the next query near by finds them. Pages handed back that are read again are mapped again
/// from the page cache.
fn release_before_seek(map: &Mmap, (from, to): (usize, usize), released: &mut usize) {
    let read = from.saturating_sub(*released);
    if read == 0 || (read < RELEASE_EVERY / 4 && to >= *released) {
        *released = (*released).min(to & !0xfff_usize);
        return;
    }
    // The folio holding the seek's target may have begun before it.
    let start = released.saturating_sub(FOLIO_SLACK) & !0xfff_usize;
    let end = (from.saturating_add(FOLIO_SLACK).min(map.len()) + 0xfff) & !0xfff_usize;
    #[cfg(unix)]
    #[allow(unsafe_code)]
    // SAFETY: as in `release_behind`: a private read-only file mapping, no slice borrowed.
    unsafe {
        let _ = map.unchecked_advise_range(
            memmap2::UncheckedAdvice::DontNeed,
            start,
            end.min(map.len()) - start,
        );
    }
    *released = to & !0xfff_usize;
}

/// How much a stream input asks its reader for at a time.
const STREAM_READ_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_peek_grows_and_consumes() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
        let mut input = Input::from_reader("x", Box::new(std::io::Cursor::new(data.clone())));
        assert_eq!(input.peek(10).unwrap(), &data[..10]);
        input.consume(5);
        assert_eq!(input.peek(2_000_000).unwrap(), &data[5..2_000_005]);
        assert_eq!(input.peek(2_999_990).unwrap().len(), 2_999_990);
        input.consume(2_999_990);
        assert_eq!(input.peek(100).unwrap(), &data[2_999_995..]);
        assert_eq!(input.position(), 2_999_995);
    }

    /// Pages of `bytes` this process has mapped (Linux's `/proc/self/pagemap`, present bit).
    #[cfg(target_os = "linux")]
    fn resident_pages(bytes: &[u8]) -> usize {
        use std::io::{Read, Seek, SeekFrom};
        let first = bytes.as_ptr() as usize / 4096;
        let pages = bytes.len().div_ceil(4096);
        let mut pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
        pagemap.seek(SeekFrom::Start(first as u64 * 8)).unwrap();
        let mut entries = vec![0u8; pages * 8];
        pagemap.read_exact(&mut entries).unwrap();
        entries.chunks_exact(8).filter(|e| e[7] & 0x80 != 0).count()
    }

    /// A seek hands back what was read before it. (The pages a fault maps around the bytes
    /// read, which `FOLIO_SLACK` covers, were seen with mpileup's blocks on a real BAM; this
    /// small file does not make the kernel map them.)
    #[cfg(target_os = "linux")]
    #[test]
    fn seek_hands_back_the_pages_read_before_it() {
        let path =
            std::env::temp_dir().join(format!("mdsam-seek-hand-back-{}", std::process::id()));
        let data: Vec<u8> = (0..12u32 << 20).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        // Out of the page cache, so that reading fills it as it fills it for a real input
        // (readahead, in large folios where the kernel has them).
        let file = std::fs::File::open(&path).unwrap();
        file.sync_all().unwrap();
        #[allow(unsafe_code)]
        // SAFETY: a plain advice call on an open file descriptor.
        unsafe {
            use std::os::fd::AsRawFd;
            libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        let mut input = Input::open(path.to_str().unwrap()).unwrap();
        let read = |input: &mut Input, from: usize, len: usize| {
            input.seek(from as u64).unwrap();
            let mut sum = 0u64;
            while (input.position() as usize) < from + len {
                let bytes = input.peek(1 << 16).unwrap();
                sum += bytes.iter().step_by(4096).map(|&b| u64::from(b)).sum::<u64>();
                input.consume(1 << 16);
            }
            assert!(sum > 0);
        };
        // Two regions read, as two blocks' queries read them, then a seek past both.
        read(&mut input, 0, 1 << 20);
        read(&mut input, 3 << 20, 1 << 20);
        let before = resident_pages(&input.mapped().unwrap()[..6 << 20]);
        assert!(before >= 256, "the bytes read are mapped: {before} pages");
        input.seek(8 << 20).unwrap();
        let after = resident_pages(&input.mapped().unwrap()[..6 << 20]);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(after, 0, "pages left mapped before the seek's target");
    }
}
