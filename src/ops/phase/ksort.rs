//! klib's `ks_introsort` (`ksort.h`), step for step: it is not stable, and samtools' `phase`
//! prints its `EV` lines in the order it leaves fragments with equal positions. Quicksort with a
//! median-of-three pivot, comb sort past a depth limit, insertion sort for the short runs.

/// `__ks_insertsort` on `a`.
fn insertion_sort<T: Copy>(a: &mut [T], lt: &impl Fn(&T, &T) -> bool) {
    for i in 1..a.len() {
        let mut j = i;
        while j > 0 && lt(&a[j], &a[j - 1]) {
            a.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// `ks_combsort`.
fn comb_sort<T: Copy>(a: &mut [T], lt: &impl Fn(&T, &T) -> bool) {
    const SHRINK: f64 = 1.247_330_950_103_978_7;
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

/// `ks_introsort(n, a)` with `lt` as `__sort_lt`.
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
    let mut d: u32 = 2;
    while (1usize << d) < n {
        d += 1;
    }
    let mut stack: Vec<(isize, isize, u32)> = Vec::new();
    let (mut s, mut t) = (0isize, n as isize - 1);
    d <<= 1;
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
            let at = |x: isize| x as usize;
            if lt(&a[at(k)], &a[at(i)]) {
                if lt(&a[at(k)], &a[at(j)]) {
                    k = j;
                }
            } else {
                k = if lt(&a[at(j)], &a[at(i)]) { i } else { j };
            }
            let rp = a[at(k)];
            if k != t {
                a.swap(at(k), at(t));
            }
            loop {
                i += 1;
                while lt(&a[at(i)], &rp) {
                    i += 1;
                }
                j -= 1;
                while i <= j && lt(&rp, &a[at(j)]) {
                    j -= 1;
                }
                if j <= i {
                    break;
                }
                a.swap(at(i), at(j));
            }
            a.swap(at(i), at(t));
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
        } else if let Some((l, r, depth)) = stack.pop() {
            (s, t, d) = (l, r, depth);
        } else {
            insertion_sort(a, &lt);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_by_key_whatever_the_length() {
        for n in [0usize, 1, 2, 3, 17, 40, 300] {
            let mut v: Vec<(u32, u32)> = (0..n as u32).map(|i| ((i * 7919 + 13) % 23, i)).collect();
            introsort(&mut v, |a, b| a.0 < b.0);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0), "n = {n}");
        }
    }
}
