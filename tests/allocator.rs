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

/// Every command under every allocator: identical output bytes. A free through the wrong
/// allocator would crash mimalloc or jemalloc here, so this also guards the dispatch.
#[test]
fn every_allocator_gives_the_same_output_for_every_command() {
    let dir = scratch_dir("allocator_same_output");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 3000, ..Default::default() });
    let sam = sam.to_str().unwrap().to_string();
    let path = |a: &str, n: &str| dir.join(format!("{a}-{n}")).to_str().unwrap().to_string();
    let mut first: Option<Vec<Vec<u8>>> = None;
    for a in ALLOCATORS {
        let (named, fixed, sorted, marked, piped, viewed) = (
            path(a, "named.bam"),
            path(a, "fixed.bam"),
            path(a, "sorted.bam"),
            path(a, "marked.bam"),
            path(a, "pipeline.bam"),
            path(a, "view.sam"),
        );
        let steps: Vec<Vec<&str>> = vec![
            vec!["view", "-@", "1", "-q", "10", "-o", &viewed, &sam],
            vec!["collate", "-u", "-o", &named, &sam],
            vec!["fixmate", "-m", "-u", &named, &fixed],
            vec!["sort", "-@", "1", "-u", "-o", &sorted, &fixed],
            vec!["markdup", "-u", &sorted, &marked],
            vec!["markdup-pipeline", "-u", &sam, &piped],
        ];
        for step in &steps {
            // --no-PG: @PG command lines hold the (different) file names.
            let mut args = vec!["--allocator", a, step[0], "--no-PG"];
            args.extend(step[1..].iter().copied());
            stdout_of(Command::new(mdsam_bin()).args(&args));
        }
        let outputs: Vec<Vec<u8>> = [&viewed, &named, &fixed, &sorted, &marked, &piped]
            .iter()
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        assert!(outputs.iter().all(|o| !o.is_empty()));
        match &first {
            None => first = Some(outputs),
            Some(f) => assert!(f == &outputs, "{a}: output differs from {}", ALLOCATORS[0]),
        }
    }
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
