//! One FASTA access layer (issue 41, `io::fasta`): every command that reads a FASTA gets the
//! bases, the `.fai`/`.gzi` bytes and the messages samtools 1.24 gives, from a plain and a BGZF
//! FASTA with lower-case bases and a short last line; and `reference -@` is taken, now that
//! thread counts are passed down instead of read from the ambient pool. (The layering rules that
//! keep FASTA parsing in `io::fasta` and thread counts passed are in tests/layering/.)

use std::path::{Path, PathBuf};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, sam_records, scratch_dir,
};

/// Two references (60-base lines, the last one short, some bases lower case) and reads on them,
/// one with a mismatch, as SAM text without MD/NM.
fn write_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let base = |i: usize| b"ACGTTGCAAGCTTCGA"[(i * 7 + i / 5) % 16] as char;
    let seq1: String = (0..250).map(base).collect();
    let seq2: String = (0..130).map(|i| base(i + 3)).collect();
    let mut fasta = String::new();
    for (name, seq) in [("chr1", &seq1), ("chr2", &seq2)] {
        fasta.push_str(&format!(">{name} description\n"));
        for (i, line) in seq.as_bytes().chunks(60).enumerate() {
            let line = String::from_utf8(line.to_vec()).unwrap();
            fasta.push_str(&if i == 1 { line.to_lowercase() } else { line });
            fasta.push('\n');
        }
    }
    let fasta_path = dir.join("ref.fa");
    std::fs::write(&fasta_path, fasta).unwrap();
    let mut sam =
        String::from("@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:chr1\tLN:250\n@SQ\tSN:chr2\tLN:130\n");
    let reads =
        [("chr1", 1usize, &seq1), ("chr1", 55, &seq1), ("chr1", 200, &seq1), ("chr2", 40, &seq2)];
    for (i, (chr, pos, seq)) in reads.into_iter().enumerate() {
        let mut bases = seq[pos - 1..pos + 39].to_string();
        if i == 1 {
            bases.replace_range(10..11, if &bases[10..11] == "A" { "C" } else { "A" });
        }
        let qual = "I".repeat(40);
        sam.push_str(&format!("r{i}\t0\t{chr}\t{pos}\t60\t40M\t*\t0\t0\t{bases}\t{qual}\n"));
    }
    let sam_path = dir.join("in.sam");
    std::fs::write(&sam_path, sam).unwrap();
    (sam_path, fasta_path)
}

fn text(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
}

#[test]
fn faidx_index_files_and_regions_are_samtools_bytes() {
    let Some(oracle) = oracle() else { return };
    let mdsam = mdsam_bin();
    let dir = scratch_dir("front_hall_fasta_faidx");
    let (_, fasta) = write_inputs(&dir);
    let fa = fasta.to_str().unwrap();
    // A BGZF copy, written by the oracle's faidx.
    let bgzf = dir.join("ref.fa.gz");
    oracle_ok(&oracle, &["faidx", fa, "chr1", "chr2", "-o", bgzf.to_str().unwrap()]);
    let gz = bgzf.to_str().unwrap();
    for input in [fa, gz] {
        run_ok(&oracle, &["faidx", input]);
        let expected =
            (text(Path::new(&format!("{input}.fai"))), std::fs::read(format!("{gz}.gzi")));
        let _ = std::fs::remove_file(format!("{input}.fai"));
        let _ = std::fs::remove_file(format!("{gz}.gzi"));
        run_ok(&mdsam, &["faidx", input]);
        let got = (text(Path::new(&format!("{input}.fai"))), std::fs::read(format!("{gz}.gzi")));
        assert_eq!(got.0, expected.0, "{input}.fai");
        assert_eq!(got.1.ok(), expected.1.ok(), "{gz}.gzi after indexing {input}");
        let regions = ["chr1:55-130", "chr2", "chr1:240-300", "chr2:0-5", "chr3"];
        for args in [&regions[..4], &["-i", "chr1:2-70"], &["-n", "25", "chr2:3-100"], &regions[..]]
        {
            let mut full = vec!["faidx", input];
            full.extend_from_slice(args);
            let want = run(&oracle, &full);
            let got = run(&mdsam, &full);
            assert_eq!(got.stdout, want.stdout, "faidx {input} {args:?}");
            // The oracle (pysam) passes stderr on in its own order: the lines, sorted.
            let lines = |o: &std::process::Output| {
                let mut l: Vec<String> =
                    String::from_utf8_lossy(&o.stderr).lines().map(str::to_string).collect();
                l.sort();
                l
            };
            assert_eq!(lines(&got), lines(&want), "faidx {input} {args:?} stderr");
            assert_eq!(got.status.code(), want.status.code(), "faidx {input} {args:?} status");
        }
    }
}

#[test]
fn commands_reading_a_reference_get_samtools_bases() {
    let Some(oracle) = oracle() else { return };
    let mdsam = mdsam_bin();
    let dir = scratch_dir("front_hall_fasta_commands");
    let (sam, fasta) = write_inputs(&dir);
    let (sam, fa) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    // calmd loads the FASTA through its .fai (built on the way).
    let want = oracle_ok(&oracle, &["calmd", sam, fa]).stdout;
    let got = run_ok(&mdsam, &["calmd", sam, fa]).stdout;
    assert_same_sam(&sam_records(&got), &sam_records(&want), "calmd");
    // mpileup -f reads the FASTA whole.
    let args = ["mpileup", "-f", fa, sam];
    assert_eq!(run_ok(&mdsam, &args).stdout, run_ok(&oracle, &args).stdout, "mpileup -f");
    // CRAM: mdsam's written against -T, decoded by both as the oracle's own CRAM decodes (with
    // the MD and NM htslib adds).
    let (cram, theirs) = (dir.join("out.cram"), dir.join("oracle.cram"));
    run_ok(&mdsam, &["view", "-C", "-T", fa, "-o", cram.to_str().unwrap(), sam]);
    run_ok(&oracle, &["view", "-C", "-T", fa, "-o", theirs.to_str().unwrap(), sam]);
    let decoded = run_ok(&oracle, &["view", "-h", "-T", fa, cram.to_str().unwrap()]).stdout;
    let plain = run_ok(&oracle, &["view", "-h", "-T", fa, theirs.to_str().unwrap()]).stdout;
    assert_same_sam(&sam_records(&decoded), &sam_records(&plain), "mdsam's CRAM by samtools");
    let ours = run_ok(&mdsam, &["view", "-h", "-T", fa, cram.to_str().unwrap()]).stdout;
    assert_same_sam(&sam_records(&ours), &sam_records(&plain), "mdsam's CRAM by mdsam");
    // A missing reference: the same message and status.
    let args = ["calmd", sam, "absent.fa"];
    let (want, got) = (run(&oracle, &args), run(&mdsam, &args));
    assert_eq!(got.status.code(), want.status.code(), "calmd absent.fa status");
    let last = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or_default().to_string()
    };
    assert_eq!(last(&got), last(&want), "calmd absent.fa message");
}

#[test]
fn reference_takes_its_thread_count() {
    let Some(oracle) = oracle() else { return };
    let mdsam = mdsam_bin();
    let dir = scratch_dir("front_hall_fasta_reference_threads");
    let (sam, _) = write_inputs(&dir);
    let gz = dir.join("in.sam.gz");
    let gz = gz.to_str().unwrap();
    // A region of a BGZF SAM: the lines are parsed by `-@` threads, the output is the same.
    oracle_ok(&oracle, &["view", "-h", "-o", gz, sam.to_str().unwrap()]);
    oracle_ok(&oracle, &["index", gz]);
    for threads in ["0", "1", "3"] {
        let args = ["reference", "-q", "-@", threads, "-r", "chr1:20-220", gz];
        let want = run_ok(&oracle, &args).stdout;
        assert_eq!(run_ok(&mdsam, &args).stdout, want, "reference -@ {threads}");
    }
}
