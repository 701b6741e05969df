//! Pipes closing early: `mdsam view big.bam | head` ends quietly, as samtools does.

use std::process::Command;

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, scratch_dir, simulated_sam};

#[test]
fn closed_pipe_ends_quietly() {
    let dir = scratch_dir("signals_pipe");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 50000, ..Default::default() });
    let bam = dir.join("in.bam");
    let out = Command::new(mdsam_bin())
        .args(["view", "-b", "-o"])
        .arg(&bam)
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    let script = format!(
        "set -o pipefail; '{}' view '{}' | head -n 3",
        mdsam_bin().display(),
        bam.display()
    );
    let out = Command::new("bash").arg("-c").arg(&script).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    // Like samtools, mdsam is ended by SIGPIPE (status 141 in the shell), not by an error exit.
    assert!(matches!(out.status.code(), Some(0) | Some(141)), "{:?}", out.status);
}
