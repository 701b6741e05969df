//! `--regions-file`: samtools reads the BED file into an htslib khash keyed by reference name
//! and walks it in bucket order, so the regions come out in that order (not file order), each
//! reference's intervals sorted by start then end, overlaps kept. This rebuilds that order:
//! FNV-1a string hash, power-of-two buckets, quadratic probing, growth at 77% load.

/// `__ac_FNV1a_hash_string`.
fn fnv1a(s: &[u8]) -> u32 {
    let mut h: u32 = 2166136261;
    for &c in s {
        h = (h ^ u32::from(c)).wrapping_mul(16777619);
    }
    h
}

fn upper_bound(n_buckets: usize) -> usize {
    (n_buckets as f64 * 0.77 + 0.5) as usize
}

fn place(buckets: &mut [Option<usize>], key: &[u8], id: usize) {
    let mask = buckets.len() - 1;
    let mut i = fnv1a(key) as usize & mask;
    let mut step = 0;
    while buckets[i].is_some() {
        step += 1;
        i = (i + step) & mask;
    }
    buckets[i] = Some(id);
}

/// The distinct names of `names` (in first-seen order) arranged as khash iterates them.
pub fn khash_order(names: &[Vec<u8>]) -> Vec<usize> {
    let mut keys: Vec<usize> = Vec::new();
    let mut buckets: Vec<Option<usize>> = Vec::new();
    for (id, name) in names.iter().enumerate() {
        if keys.iter().any(|&k| names[k] == *name) {
            continue;
        }
        if keys.len() >= upper_bound(buckets.len()) {
            // kh_put grows by one bucket, rounded up to a power of two (at least 4).
            let want = (buckets.len() + 1).next_power_of_two().max(4);
            let mut grown = vec![None; want];
            for &k in buckets.iter().flatten() {
                place(&mut grown, &names[k], k);
            }
            buckets = grown;
        }
        place(&mut buckets, name, id);
        keys.push(id);
    }
    buckets.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_names_come_out_in_samtools_order() {
        // samtools' consensus test consen4.bed lists c1, c2, c3, c5; samtools walks c2 c1 c3 c5.
        let names: Vec<Vec<u8>> =
            ["c1", "c2", "c3", "c5"].iter().map(|s| s.as_bytes().to_vec()).collect();
        let order: Vec<&[u8]> = khash_order(&names).into_iter().map(|i| &names[i][..]).collect();
        assert_eq!(order, [&b"c2"[..], b"c1", b"c3", b"c5"]);
    }
}
