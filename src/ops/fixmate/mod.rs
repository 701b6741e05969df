//! `fixmate` (samtools 1.24 `bam_mate.c`) on one template: the records sharing a QNAME, in input
//! order. Records are owned BAM bytes (no `block_size`), already sanitised.
//!
//! The first two primary records pair up (with three or more, every later one pairs with the
//! first); secondary and supplementary records keep their place; `-r` drops secondary and unmapped
//! records. Templates are independent, so the pipeline fixes them in parallel.

pub mod basemod;
pub mod sanitize;
pub mod streamed;

use crate::record::cigar;
use crate::record::edit;
use crate::record::layout::{self, flags};
use crate::record::view::RecordRef;

/// Minimum base quality counted in the mate score.
const MIN_QUALITY: u8 = 15;

#[derive(Clone, Copy, Debug)]
pub struct FixmateOptions {
    /// `-r`
    pub remove: bool,
    /// not `-p`
    pub proper_pair_check: bool,
    /// `-c`
    pub template_cigar: bool,
    /// `-m`
    pub mate_score: bool,
    /// `-z` flags (sanitize::FIX_*)
    pub sanitize: u32,
    /// `-M`
    pub base_mods: bool,
}

impl Default for FixmateOptions {
    fn default() -> Self {
        FixmateOptions {
            remove: false,
            proper_pair_check: true,
            template_cigar: false,
            mate_score: false,
            sanitize: sanitize::FIX_ALL,
            base_mods: false,
        }
    }
}

/// Sum of base qualities ≥ 15 (`*` qualities are stored as 0xff and count 255 each).
pub fn quality_score(r: &RecordRef<'_>) -> u32 {
    r.qual().iter().filter(|&&q| q >= MIN_QUALITY).map(|&q| q as u32).sum()
}

fn rec(b: &[u8]) -> RecordRef<'_> {
    RecordRef::new(b)
}

fn push_cigar_text(out: &mut Vec<u8>, r: &RecordRef<'_>) {
    for c in r.cigar() {
        out.extend_from_slice(itoa::Buffer::new().format(cigar::len(c)).as_bytes());
        out.push(cigar::op_char(cigar::op(c)));
    }
}

/// `bam_endpos`.
fn end_pos(b: &[u8]) -> i64 {
    rec(b).end_pos()
}

/// POS, 64-bit (`hts_pos_t`).
fn pos(b: &[u8]) -> i64 {
    rec(b).pos()
}

/// Stores a 64-bit POS, PNEXT or TLEN. A value beyond 32 bits on a read name longer than
/// `layout::MAX_EXTENDED_NAME_LEN` cannot be stored: such a record keeps the value's low half.
/// (Unreachable from SAM, whose parser refuses such names with wide positions, except for a TLEN
/// spanning positions near 2³¹.)
fn set_wide(b: &mut Vec<u8>, field: layout::WideField, v: i64) {
    let _ = edit::set_wide(b, field, v);
}

fn sync_unmapped_pos(src: &[u8], dest: &mut Vec<u8>) {
    if edit::flag(dest) & flags::UNMAP != 0 && edit::flag(src) & flags::UNMAP == 0 {
        edit::set_i32(dest, layout::REF_ID, edit::get_i32(src, layout::REF_ID));
        set_wide(dest, layout::WIDE_POS, pos(src));
    }
}

fn sync_mate_fields(src: &[u8], dest: &mut Vec<u8>) {
    edit::set_i32(dest, layout::NEXT_REF_ID, edit::get_i32(src, layout::REF_ID));
    set_wide(dest, layout::WIDE_NEXT_POS, pos(src));
    let sf = edit::flag(src);
    let mut df = edit::flag(dest);
    if sf & flags::REVERSE != 0 {
        df |= flags::MREVERSE;
    } else {
        df &= !flags::MREVERSE;
    }
    if sf & flags::UNMAP != 0 {
        df |= flags::MUNMAP;
    }
    edit::set_flag(dest, df);
}

/// `MQ` and `MC` of `dest` from its mate `src`. With `drop_ms`, `dest`'s `ms` goes in the same
/// walk over the aux block ([`add_mate_score`] then only appends it): one walk where three
/// (`MQ`, `MC`, `ms`) were 8 % of markdup-pipeline's samples. The fields end in the same order.
fn sync_mq_mc(src: &[u8], dest: &mut Vec<u8>, drop_ms: bool) {
    let src_mapped = edit::flag(src) & flags::UNMAP == 0;
    let set_mc = src_mapped || edit::flag(dest) & flags::UNMAP == 0;
    let mut gone = [[0u8; 2]; 3];
    let mut n = 0;
    for (yes, tag) in [(src_mapped, *b"MQ"), (set_mc, *b"MC"), (drop_ms, *b"ms")] {
        if yes {
            gone[n] = tag;
            n += 1;
        }
    }
    edit::delete_tags(dest, &gone[..n]);
    if src_mapped {
        edit::append_i32(dest, *b"MQ", src[layout::MAPQ] as u32);
    }
    if set_mc {
        // `bam_aux_append(dest, "MC", 'Z', ...)`, written in place.
        dest.extend_from_slice(b"MCZ");
        let r = rec(src);
        if r.n_cigar_op() == 0 {
            dest.push(b'*');
        } else {
            push_cigar_text(dest, &r);
        }
        dest.push(0);
    }
}

/// `plausibly_properly_paired`: both mapped on one reference, the 5'-leftmost forward and the
/// other reverse.
fn plausibly_proper(a: &[u8], b: &[u8]) -> bool {
    let (fa, fb) = (edit::flag(a), edit::flag(b));
    if (fa | fb) & flags::UNMAP != 0 {
        return false;
    }
    if edit::get_i32(a, layout::REF_ID) != edit::get_i32(b, layout::REF_ID) {
        return false;
    }
    let five = |x: &[u8], f: u16| {
        if f & flags::REVERSE != 0 { end_pos(x) } else { pos(x) }
    };
    let (first, second) = if five(a, fa) > five(b, fb) { (fb, fa) } else { (fa, fb) };
    first & flags::REVERSE == 0 && second & flags::REVERSE != 0
}

/// `bam_template_cigar`: the `ct` tag on the leftmost of a mapped pair (`pre` on a tie).
fn template_cigar(pre: &mut Vec<u8>, cur: &mut Vec<u8>) {
    let (ta, tb) = (edit::get_i32(pre, layout::REF_ID), edit::get_i32(cur, layout::REF_ID));
    let (pa, pb) = (pos(pre), pos(cur));
    if ta != tb
        || ta < 0
        || pa < 0
        || pb < 0
        || (edit::flag(pre) | edit::flag(cur)) & flags::UNMAP != 0
    {
        return;
    }
    let (l, r) = if pa > pb { (cur, pre) } else { (pre, cur) };
    let mut s = Vec::new();
    for (i, b) in [&*l, &*r].into_iter().enumerate() {
        let f = edit::flag(b);
        if i == 1 {
            let gap = pos(b) - end_pos(l);
            s.extend_from_slice(itoa::Buffer::new().format(gap as i32).as_bytes());
            s.push(b'T');
        }
        s.push(if f & flags::READ1 != 0 { b'1' } else { b'2' });
        s.push(if f & flags::REVERSE != 0 { b'R' } else { b'F' });
        push_cigar_text(&mut s, &rec(b));
    }
    edit::delete_tag(l, *b"ct");
    edit::delete_tag(r, *b"ct");
    edit::append_str(l, *b"ct", &s);
}

/// `ms` of `dest`: its mate's quality score. `sync_mq_mc(.., true)` has removed the old one.
fn add_mate_score(src: &[u8], dest: &mut Vec<u8>) {
    let score = quality_score(&rec(src));
    edit::append_i32(dest, *b"ms", score);
}

/// Borrows two distinct elements mutably.
fn pair_mut(v: &mut [Vec<u8>], i: usize, j: usize) -> (&mut Vec<u8>, &mut Vec<u8>) {
    debug_assert!(i < j);
    let (lo, hi) = v.split_at_mut(j);
    (&mut lo[i], &mut hi[0])
}

/// Whether a fixed record is written (`-r` drops secondary and unmapped records).
pub fn is_kept(b: &[u8], opts: &FixmateOptions) -> bool {
    !(opts.remove && edit::flag(b) & (flags::SECONDARY | flags::UNMAP) != 0)
}

/// Whether a record is secondary or supplementary (fixed after the primaries it refers to).
pub fn is_primary(b: &[u8]) -> bool {
    edit::flag(b) & (flags::SECONDARY | flags::SUPPLEMENTARY) == 0
}

/// Which of `rnum` (the last primary seen of READ1, of READ2) a primary record sets.
pub fn read_slot(b: &[u8]) -> usize {
    (edit::flag(b) & flags::READ2 != 0) as usize
}

/// Where a primary's 5' end computation starts: its end, or 0 when unmapped.
pub fn primary_end(b: &[u8]) -> i64 {
    if edit::flag(b) & flags::UNMAP == 0 { end_pos(b) } else { 0 }
}

/// Fixes the template's first primary `pre` (ending at `pre_end`, as it was when first seen) and
/// a later primary `cur` as a pair. With three or more primaries each later one pairs with
/// `pre`, as samtools does.
pub fn pair_primaries(pre: &mut Vec<u8>, pre_end: i64, cur: &mut Vec<u8>, opts: &FixmateOptions) {
    let cur_end = primary_end(cur);
    let (a, b) = (pre, cur);
    edit::add_flags(a, flags::PAIRED);
    edit::add_flags(b, flags::PAIRED);
    sync_unmapped_pos(a, b);
    sync_unmapped_pos(b, a);
    sync_mate_fields(a, b);
    sync_mate_fields(b, a);
    sync_mq_mc(a, b, opts.mate_score);
    sync_mq_mc(b, a, opts.mate_score);
    let (fa, fb) = (edit::flag(a), edit::flag(b));
    let both = flags::UNMAP | flags::MUNMAP;
    if edit::get_i32(a, layout::REF_ID) == edit::get_i32(b, layout::REF_ID) && (fa | fb) & both == 0
    {
        let cur5 = if fb & flags::REVERSE != 0 { cur_end } else { pos(b) };
        let pre5 = if fa & flags::REVERSE != 0 { pre_end } else { pos(a) };
        set_wide(b, layout::WIDE_TLEN, pre5 - cur5);
        set_wide(a, layout::WIDE_TLEN, cur5 - pre5);
    } else {
        set_wide(a, layout::WIDE_TLEN, 0);
        set_wide(b, layout::WIDE_TLEN, 0);
    }
    if opts.template_cigar {
        template_cigar(a, b);
    }
    if opts.proper_pair_check && !plausibly_proper(a, b) {
        edit::clear_flags(a, flags::PROPER_PAIR);
        edit::clear_flags(b, flags::PROPER_PAIR);
    }
    if opts.mate_score {
        add_mate_score(a, b);
        add_mate_score(b, a);
    }
    if opts.remove {
        let clear = flags::MREVERSE | flags::PROPER_PAIR;
        if edit::flag(a) & flags::UNMAP != 0 {
            edit::clear_flags(b, clear);
        }
        if edit::flag(b) & flags::UNMAP != 0 {
            edit::clear_flags(a, clear);
        }
    }
}

/// A first primary that found no other primary: no mate.
pub fn unpaired(pre: &mut Vec<u8>) {
    edit::set_i32(pre, layout::NEXT_REF_ID, -1);
    set_wide(pre, layout::WIDE_NEXT_POS, -1);
    set_wide(pre, layout::WIDE_TLEN, 0);
    edit::clear_flags(pre, flags::MREVERSE | flags::PROPER_PAIR);
}

/// Fixes a secondary or supplementary record once its template's primaries are final: `rnum`
/// holds the last primary of READ1 and of READ2 (samtools' `rnum`).
pub fn fix_secondary(b: &mut Vec<u8>, rnum: [Option<&[u8]>; 2], opts: &FixmateOptions) {
    let f = edit::flag(b);
    let is_r2 = (f & flags::READ2 != 0) as usize;
    // samtools 1.24: a paired supplementary record, secondary too or not, takes its mate fields,
    // MQ and MC from the other read's primary (TLEN, PROPER_PAIR and the other tags are left
    // alone).
    if f & flags::SUPPLEMENTARY != 0
        && f & flags::PAIRED != 0
        && let Some(mate) = rnum[1 - is_r2]
    {
        sync_mate_fields(mate, b);
        sync_mq_mc(mate, b, false);
    }
    if opts.base_mods {
        match rnum[is_r2] {
            Some(primary) => basemod::fix_with_primary(primary, b),
            None => basemod::fix_orphan(b),
        }
    }
}

/// Fixes one template in place; [`is_kept`] tells which records are then written.
pub fn fix_template(group: &mut [Vec<u8>], opts: &FixmateOptions) {
    let mut pre: Option<(usize, i64)> = None;
    let mut paired = false;
    let mut rnum: [Option<usize>; 2] = [None, None];
    for n in 0..group.len() {
        if !is_primary(&group[n]) {
            continue;
        }
        if opts.base_mods {
            basemod::fix_primary(&mut group[n]);
        }
        rnum[read_slot(&group[n])] = Some(n);
        match pre {
            None => pre = Some((n, primary_end(&group[n]))),
            Some((p, pre_end)) => {
                let (a, b) = pair_mut(group, p, n);
                pair_primaries(a, pre_end, b, opts);
                paired = true;
            }
        }
    }
    if let (false, Some((p, _))) = (paired, pre) {
        unpaired(&mut group[p]);
    }
    for n in 0..group.len() {
        if is_primary(&group[n]) {
            continue;
        }
        // Taken out while its primaries are borrowed (it is none of them).
        let mut b = std::mem::take(&mut group[n]);
        let primaries = rnum.map(|i| i.map(|i| &group[i][..]));
        fix_secondary(&mut b, primaries, opts);
        group[n] = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record: tid, pos, flag, CIGAR ops, qualities.
    fn mk(name: &[u8], tid: i32, pos: i32, flag: u16, cig: &[u32], qual: &[u8]) -> Vec<u8> {
        let r = crate::record::build::RecordBuilder::new(name).tid(tid).pos(pos).mapq(30);
        r.flag(flag).cigar(cig).seq_fill(0x11, qual.len()).qual(qual).build()
    }

    #[test]
    fn pairs_fr_reads() {
        let mut g = vec![
            mk(b"a", 0, 100, 0x43, &[10 << 4], &[20; 10]),
            mk(b"a", 0, 200, 0x93, &[10 << 4], &[10; 10]),
        ];
        let opts = FixmateOptions { mate_score: true, template_cigar: true, ..Default::default() };
        fix_template(&mut g, &opts);
        assert!(g.iter().all(|b| is_kept(b, &opts)));
        let (a, b) = (RecordRef::new(&g[0]), RecordRef::new(&g[1]));
        assert_eq!((a.flag(), a.next_pos(), a.tlen()), (0x63, 200, 110));
        assert_eq!((b.flag(), b.next_pos(), b.tlen()), (0x93, 100, -110));
        assert_eq!(a.aux_get(*b"ms").and_then(|f| f.int()), Some(0));
        assert_eq!(b.aux_get(*b"ms").and_then(|f| f.int()), Some(200));
        assert_eq!(a.aux_get(*b"MC").map(|f| f.value), Some(&b"10M"[..]));
        assert_eq!(a.aux_get(*b"ct").map(|f| f.value), Some(&b"1F10M90T2R10M"[..]));
    }

    #[test]
    fn singleton_and_remove() {
        let mut g =
            vec![mk(b"s", 0, 5, 0x23, &[5 << 4], &[30; 5]), mk(b"s", 0, 9, 0x104, &[], &[30; 5])];
        let opts = FixmateOptions { remove: true, ..Default::default() };
        fix_template(&mut g, &opts);
        assert_eq!(g.iter().map(|b| is_kept(b, &opts)).collect::<Vec<_>>(), vec![true, false]);
        let a = RecordRef::new(&g[0]);
        assert_eq!((a.flag(), a.next_ref_id(), a.next_pos()), (0x1, -1, -1));
    }
}
