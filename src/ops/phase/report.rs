//! One phase set as samtools' `phase()` prints it: the `PS` line, the `FL` filtered regions, a
//! marker line per site (`M0` singletons, `M1` phased, `M2` filtered), the `EV` supporting
//! fragments and `//`; and which output file each read goes to (`dump_aln`).

use super::algorithm::{clean_seqs, count_all, dynaprog, fragphase, genmask};
use super::{Frag, Frags};
use crate::ops::drand48::Drand48;
use crate::ops::ksort::introsort;

/// The settings one phase set uses.
pub struct PhaseSettings {
    /// `-k`: the window length.
    pub k: usize,
    /// Not `-F`: chimeric fragments flipped.
    pub fix_chimera: bool,
}

/// The counts table could not be allocated (samtools: `Couldn't allocate memory for counts`).
#[derive(Debug)]
pub struct OutOfMemory;

const ALLELES: &[u8; 5] = b"ACGTX";

fn site_pos(c: u64) -> i32 {
    (c >> 32) as i32
}

/// `phase(g, chr, vpos, cns, hash)`: appends the set of the `vpos` sites in `cns` to `out` and
/// advances `vpos_shift`. `Some(min_pos)`: reads ending at or before it may now be written
/// (`dump_aln`); `None` without sites.
pub fn phase_set(
    out: &mut Vec<u8>,
    chr: &[u8],
    vpos: usize,
    cns: &[u64],
    frags: &mut Frags,
    settings: &PhaseSettings,
    vpos_shift: &mut i32,
) -> Result<Option<i64>, OutOfMemory> {
    if vpos == 0 {
        return Ok(None);
    }
    let n_seqs = frags.len();
    let later = clean_seqs(vpos, frags);
    let min_pos = if later { i64::from(site_pos(cns[vpos])) } else { 0x7fff_ffff };
    let chr_text = String::from_utf8_lossy(chr);
    let start = site_pos(cns[0]) + 1;
    if vpos == 1 {
        out.extend_from_slice(format!("PS\t{chr_text}\t{start}\t{start}\n").as_bytes());
        out.extend_from_slice(
            format!(
                "M0\t{chr_text}\t{start}\t{start}\t{}\t{}\t{}\t0\t0\t0\t0\n//\n",
                ALLELES[(cns[0] & 3) as usize] as char,
                ALLELES[(cns[0] >> 16 & 3) as usize] as char,
                *vpos_shift + 1
            )
            .as_bytes(),
        );
        for k in 0..frags.end() {
            if !frags.exists(k) || frags.val(k).vpos != 0 {
                continue;
            }
            let f = frags.val_mut(k);
            f.flip = false;
            if f.seq[0] == 0 {
                f.phased = false;
            } else {
                f.phased = true;
                f.phase = f.seq[0] - 1;
            }
        }
        *vpos_shift += 1;
        return Ok(Some(min_pos));
    }
    let end = site_pos(cns[vpos - 1]) + 1;
    out.extend_from_slice(format!("PS\t{chr_text}\t{start}\t{end}\n").as_bytes());
    let cnt = count_all(settings.k, vpos, frags).ok_or(OutOfMemory)?;
    let path = dynaprog(settings.k, &cnt);
    drop(cnt);
    // Masking uses the phases without chimera fixes.
    let mut pcnt = fragphase(vpos, &path, frags, false);
    let mask = genmask(&pcnt);
    let mut sitemask = vec![0u8; vpos];
    for &m in &mask {
        let (first, last) = ((m >> 32) as usize, m as u32 as i32);
        let (from, to) = (site_pos(cns[first]), site_pos(cns[last as u32 as usize]));
        out.extend_from_slice(format!("FL\t{chr_text}\t{}\t{}\n", from + 1, to + 1).as_bytes());
        for j in first as i64..=i64::from(last) {
            sitemask[j as usize] = 1;
        }
    }
    if settings.fix_chimera {
        pcnt = fragphase(vpos, &path, frags, true);
    }
    for i in 0..vpos {
        let x = pcnt[i];
        let allele = |field: u64| if (field & 0xffff) >> 2 == 0 { 4 } else { (field & 3) as usize };
        let c = [allele(cns[i]), allele(cns[i] >> 16)];
        let p = usize::from(path[i]);
        out.extend_from_slice(
            format!(
                "M{}\t{chr_text}\t{start}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                sitemask[i] + 1,
                site_pos(cns[i]) + 1,
                ALLELES[c[p]] as char,
                ALLELES[c[1 - p]] as char,
                i as i32 + *vpos_shift + 1,
                x & 0xffff,
                x >> 16 & 0xffff,
                x >> 32 & 0xffff,
                x >> 48 & 0xffff
            )
            .as_bytes(),
        );
    }
    let mut seqs: Vec<usize> = (0..frags.end())
        .filter(|&k| frags.exists(k) && (frags.val(k).vpos as usize) < vpos && !frags.val(k).single)
        .collect();
    debug_assert!(seqs.len() <= n_seqs);
    introsort(&mut seqs, |&a, &b| frags.val(a).vpos < frags.val(b).vpos);
    for &k in &seqs {
        let f = frags.val(k);
        out.extend_from_slice(
            format!("EV\t0\t{chr_text}\t{}\t40\t{}M\t*\t0\t0\t", f.vpos + 1 + *vpos_shift, f.vlen)
                .as_bytes(),
        );
        for j in 0..usize::from(f.vlen) {
            let c = cns[f.vpos as usize + j] as u32;
            out.push(match f.seq[j] {
                0 => b'N',
                1 => b"ACGT"[(c & 3) as usize],
                _ => b"ACGT"[(c >> 16 & 3) as usize],
            });
        }
        out.extend_from_slice(
            format!(
                "\t*\tYP:i:{}\tYF:i:{}\tYI:i:{}\tYO:i:{}\tYS:i:{}\n",
                f.phase,
                u8::from(f.flip),
                f.agree,
                f.disagree,
                f.beg + 1
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(b"//\n");
    *vpos_shift += vpos as i32;
    Ok(Some(min_pos))
}

/// `dump_aln`'s choice for one read: output 0 or 1 (its phase), 2 (chimeric, or ambiguous with
/// `-A`), and whether it gets `ZP:A:Y`. `is_flip` is the set's coin; unphased reads toss their
/// own.
pub fn output_of(
    frag: Option<&Frag>,
    drop_ambi: bool,
    is_flip: bool,
    rng: &mut Drand48,
) -> (usize, bool) {
    let (mut which, mut tagged) = (3, false);
    if let Some(f) = frag {
        if f.ambig {
            which = if drop_ambi { 2 } else { 3 };
        } else if f.phased && f.flip {
            which = 2;
        } else if !f.phased {
            which = 3;
        } else {
            which = usize::from(f.phase);
            tagged = true;
        }
        if which < 2 && is_flip {
            which = 1 - which;
        }
    }
    if which == 3 {
        which = usize::from(rng.next_f64() < 0.5);
    }
    (which, tagged)
}
