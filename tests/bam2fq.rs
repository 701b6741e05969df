//! `fastq`, `fasta` and `import` against the samtools 1.24 oracle on simulated paired data
//! (secondary, supplementary, QC-failed, mate-unmapped and unmapped pairs, soft clips, extra
//! tags; some records given barcode, UMI and original-quality tags): every output file byte for
//! byte, standard error and exit status, for the main options; and `import` of what `fastq`
//! wrote, as SAM and BAM.

use std::path::{Path, PathBuf};

use mdsam::simulate::SimulateOptions;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, run, sam_without_pg, scratch_dir, simulated_sam, to_sam,
};

/// The simulated SAM (name order) with barcode (`BC`/`QT`), UMI (`RX`) and `OQ` tags added to
/// some records, and the same as BAM.
fn inputs(dir: &Path, oracle: &Path) -> (PathBuf, PathBuf) {
    let opts = SimulateOptions {
        pairs: 3000,
        seed: 31,
        read_len: 100,
        chimeric_rate: 0.05,
        secondary_rate: 0.2,
        qc_fail_rate: 0.05,
        mate_unmapped_rate: 0.05,
        unmapped_pair_rate: 0.03,
        extra_tag_rate: 0.3,
        ..Default::default()
    };
    let plain = simulated_sam(dir, &opts);
    let text = std::fs::read(&plain).unwrap();
    let mut sam = Vec::new();
    for (i, line) in text.split_inclusive(|&c| c == b'\n').enumerate() {
        if line.starts_with(b"@") || i % 3 == 0 {
            sam.extend_from_slice(line);
            continue;
        }
        let fields: Vec<&[u8]> = line.split(|&c| c == b'\t').collect();
        let l_seq = fields[9].len();
        sam.extend_from_slice(&line[..line.len() - 1]);
        if i % 3 == 1 {
            sam.extend_from_slice(b"\tBC:Z:ACGTAC-GGTTAA\tQT:Z:#$%&'()*+,-.\tRX:Z:AAC-GGT");
        } else if l_seq > 1 {
            sam.extend_from_slice(b"\tOQ:Z:");
            sam.extend(std::iter::repeat_n(b'5', l_seq));
            sam.extend_from_slice(b"\tBC:Z:TTGGCC");
        }
        sam.push(b'\n');
    }
    let sam_path = dir.join("in.sam");
    std::fs::write(&sam_path, sam).unwrap();
    let bam_path = dir.join("in.bam");
    let out =
        run(oracle, &["view", "-b", "-o", bam_path.to_str().unwrap(), sam_path.to_str().unwrap()]);
    assert!(out.status.success(), "oracle view -b failed");
    (sam_path, bam_path)
}

/// Runs `args` (with `{d}` standing for the scratch directory) with mdsam in `dir/m` and the
/// oracle in `dir/o`; their stdout, stderr, status and the files each wrote must be the same
/// (`.gz` files compared decompressed).
fn same_run(dir: &Path, oracle: &Path, args: &[&str]) {
    let mut outputs = Vec::new();
    for (side, program) in [("m", mdsam_bin()), ("o", oracle.to_path_buf())] {
        let out_dir = dir.join(side);
        let _ = std::fs::remove_dir_all(&out_dir);
        std::fs::create_dir_all(&out_dir).unwrap();
        let full: Vec<String> =
            args.iter().map(|a| a.replace("{d}", out_dir.to_str().unwrap())).collect();
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        let mut out = run(&program, &refs);
        // Messages name the files of either side alike.
        let stderr = String::from_utf8_lossy(&out.stderr).replace(out_dir.to_str().unwrap(), "{d}");
        out.stderr = stderr.into_bytes();
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let bytes = std::fs::read(&path).unwrap();
                let bytes = if name.ends_with(".gz") { gunzip(&bytes) } else { bytes };
                (name, bytes)
            })
            .collect();
        files.sort();
        outputs.push((out, files));
    }
    let (m, o) = (&outputs[0], &outputs[1]);
    let context = format!("fastq {args:?}");
    assert_eq!(m.0.status.code(), o.0.status.code(), "{context}: exit status");
    assert_eq!(
        String::from_utf8_lossy(&m.0.stderr),
        String::from_utf8_lossy(&o.0.stderr),
        "{context}: stderr"
    );
    assert!(m.0.stdout == o.0.stdout, "{context}: stdout differs");
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&m.1), names(&o.1), "{context}: files written");
    for ((name, a), (_, b)) in m.1.iter().zip(&o.1) {
        assert!(a == b, "{context}: {name} differs");
    }
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(bytes), &mut out).unwrap();
    out
}

#[test]
fn fastq_and_fasta_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("bam2fq_options");
    let (sam, bam) = inputs(&dir, &oracle);
    let (sam, bam) = (sam.to_str().unwrap(), bam.to_str().unwrap());
    let cases: &[&[&str]] = &[
        &["fastq"],
        &["fastq", "-n"],
        &["fastq", "-N", "-t"],
        &["fastq", "-T", "*"],
        &["fastq", "-T", "XT,RG,NM"],
        &["fastq", "-1", "{d}/1.fq", "-2", "{d}/2.fq"],
        &["fastq", "-1", "{d}/1.fq", "-2", "{d}/2.fq", "-0", "{d}/0.fq", "-s", "{d}/s.fq"],
        &["fastq", "-o", "{d}/p.fq", "-s", "{d}/s.fq", "-N"],
        &["fastq", "-F", "0", "-0", "{d}/0.fq"],
        &["fastq", "-f", "0x200", "-G", "0x48"],
        &["fastq", "--rf", "0x80", "-n"],
        &["fastq", "-O", "-d", "BC"],
        &["fastq", "-d", "BC:TTGGCC"],
        &["fastq", "--no-sc", "-T", "s0"],
        &["fastq", "--no-sc", "--no-sc-bkp"],
        &["fastq", "-U", "--UMI-tag", "RX"],
        &["fastq", "-i", "--index-format", "i6i6", "--i1", "{d}/i1.fq", "--i2", "{d}/i2.fq"],
        &["fastq", "--index-format", "n*i*", "--i1", "{d}/i1.fq", "-v", "30"],
        &["fastq", "-1", "{d}/1.fq.gz", "-2", "{d}/2.fq.gz", "-c", "6"],
        &["fastq", "-@", "2", "-T", "*"],
        &["fasta"],
        &["fasta", "-1", "{d}/1.fa", "-2", "{d}/2.fa", "-s", "{d}/s.fa"],
    ];
    for case in cases {
        for input in [sam, bam] {
            let mut args = case.to_vec();
            args.push(input);
            same_run(&dir, &oracle, &args);
        }
    }
}

#[test]
fn bad_arguments_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("bam2fq_bad");
    let (sam, _) = inputs(&dir, &oracle);
    let sam = sam.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["fastq", "-d", "X", sam],
        &["fastq", "-d", "NM:1", "-d", "MD:2", sam],
        &["fastq", "-f", "zz", sam],
        &["fastq", "-v", "100", sam],
        &["fastq", "-i", sam],
        &["fastq", "--i2", "{d}/x.fq", sam],
        &["fastq", sam, sam],
        &["fastq", "{d}/absent.bam"],
        &["import", "{d}/absent.fq"],
    ];
    for case in cases {
        same_run(&dir, &oracle, case);
    }
}

/// `import` of `fastq`'s own output, SAM text and BAM (through the oracle's `view`).
#[test]
fn import_round_trips_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("bam2fq_import");
    let (sam, _) = inputs(&dir, &oracle);
    let sam = sam.to_str().unwrap();
    let d = dir.to_str().unwrap().to_string();
    let fq = |args: &[&str]| {
        let out = run(&oracle, args);
        assert!(out.status.success(), "oracle {args:?}");
        out.stdout
    };
    fq(&[
        "fastq",
        "-T",
        "*",
        "-1",
        &format!("{d}/r1.fq"),
        "-2",
        &format!("{d}/r2.fq"),
        "-0",
        &format!("{d}/r0.fq"),
        "-s",
        &format!("{d}/rs.fq"),
        sam,
    ]);
    std::fs::write(dir.join("all.fq"), fq(&["fastq", "-N", "-i", "--index-format", "i*i*", sam]))
        .unwrap();
    let cases: Vec<Vec<String>> = [
        vec!["-1", "{d}/r1.fq", "-2", "{d}/r2.fq"],
        vec!["{d}/r1.fq", "{d}/r2.fq", "-T", "*", "-R", "grp"],
        // No read is neither READ1 nor READ2: an empty file, which samtools calls truncated.
        vec!["-0", "{d}/r0.fq"],
        vec!["-0", "{d}/rs.fq", "-T", "NM,RG", "--order", "XO"],
        vec!["-s", "{d}/all.fq", "-i", "--order", "XO:7", "-r", "ID:x", "-r", "SM:y"],
        vec!["{d}/all.fq", "-N", "-U"],
        vec!["{d}/rs.fq", "-T", ""],
        vec!["{d}/r1.fq", "{d}/rs.fq"],
    ]
    .iter()
    .map(|c| c.iter().map(|a| a.replace("{d}", &d)).collect())
    .collect();
    for case in &cases {
        let mut args = vec!["import".to_string(), "--no-PG".to_string()];
        args.extend(case.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (m, o) = (run(&mdsam_bin(), &refs), run(&oracle, &refs));
        let context = format!("{args:?}");
        assert_eq!(m.status.code(), o.status.code(), "{context}: exit status");
        assert_eq!(
            String::from_utf8_lossy(&m.stderr),
            String::from_utf8_lossy(&o.stderr),
            "{context}"
        );
        assert_same_sam(&m.stdout, &o.stdout, &context);
        if !o.status.success() {
            continue;
        }
        // BAM output, read back by the oracle.
        let mut bam_args = args.clone();
        bam_args.extend(["-o".to_string(), format!("{d}/m.bam")]);
        let refs: Vec<&str> = bam_args.iter().map(String::as_str).collect();
        assert!(run(&mdsam_bin(), &refs).status.success(), "{context}: BAM output");
        let from_bam = sam_without_pg(&to_sam(&oracle, &dir.join("m.bam")));
        assert_same_sam(&from_bam, &o.stdout, &format!("{context} as BAM"));
    }
}
