//! Cache hints: a pass that reaches records in an order the hardware prefetcher cannot follow
//! (handles after a sort, a walk from one record's length to the next) asks for the bytes it
//! will need a little before it needs them, so the waits on memory overlap.

/// Starts loading the cache line of `data[at]` (nothing past the end), without waiting.
#[inline]
pub fn prefetch_bytes(data: &[u8], at: usize) {
    prefetch_item(data, at);
}

/// Starts loading the cache line of `items[at]` (nothing past the end), without waiting.
#[inline]
#[allow(unsafe_code)] // the prefetch intrinsic
pub fn prefetch_item<T>(items: &[T], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(at) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint that reads nothing the program sees and cannot fault;
        // the address is inside `items` anyway, and SSE is part of x86_64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(item).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, at);
}

/// Starts loading the first [`PREFETCH_BYTES`] of the record at `data[at..]` (nothing past the
/// end of `data`).
#[inline]
pub fn prefetch_record(data: &[u8], at: usize) {
    for line in (at..at + PREFETCH_BYTES).step_by(64) {
        prefetch_bytes(data, line);
    }
}

/// How much of a record [`super::RecordStore::prefetch`] loads: a short-read record's fixed fields,
/// name, CIGAR, sequence and qualities, and the start of its tags.
pub const PREFETCH_BYTES: usize = 384;

/// How many records ahead a pass in handle order asks for ([`super::RecordStore::prefetch_ahead`]).
pub const PREFETCH_AHEAD: usize = 8;
