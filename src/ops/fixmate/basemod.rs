//! `fixmate -M`: base-modification tags (`MM`, `ML`, `MN`) checked and repaired as samtools 1.24
//! does (`fix_MM`, `trim_MM` in `bam_mate.c`, validation by htslib's `bam_parse_basemod` and
//! `bam_next_basemod`).
//!
//! Primary records are checked on their own (`MN` added when there is no hard clip); secondary
//! and supplementary records whose `MM`/`ML` were copied from the primary without being trimmed
//! to their hard clips are trimmed using the primary's sequence. Anything that does not validate
//! loses all three tags.

use crate::record::cigar;
use crate::record::edit;
use crate::record::layout::{SEQ_NT16, flags};
use crate::record::view::RecordRef;

const HARD_CLIP: u8 = 5;

/// Start and length of every aux field.
fn fields(b: &[u8]) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    let mut at = edit::aux_offset(b);
    while at < b.len() {
        let Some(n) = crate::record::aux::field_len(&b[at..]) else { break };
        v.push((at, n));
        at += n;
    }
    v
}

/// The tags found by `find_tags` (last of each kind), renaming the draft `Mm`/`Ml` (and `Mn`).
struct ModTags {
    mm: Option<usize>,
    ml: Option<usize>,
    mn: Option<usize>,
}

fn find_tags(b: &mut [u8]) -> ModTags {
    let mut t = ModTags { mm: None, ml: None, mn: None };
    for (at, _) in fields(b) {
        if b[at] != b'M' {
            continue;
        }
        let slot = match b[at + 1].to_ascii_uppercase() {
            b'M' => &mut t.mm,
            b'L' => &mut t.ml,
            b'N' => &mut t.mn,
            _ => continue,
        };
        *slot = Some(at);
        b[at + 1] = b[at + 1].to_ascii_uppercase();
    }
    t
}

/// `bam_aux2i` on an integer field, else -1 (htslib's EINVAL case).
fn mn_value(b: &[u8], at: Option<usize>) -> i64 {
    let Some(at) = at else { return -1 };
    let v = &b[at + 3..];
    match b[at + 2] {
        b'c' => v[0] as i8 as i64,
        b'C' => v[0] as i64,
        b's' => i16::from_le_bytes([v[0], v[1]]) as i64,
        b'S' => u16::from_le_bytes([v[0], v[1]]) as i64,
        b'i' => i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64,
        b'I' => u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64,
        _ => -1,
    }
}

/// 5' and 3' hard-clip lengths.
fn hard_clips(b: &[u8]) -> (usize, usize) {
    let r = RecordRef::new(b);
    let ops: Vec<u32> = r.cigar().collect();
    let (mut l, mut rt, mut nh) = (0, 0, 0);
    if let Some(&c) = ops.first()
        && cigar::op(c) == HARD_CLIP
    {
        l = cigar::len(c) as usize;
        nh = 1;
    }
    if ops.len() > nh
        && let Some(&c) = ops.last()
        && cigar::op(c) == HARD_CLIP
    {
        rt = cigar::len(c) as usize;
    }
    if r.flag() & flags::REVERSE != 0 { (rt, l) } else { (l, rt) }
}

/// `delete_mod_tags`: drops every `MM`, `Mm`, `ML`, `Ml` and `MN`.
fn delete_mod_tags(b: &mut Vec<u8>) {
    let start = edit::aux_offset(b);
    let mut out = Vec::with_capacity(b.len() - start);
    for (at, n) in fields(b) {
        let drop = b[at] == b'M' && matches!(b[at + 1], b'M' | b'm' | b'L' | b'l' | b'N');
        if !drop {
            out.extend_from_slice(&b[at..at + n]);
        }
    }
    b.truncate(start);
    b.extend_from_slice(&out);
}

fn set_mn(b: &mut Vec<u8>, n: usize) {
    // An MN of another type makes htslib refuse the update; the record is then left as it is.
    let _ = edit::update_int(b, *b"MN", n as i64);
}

/// C `strtol(s + at, &end, 10)`: (value, end); end == at when there are no digits.
fn strtol(s: &[u8], at: usize) -> (i64, usize) {
    let mut i = at;
    while matches!(s[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let neg = s[i] == b'-';
    if matches!(s[i], b'-' | b'+') {
        i += 1;
    }
    let d0 = i;
    let mut v: i64 = 0;
    while s[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((s[i] - b'0') as i64);
        i += 1;
    }
    if i == d0 {
        return (0, at);
    }
    (if neg { -v } else { v }, i)
}

fn first_field(b: &[u8], names: &[[u8; 2]]) -> Option<usize> {
    names.iter().find_map(|t| edit::find_tag(b, *t).map(|(at, _)| at))
}

const SEQI_RC: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// htslib's `bam_parse_basemod` followed by a `bam_next_basemod` walk: true when the tags are
/// usable.
fn valid(b: &[u8]) -> bool {
    let Some(mm) = first_field(b, &[*b"MM", *b"Mm"]) else { return true };
    mods_are_usable(b, mm).is_some()
}

/// [`valid`] for a record whose `MM` field starts at `mm`; `None` at the first failure.
fn mods_are_usable(b: &[u8], mm: usize) -> Option<()> {
    if b[mm + 2] != b'Z' {
        return None;
    }
    let r = RecordRef::new(b);
    let l_seq = r.l_seq();
    if let Some(mn) = edit::find_tag(b, *b"MN").map(|(at, _)| at) {
        // bam_aux2i: 0 for a field that is not an integer.
        let v = if matches!(b[mn + 2], b'c' | b'C' | b's' | b'S' | b'i' | b'I') {
            mn_value(b, Some(mn))
        } else {
            0
        };
        if v != l_seq as i64 && l_seq != 0 {
            return None;
        }
    }
    let ml_len = match first_field(b, &[*b"ML", *b"Ml"]) {
        Some(at) if b[at + 2] != b'B' || b[at + 3] != b'C' => return None,
        Some(at) => Some(u32::from_le_bytes([b[at + 4], b[at + 5], b[at + 6], b[at + 7]]) as usize),
        None => None,
    };
    let mut freq = [0i64; 16];
    for i in 0..l_seq {
        freq[r.base_code(i) as usize] += 1;
    }
    let mut s: Vec<u8> = b[mm + 3..].split(|&c| c == 0).next().unwrap_or(&[]).to_vec();
    s.extend_from_slice(&[0, 0]);
    let rev = r.flag() & flags::REVERSE != 0;
    let mut walk =
        ModWalk { s, cp: 0, ml: 0, nmods: 0, need: Vec::new(), rev, l_seq, freq, ml_len };
    while walk.s[walk.cp] != 0 {
        walk.chain()?;
    }
    walk.finish()
}

/// The walk over an `MM` string (NUL-terminated twice): one modification chain at a time.
struct ModWalk {
    s: Vec<u8>,
    cp: usize,
    /// `ML` values the chains so far use.
    ml: usize,
    nmods: usize,
    /// Forward strand: (canonical, bases the deltas consume) per chain, checked at the end.
    need: Vec<(usize, i64)>,
    rev: bool,
    l_seq: usize,
    freq: [i64; 16],
    ml_len: Option<usize>,
}

impl ModWalk {
    /// One chain: `C+m.,1,2;`.
    fn chain(&mut self) -> Option<()> {
        let (code, stride, cp_end) = self.head()?;
        let (delta, ndelta, cp_end) = self.deltas(code, stride, cp_end)?;
        for _ in 0..stride {
            if delta < 0 {
                return None;
            }
            self.nmods += 1;
            if self.nmods >= 256 {
                return None;
            }
        }
        self.count_ml(stride, ndelta, cp_end)?;
        if self.s[self.cp] == 0 {
            return None;
        }
        self.cp += 1;
        Some(())
    }

    /// The base, the strand and the modification codes (letters or one ChEBI number), then
    /// `.`/`?`: the base's nt16 code, how many modifications, and where a number ended.
    fn head(&mut self) -> Option<(usize, usize, Option<usize>)> {
        let s = &self.s;
        let mut btype = s[self.cp];
        self.cp += 1;
        if !matches!(btype, b'A' | b'C' | b'G' | b'T' | b'U' | b'N') {
            return None;
        }
        if btype == b'U' {
            btype = b'T';
        }
        let code = SEQ_NT16[btype as usize] as usize;
        if s[self.cp] != b'+' && s[self.cp] != b'-' {
            return None;
        }
        self.cp += 1;
        let ms;
        let mut cp_end = None;
        if s[self.cp].is_ascii_digit() {
            let (_, e) = strtol(s, self.cp);
            cp_end = Some(e);
            self.cp = e;
            ms = self.cp - 1;
        } else {
            ms = self.cp;
            while s[self.cp] != 0 && s[self.cp].is_ascii_alphabetic() {
                self.cp += 1;
            }
            if s[self.cp] == 0 {
                return None;
            }
        }
        let me = self.cp;
        if s[self.cp] == b'.' || s[self.cp] == b'?' {
            self.cp += 1;
        } else if s[self.cp] != b',' && s[self.cp] != b';' {
            return None;
        }
        Some((code, me - ms, cp_end))
    }

    /// The delta list: the first delta (reverse strand: the bases left before the first
    /// modification), how many deltas were read, and where the list ended.
    fn deltas(
        &mut self,
        code: usize,
        stride: usize,
        mut cp_end: Option<usize>,
    ) -> Option<(i64, usize, Option<usize>)> {
        let s = &self.s;
        let mut ndelta = 0usize;
        let delta;
        if self.rev {
            let mut total = 0i64;
            loop {
                if s[self.cp] == b',' {
                    self.cp += 1;
                }
                if s[self.cp] == 0 || s[self.cp] == b';' {
                    break;
                }
                let (d, e) = strtol(s, self.cp);
                if e == self.cp {
                    return None;
                }
                self.cp = e;
                total += d + 1;
                ndelta += 1;
            }
            let avail = if code == 15 { self.l_seq as i64 } else { self.freq[SEQI_RC[code]] };
            delta = avail - total;
            cp_end = Some(self.cp);
        } else {
            if s[self.cp] == b',' {
                let (d, e) = strtol(s, self.cp + 1);
                delta = d;
                cp_end = Some(e);
            } else {
                delta = if cp_end.is_none() { i64::from(i32::MAX) } else { 0 };
            }
            // The bases consumed by the whole list.
            let mut k = self.cp;
            let mut total = 0i64;
            while s[k] == b',' {
                let (d, e) = strtol(s, k + 1);
                total += d + 1;
                k = e;
            }
            if stride > 0 {
                self.need.push((code, total));
            }
        }
        Some((delta, ndelta, cp_end))
    }

    /// Moves to the chain's end, counting the `ML` values it uses against `ML`'s length.
    fn count_ml(&mut self, stride: usize, ndelta: usize, cp_end: Option<usize>) -> Option<()> {
        let s = &self.s;
        match self.ml_len {
            Some(len) => {
                if self.rev {
                    self.ml += ndelta * stride;
                } else {
                    while s[self.cp] != 0 && s[self.cp] != b';' {
                        if s[self.cp] == b',' {
                            self.ml += stride;
                        }
                        self.cp += 1;
                    }
                }
                if self.ml > len {
                    return None;
                }
            }
            None if self.rev => self.cp = cp_end.unwrap_or(self.cp),
            None => {
                while s[self.cp] != 0 && s[self.cp] != b';' {
                    self.cp += 1;
                }
            }
        }
        Some(())
    }

    /// After the last chain: `ML` used exactly, and no forward chain ran past its bases.
    fn finish(&self) -> Option<()> {
        if self.ml_len.is_some_and(|len| self.ml != len) {
            return None;
        }
        if !self.rev && self.l_seq > 0 {
            for &(code, total) in &self.need {
                let avail = if code == 15 { self.l_seq as i64 } else { self.freq[code] };
                if total > avail {
                    return None;
                }
            }
        }
        Some(())
    }
}

/// `trim_MM`: cuts `end5`/`end3` bases off `cur`'s MM/ML using `pre`'s sequence for the counts;
/// drops MN (set again by the caller).
fn trim(pre: &[u8], cur: &mut Vec<u8>, end5: usize, end3: usize, tags: &ModTags) {
    let p = RecordRef::new(pre);
    let mut counts5 = [0i64; 16];
    let mut i = 0;
    while i < end5 {
        counts5[p.base_code(i) as usize] += 1;
        i += 1;
    }
    let mut counts3 = counts5;
    while (i as i64) < p.l_seq() as i64 - end3 as i64 {
        counts3[p.base_code(i) as usize] += 1;
        i += 1;
    }
    let mm_at = tags.mm.expect("MM present");
    let mut s: Vec<u8> = cur[mm_at + 3..].split(|&c| c == 0).next().unwrap_or(&[]).to_vec();
    s.extend_from_slice(&[0, 0]);
    let ml_vals: Option<Vec<u8>> = tags.ml.and_then(|at| {
        (cur[at + 2] == b'B' && cur[at + 3] == b'C').then(|| {
            let n = u32::from_le_bytes([cur[at + 4], cur[at + 5], cur[at + 6], cur[at + 7]]);
            cur[at + 8..at + 8 + n as usize].to_vec()
        })
    });
    let has_ml = ml_vals.is_some();
    let mlv = ml_vals.unwrap_or_default();
    let mut mlp = 0usize;
    let mut mlq: Vec<u8> = Vec::new();
    let take = |mlp: &mut usize, mlq: &mut Vec<u8>| {
        mlq.push(mlv.get(*mlp).copied().unwrap_or(0));
        *mlp += 1;
    };
    let mut q: Vec<u8> = Vec::new();
    let mut p_ = 0usize;
    while s[p_] != 0 {
        let f = SEQ_NT16[s[p_] as usize] as usize;
        while s[p_] != 0 && s[p_] != b',' {
            q.push(s[p_]);
            p_ += 1;
        }
        if s[p_] != 0 {
            q.push(s[p_]);
            p_ += 1;
        }
        let mut n = 0i64;
        while s[p_] != b';' && n < counts5[f] {
            let (delta, end) = strtol(&s, p_);
            if counts5[f] - n > delta {
                n += delta + 1;
                if has_ml {
                    mlp += 1;
                }
            } else if counts3[f] > counts5[f] {
                q.extend_from_slice(
                    itoa::Buffer::new().format(delta - (counts5[f] - n)).as_bytes(),
                );
                q.push(s[end]);
                n += delta + 1;
                if has_ml {
                    take(&mut mlp, &mut mlq);
                }
            } else {
                break;
            }
            p_ = end;
            if s[p_] != b',' {
                break;
            }
            p_ += 1;
        }
        while s[p_] != b';' && n < counts3[f] {
            let (delta, end) = strtol(&s, p_);
            if counts3[f] - n > delta {
                q.extend_from_slice(&s[p_..=end]);
                n += delta + 1;
                if has_ml {
                    take(&mut mlp, &mut mlq);
                }
            } else {
                n = counts3[f];
                if has_ml {
                    mlp += 1;
                }
            }
            p_ = end;
            if s[p_] != b',' {
                break;
            }
            p_ += 1;
        }
        while s[p_] != 0 && s[p_] != b';' {
            while s[p_] != 0 && s[p_] != b',' && s[p_] != b';' {
                p_ += 1;
            }
            if s[p_] == b',' {
                p_ += 1;
            }
            if has_ml {
                mlp += 1;
            }
        }
        if let Some(last) = q.last_mut() {
            *last = b';';
        }
        if s[p_] != 0 {
            p_ += 1;
        }
    }
    // The string ends at its first NUL, as in C.
    if let Some(z) = q.iter().position(|&c| c == 0) {
        q.truncate(z);
    }
    let start = edit::aux_offset(cur);
    let mut out = Vec::with_capacity(cur.len() - start);
    for (at, n) in fields(cur) {
        let (t0, t1) = (cur[at], cur[at + 1]);
        if t0 == b'M' && (t1 == b'M' || t1 == b'm') {
            out.extend_from_slice(b"MMZ");
            out.extend_from_slice(&q);
            out.push(0);
        } else if t0 == b'M' && (t1 == b'L' || t1 == b'l') && has_ml {
            out.extend_from_slice(b"MLBC");
            out.extend_from_slice(&(mlq.len() as u32).to_le_bytes());
            out.extend_from_slice(&mlq);
        } else if !(t0 == b'M' && t1 == b'N') {
            out.extend_from_slice(&cur[at..at + n]);
        }
    }
    cur.truncate(start);
    cur.extend_from_slice(&out);
}

fn validate(b: &mut Vec<u8>) {
    if !valid(b) {
        delete_mod_tags(b);
    }
}

/// `fix_MM(NULL, b, state)`: a primary record.
pub fn fix_primary(b: &mut Vec<u8>) {
    let tags = find_tags(b);
    if tags.mm.is_none() {
        delete_mod_tags(b);
        return;
    }
    let mn = mn_value(b, tags.mn);
    let (end5, end3) = hard_clips(b);
    let l_seq = RecordRef::new(b).l_seq();
    if end5 == 0 && end3 == 0 && mn <= 0 {
        if l_seq > 0 {
            set_mn(b, l_seq);
        }
    } else if (end5 > 0 || end3 > 0) && l_seq as i64 != mn {
        delete_mod_tags(b);
    }
    validate(b);
}

/// `fix_MM(primary, b, state)`: a secondary or supplementary record with its read's primary.
pub fn fix_with_primary(primary: &[u8], b: &mut Vec<u8>) {
    let tags = find_tags(b);
    if tags.mm.is_none() {
        delete_mod_tags(b);
        return;
    }
    let mn = mn_value(b, tags.mn);
    let (end5, end3) = hard_clips(b);
    let l_seq = RecordRef::new(b).l_seq();
    if mn != l_seq as i64 {
        let pre_len = RecordRef::new(primary).l_seq();
        if pre_len != l_seq + end3 + end5 {
            delete_mod_tags(b);
            return;
        }
        if (end5 > 0 || end3 > 0) && (mn < 0 || mn == pre_len as i64) {
            trim(primary, b, end5, end3, &tags);
        }
        if l_seq > 0 {
            set_mn(b, l_seq);
        }
    }
    validate(b);
}

/// `fix_MM(NULL, b, NULL)`: a secondary or supplementary record without a primary.
pub fn fix_orphan(b: &mut Vec<u8>) {
    validate(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forward record with `seq`, a CIGAR of `ops` and the aux bytes `aux`.
    fn mk(flag: u16, ops: &[u32], seq: &[u8], aux: &[u8]) -> Vec<u8> {
        let r = crate::record::build::RecordBuilder::new(b"r").flag(flag).cigar(ops).seq(seq);
        r.qual(&vec![30; seq.len()]).aux(aux).build()
    }

    fn aux(mm: &str, ml: &[u8]) -> Vec<u8> {
        let mut a = b"MMZ".to_vec();
        a.extend_from_slice(mm.as_bytes());
        a.push(0);
        a.extend_from_slice(b"MLBC");
        a.extend_from_slice(&(ml.len() as u32).to_le_bytes());
        a.extend_from_slice(ml);
        a
    }

    #[test]
    fn trims_hard_clipped_secondary() {
        let full = b"AGCTCTCCAGAGTCGNACGC";
        let a = aux("C+m,2,0,2;C+h,0,3;", &[41, 51, 61, 19, 29]);
        let mut primary = mk(0, &[20 << 4], full, &a);
        fix_primary(&mut primary);
        let r = RecordRef::new(&primary);
        assert_eq!(r.aux_get(*b"MN").and_then(|f| f.int()), Some(20));
        let mut sec = mk(0x100, &[3 << 4 | 5, 14 << 4, 3 << 4 | 5], &full[3..17], &a);
        fix_with_primary(&primary, &mut sec);
        let r = RecordRef::new(&sec);
        assert_eq!(r.aux_get(*b"MM").map(|f| f.value), Some(&b"C+m,1,0;C+h,3;"[..]));
        assert_eq!(r.aux_get(*b"ML").map(|f| f.value[5..].to_vec()), Some(vec![41, 51, 29]));
        assert_eq!(r.aux_get(*b"MN").and_then(|f| f.int()), Some(14));
    }

    #[test]
    fn drops_out_of_bounds_and_bad_ml() {
        let mut b = mk(0, &[10 << 4], b"ACGTACGTCC", &aux("C+m,1,5;", &[9, 3]));
        fix_primary(&mut b);
        assert!(RecordRef::new(&b).aux_get(*b"MM").is_none());
        let mut b = mk(0, &[10 << 4], b"ACGTACGTCC", &aux("C+m,1;", &[9, 3]));
        fix_primary(&mut b);
        assert!(RecordRef::new(&b).aux_get(*b"ML").is_none());
    }
}
