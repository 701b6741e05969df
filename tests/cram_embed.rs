//! CRAM output that needs no external reference to read (`--output-fmt-option embed_ref=1`,
//! `embed_ref=2`, `no_ref=1`), and reads that run past their reference's end, against the samtools 1.24
//! oracle: the oracle decodes mdsam's file, without `-T` and with no `REF_PATH` to find the
//! reference by, to the input's records; mdsam reads it back the same; the file is within 5 % of
//! the size of the oracle's own with the same options.

use std::path::Path;
use std::process::{Command, Output};

use crate::cram_output::{inputs, tags_sorted};
use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run_ok, sam_records, sam_without_pg,
};

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// `program args…` with no way to find a reference but the file itself: `REF_PATH` names an
/// empty directory (htslib's default would ask the network) and `REF_CACHE` is unset.
fn run_without_reference(program: &Path, args: &[&str], empty: &Path) -> Output {
    let output = Command::new(program)
        .args(args)
        .env("REF_PATH", format!("{}/%s", text(empty)))
        .env_remove("REF_CACHE")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    assert!(
        output.status.success(),
        "{} {} failed:\n{}",
        program.display(),
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `embed_ref=1` (with the reference, deleted before reading), `embed_ref=2` (a reference made
/// from the reads) and `no_ref=1` (both without one), at versions 3.0 and 3.1: the records come back as the input's from samtools and from mdsam, as
/// samtools' own file gives them, and the size is samtools' within 5 %.
#[test]
fn embedded_and_verbatim_crams_decode_without_the_reference() {
    let Some(oracle) = oracle() else { return };
    let (dir, sorted, fasta) = inputs(&oracle, "cram_embed_modes");
    let empty = dir.join("no-references");
    std::fs::create_dir_all(&empty).unwrap();
    let want = tags_sorted(&sam_records(&oracle_ok(&oracle, &["view", text(&sorted)]).stdout));
    assert!(want.len() > 500_000, "too little input");
    for option in ["embed_ref=1", "embed_ref=2", "no_ref=1"] {
        for version in ["3.0", "3.1"] {
            let tag = format!("{option}-{version}");
            // A reference only the writers see: gone before anything reads the files.
            let gone = dir.join("gone.fa");
            std::fs::copy(&fasta, &gone).unwrap();
            let format = format!("cram,version={version},{option}");
            let (ours, theirs) = (dir.join(format!("{tag}.mdsam.cram")), dir.join("theirs.cram"));
            for (program, out) in [(mdsam_bin(), &ours), (oracle.clone(), &theirs)] {
                let mut args = vec!["view", "-O", &format, "-o", text(out)];
                if option == "embed_ref=1" {
                    args.extend_from_slice(&["-T", text(&gone)]);
                }
                args.push(text(&sorted));
                run_without_reference(&program, &args, &empty);
            }
            std::fs::remove_file(&gone).unwrap();
            std::fs::remove_file(dir.join("gone.fa.fai")).ok();
            let bytes = std::fs::read(&ours).unwrap();
            assert_eq!(&bytes[..6], &[b'C', b'R', b'A', b'M', 3, version.ends_with('1') as u8]);
            let their_size = std::fs::metadata(&theirs).unwrap().len();
            assert!(
                bytes.len() as u64 * 100 <= their_size * 105,
                "{tag}: {} vs {their_size} bytes",
                bytes.len()
            );
            let decode = |program: &Path, cram: &Path| {
                let args = ["view", "-h", "--no-PG", text(cram)];
                sam_without_pg(&run_without_reference(program, &args, &empty).stdout)
            };
            let theirs_decoded = decode(&oracle, &theirs);
            let ours_decoded = decode(&oracle, &ours);
            assert_same_sam(&ours_decoded, &theirs_decoded, &format!("{tag} samtools"));
            assert_same_sam(&tags_sorted(&sam_records(&ours_decoded)), &want, &tag);
            let mdsam_decoded = decode(&mdsam_bin(), &ours);
            assert_same_sam(&mdsam_decoded, &theirs_decoded, &format!("{tag} mdsam"));
        }
    }
}

/// Reads running past their reference's end (one starting inside, with insertions, deletions
/// and clips): stored as htslib stores them, their bases past the end verbatim and their MD and
/// NM kept, with an external, an embedded or no reference. samtools and mdsam decode mdsam's file
/// to what samtools decodes from its own.
#[test]
fn reads_past_the_reference_end_decode_as_samtools_own() {
    let Some(oracle) = oracle() else { return };
    let (dir, sorted, fasta) = inputs(&oracle, "cram_embed_past_end");
    let sam = dir.join("past-end.sam");
    let mut text_sam = oracle_ok(&oracle, &["view", "-h", text(&sorted)]).stdout;
    let length = reference_length(&text_sam, "chr1");
    let bases = "ACGTTGCAAC".repeat(10);
    let qualities = "I".repeat(100);
    // htslib's decoder refuses to generate MD and NM past a slice's end, so they are given.
    for (name, flag, start, cigar, tags) in [
        ("past_end", 0, length - 49, "100M", "NM:i:3\tMD:Z:50"),
        ("past_end_edits", 16, length - 10, "10S20M5I10M5D55M", "NM:i:12\tMD:Z:0A0"),
    ] {
        let record = format!(
            "{name}\t{flag}\tchr1\t{start}\t60\t{cigar}\t*\t0\t0\t{bases}\t{qualities}\t{tags}\n"
        );
        text_sam.extend_from_slice(record.as_bytes());
    }
    std::fs::write(&sam, &text_sam).unwrap();
    for option in ["", ",embed_ref=1", ",no_ref=1"] {
        for version in ["3.0", "3.1"] {
            let tag = format!("{version}{option}");
            let format = format!("cram,version={version}{option}");
            let (ours, theirs) = (dir.join(format!("{tag}.mdsam.cram")), dir.join("theirs.cram"));
            for (program, out) in [(mdsam_bin(), &ours), (oracle.clone(), &theirs)] {
                let args = ["view", "-O", &format, "-T", text(&fasta), "-o", text(out), text(&sam)];
                run_ok(&program, &args);
            }
            let decode = |program: &Path, cram: &Path| {
                let args = ["view", "--no-PG", "-T", text(&fasta), text(cram)];
                run_ok(program, &args).stdout
            };
            let want = decode(&oracle, &theirs);
            assert!(String::from_utf8_lossy(&want).contains("past_end_edits"), "{tag}");
            assert_same_sam(&decode(&oracle, &ours), &want, &format!("{tag} samtools"));
            assert_same_sam(&decode(&mdsam_bin(), &ours), &want, &format!("{tag} mdsam"));
        }
    }
}

/// The `LN` of `name`'s `@SQ` line in SAM `text`.
fn reference_length(text: &[u8], name: &str) -> u64 {
    let header = String::from_utf8_lossy(text);
    let prefix = format!("@SQ\tSN:{name}\t");
    let line = header.lines().find(|l| l.starts_with(&prefix)).expect("the @SQ line");
    let length = line.split('\t').find_map(|f| f.strip_prefix("LN:")).expect("its LN");
    length.parse().expect("a number")
}

/// `embed_ref=2` where htslib builds its reference from read bases alone (no `MD`: the records
/// carry `cF` so the decoder does not make `MD` and `NM` up) or builds none (name order: bases
/// verbatim); and no reference, no option: htslib's five warnings, then `embed_ref=2`. samtools
/// decodes mdsam's file to what it decodes from its own, mdsam reads it back the same, and the
/// file is samtools' size within 5 %.
#[test]
fn generated_references_without_md_in_name_order_and_by_default() {
    let Some(oracle) = oracle() else { return };
    let (dir, sorted, _fasta) = inputs(&oracle, "cram_embed_generated");
    let empty = dir.join("no-references");
    std::fs::create_dir_all(&empty).unwrap();
    let without_md = dir.join("without-md.bam");
    let args = ["view", "-x", "MD", "-x", "NM", "-b", "-o", text(&without_md), text(&sorted)];
    oracle_ok(&oracle, &args);
    let by_name = dir.join("by-name.bam");
    oracle_ok(&oracle, &["sort", "-n", "-o", text(&by_name), text(&sorted)]);
    let cases = [
        ("without-md", &without_md, "cram,embed_ref=2"),
        ("by-name", &by_name, "cram,version=3.0,embed_ref=2"),
        ("by-default", &sorted, "cram"),
    ];
    for (tag, input, format) in cases {
        let (ours, theirs) = (dir.join(format!("{tag}.mdsam.cram")), dir.join("theirs.cram"));
        let mut stderr = Vec::new();
        for (program, out) in [(mdsam_bin(), &ours), (oracle.clone(), &theirs)] {
            let args = ["view", "-O", format, "-o", text(out), text(input)];
            stderr.push(run_without_reference(&program, &args, &empty).stderr);
        }
        // In name order htslib also warns, container by container, as it fails to build a
        // reference and retries; mdsam does not repeat those warnings.
        if tag != "by-name" {
            let (ours, theirs) = (&stderr[0], &stderr[1]);
            assert_eq!(String::from_utf8_lossy(ours), String::from_utf8_lossy(theirs), "{tag}");
        }
        let (size, their_size) = (file_size(&ours), file_size(&theirs));
        assert!(size * 100 <= their_size * 105, "{tag}: {size} vs {their_size} bytes");
        let decode = |program: &Path, cram: &Path| {
            let args = ["view", "-h", "--no-PG", text(cram)];
            sam_without_pg(&run_without_reference(program, &args, &empty).stdout)
        };
        let want = decode(&oracle, &theirs);
        assert!(want.len() > 500_000, "{tag}: too little output");
        assert_same_sam(&decode(&oracle, &ours), &want, &format!("{tag} samtools"));
        assert_same_sam(&decode(&mdsam_bin(), &ours), &want, &format!("{tag} mdsam"));
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}
