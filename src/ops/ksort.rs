//! klib's `ks_introsort` (`ksort.h`), step for step: it is not stable, and samtools' `collate`
//! and `phase` leave equal elements where it puts them. Quicksort with a median-of-three pivot,
//! comb sort past a depth limit, insertion sort for the short runs.

fn insertion_sort<T>(a: &mut [T], lt: &impl Fn(&T, &T) -> bool) {
    for i in 1..a.len() {
        let mut j = i;
        while j > 0 && lt(&a[j], &a[j - 1]) {
            a.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn comb_sort<T>(a: &mut [T], lt: &impl Fn(&T, &T) -> bool) {
    const SHRINK: f64 = 1.247_330_950_103_979;
    let n = a.len();
    let mut gap = n;
    loop {
        if gap > 2 {
            gap = (gap as f64 / SHRINK) as usize;
            if gap == 9 || gap == 10 {
                gap = 11;
            }
        }
        let mut swapped = false;
        for i in 0..n.saturating_sub(gap) {
            let j = i + gap;
            if lt(&a[j], &a[i]) {
                a.swap(i, j);
                swapped = true;
            }
        }
        if !(swapped || gap > 2) {
            break;
        }
    }
    if gap != 1 {
        insertion_sort(a, lt);
    }
}

/// klib's `ks_introsort`, step for step, so that equal elements end up where samtools puts them.
pub fn introsort<T: Copy>(a: &mut [T], lt: impl Fn(&T, &T) -> bool) {
    let n = a.len();
    if n < 1 {
        return;
    }
    if n == 2 {
        if lt(&a[1], &a[0]) {
            a.swap(0, 1);
        }
        return;
    }
    let mut d: i64 = 2;
    while (1u64 << d) < n as u64 {
        d += 1;
    }
    d <<= 1;
    let mut stack: Vec<(isize, isize, i64)> = Vec::new();
    let (mut s, mut t) = (0isize, n as isize - 1);
    loop {
        if s < t {
            d -= 1;
            if d == 0 {
                comb_sort(&mut a[s as usize..=t as usize], &lt);
                t = s;
                continue;
            }
            let (mut i, mut j) = (s, t);
            let mut k = i + ((j - i) >> 1) + 1;
            if lt(&a[k as usize], &a[i as usize]) {
                if lt(&a[k as usize], &a[j as usize]) {
                    k = j;
                }
            } else {
                k = if lt(&a[j as usize], &a[i as usize]) { i } else { j };
            }
            let rp = a[k as usize];
            if k != t {
                a.swap(k as usize, t as usize);
            }
            loop {
                loop {
                    i += 1;
                    if !lt(&a[i as usize], &rp) {
                        break;
                    }
                }
                loop {
                    j -= 1;
                    if !(i <= j && lt(&rp, &a[j as usize])) {
                        break;
                    }
                }
                if j <= i {
                    break;
                }
                a.swap(i as usize, j as usize);
            }
            a.swap(i as usize, t as usize);
            if i - s > t - i {
                if i - s > 16 {
                    stack.push((s, i - 1, d));
                }
                s = if t - i > 16 { i + 1 } else { t };
            } else {
                if t - i > 16 {
                    stack.push((i + 1, t, d));
                }
                t = if i - s > 16 { i - 1 } else { s };
            }
        } else {
            match stack.pop() {
                None => {
                    insertion_sort(a, &lt);
                    return;
                }
                Some((l, r, depth)) => {
                    s = l;
                    t = r;
                    d = depth;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn introsort_sorts_like_any_sort() {
        let mut state = 12345u64;
        for n in [0usize, 1, 2, 3, 17, 40, 300, 5000] {
            let mut v: Vec<(u32, u32)> = (0..n as u32)
                .map(|i| {
                    state =
                        state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 60) as u32, i)
                })
                .collect();
            introsort(&mut v, |a, b| a.0 < b.0);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0), "n={n}");
            let mut ids: Vec<u32> = v.iter().map(|x| x.1).collect();
            ids.sort();
            assert_eq!(ids, (0..n as u32).collect::<Vec<_>>());
        }
    }
}
