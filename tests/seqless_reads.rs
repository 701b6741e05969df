//! Reads without bases (`SEQ *`) and columns of reference skips alone, through the commands
//! that walk a read's CIGAR against its bases: samtools reads past such a record where mdsam
//! once indexed past its bytes and panicked (found by a randomised sweep of CIGARs against the
//! 1.24 oracle). Every command finishes; where samtools' reads past the record land in bytes
//! the record defines (its aux fields, its name), the output is samtools'.

use std::path::{Path, PathBuf};

use crate::support::{mdsam_native, oracle, run, scratch_dir};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The SAM as a BAM (made by mdsam), with `ref.fa` beside it.
fn bam_of(dir: &Path, name: &str, sam: &str) -> PathBuf {
    let sam_path = dir.join(format!("{name}.sam"));
    std::fs::write(&sam_path, sam).expect("write the SAM");
    let bam = dir.join(format!("{name}.bam"));
    let view = mdsam_native(&["view", "-b", "-o", s(&bam), s(&sam_path)]);
    assert!(view.status.success(), "view: {}", String::from_utf8_lossy(&view.stderr));
    bam
}

/// Runs `args` on `bam` with mdsam (it must succeed) and, where present, the oracle: the same
/// exit status and the same text (BAM outputs are read back as SAM without @PG lines).
fn finishes_as_samtools(dir: &Path, args: &[&str], bam: &Path) -> String {
    let mut full = args.to_vec();
    full.push(s(bam));
    let got = mdsam_native(&full);
    let context = full.join(" ");
    assert!(got.status.success(), "{context}: {}", String::from_utf8_lossy(&got.stderr));
    let text = |tool: &str, out: &[u8]| {
        if !out.starts_with(&[0x1f, 0x8b]) {
            return String::from_utf8_lossy(out).into_owned();
        }
        let path = dir.join(format!("{tool}.out.bam"));
        std::fs::write(&path, out).expect("write the output");
        let sam = mdsam_native(&["view", s(&path)]);
        String::from_utf8_lossy(&sam.stdout).into_owned()
    };
    let got_text = text("mdsam", &got.stdout);
    if let Some(oracle) = oracle() {
        let want = run(&oracle, &full);
        assert_eq!(got.status.code(), want.status.code(), "exit status of {context}");
        assert_eq!(got_text, text("samtools", &want.stdout), "output of {context}");
    }
    got_text
}

const HEADER: &str = "@SQ\tSN:c\tLN:60\n";

#[test]
fn commands_finish_on_reads_without_bases() {
    let dir = scratch_dir("seqless_reads");
    std::fs::write(dir.join("ref.fa"), format!(">c\n{}\n", "ACGT".repeat(15))).expect("ref");
    // r2 has no bases and a deletion; its aux fields are longer than its CIGAR's query, so what
    // samtools reads past its bases is defined (pad2unpad takes a 0 nibble there for a pad).
    let sam = format!(
        "{HEADER}\
         r1\t0\tc\t3\t60\t8M\t*\t0\t0\tACGTACGT\tIIIIIIII\tNM:i:0\n\
         r2\t0\tc\t5\t60\t2S5M1D2M\t*\t0\t0\t*\t*\tNM:i:1\tXA:Z:c,+1,9M,1\n\
         r3\t16\tc\t6\t60\t6M\t*\t0\t0\tCGTACG\tIIIIII\tNM:i:0\n"
    );
    let bam = bam_of(&dir, "seqless", &sam);
    let reference = dir.join("ref.fa");
    for args in [
        &["consensus", "-m", "simple", "-f", "pileup", "-a"][..],
        &["consensus", "-m", "simple", "-a", "--show-del", "yes"],
        &["phase"],
        &["pad2unpad", "-T", s(&reference)],
    ] {
        finishes_as_samtools(&dir, args, &bam);
    }
}

/// A column whose only read is inside a reference skip: the simple mode's quality is 0 of 0
/// scored, which samtools' C cast turns into INT_MIN.
#[test]
fn consensus_scores_a_column_of_skips_as_samtools_does() {
    let dir = scratch_dir("seqless_skip_column");
    let sam = format!("{HEADER}r1\t0\tc\t3\t60\t2M3N2M\t*\t0\t0\tACGT\tIIII\tNM:i:0\n");
    let bam = bam_of(&dir, "skip", &sam);
    let text = finishes_as_samtools(&dir, &["consensus", "-m", "simple", "-f", "pileup"], &bam);
    assert!(text.contains("c\t5\t0\t1\tN\t-2147483648\t.\t!\n"), "the skip's column: {text}");
}

/// A reverse read without bases, hard-clipped, whose every operation a primer trims from its
/// end: samtools reads the word before its CIGAR (the end of its name) as an operation, and
/// the read ends up unmapped.
#[test]
fn ampliconclip_trims_a_whole_read_without_bases() {
    let dir = scratch_dir("seqless_ampliconclip");
    let bed = dir.join("primers.bed");
    std::fs::write(&bed, "c\t0\t10\nc\t50\t60\n").expect("bed");
    let sam = format!("{HEADER}r17\t16\tc\t53\t30\t4M6H\t*\t0\t0\t*\t*\tMD:Z:4\n");
    let bam = bam_of(&dir, "clip", &sam);
    let text = finishes_as_samtools(&dir, &["ampliconclip", "-b", s(&bed)], &bam);
    assert!(text.starts_with("r17\t20\tc\t53\t0\t*\t"), "unmapped: {text}");
}
