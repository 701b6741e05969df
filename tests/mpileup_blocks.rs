//! `mpileup` on an indexed BAM runs in blocks: its output must be the serial walk's (the same
//! file without its index) byte for byte, and the samtools 1.24 oracle's where it is there.
//! Covered: block edges inside deep columns, `-a`/`-aa`, `-l`, `-r`, BAQ with `-f`, `-x`, the
//! depth cap (where the blocks hand over to the serial walk), a supplementary alignment whose
//! mate-overlap pairing crosses a block's start, and an index older than its BAM.

use std::path::Path;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_native, oracle, run, run_ok, scratch_dir, simulated_fasta};

/// `mdsam mpileup ARGS` on `indexed` and on the same bytes with no index: the outputs and
/// exit statuses must agree (and match the oracle's, when present).
fn same_as_serial(dir: &Path, indexed: &str, args: &[&str]) {
    let unindexed = dir.join("unindexed.bam");
    std::fs::copy(indexed, &unindexed).unwrap();
    let with = |input: String| -> Vec<String> {
        let mut full = vec!["mpileup".to_string()];
        full.extend(args.iter().map(|a| a.to_string()));
        full.push(input);
        full
    };
    let (for_blocks, for_serial) =
        (with(indexed.to_string()), with(unindexed.to_str().unwrap().to_string()));
    let for_blocks: Vec<&str> = for_blocks.iter().map(String::as_str).collect();
    let mut for_serial: Vec<&str> = for_serial.iter().map(String::as_str).collect();
    // A region needs the index: the serial walk reads the whole file, its lines in the region
    // kept.
    let region = args.iter().position(|a| *a == "-r").map(|i| args[i + 1]);
    if let Some(i) = for_serial.iter().position(|a| *a == "-r") {
        for_serial.drain(i..i + 2);
    }
    let blocks = mdsam_native(&for_blocks);
    let mut serial = mdsam_native(&for_serial);
    if let Some(region) = region {
        serial.stdout = lines_in(&serial.stdout, region);
    }
    let context = format!("mpileup {} (in {})", args.join(" "), dir.display());
    assert!(!serial.stdout.is_empty(), "{context}: no output");
    assert!(blocks.stdout == serial.stdout, "{context}: blocks and serial walk differ");
    assert_eq!(blocks.stderr, serial.stderr, "{context}: messages differ");
    assert_eq!(blocks.status.code(), serial.status.code(), "{context}: exit status");
    if let Some(oracle) = oracle() {
        let theirs = run(&oracle, &for_blocks);
        assert!(blocks.stdout == theirs.stdout, "{context}: differs from samtools");
    }
}

/// The lines of `text` in `region` (`NAME:BEG-END` or `NAME:BEG-`, 1-based).
fn lines_in(text: &[u8], region: &str) -> Vec<u8> {
    let (name, range) = region.split_once(':').unwrap();
    let (beg, end) = range.split_once('-').unwrap();
    let beg: u64 = beg.parse().unwrap();
    let end: u64 = if end.is_empty() { u64::MAX } else { end.parse().unwrap() };
    let mut kept = Vec::new();
    for line in text.split_inclusive(|&c| c == b'\n') {
        let mut fields = line.split(|&c| c == b'\t');
        let (Some(n), Some(pos)) = (fields.next(), fields.next()) else { continue };
        let pos: u64 = std::str::from_utf8(pos).unwrap().parse().unwrap();
        if n == name.as_bytes() && (beg..=end).contains(&pos) {
            kept.extend_from_slice(line);
        }
    }
    kept
}

fn simulate(dir: &Path, pairs: u64) -> (String, String) {
    let opts = SimulateOptions {
        pairs,
        seed: 11,
        n_refs: 3,
        ref_len: 60_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = crate::support::simulated_sam(dir, &opts);
    let fasta = simulated_fasta(dir, &opts).to_str().unwrap().to_string();
    let bam = dir.join("in.bam").to_str().unwrap().to_string();
    let mdsam = crate::support::mdsam_bin();
    run_ok(&mdsam, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    run_ok(&mdsam, &["index", &bam]);
    (bam, fasta)
}

#[test]
fn blocks_match_the_serial_walk() {
    let dir = scratch_dir("mpileup_blocks");
    // About 60 reads a position: blocks of some ten thousand bases, several a reference.
    let (bam, fasta) = simulate(&dir, 30_000);
    let bed = dir.join("t.bed");
    std::fs::write(&bed, "chr1\t100\t5000\nchr2\t20000\t41000\nchr3\t35000\t40000\n").unwrap();
    let bed = bed.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &[],
        &["-a"],
        &["-aa"],
        &["-x", "--output-QNAME", "--output-extra", "RG,NM"],
        &["-l", bed],
        &["-a", "-l", bed],
        &["-r", "chr2:9000-31000"],
        &["-a", "-r", "chr3:30000-"],
        &["-f", &fasta, "-q", "5"],
        &["-B", "-f", &fasta, "-aa"],
        // Capped: the serial walk takes over.
        &["-d", "20"],
        &["-a", "-d", "40"],
    ];
    for args in cases {
        same_as_serial(&dir, &bam, args);
    }
}

/// `X_out`, a supplementary alignment of `x` that ends before the block that starts at 2048,
/// pairs with `x`'s primary in the serial walk's overlap hash; the block lacks it and would
/// pair the primary with its mate instead, changing qualities from 2048 on.
const NAMESAKE_SAM: &str = "@SQ\tSN:c1\tLN:6000\n\
a1\t99\tc1\t1901\t60\t150M\t=\t1951\t200\t*\t*\n\
a2\t147\tc1\t1951\t60\t150M\t=\t1901\t-200\t*\t*\n\
x\t2115\tc1\t1991\t60\t40M110H\t=\t2046\t60\t*\t*\tSA:Z:c1,2031,+,150M,60,0;\n\
x\t67\tc1\t2031\t60\t150M\t=\t2046\t150\t*\t*\tSA:Z:c1,1991,+,40M110S,60,0;\n\
x\t147\tc1\t2046\t60\t150M\t=\t2031\t-150\t*\t*\n\
b1\t99\tc1\t2101\t60\t150M\t=\t2151\t200\t*\t*\n\
b2\t147\tc1\t2151\t60\t150M\t=\t2101\t-200\t*\t*\n";

#[test]
fn a_pairing_across_a_block_start_hands_over_to_the_serial_walk() {
    let dir = scratch_dir("mpileup_blocks_namesake");
    // Bases and qualities filled in: equal bases, so an overlap moves quality between mates.
    let text: String = NAMESAKE_SAM
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            if line.starts_with('@') {
                return format!("{line}\n");
            }
            let cigar = f[5];
            let n: usize = cigar
                .split(|c: char| c.is_ascii_alphabetic())
                .zip(cigar.matches(|c: char| c.is_ascii_alphabetic()))
                .filter(|(_, op)| matches!(*op, "M" | "S" | "I"))
                .map(|(len, _)| len.parse::<usize>().unwrap())
                .sum();
            let (seq, qual) = ("A".repeat(n), "5".repeat(n));
            let mut f = f.clone();
            (f[9], f[10]) = (&seq, &qual);
            format!("{}\n", f.join("\t"))
        })
        .collect();
    let sam = dir.join("in.sam");
    std::fs::write(&sam, text).unwrap();
    let bam = dir.join("in.bam").to_str().unwrap().to_string();
    let mdsam = crate::support::mdsam_bin();
    run_ok(&mdsam, &["view", "-b", "-o", &bam, sam.to_str().unwrap()]);
    run_ok(&mdsam, &["index", &bam]);
    same_as_serial(&dir, &bam, &["--output-QNAME"]);
    same_as_serial(&dir, &bam, &["-a"]);
}

#[test]
fn an_index_older_than_its_bam_is_not_used() {
    let dir = scratch_dir("mpileup_blocks_stale_index");
    let (bam, _) = simulate(&dir, 6_000);
    // The same reads and more at the end of the last reference, under the old name, the index
    // left as it was (it ends where the old file ended). The output must still be the whole
    // file's: the index is passed over for its age (and were it used, a block that reads past
    // the old file's last block would fail and hand over to the serial walk).
    let mdsam = crate::support::mdsam_bin();
    let text = run_ok(&mdsam, &["view", "-h", &bam]).stdout;
    let lines: Vec<&[u8]> = text.split_inclusive(|&c| c == b'\n').collect();
    let rname = |l: &[u8]| l.split(|&c| c == b'\t').nth(2).map(<[u8]>::to_vec);
    let on_chr3: Vec<u64> = lines
        .iter()
        .filter(|l| rname(l).as_deref() == Some(b"chr3"))
        .map(|l| {
            let pos = l.split(|&c| c == b'\t').nth(3).unwrap();
            std::str::from_utf8(pos).unwrap().parse().unwrap()
        })
        .collect();
    let pos = on_chr3.iter().max().unwrap();
    // The new reads go after the last placed read, before the unplaced ones.
    let placed =
        lines.iter().rposition(|l| !l.starts_with(b"@") && rname(l).as_deref() != Some(b"*"));
    let (before, after) = lines.split_at(placed.unwrap() + 1);
    let mut sam: Vec<u8> = before.concat();
    for i in 0..40 {
        let (seq, qual) = ("C".repeat(100), "I".repeat(100));
        let line = format!("late{i}\t0\tchr3\t{}\t60\t100M\t*\t0\t0\t{seq}\t{qual}\n", pos + 10);
        sam.extend_from_slice(line.as_bytes());
    }
    sam.extend_from_slice(&after.concat());
    let grown = dir.join("grown.sam");
    std::fs::write(&grown, &sam).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    run_ok(&mdsam, &["view", "-b", "-o", &bam, grown.to_str().unwrap()]);
    same_as_serial(&dir, &bam, &[]);
}
