//! Random CIGARs (every operation, anywhere, clips inside, reads of a few bases) through the
//! commands that walk a read along the reference: the pileups of consensus, phase, targetcut,
//! mpileup (with BAQ and its mapping-quality cap) and depth, and pad2unpad. Reads with bases and aux fields (all that samtools reads is then
//! defined) must give samtools' output; reads without bases or aux fields (samtools reads past
//! the record) must let every command finish. The sweep that found the panics fixed beside
//! `seqless_reads.rs`, kept as a test.

use std::path::Path;

use crate::support::{mdsam_native, oracle, run, scratch_dir};

/// xorshift64: a fixed stream of numbers, the same on every machine.
struct Numbers(u64);

impl Numbers {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn pick(&mut self, from: &[u8]) -> u8 {
        from[self.below(from.len() as u64) as usize]
    }
}

/// A coordinate-sorted SAM of up to 24 reads on a 100-base reference; `defined`: every read
/// has bases and aux fields.
fn random_sam(seed: u64, defined: bool) -> String {
    let mut n = Numbers(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut reads = Vec::new();
    for i in 0..1 + n.below(24) {
        let mut ops: Vec<(u64, u8)> =
            (0..1 + n.below(7)).map(|_| (1 + n.below(6), n.pick(b"MMMMIDDNSHP=X"))).collect();
        if !ops.iter().any(|&(_, op)| b"M=X".contains(&op)) {
            ops.push((1 + n.below(5), b'M'));
        }
        let cigar: String = ops.iter().map(|&(len, op)| format!("{len}{}", op as char)).collect();
        let query: u64 = ops.iter().filter(|(_, op)| b"MIS=X".contains(op)).map(|(l, _)| l).sum();
        let (seq, qual) = if !defined && n.below(10) == 0 {
            ("*".to_string(), "*".to_string())
        } else {
            let seq = (0..query).map(|_| n.pick(b"ACGTN") as char).collect();
            let qual = (0..query).map(|_| (33 + n.below(61)) as u8 as char).collect();
            (seq, qual)
        };
        let aux = if defined || n.below(2) == 0 { "\tXA:Z:abcdefgh\tNM:i:1" } else { "" };
        let flag = [0, 0, 16, 16, 1024][n.below(5) as usize];
        let mapq = [0, 5, 30, 60, 255][n.below(5) as usize];
        let pos = 1 + n.below(59);
        reads.push((
            pos,
            format!("r{i}\t{flag}\tc\t{pos}\t{mapq}\t{cigar}\t*\t0\t0\t{seq}\t{qual}{aux}\n"),
        ));
    }
    reads.sort_by_key(|r| r.0);
    let body: String = reads.into_iter().map(|r| r.1).collect();
    format!("@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:c\tLN:100\n{body}")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

const COMMANDS: &[&[&str]] = &[
    &["consensus", "-a", "--show-ins", "yes", "--show-del", "yes"],
    &["consensus", "-m", "simple", "-f", "pileup", "-a"],
    &["consensus", "-m", "simple", "-A", "-c", "0.3", "-H", "0.2", "--show-del", "yes"],
    &["consensus", "-m", "bayesian_116", "-f", "fastq"],
    &["consensus", "-m", "bayesian_m", "-f", "pileup", "--show-del", "yes"],
    &["consensus", "-@", "2", "-a", "-f", "fastq"],
    &["targetcut"],
    &["phase"],
    &["mpileup", "-f", "REF", "-E", "-C", "50", "-Q", "0", "-q", "0", "-a"],
    &["mpileup", "-B", "-s", "--output-QNAME", "--output-extra", "FLAG,POS,MAPQ", "--reverse-del"],
    &["depth", "-aa", "-J"],
    &["pad2unpad", "-T", "REF"],
];

#[test]
fn random_cigars_walk_as_samtools_does() {
    let dir = scratch_dir("cigar_sweep");
    let reference = dir.join("ref.fa");
    std::fs::write(&reference, format!(">c\n{}\n", "ACGTTGCA".repeat(13))).expect("reference");
    let oracle = oracle();
    for seed in 1..=40 {
        for defined in [true, false] {
            let sam = dir.join(format!("{seed}-{defined}.sam"));
            std::fs::write(&sam, random_sam(seed, defined)).expect("write the SAM");
            let bam = dir.join(format!("{seed}-{defined}.bam"));
            let view = mdsam_native(&["view", "-b", "-o", s(&bam), s(&sam)]);
            if !view.status.success() {
                continue; // a CIGAR whose query length is not its bases' (refused, as samtools does)
            }
            for args in COMMANDS {
                let mut full: Vec<&str> =
                    args.iter().map(|&a| if a == "REF" { s(&reference) } else { a }).collect();
                full.push(s(&bam));
                let got = mdsam_native(&full);
                let context = format!("seed {seed} (defined: {defined}): {}", full.join(" "));
                let stderr = String::from_utf8_lossy(&got.stderr);
                assert!(!stderr.contains("panicked"), "{context}: {stderr}");
                assert!(matches!(got.status.code(), Some(0 | 1 | 255)), "{context}: {stderr}");
                if let (Some(oracle), true) = (&oracle, defined) {
                    let want = run(oracle, &full);
                    assert_eq!(got.status.code(), want.status.code(), "exit status, {context}");
                    // pad2unpad writes BAM with its own @PG: its records are compared in
                    // seqless_reads.rs; here its exit status.
                    if args[0] != "pad2unpad" {
                        assert!(got.stdout == want.stdout, "output, {context}");
                    }
                }
            }
        }
    }
}
