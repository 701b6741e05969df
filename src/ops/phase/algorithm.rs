//! The steps of one phase set (samtools' `count_all`, `dynaprog`, `fragphase`, `genmask`,
//! `clean_seqs`, `update_vpos`), written as samtools writes them: the same integer arithmetic,
//! tie-breaks and in-place edits of the fragments.

use super::{Frags, MAX_VARS};

const FLIP_PENALTY: i32 = 2;
const FLIP_THRES: i32 = 4;
const MASK_THRES: i32 = 3;

/// `count1`: adds one window of alleles (`seq`, `l` sites, 0 unknown) to `cnt`, every way of
/// filling the unknown sites counted once; nothing when the last site is unknown or fewer than
/// two are known.
fn count1(seq: &[u8], cnt: &mut [i32]) {
    let l = seq.len();
    if seq[l - 1] == 0 {
        return;
    }
    let n_ambi = seq.iter().filter(|&&c| c == 0).count();
    if l - n_ambi <= 1 {
        return;
    }
    for x in 0u32..1 << n_ambi {
        let (mut j, mut z) = (0, 0u32);
        for &s in seq {
            let c = if s != 0 {
                u32::from(s) - 1
            } else {
                let c = x >> j & 1;
                j += 1;
                c
            };
            z = z << 1 | c;
        }
        cnt[z as usize] += 1;
    }
}

/// `count_all`: per site, how often each `l`-site haplotype window ending there is seen. Marks
/// fragments of one site as single on the way. `None` when the table would not fit in memory.
pub fn count_all(l: usize, vpos: usize, frags: &mut Frags) -> Option<Vec<Vec<i32>>> {
    // Where samtools' calloc would fail (or the machine run out), a clear failure instead.
    const MAX_BYTES: usize = 1 << 34;
    let size = 1usize.checked_shl(l as u32).filter(|_| (1..32).contains(&l))?;
    size.checked_mul(vpos)?.checked_mul(4).filter(|&b| b <= MAX_BYTES)?;
    // Zeroed allocations: pages never counted into are never touched.
    let mut cnt: Vec<Vec<i32>> = (0..vpos).map(|_| vec![0i32; size]).collect();
    let mut seq = vec![0u8; l];
    for k in 0..frags.end() {
        if !frags.exists(k) {
            continue;
        }
        let f = frags.val_mut(k);
        if f.vpos as usize >= vpos || f.single {
            continue;
        }
        if f.vlen == 1 {
            f.single = true;
            continue;
        }
        for j in 1..usize::from(f.vlen) {
            for (i, s) in seq.iter_mut().enumerate() {
                let back = l - 1 - i;
                *s = if j < back { 0 } else { f.seq[j - back] };
            }
            count1(&seq, &mut cnt[f.vpos as usize + j]);
        }
    }
    Some(cnt)
}

/// `dynaprog`: the best pair of complementary haplotypes through the window counts `w`; the
/// allele index (0 or 1) of the first haplotype at each site.
pub fn dynaprog(l: usize, w: &[Vec<i32>]) -> Vec<u8> {
    let vpos = w.len();
    let z = 1u32 << (l - 1);
    let mask = ((1u64 << l) - 1) as u32;
    let mut prev = vec![0i32; z as usize];
    let mut curr = vec![0i32; z as usize];
    let mut back: Vec<Vec<u8>> = Vec::with_capacity(vpos);
    for wi in w {
        let mut bi = vec![0u8; z as usize];
        // x is the lexicographically smaller local haplotype, xc its complement.
        for x in 0..z {
            let xc = !x & mask;
            let (y0, y1) = (x >> 1, xc >> 1);
            let here = wi[x as usize].wrapping_add(wi[xc as usize]);
            let c0 = prev[y0 as usize].wrapping_add(here);
            let c1 = prev[y1 as usize].wrapping_add(here);
            if c0 > c1 {
                curr[x as usize] = c0;
            } else {
                bi[x as usize] = 1;
                curr[x as usize] = c1;
            }
        }
        std::mem::swap(&mut prev, &mut curr);
        back.push(bi);
    }
    let (mut max, mut max_x) = (0, 0u32);
    for x in 0..z {
        if prev[x as usize] > max {
            (max, max_x) = (prev[x as usize], x);
        }
    }
    let mut h = vec![0u8; vpos];
    let (mut x, mut which) = (max_x, false);
    for i in (0..vpos).rev() {
        h[i] = (if which { !x & 1 } else { x & 1 }) as u8;
        let switched = back[i][x as usize] != 0;
        which ^= switched;
        x = if switched { (!x & mask) >> 1 } else { x >> 1 };
    }
    h
}

/// `fragphase`: each fragment's phase against `path` (and with `fix_chimera`, a fragment
/// that switches haplotype part way is flipped from its best switch point); the per-site counts
/// of supporting and conflicting fragments, `phase 0 agree | disagree << 16 | phase 1 agree <<
/// 32 | disagree << 48`.
pub fn fragphase(vpos: usize, path: &[u8], frags: &mut Frags, fix_chimera: bool) -> Vec<u64> {
    let mut pcnt = vec![0u64; vpos];
    let mut left = [0u32; MAX_VARS];
    let mut right = [0u32; MAX_VARS];
    for k in 0..frags.end() {
        if !frags.exists(k) {
            continue;
        }
        let f = frags.val_mut(k);
        if f.vpos as usize >= vpos {
            continue;
        }
        let (base, vlen) = (f.vpos as usize, usize::from(f.vlen));
        let mut c = [0i32; 2];
        for i in 0..vlen {
            if f.seq[i] != 0 {
                c[usize::from(f.seq[i] != path[base + i] + 1)] += 1;
            }
        }
        f.phase = u8::from(c[0] <= c[1]);
        let ph = usize::from(f.phase);
        f.agree = c[ph] as u16;
        f.disagree = c[1 - ph] as u16;
        f.phased = f.agree != f.disagree;
        f.ambig = f.agree != 0 && f.disagree != 0 && f.disagree < 3 && f.agree <= f.disagree + 1;
        f.flip = false;
        // The allele of site i in this fragment's own phase.
        let own = |s: u8, phase: u8| if phase != 0 { 2 - i32::from(s) } else { i32::from(s) - 1 };
        if fix_chimera && c[0] >= 3 && c[1] >= 3 {
            let mut sum = [0u32; 2];
            for i in 0..vlen {
                if f.seq[i] != 0 {
                    sum[usize::from(own(f.seq[i], f.phase) != i32::from(path[base + i]))] += 1;
                }
                left[i] = sum[1] << 16 | sum[0];
            }
            sum = [0, 0];
            for i in (0..vlen).rev() {
                if f.seq[i] != 0 {
                    sum[usize::from(own(f.seq[i], f.phase) != i32::from(path[base + i]))] += 1;
                }
                right[i] = sum[1] << 16 | sum[0];
            }
            let (mut m, mut mi, mut md) = (0i32, -1i32, -1i32);
            for i in 0..vlen.saturating_sub(1) {
                let (l0, l1) = ((left[i] & 0xffff) as i32, (left[i] >> 16 & 0xffff) as i32);
                let (r0, r1) =
                    ((right[i + 1] & 0xffff) as i32, (right[i + 1] >> 16 & 0xffff) as i32);
                let a0 = l0 + r1 - r0 * FLIP_PENALTY;
                let a1 = l1 + r0 - r1 * FLIP_PENALTY;
                if a0 > a1 {
                    if a0 > m {
                        (m, md, mi) = (a0, 0, i as i32);
                    }
                } else if a1 > m {
                    (m, md, mi) = (a1, 1, i as i32);
                }
            }
            if m - c[0] >= FLIP_THRES && m - c[1] >= FLIP_THRES {
                f.flip = true;
                let range = if md == 0 { (mi + 1) as usize..vlen } else { 0..(mi + 1) as usize };
                for s in &mut f.seq[range] {
                    *s = match *s {
                        1 => 2,
                        2 => 1,
                        other => other,
                    };
                }
            }
        }
        if !f.single {
            for i in 0..vlen {
                if f.seq[i] == 0 {
                    continue;
                }
                let agrees = own(f.seq[i], f.phase) == i32::from(path[base + i]);
                pcnt[base + i] += match (agrees, f.phase) {
                    (true, 0) => 1,
                    (true, _) => 1 << 32,
                    (false, 0) => 1 << 16,
                    (false, _) => 1 << 48,
                };
            }
        }
    }
    pcnt
}

/// `genmask`: runs of sites with many conflicts, as `first << 32 | last` site indexes.
pub fn genmask(pcnt: &[u64]) -> Vec<u64> {
    let vpos = pcnt.len() as i32;
    let (mut max, mut max_i, mut beg, mut score) = (0i32, -1i32, 0i32, 0i32);
    let mut list = Vec::new();
    let mut i = 0i32;
    while i < vpos {
        let x = pcnt[i as usize];
        let c =
            [x & 0xffff, x >> 16 & 0xffff, x >> 32 & 0xffff, x >> 48 & 0xffff].map(|v| v as i32);
        let pre = score;
        let mut s = if c[1] + c[3] == 0 { -(c[0] + c[2]) } else { c[1] + c[3] - 1 };
        if c[3] > c[2] {
            s += c[3] - c[2];
        }
        if c[1] > c[0] {
            s += c[1] - c[0];
        }
        score += s;
        if score < 0 {
            score = 0;
        }
        if pre == 0 && score > 0 {
            beg = i;
        }
        if (i == vpos - 1 || score == 0) && max >= MASK_THRES {
            list.push((beg as u64) << 32 | u64::from(max_i as u32));
            i = max_i;
            score = 0;
        } else if score > max {
            (max, max_i) = (score, i);
        }
        if score == 0 {
            max = 0;
        }
        i += 1;
    }
    list
}

/// `clean_seqs`: unknown sites trimmed off both ends of each fragment before `vpos`, empty ones
/// deleted; whether a fragment starts at or after `vpos`.
pub fn clean_seqs(vpos: usize, frags: &mut Frags) -> bool {
    let mut later = false;
    for k in 0..frags.end() {
        if !frags.exists(k) {
            continue;
        }
        let f = frags.val_mut(k);
        if f.vpos as usize >= vpos {
            later = true;
            continue;
        }
        let vlen = usize::from(f.vlen);
        let beg = f.seq[..vlen].iter().position(|&c| c != 0).unwrap_or(vlen);
        let end = f.seq[..vlen].iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        if end <= beg {
            frags.delete(k);
        } else {
            // samtools moves the known part down and leaves the tail as it was.
            f.seq.copy_within(beg..end, 0);
            f.vpos += beg as i32;
            f.vlen = (end - beg) as u16;
            f.single = f.vlen == 1;
        }
    }
    later
}

/// `update_vpos`: fragments starting before `vpos` leave; the rest count sites from `vpos`.
pub fn update_vpos(vpos: i32, frags: &mut Frags) {
    for k in 0..frags.end() {
        if !frags.exists(k) {
            continue;
        }
        if frags.val(k).vpos < vpos {
            frags.delete(k);
        } else {
            frags.val_mut(k).vpos -= vpos;
        }
    }
}
