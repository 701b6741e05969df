//! CIGAR operations and the comparison of a read with the reference: `MD`, `NM` and the score `AS`.
//!
//! Algorithm (as `samtools calmd`, `bam_md.c`): walk the CIGAR; on `M`/`=`/`X` a read base matches when
//! it equals the reference base and is not `N`; each mismatch ends the current match run in `MD` with
//! the reference base; `D` writes `^` and the deleted reference bases; `I` and `D` add their length
//! to `NM`; `S`, `H` and `P` only move along the read or nothing. `MD` always starts and ends with a
//! (possibly zero) number.
//!
//! The score imitates bwa-mem: +1 per match, −4 per mismatch, −(6 + length) per insertion or deletion,
//! floored at 0.

/// One CIGAR operation, e.g. `Op { len: 10, code: b'M' }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub len: u32,
    /// The SAM letter: `M`, `I`, `D`, `S` or `H`.
    pub code: u8,
}

impl Op {
    pub const fn new(len: u32, code: u8) -> Op {
        Op { len, code }
    }
}

/// Appends `op` to `cigar`, merging it into the previous operation when both have the same code and
/// skipping empty operations.
pub fn push_op(cigar: &mut Vec<Op>, op: Op) {
    if op.len == 0 {
        return;
    }
    match cigar.last_mut() {
        Some(last) if last.code == op.code => last.len += op.len,
        _ => cigar.push(op),
    }
}

/// The number of reference bases `cigar` covers (`M`, `D`, `N`, `=`, `X`).
pub fn reference_span(cigar: &[Op]) -> u32 {
    cigar.iter().filter(|op| b"MDN=X".contains(&op.code)).map(|op| op.len).sum()
}

/// The number of read bases `cigar` consumes (`M`, `I`, `S`, `=`, `X`): the length `SEQ` must have.
pub fn query_len(cigar: &[Op]) -> u32 {
    cigar.iter().filter(|op| b"MIS=X".contains(&op.code)).map(|op| op.len).sum()
}

/// What the comparison of one alignment with the reference found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Edit distance: mismatches plus inserted and deleted bases.
    pub edit_distance: u32,
    /// bwa-mem-like alignment score.
    pub score: i32,
}

const MATCH_SCORE: i32 = 1;
const MISMATCH_PENALTY: i32 = 4;
const GAP_OPEN_PENALTY: i32 = 6;
const GAP_EXTEND_PENALTY: i32 = 1;

/// Compares `seq` aligned at `pos` by `cigar` with `reference`, writing the `MD` value into `md`.
pub fn compare_with_reference(
    cigar: &[Op],
    seq: &[u8],
    reference: &[u8],
    pos: usize,
    md: &mut Vec<u8>,
) -> Comparison {
    md.clear();
    let mut number = itoa::Buffer::new();
    let (mut read_at, mut ref_at) = (0usize, pos);
    let mut run = 0u32;
    let mut edit_distance = 0u32;
    let mut score = 0i32;
    for op in cigar {
        let len = op.len as usize;
        match op.code {
            b'M' | b'=' | b'X' => {
                let (read_bases, ref_bases) =
                    (&seq[read_at..read_at + len], &reference[ref_at..ref_at + len]);
                // Fast path: eight equal bases at a time (the reference has no `N`, so equal bytes
                // are matches); a chunk with a difference goes base by base.
                let mut read_chunks = read_bases.chunks_exact(8);
                let mut ref_chunks = ref_bases.chunks_exact(8);
                for (read_chunk, ref_chunk) in read_chunks.by_ref().zip(ref_chunks.by_ref()) {
                    if read_chunk == ref_chunk {
                        run += 8;
                        score += 8 * MATCH_SCORE;
                        continue;
                    }
                    for (&read_base, &ref_base) in read_chunk.iter().zip(ref_chunk) {
                        compare_base(
                            read_base,
                            ref_base,
                            &mut run,
                            &mut edit_distance,
                            &mut score,
                            md,
                        );
                    }
                }
                for (&read_base, &ref_base) in
                    read_chunks.remainder().iter().zip(ref_chunks.remainder())
                {
                    compare_base(read_base, ref_base, &mut run, &mut edit_distance, &mut score, md);
                }
                read_at += len;
                ref_at += len;
            }
            b'I' => {
                read_at += len;
                edit_distance += op.len;
                score -= GAP_OPEN_PENALTY + GAP_EXTEND_PENALTY * op.len as i32;
            }
            b'D' => {
                md.extend_from_slice(number.format(run).as_bytes());
                md.push(b'^');
                md.extend_from_slice(&reference[ref_at..ref_at + len]);
                run = 0;
                ref_at += len;
                edit_distance += op.len;
                score -= GAP_OPEN_PENALTY + GAP_EXTEND_PENALTY * op.len as i32;
            }
            b'S' => read_at += len,
            b'N' => ref_at += len,
            _ => {}
        }
    }
    md.extend_from_slice(number.format(run).as_bytes());
    Comparison { edit_distance, score: score.max(0) }
}

/// One aligned base: extends the match run, or ends it in `MD` with the reference base.
#[inline]
fn compare_base(
    read_base: u8,
    ref_base: u8,
    run: &mut u32,
    edit_distance: &mut u32,
    score: &mut i32,
    md: &mut Vec<u8>,
) {
    if read_base == ref_base && read_base != b'N' {
        *run += 1;
        *score += MATCH_SCORE;
    } else {
        md.extend_from_slice(itoa::Buffer::new().format(*run).as_bytes());
        md.push(ref_base);
        *run = 0;
        *edit_distance += 1;
        *score -= MISMATCH_PENALTY;
    }
}

/// Writes `cigar` as SAM text (`*` when empty). With `hard_as_soft`, `H` is written as `S`, as bwa
/// does for the CIGARs inside `SA` tags.
pub fn format_cigar(cigar: &[Op], hard_as_soft: bool, out: &mut Vec<u8>) {
    if cigar.is_empty() {
        out.push(b'*');
        return;
    }
    let mut number = itoa::Buffer::new();
    for op in cigar {
        out.extend_from_slice(number.format(op.len).as_bytes());
        out.push(if hard_as_soft && op.code == b'H' { b'S' } else { op.code });
    }
}

/// The reverse complement of `seq` (`N` stays `N`) into `out`.
pub fn reverse_complement_into(seq: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(seq.iter().rev().map(|&b| COMPLEMENT[b as usize]));
}

/// The complement of each upper-case base; other bytes map to themselves.
const COMPLEMENT: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = match i as u8 {
            b'A' => b'T',
            b'C' => b'G',
            b'G' => b'C',
            b'T' => b'A',
            other => other,
        };
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    fn md_of(cigar: &[Op], seq: &[u8], reference: &[u8], pos: usize) -> (String, Comparison) {
        let mut md = Vec::new();
        let comparison = compare_with_reference(cigar, seq, reference, pos, &mut md);
        (String::from_utf8(md).unwrap(), comparison)
    }

    #[test]
    fn perfect_match() {
        let (md, c) = md_of(&[Op::new(4, b'M')], b"ACGT", b"TTACGTTT", 2);
        assert_eq!(md, "4");
        assert_eq!(c, Comparison { edit_distance: 0, score: 4 });
    }

    #[test]
    fn mismatches_deletions_insertions_and_clips() {
        // read:  SS AC-GTT(ins A)A N
        let cigar = [
            Op::new(2, b'S'),
            Op::new(2, b'M'),
            Op::new(1, b'D'),
            Op::new(3, b'M'),
            Op::new(1, b'I'),
            Op::new(2, b'M'),
        ];
        let reference = b"ACGGTACGT";
        // ref at 0: AC G GTA CG ; read aligned: AC ^G GTT A CN
        let seq = b"TTACGTTACN";
        let (md, c) = md_of(&cigar, seq, reference, 0);
        assert_eq!(md, "2^G2A1G0");
        assert_eq!(c.edit_distance, 1 + 1 + 1 + 1);
    }

    #[test]
    fn adjacent_mismatches_have_zero_between() {
        let (md, _) = md_of(&[Op::new(3, b'M')], b"TTA", b"AAA", 0);
        assert_eq!(md, "0A0A1");
    }

    #[test]
    fn push_op_merges_and_skips_empty() {
        let mut cigar = Vec::new();
        push_op(&mut cigar, Op::new(3, b'M'));
        push_op(&mut cigar, Op::new(0, b'I'));
        push_op(&mut cigar, Op::new(2, b'M'));
        push_op(&mut cigar, Op::new(1, b'S'));
        assert_eq!(cigar, vec![Op::new(5, b'M'), Op::new(1, b'S')]);
        assert_eq!(query_len(&cigar), 6);
        assert_eq!(reference_span(&cigar), 5);
        let mut text = Vec::new();
        format_cigar(&[Op::new(5, b'H'), Op::new(3, b'M')], true, &mut text);
        assert_eq!(text, b"5S3M");
    }

    #[test]
    fn reverse_complement() {
        let mut out = Vec::new();
        reverse_complement_into(b"AACGTN", &mut out);
        assert_eq!(out, b"NACGTT");
    }
}
