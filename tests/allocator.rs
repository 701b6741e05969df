//! Run-time allocator choice: `--allocator` and `MDSAM_ALLOCATOR` pick the allocator for the
//! whole process (re-executing when needed), results do not depend on it, and the record store
//! makes almost no allocations per record.

use std::process::Command;

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, scratch_dir, simulated_sam};

const ALLOCATORS: &[&str] = &["system", "mimalloc", "jemalloc", "bump"];

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("mdsam runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn flag_and_environment_choose_the_allocator() {
    for a in ALLOCATORS {
        let v = stdout_of(Command::new(mdsam_bin()).args(["--allocator", a, "--version"]));
        assert!(v.contains(&format!("Allocator: {a}")), "{a}: {v}");
        let v = stdout_of(Command::new(mdsam_bin()).arg("--version").env("MDSAM_ALLOCATOR", a));
        assert!(v.contains(&format!("Allocator: {a}")), "{a}: {v}");
    }
    let out =
        Command::new(mdsam_bin()).args(["--allocator", "tcmalloc", "--version"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown allocator"));
}

#[test]
fn every_allocator_gives_the_same_output() {
    let dir = scratch_dir("allocator_same_output");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 3000, ..Default::default() });
    let sam = sam.to_str().unwrap();
    let mut outputs = Vec::new();
    for a in ALLOCATORS {
        outputs.push(stdout_of(Command::new(mdsam_bin()).args([
            "--allocator",
            a,
            "view",
            "-@",
            "1",
            "-q",
            "10",
            sam,
        ])));
    }
    assert!(!outputs[0].is_empty());
    assert!(outputs.iter().all(|o| o == &outputs[0]));
}

#[test]
fn loading_makes_almost_no_allocations_per_record() {
    let dir = scratch_dir("allocator_load_counts");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 20000, ..Default::default() });
    for a in ALLOCATORS {
        let line = stdout_of(
            Command::new(mdsam_bin())
                .args(["--allocator", a, "load", "-@", "1", sam.to_str().unwrap()])
                .env("MDSAM_COUNT_ALLOCS", "1"),
        );
        let f: Vec<&str> = line.trim().split('\t').collect();
        let records: f64 = f[1].parse().unwrap();
        let allocations: f64 = f[3].parse().unwrap();
        assert!(records >= 40000.0, "{line}");
        assert!(allocations > 0.0, "counting is on: {line}");
        assert!(
            allocations / records < 0.05,
            "{a}: {allocations} allocations for {records} records"
        );
        assert_eq!(f[4], *a);
    }
}
