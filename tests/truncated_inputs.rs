//! Files cut short on a block (BAM, bgzipped SAM) or container (CRAM) boundary, queried with
//! the whole file's index: htslib reads what is there, and says so. Each run's stdout, stderr
//! and exit status are compared with the samtools 1.24 oracle's:
//! - a region whose first block lies past the cut fails (`BGZF block offset … set beyond block
//!   size 0`), where mdsam used to read nothing and exit 0;
//! - reading to the end of a BGZF input that has no EOF marker block warns
//!   (`[W::bgzf_read_block]`): a bgzipped SAM, or a BAM from a pipe (a BAM file warns on
//!   opening instead, once);
//! - a CRAM read to its end without the EOF container warns once (`[W::hts_close]`).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_outcome, mdsam_bin, oracle, oracle_ok, scratch_dir, simulated_fasta, simulated_sam,
};

/// `tool args…` with `stdin` fed from `piped` when given.
fn run_with(tool: &Path, args: &[&str], piped: Option<&[u8]>) -> Output {
    let mut command = Command::new(tool);
    command.args(args).env("MDSAM_SAMTOOLS", "/bin/false").stdout(Stdio::piped());
    command.stdin(if piped.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = command.stderr(Stdio::piped()).spawn().expect("run");
    if let Some(bytes) = piped {
        let mut stdin = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || stdin.write_all(&bytes));
    }
    child.wait_with_output().expect("wait")
}

/// The offset of the first BGZF block boundary at or past half of `data`.
fn block_boundary_past_half(data: &[u8]) -> usize {
    let mut at = 0;
    while at < data.len() / 2 {
        at += usize::from(u16::from_le_bytes([data[at + 16], data[at + 17]])) + 1;
    }
    at
}

/// The start of the container that the `.crai` (gzipped text) lists at line `line`.
fn container_offset(crai: &Path, line: usize) -> usize {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(crai).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines().nth(line).unwrap().split('\t').nth(3).unwrap().parse().unwrap()
}

/// `name` holding the first `len` bytes of `whole`, with `whole`'s index beside it.
fn cut(dir: &Path, whole: &Path, index_suffix: &str, name: &str, len: usize) -> String {
    let data = std::fs::read(whole).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, &data[..len]).unwrap();
    let index = format!("{}{index_suffix}", whole.display());
    std::fs::copy(index, format!("{}{index_suffix}", path.display())).unwrap();
    path.to_str().unwrap().to_string()
}

/// Compares mdsam with the oracle on every `(args, stdin)` case: the same stdout, status and
/// warnings; where samtools fails (its several lines), mdsam's one error line names the file.
fn same_as_oracle(oracle: &Path, cases: &[(Vec<&str>, Option<&[u8]>)]) {
    for (args, piped) in cases {
        let ours = run_with(&mdsam_bin(), args, *piped);
        let theirs = run_with(oracle, args, *piped);
        let context = format!("{args:?} (stdin: {})", piped.is_some());
        if theirs.status.success() {
            assert_same_outcome(&ours, &theirs, &context);
            continue;
        }
        assert_eq!(ours.status.code(), theirs.status.code(), "{context}");
        assert!(ours.stdout == theirs.stdout, "stdout of {context} differs");
        let (ours, theirs) =
            (String::from_utf8_lossy(&ours.stderr), String::from_utf8_lossy(&theirs.stderr));
        let warnings = |text: &str| {
            text.lines().filter(|l| l.starts_with("[W::")).map(str::to_string).collect::<Vec<_>>()
        };
        assert_eq!(warnings(&ours), warnings(&theirs), "warnings of {context}");
        let errors: Vec<&str> = ours.lines().filter(|l| !l.starts_with("[W::")).collect();
        let file = args.iter().find(|a| a.contains("cut.")).unwrap();
        assert!(errors.len() == 1 && errors[0].contains(file), "{context}: {ours}");
    }
}

#[test]
fn cut_files_fail_or_warn_as_htslib() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("truncated_inputs");
    let opts = SimulateOptions {
        pairs: 20_000,
        n_refs: 1,
        ref_len: 2_000_000,
        order: Order::Coordinate,
        ..Default::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let (sam, fasta) = (sam.to_str().unwrap(), fasta.to_str().unwrap());
    let bam = dir.join("whole.bam");
    let sam_gz = dir.join("whole.sam.gz");
    let cram = dir.join("whole.cram");
    let (b, s, c) = (bam.to_str().unwrap(), sam_gz.to_str().unwrap(), cram.to_str().unwrap());
    oracle_ok(&oracle, &["view", "-b", "-o", b, sam]);
    oracle_ok(&oracle, &["view", "-h", "--output-fmt", "sam.gz", "-o", s, sam]);
    oracle_ok(
        &oracle,
        &["view", "-C", "-T", fasta, "--output-fmt-option", "seqs_per_slice=2000", "-o", c, sam],
    );
    for path in [b, s, c] {
        oracle_ok(&oracle, &["index", path]);
    }
    let past = "chr1:1900000-1950000";
    let before = "chr1:1000-5000";

    let bam_bytes = std::fs::read(&bam).unwrap();
    let half = block_boundary_past_half(&bam_bytes);
    let cut_bam = cut(&dir, &bam, ".bai", "cut.bam", half);
    let piped = &bam_bytes[..half];
    same_as_oracle(
        &oracle,
        &[
            (vec!["view", "-c", &cut_bam, past], None),
            (vec!["view", "-c", &cut_bam, before], None),
            (vec!["view", "-c", &cut_bam], None),
            (vec!["view", "-c", "-"], Some(piped)),
        ],
    );

    let gz_bytes = std::fs::read(&sam_gz).unwrap();
    let half = block_boundary_past_half(&gz_bytes);
    let suffix = if Path::new(&format!("{s}.csi")).exists() { ".csi" } else { ".bai" };
    let cut_gz = cut(&dir, &sam_gz, suffix, "cut.sam.gz", half);
    same_as_oracle(
        &oracle,
        &[
            (vec!["view", "-c", &cut_gz, past], None),
            (vec!["view", "-c", &cut_gz, before], None),
            (vec!["view", "-c", &cut_gz], None),
            (vec!["view", "-c", "-"], Some(&gz_bytes[..half])),
            (vec!["view", "-c", s], None),
        ],
    );

    let crai = format!("{c}.crai");
    let at = container_offset(Path::new(&crai), 10);
    let cut_cram = cut(&dir, &cram, ".crai", "cut.cram", at);
    let cram_bytes = std::fs::read(&cram).unwrap();
    same_as_oracle(
        &oracle,
        &[
            (vec!["view", "-c", "-T", fasta, &cut_cram, past], None),
            (vec!["view", "-c", "-T", fasta, &cut_cram, before], None),
            (vec!["view", "-c", "-T", fasta, &cut_cram], None),
            (vec!["view", "-c", "-T", fasta, "-"], Some(&cram_bytes[..at])),
        ],
    );
}
