//! `samtools reference` (samtools 1.24 `reference.c`): a reference rebuilt from aligned reads —
//! each read's bases where its MD:Z says they match, MD's letters where they differ or were
//! deleted — and the FASTA text of it. No I/O here: [`crate::pipeline::reference`] reads the
//! records (or the CRAM's embedded reference blocks) and writes what this makes.

use crate::record::RecordRef;
use crate::record::layout::SEQ_CODES;

/// What stops a rebuild: samtools' `build_ref` returning −1.
#[derive(Debug, PartialEq, Eq)]
pub enum BuildError {
    /// MD asks for a kind of CIGAR operation the CIGAR does not have there (samtools prints
    /// `samtools MD2ref: MD:Z and CIGAR are incompatible`).
    Incompatible,
    /// The CIGAR ran out before MD did (samtools says nothing).
    CigarExhausted,
}

pub const INCOMPATIBLE_MESSAGE: &str = "samtools MD2ref: MD:Z and CIGAR are incompatible";

/// CIGAR operations `next_cigar_op` passes over (I, N, S, H, P and the undefined 9–15): they
/// advance the read position by their length when they consume the query (I, S) and the
/// reference position never — samtools' N therefore shifts the rest of the read.
const SKIPPED: [bool; 16] = [
    false, true, false, true, true, true, true, false, false, true, true, true, true, true, true,
    true,
];

/// htslib's `bam_cigar_type(op) & 1`: the operation consumes query bases.
fn consumes_query(op: u32) -> bool {
    matches!(op, 0 | 1 | 4 | 7 | 8)
}

const MATCH: u32 = 0;
const DELETION: u32 = 2;
const EQUAL: u32 = 7;
const DIFF: u32 = 8;

/// samtools' `next_cigar_op`: steps one base of the CIGAR, passing over the skipped operations.
struct CigarWalk<'a> {
    ops: &'a [u32],
    next: usize,
    op: u32,
    left: u32,
}

impl CigarWalk<'_> {
    fn step(&mut self, query_pos: &mut i64) -> Option<u32> {
        loop {
            while self.left == 0 {
                let &word = self.ops.get(self.next)?;
                self.op = word & 0xf;
                self.left = word >> 4;
                self.next += 1;
            }
            if SKIPPED[self.op as usize] {
                if consumes_query(self.op) {
                    *query_pos += i64::from(self.left);
                }
                self.left = 0;
                continue;
            }
            self.left -= 1;
            return Some(self.op);
        }
    }
}

/// Writes what `record`'s MD:Z and bases say of the reference into `reference` (positions
/// outside it are dropped); `Ok(false)` when it has no MD:Z (samtools' `build_ref`).
pub fn build_ref(record: &RecordRef<'_>, reference: &mut [u8]) -> Result<bool, BuildError> {
    let Some(md) = record.aux_get(*b"MD").filter(|f| f.ty == b'Z') else { return Ok(false) };
    let md = md.value;
    let ops: Vec<u32> = record.cigar().collect();
    let mut walk = CigarWalk { ops: &ops, next: 0, op: 0, left: 0 };
    let l_seq = record.l_seq() as i64;
    let (mut iseq, mut iref, mut at) = (0i64, record.pos(), 0usize);
    let mut put = |iref: i64, base: u8| {
        if let Some(slot) = usize::try_from(iref).ok().and_then(|i| reference.get_mut(i)) {
            *slot = base;
        }
    };
    while iseq < l_seq && at < md.len() {
        let c = md[at];
        if c.is_ascii_digit() {
            // strtol: the digits, saturating as C's long does.
            let digits = md[at..].iter().take_while(|b| b.is_ascii_digit()).count();
            let mut len = md[at..at + digits]
                .iter()
                .fold(0i64, |n, &d| n.saturating_mul(10).saturating_add(i64::from(d - b'0')));
            at += digits;
            while iseq < l_seq && len > 0 {
                let op = walk.step(&mut iseq).ok_or(BuildError::CigarExhausted)?;
                if op != MATCH && op != EQUAL {
                    return Err(BuildError::Incompatible);
                }
                put(iref, SEQ_CODES[record.base_code(iseq as usize) as usize]);
                iseq += 1;
                iref += 1;
                len -= 1;
            }
        } else if c == b'^' {
            at += 1;
            while at < md.len() && md[at].is_ascii_alphabetic() {
                if walk.step(&mut iseq).ok_or(BuildError::CigarExhausted)? != DELETION {
                    return Err(BuildError::Incompatible);
                }
                put(iref, md[at]);
                at += 1;
                iref += 1;
            }
        } else {
            let op = walk.step(&mut iseq).ok_or(BuildError::CigarExhausted)?;
            if op != MATCH && op != DIFF {
                return Err(BuildError::Incompatible);
            }
            put(iref, c);
            at += 1;
            iref += 1;
            iseq += 1;
        }
    }
    Ok(true)
}

/// The part of a reference to print: samtools' `dump_ref` with the region's `[beg, end)` (end
/// already cut to the reference length).
pub struct Dump<'a> {
    pub name: &'a [u8],
    pub ref_id: i32,
    pub bases: &'a [u8],
    /// `Some((beg, end))` when a region narrows the reference.
    pub region: Option<(i64, i64)>,
}

impl Dump<'_> {
    /// The FASTA text (60 bases a line) and the coverage line samtools prints on stderr
    /// unless `-q`.
    pub fn render(&self) -> (Vec<u8>, String) {
        let len = self.bases.len() as i64;
        let mut out = Vec::with_capacity(self.bases.len() + self.bases.len() / 60 + 64);
        out.push(b'>');
        out.extend_from_slice(self.name);
        let mut shown = self.bases;
        if let Some((beg, end)) = self.region
            && (beg > 0 || end < len)
        {
            out.extend_from_slice(format!(":{}-{}", beg + 1, end).as_bytes());
            let from = beg.clamp(0, len) as usize;
            let to = end.min(len).max(beg).clamp(0, len) as usize;
            shown = &self.bases[from..to.max(from)];
        }
        out.push(b'\n');
        for line in shown.chunks(60) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        let n = shown.iter().filter(|&&b| b == b'N').count();
        let coverage = 100.0 - n as f64 * 100.0 / shown.len() as f64;
        let coverage =
            if coverage.is_nan() { "-nan".to_string() } else { format!("{coverage:.2}") };
        let note = format!("Dump ref {} len {}, coverage {coverage}%", self.ref_id, shown.len());
        (out, note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_wraps_at_sixty_and_names_a_narrowed_region() {
        let bases = vec![b'A'; 130];
        let whole = Dump { name: b"c", ref_id: 0, bases: &bases, region: None };
        let (text, note) = whole.render();
        assert_eq!(
            text.split(|&b| b == b'\n').map(<[u8]>::len).collect::<Vec<_>>(),
            [2, 60, 60, 10, 0]
        );
        assert_eq!(note, "Dump ref 0 len 130, coverage 100.00%");
        let part = Dump { name: b"c", ref_id: 0, bases: &bases, region: Some((9, 20)) };
        assert!(part.render().0.starts_with(b">c:10-20\nAAAAAAAAAAA\n"));
    }
}
