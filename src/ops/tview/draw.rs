//! Drawing the alignment (`tv_pl_func` and the end of `base_draw_aln`): row 0 the position
//! every 10 bases (20 past 1e9), row 1 the reference, row 2 the consensus, then a row per read;
//! each insertion adds columns, `*` where a read has none.

use super::consensus::{Observation, call};
use super::levels::{Levels, Span};
use super::screen::{Screen, UNDERLINE, colour};
use crate::ops::drand48::Drand48;
use crate::ops::errmod::ErrorModel;
use crate::ops::mpileup::pileup::Entry;
use crate::record::RecordRef;
use crate::record::cigar;
use crate::record::layout::flags;

/// `TV_MIN_ALNROW`: the consensus row; reads start below it.
const MIN_ALN_ROW: i64 = 2;
/// The text and HTML screens' `mrow`.
const MAX_ROWS: i64 = 99999;
/// Beyond it the position labels are every 20 bases so that they do not run together.
const TEN_DIGITS: i64 = 1_000_000_000;
const NT16: &[u8; 16] = b"=ACMGRSVTWYHKDBN";

/// One read at a column (htslib's `bam_pileup1_t`): its record and where the pileup has it.
pub struct Piled<'a> {
    pub rec: RecordRef<'a>,
    pub at: Entry,
}

/// `bam_plp_insertion`: the bases inserted after this position (`*` for pads).
fn insertion(p: &Piled<'_>) -> Vec<u8> {
    if p.at.indel <= 0 {
        return Vec::new();
    }
    let ops: Vec<u32> = p.rec.cigar().collect();
    let (mut out, mut j) = (Vec::new(), 1);
    for &op in ops.iter().skip(p.at.cigar_ind + 1) {
        let len = cigar::len(op) as usize;
        match cigar::op(op) {
            cigar::PAD => out.extend(std::iter::repeat_n(b'*', len)),
            cigar::INS => {
                for _ in 0..len {
                    let at = p.at.qpos + j - i64::from(p.at.is_del);
                    out.push(if at < p.rec.l_seq() as i64 {
                        NT16[p.rec.base_code(at as usize) as usize]
                    } else {
                        b'N'
                    });
                    j += 1;
                }
            }
            _ => break,
        }
    }
    out
}

pub struct Drawer {
    pub screen: Screen,
    width: i64,
    left_pos: i64,
    last_pos: i64,
    ccol: i64,
    /// The reference from `left_pos`, when a FASTA was given.
    reference: Option<Vec<u8>>,
    show_inserts: bool,
    levels: Levels,
    /// `bcf_call_init(0.83, 13)`'s model: errors on a strand dependent by 1 - 0.83.
    errmod: ErrorModel,
    /// The process's unseeded `drand48` (columns deeper than 255 are shuffled).
    rng: Drand48,
}

impl Drawer {
    pub fn new(width: i64, left_pos: i64, reference: Option<Vec<u8>>, show_inserts: bool) -> Self {
        Drawer {
            screen: Screen::new(width.max(0) as usize),
            width,
            left_pos,
            last_pos: left_pos - 1,
            ccol: 0,
            reference,
            show_inserts,
            levels: Levels::default(),
            errmod: ErrorModel::new(1.0 - 0.83),
            rng: Drand48::default(),
        }
    }

    fn put(&mut self, y: i64, ch: u8, attr: u32) {
        if y >= 0 && self.ccol >= 0 {
            self.screen.put(y as usize, self.ccol as usize, ch, attr);
        }
    }

    fn label(&mut self, pos: i64) {
        let interval = if pos < TEN_DIGITS { 10 } else { 20 };
        if pos % interval == 0 && self.width - self.ccol >= 10 {
            self.screen.put_number(0, self.ccol as usize, pos + 1);
        }
    }

    /// The reference letter at `pos`, `N` without one.
    fn ref_at(&self, pos: i64) -> u8 {
        let i = pos - self.left_pos;
        match &self.reference {
            Some(r) if i >= 0 && (i as usize) < r.len() => r[i as usize],
            _ => b'N',
        }
    }

    /// `tv_pl_func` for the column at `pos`.
    pub fn column(&mut self, pos: i64, plp: &[Piled<'_>]) {
        let spans: Vec<Span> =
            plp.iter().map(|p| Span { is_head: p.at.is_head, is_tail: p.at.is_tail }).collect();
        let rows = self.levels.column(&spans);
        if pos < self.left_pos || self.ccol > self.width {
            return;
        }
        let rb = self.ref_at(pos);
        for cp in self.last_pos + 1..pos {
            self.label(cp);
            let c = self.ref_at(cp);
            self.put(1, c, 0);
            self.ccol += 1;
        }
        self.label(pos);
        let observed: Vec<Observation<'_>> = plp
            .iter()
            .map(|p| Observation { rec: p.rec, qpos: p.at.qpos as usize, is_del: p.at.is_del })
            .collect();
        let consensus = call(&self.errmod, &mut self.rng, &observed, rb);
        let class = (consensus.quality / 10 + 1).min(4) as u32;
        self.put(2, consensus.letter, UNDERLINE | colour(class));
        let inserts: Vec<Vec<u8>> =
            plp.iter().map(|p| if self.show_inserts { insertion(p) } else { Vec::new() }).collect();
        let max_ins = inserts.iter().map(Vec::len).max().unwrap_or(0);
        for j in 0..=max_ins {
            for ((p, &level), ins) in plp.iter().zip(&rows).zip(&inserts) {
                let row = MIN_ALN_ROW + i64::from(level);
                if row <= MIN_ALN_ROW || row >= MAX_ROWS {
                    continue;
                }
                let reverse = p.rec.flag() & flags::REVERSE != 0;
                let ch = if j == 0 {
                    base_letter(p, rb, reverse)
                } else if j > ins.len() {
                    b'*'
                } else {
                    ins[j - 1]
                };
                let flag = p.rec.flag();
                let mut attr = 0;
                if (flag & flags::PAIRED != 0 && flag & flags::PROPER_PAIR == 0)
                    || flag & flags::SECONDARY != 0
                {
                    attr |= UNDERLINE;
                }
                attr |= colour((u32::from(p.rec.mapq()) / 10 + 1).min(4));
                let ch = if reverse { ch.to_ascii_lowercase() } else { ch.to_ascii_uppercase() };
                self.put(row, ch, attr);
            }
            if j == 0 {
                self.put(1, rb, 0);
            } else {
                self.put(1, b'*', colour(8));
            }
            self.ccol += 1;
        }
        self.last_pos = pos;
    }

    /// The end of `base_draw_aln`: the reference (and labels) to the right edge.
    pub fn finish(&mut self) {
        while self.ccol < self.width {
            let pos = self.last_pos + 1;
            self.label(pos);
            let c = self.ref_at(pos);
            self.put(1, c, 0);
            self.ccol += 1;
            self.last_pos += 1;
        }
    }
}

/// A read's letter at its position: the base (`.`/`,` where it is the reference's), `*` in a
/// deletion, `>`/`<` in a reference skip.
fn base_letter(p: &Piled<'_>, rb: u8, reverse: bool) -> u8 {
    let dot = if reverse { b',' } else { b'.' };
    if p.at.is_del {
        return if p.at.is_refskip { if reverse { b'<' } else { b'>' } } else { b'*' };
    }
    let c = if p.at.qpos < p.rec.l_seq() as i64 {
        NT16[p.rec.base_code(p.at.qpos as usize) as usize]
    } else {
        b'N'
    };
    if c.eq_ignore_ascii_case(&rb) { dot } else { c }
}
