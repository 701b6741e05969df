//! `workflow/Snakefile` run by the real Snakemake, once with samtools 1.24 and once with mdsam as
//! the `samtools` binary: the classic four-command rules and mdsam's `markdup-pipeline` rule must
//! give what samtools gives (SAM text without `@PG`, stats without `COMMAND`, the CSI index
//! `samtools index -c` builds), with nothing on stderr (job logs) and no temporary file left.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, program_on_path, sam_without_pg, scratch_dir, to_sam,
};

const SAMPLES: [&str; 2] = ["s1", "s2"];

/// Runs the workflow in `workdir` with `samtools` as the samtools binary, up to `target`.
fn snakemake(snakemake: &Path, workdir: &Path, samtools: &Path, tmpdir: &Path, target: &str) {
    std::fs::create_dir_all(tmpdir).unwrap();
    let snakefile = Path::new(env!("CARGO_MANIFEST_DIR")).join("workflow/Snakefile");
    let out = Command::new(snakemake)
        .arg("-s")
        .arg(&snakefile)
        .arg("-d")
        .arg(workdir)
        .args(["--cores", "2"])
        .arg("--default-resources")
        .arg(format!("tmpdir='{}'", tmpdir.display()))
        .arg("--config")
        .arg(format!("samtools={}", samtools.display()))
        .arg(format!("mdsam={}", mdsam_bin().display()))
        .args(["samples=2", "pairs=3000", "--", target])
        .output()
        .expect("snakemake runs");
    assert!(
        out.status.success(),
        "snakemake {target} with {} failed:\n{}\n{}",
        samtools.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn without_command_line(stats: &Path) -> String {
    let text = std::fs::read_to_string(stats).unwrap();
    text.lines().filter(|l| !l.starts_with("COMMAND:")).collect::<Vec<_>>().join("\n")
}

fn inflate(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(file), &mut out).unwrap();
    out
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_in(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn workflow_gives_samtools_results_with_mdsam() {
    let Some(oracle) = oracle() else { return };
    let Some(snakemake_bin) = program_on_path("snakemake", "--version") else { return };
    let dir = scratch_dir("snakemake_workflow");
    let (expected, actual) = (dir.join("samtools"), dir.join("mdsam"));
    snakemake(&snakemake_bin, &expected, &oracle, &dir.join("tmp-samtools"), "classic");
    snakemake(&snakemake_bin, &actual, &mdsam_bin(), &dir.join("tmp-mdsam"), "all");

    for sample in SAMPLES {
        let want_bam = expected.join(format!("results/classic/{sample}.markdup.bam"));
        let want = sam_without_pg(&to_sam(&oracle, &want_bam));
        assert!(want.split(|&b| b == b'\n').filter(|l| !l.starts_with(b"@")).count() > 5000);
        for got_bam in [
            actual.join(format!("results/classic/{sample}.markdup.bam")),
            actual.join(format!("results/pipeline/{sample}.markdup.bam")),
        ] {
            let got = sam_without_pg(&to_sam(&oracle, &got_bam));
            assert_same_sam(&got, &want, &got_bam.display().to_string());
        }
        let sorted = format!("results/classic/{sample}.sorted.bam");
        assert_same_sam(
            &sam_without_pg(&to_sam(&oracle, &actual.join(&sorted))),
            &sam_without_pg(&to_sam(&oracle, &expected.join(&sorted))),
            &sorted,
        );

        let want_stats =
            without_command_line(&expected.join(format!("results/classic/{sample}.markdup.stats")));
        for kind in ["classic", "pipeline"] {
            let got = without_command_line(
                &actual.join(format!("results/{kind}/{sample}.markdup.stats")),
            );
            assert_eq!(got, want_stats, "{kind} stats of {sample}");
        }
        let metrics = actual.join(format!("results/pipeline/{sample}.markdup.metrics"));
        let metrics = std::fs::read_to_string(metrics).unwrap();
        assert!(metrics.contains("## METRICS CLASS\tpicard.sam.DuplicationMetrics\n"));

        // --write-index through ##idx##: the index samtools builds for the same BAM (compared
        // inflated: the BGZF compression of an index may differ).
        for bam in [
            format!("results/classic/{sample}.sorted.bam"),
            format!("results/classic/{sample}.markdup.bam"),
            format!("results/pipeline/{sample}.markdup.bam"),
        ] {
            let reference = dir.join(format!("reference-{sample}.csi"));
            let bam_path = actual.join(&bam);
            crate::support::oracle_ok(
                &oracle,
                &["index", "-c", "-o", reference.to_str().unwrap(), bam_path.to_str().unwrap()],
            );
            let written = inflate(&actual.join(format!("{bam}.csi")));
            assert!(written == inflate(&reference), "{bam}.csi differs from samtools index -c");
        }
    }

    // A job's stderr is a log file, not a terminal: mdsam writes nothing there, as samtools.
    for log in files_in(&actual.join("logs")) {
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.is_empty(), "{} is not empty:\n{text}", log.display());
    }
    // Temporary files under resources.tmpdir are gone once the jobs end.
    let left: Vec<PathBuf> = files_in(&dir.join("tmp-mdsam"));
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// A job whose input is damaged fails with mdsam's exit code 1; Snakemake sees the failure and
/// removes that job's incomplete outputs.
#[test]
fn failing_job_fails_the_workflow() {
    let Some(snakemake_bin) = program_on_path("snakemake", "--version") else { return };
    let dir = scratch_dir("snakemake_failure");
    let workdir = dir.join("run");
    std::fs::create_dir_all(workdir.join("data")).unwrap();
    // A BAM cut in the middle of a block (the workflow would simulate it otherwise).
    let whole = dir.join("whole.bam");
    let status = Command::new(mdsam_bin())
        .args(["simulate", "-n", "2000", "-o"])
        .arg(&whole)
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&whole).unwrap();
    std::fs::write(workdir.join("data/s1.bam"), &bytes[..bytes.len() / 2]).unwrap();

    let snakefile = Path::new(env!("CARGO_MANIFEST_DIR")).join("workflow/Snakefile");
    let out = Command::new(&snakemake_bin)
        .arg("-s")
        .arg(&snakefile)
        .arg("-d")
        .arg(&workdir)
        .args(["--cores", "2", "--config"])
        .arg(format!("samtools={}", mdsam_bin().display()))
        .arg(format!("mdsam={}", mdsam_bin().display()))
        .args(["samples=1", "--", "results/pipeline/s1.markdup.bam"])
        .output()
        .expect("snakemake runs");
    assert!(!out.status.success(), "the workflow must fail on a truncated input");
    assert!(!workdir.join("results/pipeline/s1.markdup.bam").exists(), "no partial output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("non-zero exit status 1"),
        "mdsam's exit code 1 reaches Snakemake:\n{stderr}"
    );
    let log = std::fs::read_to_string(workdir.join("logs/markdup_pipeline/s1.log")).unwrap();
    let last = log.lines().last().unwrap_or_default();
    assert!(
        last.contains("data/s1.bam") && last.contains("truncated"),
        "the error names the file: {log}"
    );
    assert!(!log.contains("panicked"), "{log}");
}
