//! `mpileup` against the samtools 1.24 oracle: simulated pairs (indels, clips, low qualities,
//! overlapping mates, unmapped and filtered records) with and without a reference, BAQ, `-C`,
//! `-d`, `-x`, the extra columns, several inputs, regions and `-a`/`-aa`; hand-written reads for
//! pads, reference skips, insertions next to deletions and a read at a short reference's end.
//! stdout, stderr and the exit status are compared byte for byte.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    mdsam_bin, oracle, oracle_ok, run, scratch_dir, simulated_fasta, simulated_sam,
};

fn same(oracle: &Path, dir: &Path, args: &[&str]) {
    let ours = run(&mdsam_bin(), args);
    let theirs = run(oracle, args);
    let context = format!("mpileup {} (in {})", args.join(" "), dir.display());
    crate::support::assert_same_outcome(&ours, &theirs, &context);
}

/// A simulated coordinate-sorted, indexed BAM, a high-MAPQ subset of it, and their reference.
fn simulated(dir: &Path, oracle: &Path, pairs: u64, ref_len: u32) -> (String, String, String) {
    let opts = SimulateOptions {
        pairs,
        seed: 42,
        n_refs: 2,
        ref_len,
        order: Order::Coordinate,
        mate_unmapped_rate: 0.05,
        secondary_rate: 0.04,
        qc_fail_rate: 0.03,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(dir, &opts);
    let fasta = simulated_fasta(dir, &opts);
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    let (bam, second) = (s(dir.join("in.bam")), s(dir.join("q30.bam")));
    oracle_ok(oracle, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    oracle_ok(oracle, &["index", &bam]);
    oracle_ok(oracle, &["view", "-b", "-q", "30", "-o", &second, &bam]);
    oracle_ok(oracle, &["index", &second]);
    oracle_ok(oracle, &["faidx", fasta.to_str().unwrap()]);
    (bam, second, s(fasta))
}

#[test]
fn mpileup_matches_the_oracle_on_simulated_pairs() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("mpileup_simulated");
    let (bam, two, fa) = simulated(&dir, &oracle, 600, 8_000);
    let (bam, two, fa) = (bam.as_str(), two.as_str(), fa.as_str());
    let cases: &[&[&str]] = &[
        &[bam],
        &["-f", fa, bam],
        &["-B", "-f", fa, bam],
        &["-x", "-f", fa, bam],
        &["-E", "-f", fa, bam],
        &["-C", "50", "-f", fa, bam],
        &["-Q", "0", "-q", "20", "-A", bam],
        &["-aa", "-B", bam],
        &["-a", "-r", "chr2:1000-3000", "-f", fa, bam],
        &["-r", "chr1:5000", bam],
        &["--ff", "UNMAP", "--rf", "0x40", bam],
        &["-s", "-O", "--output-BP-5", "--output-QNAME", "--reverse-del", bam],
        &["--output-extra", "FLAG,POS,MAPQ,RNEXT,PNEXT,RLEN,NM,RG,XF,ZZ", bam],
        &["--output-extra", "NM,RG", "--output-sep", ";", "--output-empty", "-", bam],
        &["--no-output-ins", "--no-output-del", "--no-output-ends", bam],
        &["--no-output-ins", "--no-output-ins", "--no-output-del", "--no-output-del", bam],
        &["-f", fa, bam, two],
        &["-a", "-s", bam, two],
    ];
    for args in cases {
        let mut full = vec!["mpileup"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}

#[test]
fn mpileup_depth_cap_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("mpileup_depth_cap");
    // Deep: 2,000 pairs on 2 references of about 8 kb, some 40 reads a position.
    let (bam, two, fa) = simulated(&dir, &oracle, 2_000, 8_000);
    for cap in ["1", "5", "0"] {
        same(&oracle, &dir, &["mpileup", "-d", cap, "-f", &fa, &bam]);
        same(&oracle, &dir, &["mpileup", "-x", "-d", cap, &bam, &two]);
    }
}

/// Reads by hand: pads, reference skips, insertions before deletions, clips, reverse strands,
/// and reads that reach past a 10-base reference (where BAQ's band meets the end).
const SAM: &str = "@SQ\tSN:c1\tLN:10\n@SQ\tSN:c2\tLN:40\n\
r1\t0\tc1\t1\t30\t10M\t*\t0\t0\tAACCGCGGTT\tIIIIIIIIII\n\
r2\t16\tc1\t3\t20\t2H6M2H\t*\t0\t0\tCCGCGG\tIIIIII\n\
r3\t0\tc1\t3\t20\t2S3M2I3M2S\t*\t0\t0\tAACCGNNCGGTT\tIIIIIIIIIIII\n\
r4\t0\tc2\t1\t60\t5M2I3D5M\t*\t0\t0\tACGTAGGTTACG\tIIIIIIIIIIII\n\
r5\t16\tc2\t2\t60\t4M1P1I2D3M10N4M\t*\t0\t0\tCGTAATTACGTA\tIIII#IIIIIII\n\
r6\t16\tc2\t3\t60\t3M2D1D4M\t*\t0\t0\tGTATTAC\t#######\n\
r7\t0\tc2\t5\t99\t3M2P2I3M\t*\t0\t0\tAGGCCTTA\t(((((((I\n\
r8\t0\tc2\t30\t60\t5S5M\t*\t0\t0\tNNNNNACGTN\tIIIIIIIIII\n";

#[test]
fn mpileup_hand_written_reads_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("mpileup_hand_written");
    let sam = dir.join("in.sam");
    std::fs::write(&sam, SAM).unwrap();
    let fa = dir.join("ref.fa");
    std::fs::write(&fa, ">c1\nAACCGCGGTT\n>c2\nACGTACGTTACGTAGGCATTACGTACGTAACGTACGTAC\n").unwrap();
    oracle_ok(&oracle, &["faidx", fa.to_str().unwrap()]);
    let (sam, fa) = (sam.to_str().unwrap(), fa.to_str().unwrap());
    let cases: &[&[&str]] = &[
        &["-Q0", sam],
        &["-Q0", "-f", fa, sam],
        &["-Q0", "-B", "-f", fa, "--reverse-del", sam],
        &["-Q0", "-aa", "-f", fa, sam],
        &["-Q0", "-f", fa, "--no-output-ins", "--no-output-del", sam],
        &["-Q0", "-O", "--output-BP-5", "-s", sam],
    ];
    for args in cases {
        let mut full = vec!["mpileup"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
    // calmd shares the BAQ: the read at the reference's end panicked it too.
    let ours = run(&mdsam_bin(), &["calmd", "-r", sam, fa]);
    let theirs = run(&oracle, &["calmd", "-r", sam, fa]);
    assert_eq!(ours.status.code(), theirs.status.code(), "calmd -r exit status");
    let records = |o: &[u8]| crate::support::sam_records(o);
    assert_eq!(records(&ours.stdout), records(&theirs.stdout), "calmd -r records");
}

/// Base modifications: several types on one entry, a ChEBI code, no `ML`, reverse reads,
/// modifications inside an insertion, deltas past a forward read's end (never reached); a reverse
/// read's deltas past its end fail the command.
const MODS_SAM: &str = "@SQ\tSN:I\tLN:999\n\
a1\t0\tI\t1\t0\t10M2I10M\t*\t0\t0\tACGTCCGATCGGCCATCGACCA\tIIIIIIIIIIIIIIIIIIIIII\tMM:Z:C+m?,0,1,3;C+76792.,2;A-a,1;\n\
a2\t16\tI\t3\t0\t12M\t*\t0\t0\tGTCCGATCGGCC\tIIIIIIIIIIII\tMM:Z:G-m,0,1;C+h,1;\tML:B:C,10,20,30\n\
a3\t0\tI\t5\t0\t5M\t*\t0\t0\tCCGAT\tIIIII\tMM:Z:C+mh,0,0;\tML:B:C,1,2,3,4\n";

#[test]
fn mpileup_base_modifications_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("mpileup_mods");
    let sam = dir.join("mods.sam");
    std::fs::write(&sam, MODS_SAM).unwrap();
    let sam = sam.to_str().unwrap();
    for extra in [&[][..], &["--no-output-ins-mods"], &["--no-output-ins"], &["--reverse-del"]] {
        let mut args = vec!["mpileup", "-M"];
        args.extend_from_slice(extra);
        args.push(sam);
        same(&oracle, &dir, &args);
    }
    // An `MM` entry without its `;`, or counting past a reverse read's bases, fails the command
    // after the lines already made (samtools' stderr order differs in the pysam-built oracle).
    let broken = [
        (MODS_SAM.replace("C+mh,0,0;", "C+mh,0,0"), "a3: Hit end of MM tag"),
        (
            MODS_SAM.replace("G-m,0,1;C+h,1;", "G-m,0,1;C+h,1,9;"),
            "a2: MM tag refers to bases beyond",
        ),
    ];
    for (i, (text, message)) in broken.iter().enumerate() {
        let bad = dir.join(format!("bad{i}.sam"));
        std::fs::write(&bad, text).unwrap();
        let args = ["mpileup", "-M", bad.to_str().unwrap()];
        let (ours, theirs) = (run(&mdsam_bin(), &args), run(&oracle, &args));
        assert_eq!(ours.status.code(), theirs.status.code(), "exit status: {message}");
        assert!(ours.stdout == theirs.stdout, "lines before: {message}");
        let err = String::from_utf8_lossy(&ours.stderr);
        assert!(err.contains(message), "{err}");
    }
}

#[test]
fn mpileup_unsorted_input_fails_like_samtools() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("mpileup_unsorted");
    let sam = dir.join("unsorted.sam");
    let text = "@SQ\tSN:c1\tLN:100\n\
                b\t0\tc1\t20\t30\t5M\t*\t0\t0\tACGTA\tIIIII\n\
                a\t0\tc1\t10\t30\t5M\t*\t0\t0\tACGTA\tIIIII\n";
    std::fs::write(&sam, text).unwrap();
    let args = ["mpileup", sam.to_str().unwrap()];
    let (ours, theirs) = (run(&mdsam_bin(), &args), run(&oracle, &args));
    assert_eq!(ours.status.code(), theirs.status.code(), "exit status");
    assert!(ours.stdout == theirs.stdout, "lines before the unsorted read");
    let err = String::from_utf8_lossy(&ours.stderr);
    assert!(err.contains("The input is not sorted (reads out of order)"), "{err}");
}
