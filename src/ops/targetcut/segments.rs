//! `process_cns`: one reference's consensus array decoded by Viterbi into target regions, each
//! printed as a SAM-like line (`NAME:BEG-END 0 NAME BEG 60 LENM * 0 0 SEQ QUAL`).

use super::ScoreParams;

/// The emission class of a position: 0 no reads, 1 reads but no confident base, 2 a base.
fn class(cns: u16) -> usize {
    if cns == 0 {
        0
    } else if cns >> 8 == 0 {
        1
    } else {
        2
    }
}

/// Which positions are inside a target (bit 2 of each byte, as samtools keeps it): the Viterbi
/// path of the two-state model, decoded as samtools decodes it (the first position's state is
/// never set, so it is always outside). Bits 0 and 1 are the backtrack, one byte a position.
pub fn target_states(cns: &[u16], params: &ScoreParams) -> Vec<u8> {
    let (e, p) = (&params.e, &params.p);
    // Per position: bit 0 the best predecessor of state 0, bit 1 that of state 1.
    let mut back = vec![0u8; cns.len()];
    let mut prev = [0i32; 2];
    for (i, &c) in cns.iter().enumerate() {
        let c = class(c);
        let mut curr = [0i32; 2];
        for to in 0..2 {
            let from0 = prev[0] + e[to][c] + p[0][to];
            let from1 = prev[1] + e[to][c] + p[1][to];
            if from0 > from1 {
                curr[to] = from0;
            } else {
                curr[to] = from1;
                back[i] |= 1 << to;
            }
        }
        prev = curr;
    }
    let mut s = usize::from(prev[0] <= prev[1]);
    for i in (1..cns.len()).rev() {
        back[i] |= (s as u8) << 2;
        s = usize::from(back[i] >> s & 1);
    }
    back
}

/// Appends the target lines of reference `name` to `out`.
pub fn write_targets(out: &mut Vec<u8>, name: &[u8], cns: &[u16], params: &ScoreParams) {
    let states = target_states(cns, params);
    let inside = |i: usize| states[i] >> 2 & 1 != 0;
    let l = cns.len();
    let mut start: Option<usize> = None;
    for i in 0..=l {
        if i == l || (!inside(i) && start.is_some()) {
            if let Some(s) = start {
                out.extend_from_slice(name);
                out.extend_from_slice(format!(":{}-{}\t0\t", s + 1, i).as_bytes());
                out.extend_from_slice(name);
                out.extend_from_slice(format!("\t{}\t60\t{}M\t*\t0\t0\t", s + 1, i - s).as_bytes());
                for &c in &cns[s..i] {
                    let c = c >> 8;
                    out.push(if c == 0 { b'N' } else { b"ACGT"[usize::from(c & 3)] });
                }
                out.push(b'\t');
                out.extend(cns[s..i].iter().map(|&c| 33 + (c >> 8 >> 2) as u8));
                out.push(b'\n');
            }
            start = None;
        } else if inside(i) && start.is_none() {
            start = Some(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_run_becomes_one_target() {
        // 10 positions: 3 empty, 5 with confident bases (quality 40, C), 2 empty.
        let mut cns = vec![0u16; 10];
        for c in &mut cns[3..8] {
            *c = (40 << 2 | 1) << 8 | 20;
        }
        let params = ScoreParams { p: [[0, -5], [0, 0]], ..ScoreParams::default() };
        let mut out = Vec::new();
        write_targets(&mut out, b"chr", &cns, &params);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "chr:4-8\t0\tchr\t4\t60\t5M\t*\t0\t0\tCCCCC\tIIIII\n"
        );
    }
}
