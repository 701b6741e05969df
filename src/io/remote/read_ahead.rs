//! A remote file read front to back through a bounded window of range requests in flight, each
//! on its own thread, handed out in order; and repositioned for index queries.
//!
//! Reading from the start (or after a seek with no end), the ranges grow fourfold from 64 KiB
//! to the chunk size and the window doubles from one range to `MDSAM_REMOTE_PARALLEL`, one
//! step per range read: a header or a short read costs a few small requests, a whole-file read
//! has every range in flight after three (0.5 M reads over a 20 ms link at 50 MB/s a
//! connection: 0.32-0.34 s with ranges doubling and the window growing by one, 0.30-0.32 s).
//! After a seek that names where the wanted bytes end (an index chunk), the ranges up to that
//! end are all asked for at once, and past it only 64 KiB at a time (the rest
//! of the last BGZF block), so a region query fetches what its index names and little more.
//! A query of several chunks names their ranges first ([`RemoteReader::plan`]): they are all
//! asked for at once, and each seek to one takes its bytes, so the query waits one round trip
//! instead of one a chunk.
//! Memory: at most the window's ranges, the planned ones and the one being read.

use std::collections::VecDeque;
use std::io::{Error, Read};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::fetch::RemoteFile;

/// The first range after a seek, and the ranges asked for past a bounded seek's end.
const SMALL_RANGE: u64 = 64 << 10;

/// The smallest piece a planned range is cut into ([`RemoteReader::plan`]): 512 KiB moves in
/// 10 ms at 50 MB/s, half a round trip; 256 KiB pieces took more requests than they saved.
const MIN_PIECE: u64 = 512 << 10;

pub struct RemoteReader {
    file: Arc<RemoteFile>,
    /// Bytes `held_at..held_at + held.len()` of the file; `used` of them were read.
    held: Vec<u8>,
    held_at: u64,
    used: usize,
    pending: VecDeque<Pending>,
    /// Where the next range asked for starts.
    next_fetch: u64,
    /// Where the bytes wanted since the last seek end, when it said.
    until: Option<u64>,
    /// Ranges read since the last seek (the ramp's step).
    served: u32,
    /// Ranges a query will seek to, asked for ahead ([`Self::plan`]): kept across seeks.
    planned: Vec<(u64, Pending)>,
}

struct Pending {
    start: u64,
    fetch: JoinHandle<std::io::Result<Vec<u8>>>,
}

impl RemoteReader {
    /// A reader at the start of `file`, whose first bytes `head` were fetched when it opened.
    pub fn new(file: Arc<RemoteFile>, head: Vec<u8>) -> RemoteReader {
        let next_fetch = head.len() as u64;
        RemoteReader {
            file,
            held: head,
            held_at: 0,
            used: 0,
            pending: VecDeque::new(),
            next_fetch,
            until: None,
            served: 1,
            planned: Vec::new(),
        }
    }

    /// The file's size in bytes.
    pub fn len(&self) -> u64 {
        self.file.size
    }

    pub fn is_empty(&self) -> bool {
        self.file.size == 0
    }

    /// The URL as messages name it.
    pub fn display_name(&self) -> &str {
        &self.file.target.display
    }

    fn position(&self) -> u64 {
        self.held_at + self.used as u64
    }

    /// Continues at byte `at`; `until`: where the bytes wanted end, when known (ranges up to
    /// there are fetched in parallel, past it a little at a time). Fetches nothing yet.
    pub fn seek(&mut self, at: u64, until: Option<u64>) {
        let at = at.min(self.file.size);
        self.until = until.map(|u| u.min(self.file.size));
        let held_end = self.held_at + self.held.len() as u64;
        if (self.held_at..=held_end).contains(&at) {
            self.used = (at - self.held_at) as usize;
        } else {
            self.held = Vec::new();
            self.held_at = at;
            self.used = 0;
        }
        // Ranges in flight finish on their own threads; their bytes are dropped.
        self.pending.clear();
        self.next_fetch = self.held_at + self.held.len() as u64;
        self.served = 0;
    }

    /// Asks now for the byte ranges `[start, end)` that the next seeks (with those ends) will
    /// read: at most `parallel` ranges, each up to its share of the window's `parallel`
    /// chunks (the rest is fetched at its seek, as before). Earlier plans are dropped. The
    /// bytes go out in pieces of at least [`MIN_PIECE`], about one for each connection opened
    /// with the file: one connection moves a range at its own pace (a TCP window a round trip,
    /// an object store's cap a connection), and those connections are idle now. Measured (20
    /// random 10 kb queries of 6 M aligner-made reads, 20 ms link, 50 MB/s a connection): the
    /// first 2 MiB in 1 MiB pieces and the rest at the seek (three ranges), 99-101 ms a query;
    /// all of it in four pieces, 94-95 ms.
    pub fn plan(&mut self, ranges: &[(u64, u64)]) {
        let settings = &self.file.settings;
        self.planned.clear();
        let ranges = &ranges[..ranges.len().min(settings.parallel)];
        let share = settings.chunk * settings.parallel as u64 / ranges.len().max(1) as u64;
        let clipped: Vec<(u64, u64)> = ranges
            .iter()
            .map(|&(start, end)| (start, end.min(start.saturating_add(share)).min(self.file.size)))
            .filter(|(start, end)| start < end)
            .collect();
        let total: u64 = clipped.iter().map(|(start, end)| end - start).sum();
        let connections = self.file.query_connections() as u64;
        let piece = (total / connections).max(MIN_PIECE);
        for (mut start, end) in clipped {
            while start < end {
                // A last piece shorter than half of one goes with the one before.
                let piece_end = if end - start < piece + piece / 2 { end } else { start + piece };
                let file = Arc::clone(&self.file);
                let fetch = std::thread::spawn(move || file.fetch(start, piece_end));
                self.planned.push((piece_end, Pending { start, fetch }));
                start = piece_end;
            }
        }
    }

    /// Whether the file ends with `bytes` (one request for its tail).
    pub fn ends_with(&self, bytes: &[u8]) -> std::io::Result<bool> {
        let n = bytes.len() as u64;
        Ok(self.file.size >= n && self.tail(n)? == bytes)
    }

    /// The file's last `n` bytes (fewer when it is shorter).
    pub fn tail(&self, n: u64) -> std::io::Result<Vec<u8>> {
        let size = self.file.size;
        self.file.fetch(size.saturating_sub(n), size)
    }

    /// Asks for ranges until the window is full; past a bounded seek's end, only for bytes
    /// `wanted` now.
    fn fill_window(&mut self, wanted: bool) {
        let settings = &self.file.settings;
        while self.next_fetch < self.file.size {
            let (window, len) = match self.until {
                Some(u) if self.next_fetch < u => {
                    (settings.parallel, settings.chunk.min(u - self.next_fetch))
                }
                Some(_) => (usize::from(wanted), SMALL_RANGE),
                None => {
                    let step = self.served.min(16);
                    let grown = SMALL_RANGE << (2 * step);
                    (settings.parallel.min(1 << step), settings.chunk.min(grown))
                }
            };
            if self.pending.len() >= window {
                break;
            }
            let (start, end) = (self.next_fetch, (self.next_fetch + len).min(self.file.size));
            if let Some(i) = self.planned.iter().position(|(_, p)| p.start == start) {
                let (planned_end, pending) = self.planned.swap_remove(i);
                self.pending.push_back(pending);
                self.next_fetch = planned_end;
                continue;
            }
            let file = Arc::clone(&self.file);
            let fetch = std::thread::spawn(move || file.fetch(start, end));
            self.pending.push_back(Pending { start, fetch });
            self.next_fetch = end;
        }
    }

    /// Waits for the next range in order and holds it.
    fn take_next(&mut self) -> std::io::Result<()> {
        self.fill_window(true);
        let Some(next) = self.pending.pop_front() else {
            return Err(Error::other("remote read past the ranges asked for"));
        };
        let bytes = next.fetch.join().map_err(|_| Error::other("a range request failed"))??;
        if bytes.is_empty() {
            return Err(Error::new(std::io::ErrorKind::UnexpectedEof, "empty range response"));
        }
        self.held = bytes;
        self.held_at = next.start;
        self.used = 0;
        self.served += 1;
        self.fill_window(false);
        Ok(())
    }
}

impl Read for RemoteReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.used == self.held.len() {
            if self.position() >= self.file.size {
                return Ok(0);
            }
            self.take_next()?;
        }
        let n = buf.len().min(self.held.len() - self.used);
        buf[..n].copy_from_slice(&self.held[self.used..self.used + n]);
        self.used += n;
        Ok(n)
    }
}
