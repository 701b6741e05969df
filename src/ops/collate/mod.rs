//! `collate`: group records by read name so that mates (and their secondary and supplementary
//! records) are adjacent, in exactly samtools 1.24's order (`bamshuf.c`).
//!
//! samtools hashes each name (`hash_X31_Wang`), spreads records over `n` temporary bins by
//! `hash % n` in arrival order, then emits bin 0..n, each sorted with klib's introsort by
//! (hash, name, READ1/READ2 bits). mdsam keeps the bins in memory and runs the same introsort
//! ([`crate::ops::ksort::introsort`], a transcription of klib's, which is not stable), so the output order is the
//! same record for record, ties included. In fast mode (`-f`) pairs that meet in the read
//! buffer are emitted first, READ1 then READ2 ([`fast_plan`]).

use std::collections::HashMap;

use rayon::prelude::*;

use crate::record::RecordIdx;
use crate::record::layout::flags;

/// htslib's `hash_Wang` integer hash (also mpileup's overlap table's, after X31).
#[inline]
pub(crate) fn hash_wang(mut key: u32) -> u32 {
    key = key.wrapping_add(!(key << 15));
    key ^= key >> 10;
    key = key.wrapping_add(key << 3);
    key ^= key >> 6;
    key = key.wrapping_add(!(key << 11));
    key ^= key >> 16;
    key
}

/// `hash_X31_Wang` of a read name; name bytes are C `char`s (signed). An empty name hashes to 0.
#[inline]
pub fn name_hash(name: &[u8]) -> u32 {
    let Some((&first, rest)) = name.split_first() else {
        return 0;
    };
    let mut h = first as i8 as i32 as u32;
    for &c in rest {
        h = (h << 5).wrapping_sub(h).wrapping_add(c as i8 as i32 as u32);
    }
    hash_wang(h)
}

/// One record to place: its name's hash, READ1/READ2 bits and handle. The name itself is looked
/// up through the handle, and only when two hashes tie; `run` spares most of those lookups.
///
/// 20 bytes: with the name's slice inside, an item took 32 and the bins 410 MB of fresh pages at
/// 12 M reads, and every tie (mates share a hash) read both names out of a multi-GB arena.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    pub hash: u32,
    /// Items with equal `run` have equal names: the caller numbers each item with the arrival
    /// position of a record of the same name, such as where its run of equal names starts (mates
    /// next to each other then share it). Items with different numbers may still share a name;
    /// their names are compared.
    pub run: u32,
    /// The record's handle: the order is read straight off the sorted bins, with no gather
    /// through a position table (a cache miss a record once that table outgrows the cache).
    pub id: RecordIdx,
    pub read: u8,
}

impl Item {
    pub fn new(hash: u32, run: u32, flag: u16, id: RecordIdx) -> Self {
        Item { hash, run, id, read: (flag >> 6 & 3) as u8 }
    }
}

/// `elem_lt` of `bamshuf.c`: by hash, name, then READ1/READ2 bits.
#[inline]
fn elem_lt<'s>(x: &Item, y: &Item, name_of: &impl Fn(RecordIdx) -> &'s [u8]) -> bool {
    if x.hash != y.hash {
        return x.hash < y.hash;
    }
    let names =
        if x.run == y.run { std::cmp::Ordering::Equal } else { name_of(x.id).cmp(name_of(y.id)) };
    match names {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Equal => x.read < y.read,
        std::cmp::Ordering::Greater => false,
    }
}

/// The `run` of each of `len` records in arrival order, from `same_as_previous(i)` (record `i`
/// has record `i - 1`'s name): the position where its run of equal names starts.
pub fn runs(len: usize, same_as_previous: impl Fn(usize) -> bool) -> impl Iterator<Item = u32> {
    let mut start = 0u32;
    (0..len).map(move |i| {
        if i == 0 || !same_as_previous(i) {
            start = i as u32;
        }
        start
    })
}

/// Distributes items (in bin-arrival order) over `n_bins` bins by `hash % n_bins`. Each bin is
/// sized first: grown by doubling, the bins copied their items about twice and took 11 % of the
/// pipeline's page faults.
pub fn into_bins(items: &[Item], n_bins: usize) -> Vec<Vec<Item>> {
    let n = n_bins.max(1) as u32;
    let mut sizes = vec![0usize; n as usize];
    for it in items {
        sizes[(it.hash % n) as usize] += 1;
    }
    let mut bins: Vec<Vec<Item>> = sizes.into_iter().map(Vec::with_capacity).collect();
    for it in items {
        bins[(it.hash % n) as usize].push(*it);
    }
    bins
}

/// Positions per work unit of [`into_bins_on_pool`].
const BIN_CHUNK: usize = 1 << 16;

/// [`into_bins`] of the items at positions `0..len` (arrival order), on the pool and without a
/// list of all items first: pass one hashes every name (`hash_of`) and counts each chunk's items
/// per bin; pass two builds each item (`item_of`, given its hash) straight into its slot, every
/// chunk writing its own run of each bin, so a bin holds its items in arrival order as
/// [`into_bins`] leaves them. At 6 M reads the serial build, copy and gather took ~330 ns a read.
pub fn into_bins_on_pool(
    len: usize,
    n_bins: usize,
    hash_of: impl Fn(usize) -> u32 + Sync,
    item_of: impl Fn(usize, u32) -> Item + Sync,
) -> Vec<Vec<Item>> {
    let n = n_bins.max(1);
    let hashes: Vec<u32> = (0..len).into_par_iter().map(&hash_of).collect();
    let counts: Vec<Vec<usize>> = hashes
        .par_chunks(BIN_CHUNK)
        .map(|chunk| {
            let mut per_bin = vec![0usize; n];
            chunk.iter().for_each(|&h| per_bin[h as usize % n] += 1);
            per_bin
        })
        .collect();
    // Any value: every slot is overwritten by pass two.
    let filler = Item::new(0, 0, 0, RecordIdx { batch: 0, record: 0 });
    let mut bins: Vec<Vec<Item>> =
        (0..n).into_par_iter().map(|b| vec![filler; counts.iter().map(|c| c[b]).sum()]).collect();
    // Each chunk's slots: one slice of every bin, in chunk order.
    let mut slots: Vec<Vec<&mut [Item]>> = counts.iter().map(|_| Vec::with_capacity(n)).collect();
    for (b, bin) in bins.iter_mut().enumerate() {
        let mut rest = bin.as_mut_slice();
        for (chunk_slots, per_bin) in slots.iter_mut().zip(&counts) {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(per_bin[b]);
            chunk_slots.push(mine);
            rest = tail;
        }
    }
    slots.into_par_iter().enumerate().for_each(|(c, mut dest)| {
        let mut filled = vec![0usize; n];
        let first = c * BIN_CHUNK;
        for (i, &h) in hashes[first..(first + BIN_CHUNK).min(len)].iter().enumerate() {
            let b = h as usize % n;
            dest[b][filled[b]] = item_of(first + i, h);
            filled[b] += 1;
        }
    });
    bins
}

/// Sorts one bin as samtools does; `name_of` gives a record's name from its handle.
pub fn sort_bin<'s>(bin: &mut [Item], name_of: impl Fn(RecordIdx) -> &'s [u8]) {
    crate::ops::ksort::introsort(bin, |x, y| elem_lt(x, y, &name_of));
}

/// A record as fast mode sees it: name, flag, caller's id.
pub type Named<'a> = (&'a [u8], u16, u32);

/// Fast mode's plan: pairs emitted at once (READ1 then READ2, as ids) and the records left for the
/// bins, in the order samtools writes them to the bins. Only primary records with exactly one of
/// READ1/READ2 take part; others are dropped. `store` is `-r` (at least 2).
pub fn fast_plan<'a>(
    records: impl Iterator<Item = Named<'a>>,
    store: usize,
) -> (Vec<u32>, Vec<Named<'a>>) {
    let size = store.max(2);
    // Ring slots: the record held and whether it has been written.
    let mut slots: Vec<Option<Named<'a>>> = vec![None; size];
    let mut stored: HashMap<&'a [u8], usize> = HashMap::new();
    let mut index = 0usize;
    let mut pairs = Vec::new();
    let mut to_bins = Vec::new();
    for (name, flag, id) in records {
        let read = flag & (flags::READ1 | flags::READ2);
        if flag & (flags::SECONDARY | flags::SUPPLEMENTARY) != 0
            || !(read == flags::READ1 || read == flags::READ2)
        {
            continue;
        }
        match stored.get(name).copied() {
            None => {
                stored.insert(name, index);
                slots[index] = Some((name, flag, id));
                index += 1;
                if index >= size {
                    index = 0;
                }
                if let Some(evicted) = slots[index].take() {
                    to_bins.push(evicted);
                    stored.remove(evicted.0);
                }
            }
            Some(slot) => {
                let Some(mate) = slots[slot].take() else { continue };
                stored.remove(name);
                if flag & flags::READ1 != 0 {
                    pairs.extend([id, mate.2]);
                } else {
                    pairs.extend([mate.2, id]);
                }
            }
        }
    }
    for slot in slots.iter_mut() {
        if let Some(left) = slot.take() {
            to_bins.push(left);
        }
    }
    (pairs, to_bins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_htslib_examples() {
        assert_eq!(name_hash(b""), 0);
        // Signed chars: bytes >= 0x80 contribute negatively.
        assert_ne!(name_hash(b"r\xe9"), name_hash(b"r\x69"));
        assert_eq!(hash_wang(0), hash_wang(0));
    }

    #[test]
    fn bins_on_pool_hold_what_serial_bins_hold_in_the_same_order() {
        // More than two chunks, with names that repeat (mates) and a bin count that is not a
        // power of two.
        let names: Vec<Vec<u8>> = (0..BIN_CHUNK * 2 + 999)
            .map(|i| format!("r{}", i / 2 * 7919 % 100_003).into())
            .collect();
        let id = |i: usize| RecordIdx { batch: (i / 1000) as u32, record: (i % 1000) as u32 };
        let items: Vec<Item> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Item::new(name_hash(n), i as u32, (i % 2) as u16 * 0x40, id(i)))
            .collect();
        let key = |b: &Vec<Vec<Item>>| -> Vec<Vec<(u32, RecordIdx, u8)>> {
            b.iter().map(|bin| bin.iter().map(|it| (it.hash, it.id, it.read)).collect()).collect()
        };
        for n_bins in [1, 7, 64] {
            let serial = into_bins(&items, n_bins);
            let pooled = into_bins_on_pool(
                items.len(),
                n_bins,
                |i| name_hash(&names[i]),
                |i, h| Item::new(h, i as u32, (i % 2) as u16 * 0x40, id(i)),
            );
            assert_eq!(key(&serial), key(&pooled), "{n_bins} bins");
        }
    }

    #[test]
    fn runs_of_equal_names_sort_as_compared_names_do() {
        // Mates next to each other, some names again later (another run), and hashes that tie
        // across different names (one bin, hash forced equal for half the names).
        let names: Vec<Vec<u8>> = (0..3000)
            .map(|i: usize| format!("q{}", (i / 2 * 31 + i / 1000) % 700).into_bytes())
            .collect();
        let id = |i: usize| RecordIdx { batch: 0, record: i as u32 };
        let name_of = |h: RecordIdx| names[h.record as usize].as_slice();
        let hash = |n: &[u8]| if n.len().is_multiple_of(2) { 7 } else { name_hash(n) };
        let flag = |i: usize| if i.is_multiple_of(3) { 0x80 } else { 0x40 };
        let run: Vec<u32> = runs(names.len(), |i| names[i] == names[i - 1]).collect();
        assert!(run.windows(2).filter(|w| w[0] == w[1]).count() > 1000, "mates share runs");
        let mut by_run: Vec<Item> =
            (0..names.len()).map(|i| Item::new(hash(&names[i]), run[i], flag(i), id(i))).collect();
        let mut by_name: Vec<Item> = (0..names.len())
            .map(|i| Item::new(hash(&names[i]), i as u32, flag(i), id(i)))
            .collect();
        sort_bin(&mut by_run, name_of);
        sort_bin(&mut by_name, name_of);
        let ids = |v: &[Item]| v.iter().map(|it| it.id).collect::<Vec<_>>();
        assert_eq!(ids(&by_run), ids(&by_name));
        let key = |it: &Item| (it.hash, name_of(it.id), it.read);
        assert!(by_run.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
    }

    #[test]
    fn fast_plan_pairs_and_leftovers() {
        let recs: Vec<(&[u8], u16, u32)> = vec![
            (b"a", 0x41, 0),
            (b"b", 0x81, 1),
            (b"a", 0x81, 2),
            (b"c", 0x141, 3), // secondary: dropped
            (b"d", 0x41, 4),
            (b"e", 0x41, 5),
        ];
        let (pairs, left) = fast_plan(recs.clone().into_iter(), 3);
        assert_eq!(pairs, vec![0, 2]);
        let ids: Vec<u32> = left.iter().map(|l| l.2).collect();
        // b is evicted when the ring wraps onto it; then the ring's leftovers in slot order.
        assert_eq!(ids, vec![1, 5, 4]);
        // With two slots a read is evicted before its mate can arrive.
        let (pairs, left) = fast_plan(recs.into_iter(), 2);
        assert!(pairs.is_empty());
        assert_eq!(left.len(), 5);
    }
}
