//! `ampliconclip` on records (samtools 1.24 `bam_ampliconclip.c`): find the primer a read
//! starts (or ends) in, clip it off, tag, mark, unmap or filter the read, and count.
//!
//! Each record is clipped on its own, so chunks of records can be clipped in parallel; the
//! counts of each chunk ([`ClipCounts`], per-primer hits) are summed in input order.

pub mod trim;

use crate::record::layout::{self, flags};
use crate::record::{RecordRef, edit};
use trim::{active_query_len, trim_left, trim_right};

/// One primer of a reference: `[left, right)` and its strand (`--strand`).
#[derive(Clone, Debug)]
pub struct Primer {
    pub left: i64,
    pub right: i64,
    pub rev: bool,
}

/// The primers of one reference, sorted by `right`, with the longest primer's length.
#[derive(Clone, Debug, Default)]
pub struct PrimerSites {
    pub primers: Vec<Primer>,
    pub longest: i64,
}

#[derive(Clone, Debug)]
pub struct ClipOptions {
    pub hard: bool,
    /// `--both-ends`.
    pub both: bool,
    /// `--strand`.
    pub use_strand: bool,
    /// `--clipped`: filter out reads left unclipped.
    pub only_clipped: bool,
    /// `--fail`: mark unclipped reads QCFAIL.
    pub mark_fail: bool,
    /// `--fail-len`, `--filter-len`, `--unmap-len` (negative: off).
    pub fail_len: i64,
    pub filter_len: i64,
    pub unmap_len: i64,
    /// `--no-excluded`: filter out unmapped, QCFAIL and off-BED reads.
    pub no_excluded: bool,
    /// `--original`: an `OA` tag on clipped reads.
    pub original: bool,
    /// Without `--keep-tag`, clipped reads lose `NM` and `MD`.
    pub delete_tags: bool,
    pub tolerance: i64,
}

/// samtools' defaults: soft clips, lengths off, `NM`/`MD` dropped, 5 bases of tolerance.
impl Default for ClipOptions {
    fn default() -> ClipOptions {
        ClipOptions {
            hard: false,
            both: false,
            use_strand: false,
            only_clipped: false,
            mark_fail: false,
            fail_len: -1,
            filter_len: -1,
            unmap_len: 0,
            no_excluded: false,
            original: false,
            delete_tags: true,
            tolerance: 5,
        }
    }
}

/// samtools' summary counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClipCounts {
    pub total: i64,
    pub forward: i64,
    pub reverse: i64,
    pub both: i64,
    pub not_clipped: i64,
    pub excluded: i64,
    pub filtered: i64,
    pub failed: i64,
    pub written: i64,
}

impl ClipCounts {
    pub fn add(&mut self, o: &ClipCounts) {
        self.total += o.total;
        self.forward += o.forward;
        self.reverse += o.reverse;
        self.both += o.both;
        self.not_clipped += o.not_clipped;
        self.excluded += o.excluded;
        self.filtered += o.filtered;
        self.failed += o.failed;
        self.written += o.written;
    }
}

/// The clip size at `pos` and the primer that gave it (`matching_clip_site`): the primer the
/// position lies in (within the tolerance) that leaves the most to clip.
pub fn matching_clip_site(
    sites: &PrimerSites,
    pos: i64,
    is_rev: bool,
    opts: &ClipOptions,
) -> (i64, Option<usize>) {
    let tol = opts.tolerance;
    let p = &sites.primers;
    let pos_tol = if is_rev { if pos > tol { pos - tol } else { 0 } } else { pos };
    let (mut l, mut r) = (0usize, p.len());
    let mut mid = p.len() / 2;
    while r - l > 1 {
        if p[mid].right <= pos_tol {
            l = mid;
        } else {
            r = mid;
        }
        mid = (l + r) / 2;
    }
    let (mut size, mut used) = (0i64, None);
    for (i, primer) in p.iter().enumerate().skip(l) {
        if opts.use_strand && is_rev != primer.rev {
            continue;
        }
        let (mod_left, mod_right) = if is_rev {
            (primer.left, primer.right + tol)
        } else {
            ((primer.left - tol).max(0), primer.right)
        };
        if pos + sites.longest + tol < mod_right {
            break;
        }
        if pos >= mod_left && pos <= mod_right {
            let s = if is_rev { pos - primer.left } else { primer.right - pos };
            // samtools keeps the size in an int.
            let s = s as i32 as i64;
            if size < s {
                size = s;
                used = Some(i);
            }
        }
    }
    (size, used)
}

/// The `OA` value of a record before clipping, after any `OA` it has. samtools writes the read
/// name where the SAM spec has RNAME; kept.
pub fn original_alignment(r: &RecordRef<'_>) -> Vec<u8> {
    let mut s = Vec::new();
    if let Some(f) = r.aux_get(*b"OA")
        && f.ty == b'Z'
    {
        s.extend_from_slice(f.value);
    }
    let strand = if r.flag() & flags::REVERSE != 0 { '-' } else { '+' };
    s.extend_from_slice(r.read_name());
    s.extend_from_slice(format!(",{},{strand},", r.pos() + 1).as_bytes());
    for c in r.cigar() {
        s.extend_from_slice(format!("{}", crate::record::cigar::len(c)).as_bytes());
        s.push(crate::record::cigar::op_char(crate::record::cigar::op(c)));
    }
    match r.aux_get(*b"NM").and_then(|f| f.int()) {
        Some(nm) => s.extend_from_slice(format!(",{},{nm};", r.mapq()).as_bytes()),
        None => s.extend_from_slice(format!("{},;", r.mapq()).as_bytes()),
    }
    s
}

/// The record unmapped as `bam_set1` rebuilds it: flag | UNMAP, MAPQ 0, no CIGAR, the bin of
/// one base at its position; bases re-encoded (a spare low nibble cleared).
fn unmapped(r: &RecordRef<'_>) -> Vec<u8> {
    let l_seq = r.l_seq();
    let mut seq = vec![0u8; l_seq.div_ceil(2)];
    for i in 0..l_seq {
        seq[i / 2] |= r.base_code(i) << if i % 2 == 0 { 4 } else { 0 };
    }
    let mut b = trim::assemble(r, r.pos(), &[], (&seq, l_seq), r.qual());
    edit::add_flags(&mut b, flags::UNMAP);
    b[layout::MAPQ] = 0;
    let bin = layout::reg2bin(r.pos(), r.pos() + 1);
    b[layout::BIN..layout::BIN + 2].copy_from_slice(&bin.to_le_bytes());
    b
}

/// What became of one record.
pub struct Clipped {
    pub record: Vec<u8>,
    /// Filtered out (to the rejects file, if any).
    pub filtered: bool,
}

/// Clips one record. `sites` are its reference's primers (`None`: the BED has none for it);
/// `hits` counts the reads each primer clipped.
pub fn clip_record(
    rec: &[u8],
    sites: Option<&PrimerSites>,
    opts: &ClipOptions,
    counts: &mut ClipCounts,
    hits: &mut [i64],
) -> Clipped {
    counts.total += 1;
    let r = RecordRef::new(rec);
    let sites = match sites {
        Some(s) if r.flag() & (flags::UNMAP | flags::QCFAIL) == 0 => s,
        _ => {
            counts.excluded += 1;
            return Clipped { record: rec.to_vec(), filtered: opts.no_excluded };
        }
    };
    let oa = opts.original.then(|| original_alignment(&r));
    let mut b = rec.to_vec();
    let mut clipped = false;
    let mut count_hit = |used: Option<usize>| {
        if let Some(i) = used {
            hits[i] += 1;
        }
    };
    if !opts.both {
        let is_rev = r.flag() & flags::REVERSE != 0;
        let pos = if is_rev { r.end_pos() } else { r.pos() };
        let (size, used) = matching_clip_site(sites, pos, is_rev, opts);
        count_hit(used);
        if size > 0 {
            if is_rev {
                b = trim_right(&r, size as u32, opts.hard);
                counts.reverse += 1;
            } else {
                b = trim_left(&r, size as u32, opts.hard);
                counts.forward += 1;
            }
            clipped = true;
        }
    } else {
        let (size, used) = matching_clip_site(sites, r.pos(), false, opts);
        count_hit(used);
        let left = size > 0;
        if left {
            b = trim_left(&r, size as u32, opts.hard);
            counts.forward += 1;
        }
        let end = RecordRef::new(&b).end_pos();
        let (size, used) = matching_clip_site(sites, end, true, opts);
        count_hit(used);
        let right = size > 0;
        if right {
            b = trim_right(&RecordRef::new(&b), size as u32, opts.hard);
            counts.reverse += 1;
        }
        clipped = left || right;
        if left && right {
            counts.both += 1;
        }
    }
    if clipped {
        if let Some(oa) = &oa {
            // An OA of another type stays: htslib refuses the update and samtools fails; rare.
            let _ = edit::update_str(&mut b, *b"OA", oa);
        }
        if opts.delete_tags {
            edit::delete_tag(&mut b, *b"NM");
            edit::delete_tag(&mut b, *b"MD");
        }
    } else {
        if opts.mark_fail {
            edit::add_flags(&mut b, flags::QCFAIL);
        }
        counts.not_clipped += 1;
    }
    let mut filtered = false;
    if opts.fail_len >= 0 || opts.filter_len >= 0 || opts.unmap_len >= 0 {
        let aql = active_query_len(&RecordRef::new(&b));
        if opts.fail_len >= 0 && aql <= opts.fail_len {
            edit::add_flags(&mut b, flags::QCFAIL);
        }
        if opts.filter_len >= 0 && aql <= opts.filter_len {
            filtered = true;
        }
        if opts.unmap_len >= 0 && aql <= opts.unmap_len {
            b = unmapped(&RecordRef::new(&b));
        }
    }
    if edit::flag(&b) & flags::QCFAIL != 0 {
        counts.failed += 1;
    }
    if opts.only_clipped && !clipped {
        filtered = true;
    }
    Clipped { record: b, filtered }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ClipOptions {
        ClipOptions::default()
    }

    #[test]
    fn a_read_starting_in_a_primer_clips_to_its_end() {
        let sites = PrimerSites {
            primers: vec![
                Primer { left: 100, right: 120, rev: false },
                Primer { left: 300, right: 325, rev: true },
            ],
            longest: 25,
        };
        assert_eq!(matching_clip_site(&sites, 103, false, &opts()), (17, Some(0)));
        assert_eq!(matching_clip_site(&sites, 97, false, &opts()), (23, Some(0)));
        assert_eq!(matching_clip_site(&sites, 320, true, &opts()), (20, Some(1)));
        assert_eq!(matching_clip_site(&sites, 200, false, &opts()), (0, None));
    }
}
