//! klib's `khash` map from 64-bit keys (`KHASH_MAP_INIT_INT64`), bucket for bucket: samtools'
//! `phase` walks its fragment table in bucket order, and the order of its `EV` lines (an
//! unstable sort of that walk) depends on it. Open addressing with quadratic probing, deleted
//! marks, growth at 77 % load, and the same kick-out rehash.

const UPPER: f64 = 0.77;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Used,
    Deleted,
    Empty,
    /// Deleted and empty: a rehash marking a never-used bucket (never read back).
    Both,
}

impl Slot {
    fn is_empty(self) -> bool {
        matches!(self, Slot::Empty | Slot::Both)
    }
    fn is_deleted(self) -> bool {
        matches!(self, Slot::Deleted | Slot::Both)
    }
    fn mark_deleted(&mut self) {
        *self = if self.is_empty() { Slot::Both } else { Slot::Deleted };
    }
}

/// `kh_int64_hash_func`.
fn hash(key: u64) -> u32 {
    (key >> 33 ^ key ^ key << 11) as u32
}

/// A `khash_t(64)` of values `V`.
pub struct KHash<V> {
    slots: Vec<Slot>,
    keys: Vec<u64>,
    vals: Vec<V>,
    size: u32,
    occupied: u32,
    upper_bound: u32,
}

impl<V: Clone + Default> Default for KHash<V> {
    fn default() -> Self {
        KHash {
            slots: Vec::new(),
            keys: Vec::new(),
            vals: Vec::new(),
            size: 0,
            occupied: 0,
            upper_bound: 0,
        }
    }
}

impl<V: Clone + Default> KHash<V> {
    /// `kh_end`: the number of buckets.
    pub fn end(&self) -> usize {
        self.slots.len()
    }

    /// `kh_size`.
    pub fn len(&self) -> usize {
        self.size as usize
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// `kh_exist`.
    pub fn exists(&self, i: usize) -> bool {
        self.slots[i] == Slot::Used
    }

    pub fn val(&self, i: usize) -> &V {
        &self.vals[i]
    }

    pub fn val_mut(&mut self, i: usize) -> &mut V {
        &mut self.vals[i]
    }

    /// The buckets in use, in bucket order.
    pub fn used(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.end()).filter(|&i| self.exists(i))
    }

    /// `kh_get`: the bucket of `key`, or `None`.
    pub fn get(&self, key: u64) -> Option<usize> {
        let n = self.slots.len() as u32;
        if n == 0 {
            return None;
        }
        let mask = n - 1;
        let mut i = hash(key) & mask;
        let (last, mut step) = (i, 0);
        while !self.slots[i as usize].is_empty()
            && (self.slots[i as usize].is_deleted() || self.keys[i as usize] != key)
        {
            step += 1;
            i = (i + step) & mask;
            if i == last {
                return None;
            }
        }
        (self.slots[i as usize] == Slot::Used).then_some(i as usize)
    }

    /// `kh_del`.
    pub fn delete(&mut self, i: usize) {
        if i < self.slots.len() && self.slots[i] == Slot::Used {
            self.slots[i] = Slot::Deleted;
            self.size -= 1;
        }
    }

    /// `kh_put`: the bucket of `key`, and whether it was absent. A new key's value is whatever
    /// the bucket held (htslib leaves it too): the caller sets it.
    pub fn put(&mut self, key: u64) -> (usize, bool) {
        if self.occupied >= self.upper_bound {
            let n = self.slots.len() as u32;
            if n > self.size << 1 {
                self.resize(n - 1);
            } else {
                self.resize(n + 1);
            }
        }
        let n = self.slots.len() as u32;
        let mask = n - 1;
        let mut i = hash(key) & mask;
        let mut x = n;
        if self.slots[i as usize].is_empty() {
            x = i;
        } else {
            let (last, mut step, mut site) = (i, 0, n);
            while !self.slots[i as usize].is_empty()
                && (self.slots[i as usize].is_deleted() || self.keys[i as usize] != key)
            {
                if self.slots[i as usize].is_deleted() {
                    site = i;
                }
                step += 1;
                i = (i + step) & mask;
                if i == last {
                    x = site;
                    break;
                }
            }
            if x == n {
                x = if self.slots[i as usize].is_empty() && site != n { site } else { i };
            }
        }
        let xi = x as usize;
        if self.slots[xi].is_empty() {
            self.keys[xi] = key;
            self.slots[xi] = Slot::Used;
            self.size += 1;
            self.occupied += 1;
            (xi, true)
        } else if self.slots[xi].is_deleted() {
            self.keys[xi] = key;
            self.slots[xi] = Slot::Used;
            self.size += 1;
            (xi, true)
        } else {
            (xi, false)
        }
    }

    /// `kh_resize`.
    fn resize(&mut self, wanted: u32) {
        let new_n = wanted.max(1).next_power_of_two().max(4);
        if self.size >= (f64::from(new_n) * UPPER + 0.5) as u32 {
            return;
        }
        let old_n = self.slots.len();
        let new_n = new_n as usize;
        let mut new_slots = vec![Slot::Empty; new_n];
        if old_n < new_n {
            self.keys.resize(new_n, 0);
            self.vals.resize(new_n, V::default());
        }
        let mask = new_n as u32 - 1;
        for j in 0..old_n {
            if self.slots[j] != Slot::Used {
                continue;
            }
            let mut key = self.keys[j];
            let mut val = std::mem::take(&mut self.vals[j]);
            self.slots[j].mark_deleted();
            loop {
                let mut i = hash(key) & mask;
                let mut step = 0;
                while !new_slots[i as usize].is_empty() {
                    step += 1;
                    i = (i + step) & mask;
                }
                let iu = i as usize;
                new_slots[iu] = Slot::Used;
                if iu < old_n && self.slots[iu] == Slot::Used {
                    // Kick out the element not rehashed yet, and place it next.
                    std::mem::swap(&mut self.keys[iu], &mut key);
                    std::mem::swap(&mut self.vals[iu], &mut val);
                    self.slots[iu].mark_deleted();
                } else {
                    self.keys[iu] = key;
                    self.vals[iu] = val;
                    break;
                }
            }
        }
        self.keys.truncate(new_n);
        self.vals.truncate(new_n);
        self.slots = new_slots;
        self.occupied = self.size;
        self.upper_bound = (new_n as f64 * UPPER + 0.5) as u32;
    }
}
