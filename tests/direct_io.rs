//! Outputs written with `O_DIRECT` past a threshold (`src/io/direct_write.rs`) hold the same
//! bytes as buffered ones, for every kind of output a command writes.

use std::process::Command;

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, scratch_dir, simulated_sam};

/// The bytes `mdsam ARGS -o OUT IN` writes with `MDSAM_DIRECT_IO` set to `mode`.
fn output_with(
    mode: &str,
    args: &[&str],
    input: &std::path::Path,
    out: &std::path::Path,
) -> Vec<u8> {
    let status = Command::new(mdsam_bin())
        .args(args)
        .arg("-o")
        .arg(out)
        .arg(input)
        .env("MDSAM_DIRECT_IO", mode)
        .status()
        .expect("run mdsam");
    assert!(status.success(), "mdsam {args:?} with MDSAM_DIRECT_IO={mode} failed");
    std::fs::read(out).expect("read the output")
}

#[test]
fn direct_and_buffered_outputs_are_identical() {
    let dir = scratch_dir("direct_io");
    // About 9 MB of SAM: more than a direct-write chunk, with a tail that is not a whole block.
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 15_000, ..Default::default() });
    let out = dir.join("out");
    for args in [
        &["view", "--no-PG", "-h"][..],
        &["view", "--no-PG", "-u"],
        &["view", "--no-PG", "-b", "-@", "2"],
        &["view", "--no-PG", "-O", "sam.gz"],
        &["sort", "--no-PG", "-@", "2"],
    ] {
        let direct = output_with("always", args, &input, &out);
        let buffered = output_with("0", args, &input, &out);
        assert!(direct.len() > 1 << 20, "{args:?}: output too small to test");
        assert!(direct == buffered, "{args:?}: direct and buffered outputs differ");
    }
}
