//! `--profile FILE` on every command: the JSON of `hw-model/PROFILE.md`, with the phases each
//! command documents, counters that agree with the files, and output unchanged by profiling.

use std::path::Path;

use hw_model::profile::Profile;
use mdsam::simulate::{Order, SimulateOptions};
use serde_json::Value;

use crate::support::{mdsam_bin, run_ok, scratch_dir, simulated_sam};

fn profile_of(dir: &Path, name: &str, args: &[&str]) -> Value {
    let path = dir.join(format!("{name}.json"));
    let mut full: Vec<&str> = vec![args[0], "--profile", path.to_str().unwrap()];
    full.extend_from_slice(&args[1..]);
    run_ok(&mdsam_bin(), &full);
    let text = std::fs::read_to_string(&path).expect("profile written");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: invalid JSON ({e}):\n{text}"))
}

fn phase_names(p: &Value) -> Vec<String> {
    p["phases"].as_array().unwrap().iter().map(|ph| ph["name"].as_str().unwrap().into()).collect()
}

fn phase<'a>(p: &'a Value, name: &str) -> &'a Value {
    p["phases"].as_array().unwrap().iter().find(|ph| ph["name"] == name).unwrap()
}

fn count_records(path: &Path) -> u64 {
    let out = run_ok(&mdsam_bin(), &["view", "-c", path.to_str().unwrap()]);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// The checks every profile passes.
fn check_common(p: &Value, command: &str, phases: &[&str], input: &Path, output: Option<&Path>) {
    // One schema: read into hw-model's types and written back, nothing is dropped (a field the
    // types lack) and nothing added (a field mdsam did not write).
    let read = Profile::parse(&p.to_string(), command).expect("hw-model reads the profile");
    assert_eq!(&serde_json::to_value(&read).unwrap(), p, "{command}: the profile's fields");
    assert_eq!(p["format"], "mdsam-profile");
    assert_eq!(p["version"], 1);
    let run = &p["run"];
    assert_eq!(run["command"], command);
    assert_eq!(phase_names(p), phases, "{command}: phases");
    assert_eq!(run["input_bytes"].as_u64().unwrap(), size(input), "{command}: input_bytes");
    if let Some(out) = output {
        assert_eq!(run["output_bytes"].as_u64().unwrap(), size(out), "{command}: output_bytes");
        assert_eq!(
            phase(p, "write")["bytes_written"].as_u64().unwrap(),
            size(out),
            "{command}: bytes_written"
        );
    }
    assert!(run["peak_rss_bytes"].as_u64().unwrap() > 1 << 20);
    assert!(run["host"]["cpus"].as_u64().unwrap() >= 1);
    let read = phase(p, "read");
    assert_eq!(read["records"].as_u64().unwrap(), count_records(input), "{command}: records");
    assert_eq!(read["bytes_read"].as_u64().unwrap(), size(input));
    let wall = run["wall_s"].as_f64().unwrap();
    let mut staged_sum = 0.0;
    for ph in p["phases"].as_array().unwrap() {
        let (cpu, serial, pool) = (
            ph["cpu_s"].as_f64().unwrap(),
            ph["serial_cpu_s"].as_f64().unwrap(),
            ph["pool_cpu_s"].as_f64().unwrap(),
        );
        assert!((cpu - serial - pool).abs() < 1e-5, "{command}: cpu split of {ph}");
        assert!(serial >= 0.0 && pool >= 0.0);
        staged_sum += ph["wall_s"].as_f64().unwrap();
    }
    if run["composition"] == "staged" {
        assert!(staged_sum <= wall * 1.01 + 0.01, "{command}: phases {staged_sum} > run {wall}");
    }
}

#[test]
fn every_command_writes_its_phases() {
    let dir = scratch_dir("profile");
    let opts = SimulateOptions {
        pairs: 4_000,
        seed: 11,
        n_refs: 2,
        ref_len: 200_000,
        order: Order::Name,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let bam = dir.join("in.bam");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    run_ok(&mdsam_bin(), &["view", "-b", "-o", &s(&bam), &s(&sam)]);

    let out = dir.join("view.bam");
    let p =
        profile_of(&dir, "view", &["view", "-@", "1", "--no-PG", "-b", "-o", &s(&out), &s(&bam)]);
    check_common(&p, "view", &["read", "filter", "write"], &bam, Some(&out));
    assert_eq!(p["run"]["composition"], "streaming");
    // view never spills: no budget for hw-model's size projection.
    assert_eq!(p["run"]["memory_budget_bytes"], 0);
    assert_eq!(p["run"]["input_format"], "bam");
    assert_eq!(phase(&p, "read")["kind"], "inflate_parse");
    assert_eq!(phase(&p, "write")["kind"], "format_deflate");
    assert!(phase(&p, "read")["bytes_inflated"].as_u64().unwrap() > size(&bam));
    // Profiling does not change the output.
    let plain = dir.join("view-plain.bam");
    run_ok(&mdsam_bin(), &["view", "-@", "1", "--no-PG", "-b", "-o", &s(&plain), &s(&bam)]);
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&plain).unwrap(), "output changed");

    let p = profile_of(&dir, "count", &["view", "-c", "-q", "20", &s(&sam)]);
    check_common(&p, "view", &["read", "filter", "write"], &sam, None);
    assert_eq!(p["run"]["output_format"], "none");
    assert_eq!(phase(&p, "read")["kind"], "parse");

    let fixed = dir.join("fixmate.bam");
    let p = profile_of(&dir, "fixmate", &["fixmate", "-m", &s(&bam), &s(&fixed)]);
    check_common(&p, "fixmate", &["read", "pair", "write"], &bam, Some(&fixed));
    assert_eq!(phase(&p, "pair")["records"], phase(&p, "read")["records"]);

    let sorted = dir.join("sort.bam");
    let p = profile_of(&dir, "sort", &["sort", "-o", &s(&sorted), &s(&fixed)]);
    check_common(&p, "sort", &["read", "sort", "write"], &fixed, Some(&sorted));
    assert_eq!(p["run"]["composition"], "staged");

    let spilled = dir.join("sort-spill.bam");
    let prefix = dir.join("tmp-sort");
    let p = profile_of(
        &dir,
        "sort-spill",
        &["sort", "-m", "1M", "-T", &s(&prefix), "-o", &s(&spilled), &s(&bam)],
    );
    check_common(&p, "sort", &["read", "spill", "sort", "merge"], &bam, None);
    assert_eq!(p["run"]["memory_budget_bytes"], 1 << 20, "sort -m 1M at -@ 0");
    assert!(phase(&p, "spill")["records"].as_u64().unwrap() > 0);

    let collated = dir.join("collate.bam");
    let p = profile_of(&dir, "collate", &["collate", "-o", &s(&collated), &s(&bam)]);
    check_common(&p, "collate", &["read", "collate", "write"], &bam, Some(&collated));

    let marked = dir.join("markdup.bam");
    let p = profile_of(&dir, "markdup", &["markdup", &s(&sorted), &s(&marked)]);
    check_common(&p, "markdup", &["read", "key", "decide", "write"], &sorted, Some(&marked));
    assert!(
        phase(&p, "decide")["random_accesses"].as_u64().unwrap()
            >= phase(&p, "decide")["records"].as_u64().unwrap() / 2
    );

    let piped = dir.join("pipeline.bam");
    let p = profile_of(&dir, "pipeline", &["markdup-pipeline", "-@", "1", &s(&bam), &s(&piped)]);
    check_common(
        &p,
        "markdup-pipeline",
        &["read", "collate", "pair", "sort", "key", "decide", "write"],
        &bam,
        Some(&piped),
    );
    assert_eq!(p["run"]["threads"], 1);
    assert!(p["run"]["memory_budget_bytes"].as_u64().unwrap() > 0, "the default budget found");
}

#[test]
fn a_profile_needs_a_file_name() {
    let out = crate::support::run(&mdsam_bin(), &["view", "--profile"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--profile needs a file name"));
}
