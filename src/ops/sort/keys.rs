//! Sort keys, one per record, whose order is exactly samtools 1.24's comparators (`bam_sort.c`).
//!
//! | order                   | key                                   | samtools comparator              |
//! |-------------------------|---------------------------------------|----------------------------------|
//! | coordinate              | packed `u64` ([`coordinate_key`])     | `ks_radixsort` / `bam1_cmp_core` |
//! | `-n` natural names      | transformed bytes ([`natural_key`])   | `strnum_cmp` + flag rank         |
//! | `-N` lexicographic      | the name bytes                        | `strcmp` + flag rank             |
//! | `-t TAG`                | [`TagValue`] then one of the above    | `bam1_cmp_by_tag`                |
//! | `--template-coordinate` | [`TemplateKey`]                       | `bam1_cmp_template_coordinate`   |
//!
//! Every samtools sort is stable, so callers break remaining ties by input position.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::record::RecordRef;
use crate::record::aux::AuxValue;
use crate::record::cigar;
use crate::record::layout::flags;

/// Coordinate order as one integer: reference (unplaced `tid < 0` after every reference), then
/// `pos + 1` as unsigned 64-bit (`bam1_cmp_core`), then forward before reverse. `n_refs` is the
/// header's reference count.
///
/// | bits   | field        |
/// |--------|--------------|
/// | 65..97 | tid          |
/// | 1..65  | `pos + 1`    |
/// | 0      | reverse      |
#[inline]
pub fn coordinate_key(r: &RecordRef<'_>, n_refs: usize) -> u128 {
    let tid = if r.ref_id() < 0 { n_refs as u128 } else { r.ref_id() as u128 };
    let pos1 = (r.pos() + 1) as u64 as u128;
    let rev = (r.flag() & flags::REVERSE != 0) as u128;
    tid << 65 | pos1 << 1 | rev
}

/// [`coordinate_key`]'s order packed into a `u64` (`tid << 33 | (pos + 1) << 1 | reverse`, with
/// `pos + 1` kept to 32 bits), so the coordinate sort pairs it with an input index in one `u128`.
/// `None` when POS does not fit i32 (SAM only); the caller then sorts by [`coordinate_key`].
/// Among records whose POS fits i32 the orders agree: a negative POS below −1 (malformed BAM)
/// still sorts after every other position, as its unsigned 64-bit `pos + 1` does.
#[inline]
pub fn narrow_coordinate_key(r: &RecordRef<'_>, n_refs: usize) -> Option<u64> {
    let pos = i32::try_from(r.pos()).ok()?;
    let tid = if r.ref_id() < 0 { n_refs as u64 } else { r.ref_id() as u64 };
    let pos1 = (pos as i64 + 1) as u64 & 0xffff_ffff;
    let rev = (r.flag() & flags::REVERSE != 0) as u64;
    Some(tid << 33 | pos1 << 1 | rev)
}

/// samtools 1.24's tie-break for equal names: READ1/READ2 bits, then primary < supplementary <
/// secondary (`((f&0xc0)<<8)|((f&0x100)<<3)|((f&0x800)>>3)`).
#[inline]
pub fn flag_rank(flag: u16) -> u32 {
    let f = flag as u32;
    ((f & 0xc0) << 8) | ((f & 0x100) << 3) | ((f & 0x800) >> 3)
}

/// Appends a byte string whose plain lexicographic order is `strnum_cmp`'s natural order:
/// each digit run becomes `'0'`, the number of significant digits, then those digits. The
/// marker `'0'` compares against any non-digit as a digit would (non-digits lie outside
/// `'0'..='9'`), and numbers of equal value encode identically (leading zeros do not count).
pub fn natural_key(name: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < name.len() {
        let c = name[i];
        if c.is_ascii_digit() {
            let start = i;
            while i < name.len() && name[i].is_ascii_digit() {
                i += 1;
            }
            let run = &name[start..i];
            let zeros = run.iter().take_while(|&&d| d == b'0').count();
            let significant = &run[zeros..];
            out.push(b'0');
            out.push(significant.len().min(255) as u8);
            out.extend_from_slice(significant);
        } else {
            out.push(c);
            i += 1;
        }
    }
}

/// The first 8 bytes of a key, big-endian and zero-padded: comparing these first never
/// contradicts comparing the whole keys.
#[inline]
pub fn key_prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// A `-t` tag's value, normalised as `bam1_cmp_by_tag` does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TagValue<'a> {
    Missing,
    Char(u8),
    Array,
    Str(&'a [u8]),
    Int(i64),
    Float(f64),
}

impl TagValue<'_> {
    /// samtools' normalised type letter: classes of different letters order by it.
    fn class(&self) -> u8 {
        match self {
            TagValue::Missing => 0,
            TagValue::Char(_) => b'A',
            TagValue::Array => b'B',
            TagValue::Str(_) => b'H',
            TagValue::Int(_) => b'c',
            TagValue::Float(_) => b'f',
        }
    }
}

pub fn tag_value<'a>(r: &RecordRef<'a>, tag: [u8; 2]) -> TagValue<'a> {
    match r.aux_get(tag).map(|f| f.typed()) {
        None => TagValue::Missing,
        Some(AuxValue::Char(c)) => TagValue::Char(c),
        Some(AuxValue::Int(i)) => TagValue::Int(i),
        Some(AuxValue::Float(f)) => TagValue::Float(f),
        Some(AuxValue::Str(s)) => TagValue::Str(s),
        Some(AuxValue::Array(..)) => TagValue::Array,
    }
}

/// The tag part of `bam1_cmp_by_tag`: `Equal` means "decide by the secondary key". Records
/// without the tag come first; int and float compare as doubles; other mixed classes by letter.
pub fn cmp_tag(a: &TagValue<'_>, b: &TagValue<'_>) -> Ordering {
    use TagValue::*;
    let by = |x: bool, y: bool| {
        if x {
            Ordering::Less
        } else if y {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    };
    match (a, b) {
        (Missing, Missing) => Ordering::Equal,
        (Missing, _) => Ordering::Less,
        (_, Missing) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (Int(x), Float(y)) => by((*x as f64) < *y, (*x as f64) != *y),
        (Float(x), Int(y)) => by(*x < *y as f64, *x != *y as f64),
        (Float(x), Float(y)) => by(x < y, x != y),
        (Char(x), Char(y)) => x.cmp(y),
        (Str(x), Str(y)) => x.cmp(y),
        (Array, Array) => Ordering::Equal,
        _ => a.class().cmp(&b.class()),
    }
}

/// `--template-coordinate`'s key (`template_coordinate_key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateKey<'a> {
    pub tid1: i32,
    pub tid2: i32,
    pub pos1: i64,
    pub pos2: i64,
    pub neg1: bool,
    pub neg2: bool,
    pub library: &'a [u8],
    pub cell: &'a [u8],
    pub molecule: &'a [u8],
    pub name: &'a [u8],
    pub upper: bool,
}

/// `@RG ID` → `LB`, first line of each ID winning (htslib's `lookup_libraries`).
pub fn library_lookup<'h>(
    header_lines: impl Iterator<Item = &'h [u8]>,
) -> HashMap<&'h [u8], &'h [u8]> {
    let mut map = HashMap::new();
    for l in header_lines.filter(|l| l.starts_with(b"@RG\t")) {
        let field = |k: &[u8; 2]| crate::record::header::line_field(l, k);
        if let (Some(id), Some(lb)) = (field(b"ID"), field(b"LB")) {
            map.entry(id).or_insert(lb);
        }
    }
    map
}

/// 1-based unclipped start counting soft clips only (`unclipped_start(b, 0)`).
fn unclipped_start(r: &RecordRef<'_>) -> i64 {
    let mut clipped = 0i64;
    for c in r.cigar() {
        match cigar::op(c) {
            cigar::SOFT_CLIP => clipped += cigar::len(c) as i64,
            cigar::HARD_CLIP => {}
            _ => break,
        }
    }
    r.pos() - clipped + 1
}

/// Unclipped end counting soft clips only (`unclipped_end(b, 0)`).
fn unclipped_end(r: &RecordRef<'_>) -> i64 {
    let mut clipped = 0i64;
    for c in r.cigar().rev() {
        match cigar::op(c) {
            cigar::SOFT_CLIP => clipped += cigar::len(c) as i64,
            cigar::HARD_CLIP => {}
            _ => break,
        }
    }
    r.end_pos() + clipped
}

/// `strtol`-style walk of a CIGAR string: (length, op letter) pairs up to `*` or the end.
fn cigar_string_ops(s: &[u8]) -> impl Iterator<Item = (i64, u8)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= s.len() || s[i] == b'*' {
            return None;
        }
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        let num = if i > start {
            std::str::from_utf8(&s[start..i])
                .ok()
                .and_then(|t| t.parse::<i64>().ok())
                .unwrap_or(i64::MAX)
        } else {
            1
        };
        let op = s.get(i).copied().unwrap_or(0);
        i += 1;
        Some((num, op))
    })
}

/// The mate's unclipped start from `mpos` and its `MC` CIGAR (`unclipped_other_start(.., 0)`).
fn unclipped_other_start(mpos: i64, mc: &[u8]) -> i64 {
    let mut clipped = 0i64;
    for (n, op) in cigar_string_ops(mc) {
        match op {
            b'S' => clipped += n,
            b'H' => {}
            _ => break,
        }
    }
    mpos - clipped + 1
}

/// The mate's unclipped end (`unclipped_other_end(.., 0)`).
fn unclipped_other_end(mpos: i64, mc: &[u8]) -> i64 {
    let mut refpos = 0i64;
    let mut skip = true;
    for (n, op) in cigar_string_ops(mc) {
        match op {
            b'M' | b'D' | b'N' | b'=' | b'X' => {
                refpos += n;
                skip = false;
            }
            b'S' if !skip => refpos += n,
            _ => {}
        }
    }
    mpos + refpos
}

fn string_tag<'a>(
    r: &RecordRef<'a>,
    tag: [u8; 2],
    wrong_type: &str,
) -> Result<Option<&'a [u8]>, String> {
    match r.aux_get(tag) {
        None => Ok(None),
        Some(f) if f.ty == b'Z' || f.ty == b'H' => Ok(Some(f.value)),
        Some(_) => Err(wrong_type.to_string()),
    }
}

/// Builds the template-coordinate key; the error is samtools' message for a missing/bad tag.
pub fn template_key<'a>(
    r: &RecordRef<'a>,
    libraries: &HashMap<&[u8], &'a [u8]>,
) -> Result<TemplateKey<'a>, String> {
    let flag = r.flag();
    let mut k = TemplateKey {
        tid1: i32::MAX,
        tid2: i32::MAX,
        pos1: i64::MAX,
        pos2: i64::MAX,
        neg1: false,
        neg2: false,
        library: b"",
        cell: b"",
        molecule: b"",
        name: r.read_name(),
        upper: false,
    };
    if let Some(rg) = string_tag(r, *b"RG", "").ok().flatten()
        && let Some(lb) = libraries.get(rg)
    {
        k.library = lb;
    }
    if flag & flags::UNMAP == 0 {
        k.tid1 = r.ref_id();
        k.neg1 = flag & flags::REVERSE != 0;
        k.pos1 = if k.neg1 { unclipped_end(r) } else { unclipped_start(r) };
    }
    if flag & flags::PAIRED != 0 && flag & flags::MUNMAP == 0 {
        let mc = string_tag(
            r,
            *b"MC",
            "[bam_sort] error: MC tag wrong type. Please use the MC tag provided by samtools fixmate.",
        )?
        .ok_or("[bam_sort] error: no MC tag. Please run samtools fixmate on file first.")?;
        k.tid2 = r.next_ref_id();
        k.neg2 = flag & flags::MREVERSE != 0;
        let mpos = r.next_pos();
        k.pos2 =
            if k.neg2 { unclipped_other_end(mpos, mc) } else { unclipped_other_start(mpos, mc) };
    }
    if let Some(cb) = string_tag(r, *b"CB", "[bam_sort] error: CB tag wrong type (not a string).")?
    {
        k.cell = cb;
    }
    if let Some(mi) = string_tag(r, *b"MI", "[bam_sort] error: MI tag wrong type (not a string).")?
    {
        k.molecule = mi;
    }
    let lower = k.tid1 < k.tid2
        || (k.tid1 == k.tid2 && k.pos1 < k.pos2)
        || (k.tid1 == k.tid2 && k.pos1 == k.pos2 && !k.neg1);
    if !lower {
        k.upper = true;
        std::mem::swap(&mut k.tid1, &mut k.tid2);
        std::mem::swap(&mut k.pos1, &mut k.pos2);
        std::mem::swap(&mut k.neg1, &mut k.neg2);
    }
    Ok(k)
}

/// Molecular identifiers compared without a trailing `/X` (`template_coordinate_key_compare_mid`).
fn cmp_molecule(a: &[u8], b: &[u8]) -> Ordering {
    let strip =
        |m: &[u8]| if m.len() >= 2 && m[m.len() - 2] == b'/' { m.len() - 2 } else { m.len() };
    a[..strip(a)].cmp(&b[..strip(b)])
}

/// `bam1_cmp_template_coordinate`: reverse strands sort before forward.
pub fn cmp_template(a: &TemplateKey<'_>, b: &TemplateKey<'_>) -> Ordering {
    a.tid1
        .wrapping_sub(b.tid1)
        .cmp(&0)
        .then_with(|| a.tid2.wrapping_sub(b.tid2).cmp(&0))
        .then(a.pos1.cmp(&b.pos1))
        .then(a.pos2.cmp(&b.pos2))
        .then(b.neg1.cmp(&a.neg1))
        .then(b.neg2.cmp(&a.neg2))
        .then_with(|| a.library.cmp(b.library))
        .then_with(|| a.cell.cmp(b.cell))
        .then_with(|| cmp_molecule(a.molecule, b.molecule))
        .then_with(|| a.name.cmp(b.name))
        .then(a.upper.cmp(&b.upper))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// samtools 1.24's `strnum_cmp`, transcribed literally, to check [`natural_key`] against.
    fn strnum_cmp(a: &[u8], b: &[u8]) -> Ordering {
        let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
        let digit = |c: u8| c.is_ascii_digit();
        let (mut pa, mut pb) = (0usize, 0usize);
        while at(a, pa) != 0 && at(b, pb) != 0 {
            if !digit(at(a, pa)) || !digit(at(b, pb)) {
                if at(a, pa) != at(b, pb) {
                    return at(a, pa).cmp(&at(b, pb));
                }
                pa += 1;
                pb += 1;
            } else {
                while at(a, pa) == b'0' {
                    pa += 1;
                }
                while at(b, pb) == b'0' {
                    pb += 1;
                }
                while digit(at(a, pa)) && at(a, pa) == at(b, pb) {
                    pa += 1;
                    pb += 1;
                }
                let diff = at(a, pa) as i32 - at(b, pb) as i32;
                while digit(at(a, pa)) && digit(at(b, pb)) {
                    pa += 1;
                    pb += 1;
                }
                if digit(at(a, pa)) {
                    return Ordering::Greater;
                } else if digit(at(b, pb)) {
                    return Ordering::Less;
                } else if diff != 0 {
                    return diff.cmp(&0);
                }
            }
        }
        if at(a, pa) != 0 {
            Ordering::Greater
        } else if at(b, pb) != 0 {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    }

    fn nk(s: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        natural_key(s, &mut v);
        v
    }

    #[test]
    fn natural_key_order_is_strnum_cmp() {
        // Deterministic pseudo-random names over a small alphabet rich in digits and zeros.
        let alphabet = b"0019:/a_Zx.";
        let mut state = 0x2545F4914F6CDD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut names: Vec<Vec<u8>> = vec![
            b"r001".to_vec(),
            b"r01".to_vec(),
            b"r1".to_vec(),
            b"a01c".to_vec(),
            b"a1b".to_vec(),
        ];
        for _ in 0..600 {
            let len = (next() % 7) as usize;
            names.push(
                (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect(),
            );
        }
        for a in &names {
            for b in &names {
                let (ka, kb) = (nk(a), nk(b));
                assert_eq!(
                    ka.cmp(&kb),
                    strnum_cmp(a, b),
                    "{:?} vs {:?}",
                    String::from_utf8_lossy(a),
                    String::from_utf8_lossy(b)
                );
                if key_prefix(&ka) != key_prefix(&kb) {
                    assert_eq!(key_prefix(&ka).cmp(&key_prefix(&kb)), ka.cmp(&kb));
                }
            }
        }
    }

    #[test]
    fn flag_rank_orders_read_then_primary_supplementary_secondary() {
        let order = [0x4u16, 0x804, 0x104, 0x45, 0x85];
        let mut sorted = order;
        sorted.sort_by_key(|&f| flag_rank(f));
        assert_eq!(sorted, order);
    }

    #[test]
    fn tag_classes_and_numbers() {
        use TagValue::*;
        assert_eq!(cmp_tag(&Missing, &Char(b'a')), Ordering::Less);
        assert_eq!(cmp_tag(&Char(b'z'), &Array), Ordering::Less);
        assert_eq!(cmp_tag(&Array, &Str(b"a")), Ordering::Less);
        assert_eq!(cmp_tag(&Str(b"zz"), &Int(-5)), Ordering::Less);
        assert_eq!(cmp_tag(&Int(2), &Float(1.5)), Ordering::Greater);
        assert_eq!(cmp_tag(&Float(2.0), &Int(2)), Ordering::Equal);
        assert_eq!(cmp_tag(&Int(-3), &Int(2)), Ordering::Less);
    }

    #[test]
    fn mate_unclipped_coordinates() {
        assert_eq!(unclipped_other_start(100, b"5S10M"), 96);
        assert_eq!(unclipped_other_start(100, b"3H5S10M"), 96);
        assert_eq!(unclipped_other_end(100, b"5S10M2D3S4H"), 115);
        assert_eq!(cmp_molecule(b"12/A", b"12/B"), Ordering::Equal);
        assert_eq!(cmp_molecule(b"12", b"12/B"), Ordering::Equal);
        assert_eq!(cmp_molecule(b"1", b"12"), Ordering::Less);
    }
}
