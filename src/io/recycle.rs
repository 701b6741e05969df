//! Large byte buffers handed back for reuse by streaming commands.
//!
//! `view` inflates a few MiB a piece and formats as much again, on whichever worker is free, and
//! frees each buffer on another thread. mimalloc gives memory freed by a thread other than the
//! one that allocated it back to the allocating thread's heap only, so a streaming `view` kept
//! asking the OS for fresh pages: its resident memory climbed to 300 MB (samtools: 8 MB), and
//! every new page cost a fault and a clear (`clear_page_erms`, 8 % of BAM→SAM time). A buffer
//! given back here is taken again by the next piece, whichever thread asks.

use std::sync::Mutex;

/// Buffers smaller than this are not worth keeping.
const MIN_KEPT: usize = 64 << 10;
/// Total capacity kept by [`give`]; a buffer that would pass it is freed instead.
pub const MAX_KEPT_BYTES: usize = 256 << 20;

/// What a command with a memory budget lets the recycler keep while it streams: kept buffers
/// count against the budget (a spilling markdup-pipeline under 160 MiB peaked at 300 MiB when
/// [`give`]'s cap applied). A sixteenth of the budget holds the buffers a read, a format and a
/// write have in flight.
pub fn kept_for_budget(budget: u64) -> usize {
    (budget / 16).clamp(8 << 20, MAX_KEPT_BYTES as u64) as usize
}

/// Frees kept buffers until at most `cap` bytes are kept: a command with a memory budget calls
/// it with what its budget leaves (the pool has no cap of its own to set, so that no option
/// value lives in this process-wide state).
pub fn trim_to(cap: usize) {
    SHARED.trim_to(cap);
}

/// Kept buffers; one shared by the whole process ([`take`], [`give`]), like the allocator it
/// stands in front of. Its only limits are the constant [`MAX_KEPT_BYTES`] and the caps callers
/// pass ([`give_within`], [`trim_to`]).
pub struct Recycler {
    free: Mutex<Vec<Vec<u8>>>,
}

static SHARED: Recycler = Recycler::new();

/// An empty buffer with room for at least `capacity` bytes, from the shared recycler.
pub fn take(capacity: usize) -> Vec<u8> {
    SHARED.take(capacity)
}

/// A buffer of `len` bytes for a caller that overwrites every one of them (BGZF inflate into
/// blocks of known size). A kept buffer keeps the bytes it held, and only growth past its old
/// length is zeroed: zeroing whole kept pieces was 2 % of `view -c`'s CPU. Else a new zeroed
/// allocation, which fresh memory gives without a memset (the allocator knows it is zero):
/// markdup and sort keep every piece they read, and clearing each one first was 11 % of
/// markdup's time.
pub fn take_for_overwrite(len: usize) -> Vec<u8> {
    SHARED.take_for_overwrite(len)
}

/// Hands `buf` back to the shared recycler, kept while the kept total stays within
/// [`MAX_KEPT_BYTES`].
pub fn give(buf: Vec<u8>) {
    SHARED.give_within(buf, MAX_KEPT_BYTES)
}

/// Hands `buf` back, kept only while the kept total stays within `cap`: sort hands a spilled
/// store's pieces back with its data budget as the cap and reads the next run into them, so each
/// run does not fault in fresh pages (first-touch memory ran at 0.4–0.6 GB/s on the project's
/// VM, and every page is cleared). The store it refills shrinks the kept set as fast as it
/// grows, and [`trim_to`] after each read keeps the two within the budget.
pub fn give_within(buf: Vec<u8>, cap: usize) {
    SHARED.give_within(buf, cap)
}

impl Recycler {
    pub const fn new() -> Self {
        Recycler { free: Mutex::new(Vec::new()) }
    }

    /// The smallest kept buffer that is large enough, emptied, else a new one of a rounded size.
    pub fn take(&self, capacity: usize) -> Vec<u8> {
        match self.take_kept(capacity) {
            Some(mut buf) => {
                buf.clear();
                buf
            }
            None => Vec::with_capacity(size_class(capacity)),
        }
    }

    /// See the function [`take_for_overwrite`].
    pub fn take_for_overwrite(&self, len: usize) -> Vec<u8> {
        match self.take_kept(len) {
            Some(mut buf) => {
                buf.resize(len, 0);
                buf
            }
            None => {
                // Allocated in size classes, so that the next piece, a little larger or smaller,
                // fits this one when it comes back; the tail past `len` is never touched.
                let mut buf = vec![0; size_class(len)];
                buf.truncate(len);
                crate::alloc::advise_huge_pages(&mut buf);
                buf
            }
        }
    }

    /// The smallest kept buffer with room for `capacity` bytes, as it was given (its bytes
    /// still there, for [`take_for_overwrite`]), if there is one at most
    /// twice that size. A much larger buffer stays for a request of its own size: handed out
    /// for a small one (a 64 KiB BGZF block taking a 12 MiB read piece), it left the next large
    /// request to allocate afresh, and the kept set grew to its cap under a memory budget.
    fn take_kept(&self, capacity: usize) -> Option<Vec<u8>> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let most = 2 * capacity.max(MIN_KEPT);
        let fitting = free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= capacity && b.capacity() <= most)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        fitting.map(|i| free.swap_remove(i))
    }

    /// Keeps `buf` for a later [`Recycler::take`] unless it is small or the kept total would
    /// pass `cap`. Its length is kept too: those bytes need no zeroing when it is taken for
    /// overwriting.
    pub fn give_within(&self, buf: Vec<u8>, cap: usize) {
        if buf.capacity() < MIN_KEPT {
            return;
        }
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let kept: usize = free.iter().map(Vec::capacity).sum();
        if kept + buf.capacity() <= cap {
            free.push(buf);
        }
    }
}

impl Recycler {
    fn trim_to(&self, cap: usize) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept: usize = free.iter().map(Vec::capacity).sum();
        while kept > cap {
            match free.pop() {
                Some(b) => kept -= b.capacity(),
                None => break,
            }
        }
    }
}

/// `capacity` rounded up to the next eighth of its power of two. Requests for about the same
/// size (the encoded chunks of a write, a little larger or smaller each time) then fit each
/// other's buffers; with exact sizes, every request a little larger than all kept buffers made
/// a new one, and the kept set grew through a whole write (+20 MB in markdup-pipeline).
fn size_class(capacity: usize) -> usize {
    if capacity < MIN_KEPT {
        return capacity;
    }
    let step = capacity.next_power_of_two() / 8;
    capacity.div_ceil(step) * step
}

impl Default for Recycler {
    fn default() -> Self {
        Recycler::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_buffer_is_taken_again_empty() {
        let r = Recycler::new();
        let mut b = Vec::with_capacity(3 << 20);
        b.extend_from_slice(b"left over");
        let at = b.as_ptr();
        r.give_within(b, MAX_KEPT_BYTES);
        r.give_within(Vec::with_capacity(8 << 20), MAX_KEPT_BYTES);
        let again = r.take(2 << 20);
        assert!(r.take_kept(1 << 20).is_none(), "an 8 MiB buffer is not handed out for 1 MiB");
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), at, "the smallest buffer that fits comes back");
        assert!(r.take(16 << 20).capacity() >= 16 << 20, "a too small buffer is not handed out");
        let mut full = Vec::with_capacity(4 << 20);
        full.resize(3 << 20, 7u8);
        let at = full.as_ptr();
        r.give_within(full, MAX_KEPT_BYTES);
        let shorter = r.take_for_overwrite(2 << 20);
        assert_eq!((shorter.len(), shorter.as_ptr()), (2 << 20, at), "kept, cut to length");
        r.give_within(shorter, MAX_KEPT_BYTES);
        let longer = r.take_for_overwrite(3 << 20);
        assert_eq!(longer.as_ptr(), at);
        assert!(longer[2 << 20..].iter().all(|&b| b == 0), "growth past the old length is zeroed");
        r.give_within(Vec::with_capacity(16), MAX_KEPT_BYTES);
        assert_eq!(r.free.lock().unwrap().len(), 1, "tiny buffers are not kept");
    }

    #[test]
    fn trim_frees_what_passes_the_cap() {
        let r = Recycler::new();
        for _ in 0..4 {
            r.give_within(Vec::with_capacity(1 << 20), MAX_KEPT_BYTES);
        }
        r.trim_to(2 << 20);
        assert_eq!(r.free.lock().unwrap().len(), 2);
        r.give_within(Vec::with_capacity(1 << 20), 2 << 20);
        assert_eq!(r.free.lock().unwrap().len(), 2, "a full recycler frees what it is given");
        r.give_within(Vec::with_capacity(1 << 20), 3 << 20);
        assert_eq!(r.free.lock().unwrap().len(), 3, "a larger cap keeps it");
    }

    #[test]
    fn new_buffers_come_in_size_classes() {
        let r = Recycler::new();
        let first = r.take(1_450_000);
        assert_eq!(first.capacity(), 1_572_864, "rounded up to 1.5 MiB");
        r.give_within(first, MAX_KEPT_BYTES);
        assert_eq!(r.take(1_500_000).capacity(), 1_572_864, "a slightly larger request reuses it");
        assert_eq!(size_class(1000), 1000);
        for c in [65_536, 100_000, 3 << 20, (8 << 20) + 1] {
            assert!(size_class(c) >= c && size_class(c) <= c + c / 4, "{c}");
        }
    }
}
