//! SAM text as htslib 1.24 reads it: each rule found in `sam_hdr_build_from_sam_file`,
//! `sam_hrecs_update_hashes` and `sam_parse1`, as a line of SAM, run through `view -h --no-PG`
//! by mdsam and the samtools 1.24 oracle. Same exit status, same output, same warnings (`[W::`
//! lines). Error wording is mdsam's own one line naming the file, so errors are compared by
//! status only.

use std::path::Path;

use crate::support::{mdsam_bin, oracle, run, scratch_dir};

const SQ: &str = "@SQ\tSN:c\tLN:99\n";
const READ: &str = "r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n";

/// (name, SAM text) pairs; `{SQ}` and `{READ}` stand for the lines above.
const CASES: &[(&str, &str)] = &[
    // Line endings.
    (
        "crlf",
        "@HD\tVN:1.6\r\n{SQ}@CO\r\n@CO\tx\r\nr1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tYT:Z:UU\r\n",
    ),
    ("crlf-unmapped-last", "{SQ}r2\t4\t*\t0\t0\t*\t*\t0\t0\tAC\tII\r\n"),
    ("no-final-newline", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII"),
    // Header lines: bare and odd forms.
    ("bare-co", "{SQ}@CO\n{READ}"),
    ("bare-co-after-hd", "@HD\tVN:1.6\n@CO\n{SQ}{READ}"),
    ("bare-co-first", "@CO\n{SQ}{READ}"),
    ("co-tab-empty", "{SQ}@CO\t\n{READ}"),
    ("co-spaces", "{SQ}@CO  x\n{READ}"),
    ("co-any-text", "{SQ}@CO\tKEY:v\tno colon\t\n{READ}"),
    ("bare-hd", "@HD\n{SQ}{READ}"),
    ("bare-sq", "{SQ}@SQ\n{READ}"),
    ("bare-rg", "{SQ}@RG\n{READ}"),
    ("bare-pg", "{SQ}@PG\n{READ}"),
    ("hd-tab-only", "@HD\t\n{SQ}{READ}"),
    ("unknown-type", "{SQ}@XY\tAB:c\n{READ}"),
    ("lower-case-type", "{SQ}@co\tx\n{READ}"),
    ("digit-in-type", "{SQ}@C1\tx\n{READ}"),
    ("field-without-colon", "@HD\tVN:1.6\tfoo\n{SQ}{READ}"),
    ("field-short", "{SQ}@RG\tID:a\tX:\n{READ}"),
    ("trailing-tab", "@SQ\tSN:c\tLN:99\t\n{READ}"),
    ("odd-key-chars", "@HD\tVN:1.6\t1!:x\n{SQ}{READ}"),
    ("empty-value", "@HD\tVN:\n{SQ}{READ}"),
    ("hd-late", "{SQ}@HD\tVN:1.6\n{READ}"),
    ("two-hd-late", "{SQ}@HD\tVN:1.6\n@HD\tVN:1.5\n{READ}"),
    ("two-hd-first", "@HD\tVN:1.6\n@HD\tVN:1.5\n{SQ}{READ}"),
    ("duplicate-hd-tag", "@HD\tVN:1.6\tVN:1.5\n{SQ}{READ}"),
    // @SQ.
    ("sq-without-ln", "@SQ\tSN:c\n{READ}"),
    ("sq-without-sn", "@SQ\tLN:99\n{READ}"),
    ("sq-duplicate-name", "{SQ}{SQ}{READ}"),
    ("sq-two-ln-same", "@SQ\tSN:c\tLN:99\tLN:99\n{READ}"),
    ("sq-two-ln-differ", "@SQ\tSN:c\tLN:99\tLN:98\n{READ}"),
    ("sq-ln-zero", "@SQ\tSN:c\tLN:0\n{READ}"),
    ("sq-ln-junk", "@SQ\tSN:c\tLN:99x\n{READ}"),
    // @RG and @PG.
    ("rg-without-id", "{SQ}@RG\tSM:x\n{READ}"),
    ("rg-duplicate-id", "{SQ}@RG\tID:a\n@RG\tID:a\n{READ}"),
    ("pg-without-id", "{SQ}@PG\tPN:x\n{READ}"),
    ("pg-duplicate-id", "{SQ}@PG\tID:a\n@PG\tID:a\n{READ}"),
    ("pg-two-ids", "{SQ}@PG\tID:a\tID:b\n{READ}"),
    // Records: tag ids htslib accepts (both characters at least '!').
    ("tag-id-punctuation", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tA!:A:!\t!~:i:5\n"),
    ("tag-id-digit-first", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\t1x:Z:ab\n"),
    ("tag-id-space", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tA :A:x\n"),
    // Records: htslib's unmapped corrections and their warnings.
    ("unplaced-flag-0", "{SQ}r1\t0\t*\t0\t0\t*\t*\t0\t0\tAC\tII\n"),
    ("unplaced-with-cigar", "{SQ}r1\t0\t*\t5\t0\t2M\t*\t0\t0\tAC\tII\n"),
    ("mapped-without-cigar", "{SQ}r1\t0\tc\t5\t0\t*\t*\t0\t0\tAC\tII\n"),
    ("zero-position-unmapped", "{SQ}r1\t4\tc\t0\t0\t*\t*\t0\t0\tAC\tII\n"),
    ("zero-position-mapped", "{SQ}r1\t0\tc\t0\t0\t2M\t*\t0\t0\tAC\tII\n"),
    ("zero-position-mate-equals", "{SQ}r1\t1\tc\t0\t0\t*\t=\t5\t0\tAC\tII\n"),
    ("unknown-reference", "{SQ}r1\t0\tzz\t5\t0\t*\t*\t0\t0\tAC\tII\n"),
    ("unknown-mate-reference", "{SQ}r1\t1\tc\t5\t0\t2M\tzz\t5\t0\tAC\tII\n"),
    // Records: numbers as hts_str2uint / parse_sam_flag read them (an empty field is 0).
    ("empty-flag", "{SQ}r1\t\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("hex-flag", "{SQ}r1\t0x10\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("octal-flag", "{SQ}r1\t020\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("negative-flag", "{SQ}r1\t-1\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("flag-too-big", "{SQ}r1\t65536\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("empty-pos", "{SQ}r1\t0\tc\t\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("plus-pos", "{SQ}r1\t0\tc\t+3\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("space-pos", "{SQ}r1\t0\tc\t 1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("star-pos", "{SQ}r1\t0\tc\t*\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("empty-mapq", "{SQ}r1\t0\tc\t1\t\t2M\t*\t0\t0\tAC\tII\n"),
    ("mapq-too-big", "{SQ}r1\t0\tc\t1\t256\t2M\t*\t0\t0\tAC\tII\n"),
    ("empty-pnext", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t\t0\tAC\tII\n"),
    ("empty-tlen", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t\tAC\tII\n"),
    ("plus-tlen", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t+5\tAC\tII\n"),
    (
        "mate-at-zero",
        "{SQ}r1\t1\tc\t5\t0\t2M\t=\t0\t0\tAC\tII\nr2\t1\tc\t5\t0\t2M\tc\t\t0\tAC\tII\n",
    ),
    // Records: the other columns.
    ("empty-qname", "{SQ}\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("star-qname", "{SQ}*\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("space-in-qname", "{SQ}r 1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("empty-rname", "{SQ}r1\t0\t\t1\t9\t2M\t*\t0\t0\tAC\tII\n"),
    ("empty-cigar", "{SQ}r1\t0\tc\t1\t9\t\t*\t0\t0\tAC\tII\n"),
    ("empty-rnext", "{SQ}r1\t0\tc\t1\t9\t2M\t\t0\t0\tAC\tII\n"),
    ("empty-seq", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\t\tII\n"),
    ("empty-qual", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\t\n"),
    ("star-seq-with-qual", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\t*\tII\n"),
    ("star-qual", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\t*\n"),
    ("seq-digits-lower-and-dots", "{SQ}r1\t0\tc\t1\t9\t8M\t*\t0\t0\t0123ac.=\tIIIIIIII\n"),
    ("qual-below-bang", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tI \n"),
    ("qual-high-byte", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tI\u{7f}\n"),
    ("one-trailing-tab", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\t\n"),
    ("trailing-tab-after-aux", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXI:i:1\t\n"),
    ("empty-aux-field", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\t\tXI:i:1\n"),
    // Records: aux values at and past their limits.
    ("hex-odd", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXH:H:ABC\n"),
    ("hex-not-hex", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXH:H:GG\n"),
    ("int-limits", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXa:i:4294967295\tXb:i:-2147483648\n"),
    ("int-too-big", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXI:i:4294967296\n"),
    ("int-too-small", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXI:i:-2147483649\n"),
    ("char-empty", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXA:A:\n"),
    ("char-long", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXA:A:ab\n"),
    ("string-empty", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXZ:Z:\n"),
    ("unknown-aux-type", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXQ:q:1\n"),
    ("aux-too-short", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXI:i\n"),
    ("duplicate-tags", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXI:i:1\tXI:i:2\n"),
    (
        "b-limits",
        "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXc:B:c,-128,127\tXC:B:C,0,255\tXs:B:s,-32768,32767\tXS:B:S,65535\tXi:B:i,-2147483648,2147483647\tXI:B:I,4294967295\n",
    ),
    (
        "b-retyped",
        "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXc:B:c,128\tXd:B:c,255\tXC:B:C,-1\tXD:B:C,256\tXs:B:s,32768\tXS:B:S,65536\tXi:B:i,2147483648\n",
    ),
    ("b-past-32-bits", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXI:B:I,4294967296\n"),
    ("b-negative-zero-unsigned", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXC:B:C,-0\n"),
    (
        "b-empty-items",
        "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXc:B:c\tXd:B:c,\tXe:B:c,,1\tXf:B:f,,1.5\n",
    ),
    ("b-floats", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXf:B:f,1.5,-2e10,nan,inf\n"),
    ("b-junk", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXB:B:c,1x\n"),
    ("b-bad-subtype", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXB:B:x,1\n"),
    ("nul-in-record", "{SQ}r1\t0\tc\t1\t9\t2M\t*\t0\t0\tAC\tII\tXZ:Z:a\u{0}b\n"),
];

fn text(template: &str) -> String {
    template.replace("{SQ}", SQ).replace("{READ}", READ)
}

/// The `[W::` lines of a stderr, but htslib's "Parse error at line N", which is part of its
/// error report (mdsam reports an error in one line of its own).
fn warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("[W::") && !l.starts_with("[W::sam_read1_sam] Parse error"))
        .map(str::to_string)
        .collect()
}

fn compare(oracle: &Path, dir: &Path, name: &str, sam: &str) -> Option<String> {
    let path = dir.join(format!("{name}.sam"));
    std::fs::write(&path, sam).unwrap();
    let p = path.to_str().unwrap();
    let want = run(oracle, &["view", "-h", "--no-PG", p]);
    let got = run(&mdsam_bin(), &["view", "-h", "--no-PG", p]);
    let show = |o: &std::process::Output| {
        format!(
            "status {:?}\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let same = want.status.code() == got.status.code()
        && (!want.status.success() || want.stdout == got.stdout)
        && warnings(&want.stderr) == warnings(&got.stderr);
    (!same).then(|| format!("{name}:\n--- samtools 1.24\n{}--- mdsam\n{}", show(&want), show(&got)))
}

#[test]
fn sam_text_reads_as_htslib_reads_it() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("sam-text");
    let differences: Vec<String> =
        CASES.iter().filter_map(|(name, t)| compare(&oracle, &dir, name, &text(t))).collect();
    assert!(
        differences.is_empty(),
        "{} of {} cases differ:\n{}",
        differences.len(),
        CASES.len(),
        differences.join("\n")
    );
}

/// The normalised header reaches BAM output too (samtools writes the rebuilt text everywhere).
#[test]
fn normalised_header_goes_into_bam() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("sam-text-bam");
    let sam = dir.join("in.sam");
    std::fs::write(&sam, text("{SQ}@HD\tVN:1.6\r\n@CO\r\n{READ}")).unwrap();
    let header = |tool: &Path, bam: &str| {
        let bam = dir.join(bam);
        let o = run(
            tool,
            &["view", "-b", "--no-PG", "-o", bam.to_str().unwrap(), sam.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        run(&oracle, &["view", "-H", "--no-PG", bam.to_str().unwrap()]).stdout
    };
    let want = header(&oracle, "oracle.bam");
    assert_eq!(
        String::from_utf8_lossy(&header(&mdsam_bin(), "mdsam.bam")),
        String::from_utf8_lossy(&want)
    );
    assert!(want.starts_with(b"@HD\tVN:1.6\n"));
}
