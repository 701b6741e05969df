//! mdsam as a drop-in `samtools`: a realistic shell script runs once with samtools 1.24 and once
//! with `mdsam install-shim` on PATH; every output must match (BAM compared as SAM text without
//! `@PG`, stats without the COMMAND line, BAI indexes byte for byte).

use std::path::Path;
use std::process::Command;

use mdsam::simulate::SimulateOptions;

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, sam_without_pg, scratch_dir, simulated_sam, to_sam,
};

fn run_script(samtools_dir: &Path, input: &Path, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    let path = format!("{}:{}", samtools_dir.display(), std::env::var("PATH").unwrap_or_default());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dropin/script.sh");
    let status = Command::new("bash")
        .arg(script)
        .arg(input)
        .arg(out)
        .env("PATH", path)
        .output()
        .expect("bash runs");
    assert!(
        status.status.success(),
        "script failed with {}:\n{}",
        samtools_dir.display(),
        String::from_utf8_lossy(&status.stderr)
    );
}

fn without_command_line(stats: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stats);
    text.lines().filter(|l| !l.starts_with("COMMAND:")).collect::<Vec<_>>().join("\n").into_bytes()
}

#[test]
fn shell_script_gives_identical_outputs() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("dropin_script");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 3000, ..Default::default() });

    let shim = dir.join("shim");
    let out = Command::new(mdsam_bin()).arg("install-shim").arg(&shim).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(shim.join("samtools").exists());

    let oracle_dir = oracle.parent().unwrap();
    let (expected, actual) = (dir.join("oracle"), dir.join("mdsam"));
    run_script(oracle_dir, &input, &expected);
    run_script(&shim, &input, &actual);

    for bam in
        ["filtered.bam", "byname.bam", "fixed.bam", "sorted.bam", "markdup.bam", "pipe_md.bam"]
    {
        let want = sam_without_pg(&to_sam(&oracle, &expected.join(bam)));
        let got = sam_without_pg(&to_sam(&oracle, &actual.join(bam)));
        assert_same_sam(&got, &want, bam);
    }
    for text in ["proper.count", "chr1.count", "chr2.count", "piped.count"] {
        let want = std::fs::read(expected.join(text)).unwrap();
        assert_eq!(std::fs::read(actual.join(text)).unwrap(), want, "{text}");
        assert!(!want.is_empty() && want != b"0\n", "{text} must count something");
    }
    let final_want = sam_without_pg(&std::fs::read(expected.join("final.sam")).unwrap());
    let final_got = sam_without_pg(&std::fs::read(actual.join("final.sam")).unwrap());
    assert_same_sam(&final_got, &final_want, "final.sam");
    let stats_want = without_command_line(&std::fs::read(expected.join("markdup.stats")).unwrap());
    let stats_got = without_command_line(&std::fs::read(actual.join("markdup.stats")).unwrap());
    assert_eq!(String::from_utf8_lossy(&stats_got), String::from_utf8_lossy(&stats_want));
    // Compressed bytes differ between compressors, so each index is checked against what
    // samtools 1.24 builds for mdsam's own BAM.
    for bam in ["sorted.bam", "markdup.bam"] {
        let reference = dir.join(format!("{bam}.oracle.bai"));
        let bam_path = actual.join(bam);
        let args = ["index", "-o", reference.to_str().unwrap(), bam_path.to_str().unwrap()];
        let out = Command::new(&oracle).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let ours = std::fs::read(actual.join(format!("{bam}.bai"))).unwrap();
        assert!(
            ours == std::fs::read(&reference).unwrap(),
            "{bam}.bai differs from samtools index"
        );
    }
}
