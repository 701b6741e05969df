//! The record store: raw BAM records in large arena batches, addressed by small handles.
//!
//! A [`Batch`] is one contiguous `Vec<u8>` of records in BAM's on-disk framing
//! (`block_size` u32, then the record), plus the offset of each record. Readers fill one batch per
//! thread per run of input, so a record costs no heap allocation of its own. A [`RecordStore`] owns
//! batches and one `Vec` of [`RecordIdx`] handles: sorting or grouping permutes the handles and never
//! moves record bytes; handles stay valid for the life of the store.

use super::prefetch::{PREFETCH_AHEAD, prefetch_item, prefetch_record};
use super::view::RecordRef;

/// What a query does with a record it meets in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Keep,
    Drop,
    /// This record and every one after it are past the query.
    Stop,
}

/// Records framed as in a BAM stream, back to back in one buffer.
#[derive(Default, Debug, Clone)]
pub struct Batch {
    /// `block_size` + record bytes, repeated.
    pub data: Vec<u8>,
    /// Offset in `data` of each record's `block_size` field.
    pub starts: Vec<u32>,
}

impl Batch {
    pub fn with_capacity(bytes: usize, records: usize) -> Self {
        Batch { data: Vec::with_capacity(bytes), starts: Vec::with_capacity(records) }
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Appends a record's bytes (without `block_size`).
    pub fn push(&mut self, record: &[u8]) {
        self.starts.push(self.data.len() as u32);
        self.data.extend_from_slice(&(record.len() as u32).to_le_bytes());
        self.data.extend_from_slice(record);
    }

    /// Starts a record whose bytes the caller appends to `data`; finish with [`Batch::end_record`].
    pub fn begin_record(&mut self) -> usize {
        let at = self.data.len();
        self.data.extend_from_slice(&[0; 4]);
        at
    }

    /// Writes the `block_size` of the record begun at `at` and registers it.
    pub fn end_record(&mut self, at: usize) {
        let size = (self.data.len() - at - 4) as u32;
        self.data[at..at + 4].copy_from_slice(&size.to_le_bytes());
        self.starts.push(at as u32);
    }

    /// Drops a record begun with [`Batch::begin_record`] that turned out invalid.
    pub fn abandon_record(&mut self, at: usize) {
        self.data.truncate(at);
    }

    /// A batch of the records framed back to back in `data` (a run written to disk and read
    /// back): one start per `block_size` field, from the first byte to the last whole field.
    pub fn from_framed(data: Vec<u8>) -> Batch {
        Self::from_framed_at(data, 0)
    }

    /// As [`Batch::from_framed`], for records framed from `data[offset..]` (a file read
    /// directly into an aligned buffer, [`crate::io::direct_read`]).
    pub fn from_framed_at(data: Vec<u8>, offset: usize) -> Batch {
        let mut starts = Vec::new();
        let mut at = offset;
        while at + 4 <= data.len() {
            starts.push(at as u32);
            at += 4 + block_size_at(&data, at);
        }
        Batch { data, starts }
    }

    /// The framed bytes (`block_size` included) of record `i`.
    #[inline]
    pub fn framed(&self, i: usize) -> &[u8] {
        let at = self.starts[i] as usize;
        &self.data[at..at + 4 + block_size_at(&self.data, at)]
    }

    /// The bytes of record `i` (without `block_size`), to edit in place.
    #[inline]
    pub fn record_mut(&mut self, i: usize) -> &mut [u8] {
        let at = self.starts[i] as usize;
        let size = block_size_at(&self.data, at);
        &mut self.data[at + 4..at + 4 + size]
    }

    /// Starts loading the first [`super::prefetch::PREFETCH_BYTES`] of record `i` into the cache, if there is
    /// one, without waiting.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(&at) = self.starts.get(i) {
            prefetch_record(&self.data, at as usize);
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> RecordRef<'_> {
        RecordRef::new(&self.framed(i)[4..])
    }

    /// Bytes the records `range` take, framing included.
    pub fn bytes_of(&self, range: std::ops::Range<usize>) -> usize {
        if range.is_empty() {
            return 0;
        }
        let end = range.end - 1;
        self.starts[end] as usize + self.framed(end).len() - self.starts[range.start] as usize
    }

    /// Keeps the records `verdict` keeps (given each record's number and bytes), in order, moving
    /// them down in place rather than copying them into a second buffer; at the first record it
    /// calls [`Verdict::Stop`], that one and every one after it go. True when it stopped.
    /// The records must lie in `data` in the order of `starts`, as every reader lays them.
    pub fn retain_until(
        &mut self,
        mut verdict: impl FnMut(usize, RecordRef<'_>) -> Verdict,
    ) -> bool {
        let (mut written, mut kept, mut stopped) = (0, 0, false);
        for i in 0..self.starts.len() {
            let at = self.starts[i] as usize;
            let len = 4 + block_size_at(&self.data, at);
            match verdict(i, RecordRef::new(&self.data[at + 4..at + len])) {
                Verdict::Keep => {
                    if at != written {
                        self.data.copy_within(at..at + len, written);
                    }
                    self.starts[kept] = written as u32;
                    kept += 1;
                    written += len;
                }
                Verdict::Drop => {}
                Verdict::Stop => {
                    stopped = true;
                    break;
                }
            }
        }
        self.starts.truncate(kept);
        self.data.truncate(written);
        stopped
    }

    pub fn iter(&self) -> impl Iterator<Item = RecordRef<'_>> {
        (0..self.len()).map(move |i| self.get(i))
    }
}

/// The `block_size` field that frames the record at `at` of `data` (0 past the end).
#[inline]
fn block_size_at(data: &[u8], at: usize) -> usize {
    u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or([0; 4])) as usize
}

/// A handle to a record in a [`RecordStore`]: batch number and record number inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordIdx {
    pub batch: u32,
    pub record: u32,
}

/// Every record of an input, in batches, with an order given by handles.
#[derive(Default, Debug)]
pub struct RecordStore {
    pub batches: Vec<Batch>,
    /// The current order of the records.
    pub order: Vec<RecordIdx>,
}

impl RecordStore {
    /// Moves `other`'s batches in after this store's, its records after these in the order.
    pub fn append(&mut self, other: RecordStore) {
        let base = self.batches.len() as u32;
        self.order.extend(
            other.order.iter().map(|h| RecordIdx { batch: h.batch + base, record: h.record }),
        );
        self.batches.extend(other.batches);
    }

    /// Adds a batch, appending its records to the current order.
    pub fn push_batch(&mut self, batch: Batch) {
        let b = self.batches.len() as u32;
        self.order.extend((0..batch.len() as u32).map(|record| RecordIdx { batch: b, record }));
        self.batches.push(batch);
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Starts loading the first [`super::prefetch::PREFETCH_BYTES`] of record `idx` into the cache, without
    /// waiting. A pass over the handles in an order other than the arena's (after a sort) waits
    /// on memory for every record; asking a few records ahead overlaps those waits.
    #[inline]
    pub fn prefetch(&self, idx: RecordIdx) {
        self.batches[idx.batch as usize].prefetch(idx.record as usize);
    }

    /// [`RecordStore::prefetch`] of the record [`PREFETCH_AHEAD`] places after position `i` of
    /// `order`, if there is one: called at each step of a pass over `order`.
    ///
    /// Finding a record's bytes reads its batch's `starts` entry, itself a load that misses the
    /// cache in a pass out of arena order; the prefetch of the record then waited for it (that
    /// wait was 7 % of markdup-pipeline's samples at 6 M reads). So the entry is asked for
    /// twice as far ahead.
    #[inline]
    pub fn prefetch_ahead(&self, order: &[RecordIdx], i: usize) {
        if let Some(&far) = order.get(i + 2 * PREFETCH_AHEAD)
            && let Some(b) = self.batches.get(far.batch as usize)
        {
            prefetch_item(&b.starts, far.record as usize);
        }
        if let Some(&ahead) = order.get(i + PREFETCH_AHEAD) {
            self.prefetch(ahead);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    #[inline]
    pub fn get(&self, idx: RecordIdx) -> RecordRef<'_> {
        self.batches[idx.batch as usize].get(idx.record as usize)
    }

    /// Records in the current order.
    pub fn iter(&self) -> impl Iterator<Item = RecordRef<'_>> {
        self.order.iter().map(move |&i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &[u8]) -> Vec<u8> {
        crate::record::build::RecordBuilder::new(name).build()
    }

    /// Kept records move down in place, in order, with their starts; a stop drops the rest.
    #[test]
    fn retain_until_compacts_and_stops() {
        let names: [&[u8]; 5] = [b"a", b"bb", b"ccc", b"dddd", b"e"];
        let mut batch = Batch::default();
        for n in names {
            batch.push(&rec(n));
        }
        let stopped = batch.retain_until(|i, r| match r.read_name() {
            b"dddd" => Verdict::Stop,
            _ if i == 1 => Verdict::Drop,
            _ => Verdict::Keep,
        });
        assert!(stopped);
        let mut expected = Batch::default();
        expected.push(&rec(b"a"));
        expected.push(&rec(b"ccc"));
        assert_eq!((batch.data, batch.starts), (expected.data, expected.starts));
        let mut all = Batch::default();
        all.push(&rec(b"x"));
        assert!(!all.retain_until(|_, _| Verdict::Keep));
        assert_eq!(all.len(), 1);
    }

    #[test]
    fn handles_survive_reordering() {
        let mut a = Batch::default();
        a.push(&rec(b"a"));
        a.push(&rec(b"b"));
        let mut c = Batch::default();
        let at = c.begin_record();
        c.data.extend_from_slice(&rec(b"c"));
        c.end_record(at);
        let mut s = RecordStore::default();
        s.push_batch(a);
        s.push_batch(c);
        s.order.reverse();
        let names: Vec<_> = s.iter().map(|r| r.read_name().to_vec()).collect();
        assert_eq!(names, vec![b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    }
}
