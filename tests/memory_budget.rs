//! `--max-memory` as a real bound: on input three times the budget, the spilling `sort` and
//! `markdup-pipeline` give the in-memory output, with the child's peak resident memory within
//! 10 % of the budget. And the soak (ignored by default): 20 M reads through
//! `markdup-pipeline --verify` under a budget.
//!
//! Peak memory is the child's `VmHWM` (high-water RSS, kernel-kept) from `/proc/PID/status`,
//! read while polling for its exit: only the last poll interval can go unseen.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{mdsam_bin, run_ok, scratch_dir};

/// The budget: large enough that the process's fixed ~20–26 MB sits inside 10 % of it.
const BUDGET: u64 = 160 << 20;

/// A finished child: its stderr, peak RSS in bytes and wall time.
struct Measured {
    stderr: String,
    peak: u64,
    seconds: f64,
}

fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs mdsam with `args` (and `MDSAM_SPILL_REPORT`), polling its peak RSS; panics on failure.
fn measured(args: &[&str]) -> Measured {
    let start = Instant::now();
    let err_path = std::env::temp_dir().join(format!("mdsam-mem-{}.err", std::process::id()));
    let err_file = std::fs::File::create(&err_path).unwrap();
    let mut child = Command::new(mdsam_bin())
        .args(args)
        .env("MDSAM_SPILL_REPORT", "1")
        .stdout(Stdio::null())
        .stderr(err_file)
        .spawn()
        .unwrap();
    let mut peak = 0;
    let status = loop {
        if let Some(hwm) = vm_hwm(child.id()) {
            peak = peak.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    assert!(status.success(), "mdsam {}: {status}\n{stderr}", args.join(" "));
    Measured { stderr, peak, seconds: start.elapsed().as_secs_f64() }
}

/// Uncompressed record bytes of `path` (`mdsam load`: seconds, records, bytes, ...).
fn record_bytes(path: &Path) -> u64 {
    let out = run_ok(&mdsam_bin(), &["load", path.to_str().unwrap()]).stdout;
    let text = String::from_utf8_lossy(&out);
    let line = text.lines().last().unwrap_or_default();
    line.split_whitespace().nth(2).and_then(|b| b.parse().ok()).unwrap_or(0)
}

fn same_file(a: &Path, b: &Path, what: &str) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(x == y, "{what}: spilled output differs from the in-memory output");
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

fn within_budget(m: &Measured, what: &str) {
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "{what}: peak RSS {:.1} MiB for a {:.0} MiB budget ({:.0} s)",
        mb(m.peak),
        mb(BUDGET),
        m.seconds
    );
    assert!(m.peak > 0, "{what}: no RSS reading");
    assert!(
        m.peak <= BUDGET + BUDGET / 10,
        "{what}: peak RSS {:.1} MiB over the {:.0} MiB budget + 10 %",
        mb(m.peak),
        mb(BUDGET)
    );
}

#[test]
fn spilling_sort_and_pipeline_stay_within_the_budget() {
    let dir = scratch_dir("memory-budget");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let prefix = format!("{}/part", tmp.display());
    let input = dir.join("in.bam");
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    // ~740 bytes of records a pair.
    let pairs = (3 * BUDGET / 700).to_string();
    run_ok(&mdsam_bin(), &["simulate", "-n", &pairs, "-@", "1", "-o", &p("in.bam")]);
    let bytes = record_bytes(&input);
    assert!(bytes >= 3 * BUDGET, "input has {bytes} record bytes, not 3 × {BUDGET}");
    let budget = format!("{}", BUDGET);
    let common = ["--no-PG", "-l", "1", "-@", "1"];

    let mut spilled = vec!["sort", "--max-memory", &budget, "-T", &prefix, "-o"];
    let sorted_spilled = p("sorted-spilled.bam");
    spilled.push(&sorted_spilled);
    spilled.extend_from_slice(&common);
    spilled.push(input.to_str().unwrap());
    let m = measured(&spilled);
    within_budget(&m, "sort");
    run_ok(
        &mdsam_bin(),
        &["sort", "--no-PG", "-l", "1", "-@", "1", "-o", &p("sorted.bam"), &p("in.bam")],
    );
    same_file(&dir.join("sorted.bam"), &dir.join("sorted-spilled.bam"), "sort");
    assert_eq!(files_in(&tmp), 0, "sort left temporary files");

    let marked_spilled = p("marked-spilled.bam");
    let mut spilled = vec!["markdup-pipeline", "--verify", "--max-memory", &budget, "-T", &prefix];
    spilled.extend_from_slice(&common);
    spilled.extend([input.to_str().unwrap(), marked_spilled.as_str()]);
    let m = measured(&spilled);
    assert!(m.stderr.contains("spilled:") && m.stderr.contains("verify OK"), "{}", m.stderr);
    within_budget(&m, "markdup-pipeline");
    let mut in_memory = vec!["markdup-pipeline"];
    in_memory.extend_from_slice(&common);
    let marked = p("marked.bam");
    in_memory.extend([input.to_str().unwrap(), marked.as_str()]);
    run_ok(&mdsam_bin(), &in_memory);
    same_file(&dir.join("marked.bam"), &dir.join("marked-spilled.bam"), "markdup-pipeline");
    assert_eq!(files_in(&tmp), 0, "markdup-pipeline left temporary files");
    let _ = std::fs::remove_dir_all(&dir);
}

/// 20 M reads (10 M simulated pairs) through `markdup-pipeline --verify` under a 1 GiB budget.
/// Run with `cargo test --release -- --ignored soak`; `MDSAM_SOAK_INPUT` reuses an input BAM.
#[test]
#[ignore = "soak: 20 M reads, tens of minutes"]
fn soak_markdup_pipeline_20m_reads() {
    let dir = scratch_dir("soak");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let prefix = format!("{}/part", tmp.display());
    let input = match std::env::var("MDSAM_SOAK_INPUT") {
        Ok(path) => std::path::PathBuf::from(path),
        Err(_) => {
            let path = dir.join("in.bam");
            let p = path.to_str().unwrap();
            run_ok(&mdsam_bin(), &["simulate", "-n", "10000000", "-@", "1", "-o", p]);
            path
        }
    };
    let out = dir.join("out.bam");
    let m = measured(&[
        "markdup-pipeline",
        "--verify",
        "--max-memory",
        "1G",
        "-T",
        &prefix,
        "-@",
        "1",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    let verify = m.stderr.lines().find(|l| l.contains("verify OK")).unwrap_or_default();
    let spill = m.stderr.lines().find(|l| l.contains("spilled:")).unwrap_or_default();
    eprintln!(
        "soak: {:.0} s, peak RSS {:.0} MiB\n{spill}\n{verify}",
        m.seconds,
        m.peak as f64 / (1 << 20) as f64
    );
    let inputs: u64 = verify.split_whitespace().find_map(|w| w.parse().ok()).unwrap_or(0);
    assert!(inputs >= 20_000_000, "{verify}");
    assert!(!spill.is_empty(), "the soak did not spill");
    assert_eq!(files_in(&tmp), 0, "temporary files left");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without `--max-memory`, markdup-pipeline budgets for the memory it finds (the cgroup limit or
/// the available memory, `pipeline::memory_limit`), not for none.
#[test]
fn markdup_pipeline_defaults_to_the_memory_it_finds() {
    let dir = scratch_dir("memory-default");
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    run_ok(&mdsam_bin(), &["simulate", "-n", "2000", "-o", &p("in.bam")]);
    let m = measured(&["markdup-pipeline", &p("in.bam"), &p("out.bam")]);
    let want = mdsam::pipeline::memory_limit::System::real().default_budget();
    let want = want.expect("no cgroup limit and no MemAvailable on this machine") as f64;
    let got: f64 = m
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("[markdup-pipeline] memory budget: Some("))
        .and_then(|rest| rest.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no budget reported:\n{}", m.stderr));
    // The available memory moves a little between the two readings.
    assert!((got - want).abs() <= want * 0.1, "budget {got}, expected about {want}");
    assert!(!m.stderr.contains("spilled:"), "2000 pairs spilled:\n{}", m.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
