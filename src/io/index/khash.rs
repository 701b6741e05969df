//! A faithful model of htslib's `khash` integer maps (`KHASH_MAP_INIT_INT`, `KHASH_MAP_INIT_INT64`,
//! `htslib/khash.h`), kept only for its bucket order: `samtools index` writes each reference's bins
//! (and `ampliconstats` its template coordinates) by walking the hash table from bucket 0, so
//! byte-identical output needs the same buckets after the same puts and deletes.
//!
//! The model keeps khash's rules exactly:
//! - the hash of a 32-bit key is the key, of a 64-bit key `kh_int64_hash_func`; buckets are a
//!   power of two (at least 4);
//! - probing is quadratic: `i = (i + ++step) & mask`;
//! - before every put, if `n_occupied ≥ upper_bound` (`⌊n_buckets·0.77 + 0.5⌋`) the table is rebuilt:
//!   at the same size when over half the occupied buckets are deleted, else one size up;
//! - a rebuild moves entries in place, evicting ("kicking out") live entries it lands on;
//! - a delete only marks the bucket, so later iteration skips it and probing walks past it.

/// Bucket state bits, as khash's two-bit flags: `EMPTY` set means never used.
const EMPTY: u8 = 2;
const DELETED: u8 = 1;
const LIVE: u8 = 0;
const HASH_UPPER: f64 = 0.77;

/// A khash integer key and its hash function.
pub(crate) trait KhashKey: Copy + Default + Eq {
    fn kh_hash(self) -> u32;
}

impl KhashKey for u32 {
    fn kh_hash(self) -> u32 {
        self
    }
}

impl KhashKey for u64 {
    /// `kh_int64_hash_func`.
    fn kh_hash(self) -> u32 {
        ((self >> 33) ^ self ^ (self << 11)) as u32
    }
}

/// An integer-keyed map with khash's bucket layout.
#[derive(Clone, Debug)]
pub(crate) struct BinTable<V, K = u32> {
    flags: Vec<u8>,
    keys: Vec<K>,
    values: Vec<Option<V>>,
    size: u32,
    n_occupied: u32,
    upper_bound: u32,
}

impl<V, K> Default for BinTable<V, K> {
    fn default() -> Self {
        BinTable {
            flags: Vec::new(),
            keys: Vec::new(),
            values: Vec::new(),
            size: 0,
            n_occupied: 0,
            upper_bound: 0,
        }
    }
}

impl<V: Default, K: KhashKey> BinTable<V, K> {
    fn n_buckets(&self) -> u32 {
        self.flags.len() as u32
    }

    /// Number of live entries (`kh_size`).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.size as usize
    }

    /// The bucket holding `key` (`kh_get`).
    pub(crate) fn find(&self, key: K) -> Option<usize> {
        let n = self.n_buckets();
        if n == 0 {
            return None;
        }
        let mask = n - 1;
        let mut i = key.kh_hash() & mask;
        let last = i;
        let mut step = 0;
        while self.flags[i as usize] & EMPTY == 0
            && (self.flags[i as usize] & DELETED != 0 || self.keys[i as usize] != key)
        {
            step += 1;
            i = (i + step) & mask;
            if i == last {
                return None;
            }
        }
        (self.flags[i as usize] == LIVE).then_some(i as usize)
    }

    /// The value for `key`, inserting a default one if absent (`kh_put`, then `kh_value`).
    pub(crate) fn entry(&mut self, key: K) -> &mut V {
        let bucket = self.put(key);
        self.values[bucket].get_or_insert_with(V::default)
    }

    /// Marks the bucket deleted (`kh_del`) and returns its value.
    pub(crate) fn remove_bucket(&mut self, bucket: usize) -> Option<V> {
        if bucket < self.flags.len() && self.flags[bucket] == LIVE {
            self.flags[bucket] |= DELETED;
            self.size -= 1;
            return self.values[bucket].take();
        }
        None
    }

    /// Live `(bucket, key)` pairs in bucket order (`kh_begin`…`kh_end` with `kh_exist`).
    pub(crate) fn live_buckets(&self) -> Vec<(usize, K)> {
        (0..self.flags.len())
            .filter(|&b| self.flags[b] == LIVE)
            .map(|b| (b, self.keys[b]))
            .collect()
    }

    /// Whether `bucket` holds a live entry (`kh_exist`).
    pub(crate) fn is_live(&self, bucket: usize) -> bool {
        self.flags.get(bucket) == Some(&LIVE)
    }

    pub(crate) fn value(&self, bucket: usize) -> &V {
        self.values[bucket].as_ref().expect("live bucket has a value")
    }

    pub(crate) fn value_mut(&mut self, bucket: usize) -> &mut V {
        self.values[bucket].as_mut().expect("live bucket has a value")
    }

    /// Live entries in bucket order, consuming the table.
    pub(crate) fn into_entries(self) -> Vec<(K, V)> {
        let BinTable { flags, keys, values, .. } = self;
        flags
            .into_iter()
            .zip(keys)
            .zip(values)
            .filter(|((flag, _), _)| *flag == LIVE)
            .map(|((_, key), value)| (key, value.expect("live bucket has a value")))
            .collect()
    }

    /// `kh_put`: the bucket for `key`, claiming one if absent.
    fn put(&mut self, key: K) -> usize {
        if self.n_occupied >= self.upper_bound {
            if self.n_buckets() > self.size << 1 {
                self.resize(self.n_buckets() - 1);
            } else {
                self.resize(self.n_buckets() + 1);
            }
        }
        let n = self.n_buckets();
        let mask = n - 1;
        let mut i = key.kh_hash() & mask;
        let mut chosen = n;
        if self.flags[i as usize] & EMPTY != 0 {
            chosen = i;
        } else {
            let last = i;
            let mut site = n;
            let mut step = 0;
            while self.flags[i as usize] & EMPTY == 0
                && (self.flags[i as usize] & DELETED != 0 || self.keys[i as usize] != key)
            {
                if self.flags[i as usize] & DELETED != 0 {
                    site = i;
                }
                step += 1;
                i = (i + step) & mask;
                if i == last {
                    chosen = site;
                    break;
                }
            }
            if chosen == n {
                chosen = if self.flags[i as usize] & EMPTY != 0 && site != n { site } else { i };
            }
        }
        let x = chosen as usize;
        if self.flags[x] & EMPTY != 0 {
            self.keys[x] = key;
            self.flags[x] = LIVE;
            self.size += 1;
            self.n_occupied += 1;
        } else if self.flags[x] & DELETED != 0 {
            self.keys[x] = key;
            self.flags[x] = LIVE;
            self.size += 1;
        }
        x
    }

    /// `kh_resize`: rebuild into `requested` (rounded up to a power of two, at least 4) buckets.
    fn resize(&mut self, requested: u32) {
        let new_n = requested.next_power_of_two().max(4);
        if self.size >= (f64::from(new_n) * HASH_UPPER + 0.5) as u32 {
            return;
        }
        let old_n = self.flags.len();
        let mut new_flags = vec![EMPTY; new_n as usize];
        if old_n < new_n as usize {
            self.keys.resize(new_n as usize, K::default());
            self.values.resize_with(new_n as usize, || None);
        }
        let mask = new_n - 1;
        for j in 0..old_n {
            if self.flags[j] != LIVE {
                continue;
            }
            let mut key = self.keys[j];
            let mut value = self.values[j].take();
            self.flags[j] |= DELETED;
            loop {
                let mut i = key.kh_hash() & mask;
                let mut step = 0;
                while new_flags[i as usize] & EMPTY == 0 {
                    step += 1;
                    i = (i + step) & mask;
                }
                let i = i as usize;
                new_flags[i] &= !EMPTY;
                if i < old_n && self.flags[i] == LIVE {
                    std::mem::swap(&mut key, &mut self.keys[i]);
                    std::mem::swap(&mut value, &mut self.values[i]);
                    self.flags[i] |= DELETED;
                } else {
                    self.keys[i] = key;
                    self.values[i] = value;
                    break;
                }
            }
        }
        if old_n > new_n as usize {
            self.keys.truncate(new_n as usize);
            self.values.truncate(new_n as usize);
        }
        self.flags = new_flags;
        self.n_occupied = self.size;
        self.upper_bound = (f64::from(new_n) * HASH_UPPER + 0.5) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_in_bucket_order(table: &BinTable<u8>) -> Vec<u32> {
        table.live_buckets().into_iter().map(|(_, k)| k).collect()
    }

    #[test]
    fn first_put_makes_four_buckets_and_keys_land_at_key_mod_size() {
        let mut table = BinTable::<u8>::default();
        table.entry(6);
        table.entry(1);
        assert_eq!(table.flags.len(), 4);
        assert_eq!(keys_in_bucket_order(&table), vec![1, 6]);
    }

    #[test]
    fn the_fourth_put_grows_the_table_even_for_an_existing_key() {
        let mut table = BinTable::<u8>::default();
        for key in [4681, 4682, 37450] {
            table.entry(key);
        }
        assert_eq!(table.flags.len(), 4);
        table.entry(4681);
        assert_eq!(table.flags.len(), 8);
        assert_eq!(table.len(), 3);
        // 4681 & 7 = 1, 4682 & 7 = 2, 37450 & 7 = 2 → probes to 3.
        assert_eq!(keys_in_bucket_order(&table), vec![4681, 4682, 37450]);
    }

    #[test]
    fn collisions_probe_quadratically() {
        let mut table = BinTable::<u8>::default();
        table.entry(0);
        table.entry(4);
        table.entry(8);
        // 0 → bucket 0; 4 → 0, then 1; 8 → 0, 1, then 3.
        assert_eq!(table.live_buckets(), vec![(0, 0), (1, 4), (3, 8)]);
    }

    #[test]
    fn deleted_buckets_are_skipped_by_find_and_reused_by_put() {
        let mut table = BinTable::<u8>::default();
        table.entry(0);
        table.entry(4);
        let bucket = table.find(0).unwrap();
        table.remove_bucket(bucket);
        assert_eq!(table.find(0), None);
        assert_eq!(table.find(4), Some(1));
        table.entry(8);
        assert_eq!(table.find(8), Some(0));
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn many_keys_stay_findable_across_growth() {
        let mut table = BinTable::<u32>::default();
        for key in (0..5000).map(|k| k * 37 % 9973) {
            *table.entry(key) += 1;
        }
        assert_eq!(table.len(), 5000);
        for key in (0..5000).map(|k| k * 37 % 9973) {
            assert_eq!(*table.value(table.find(key).unwrap()), 1);
        }
    }
}
