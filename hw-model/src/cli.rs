//! `mdsam hw-model …`: the command line over the crate.
//!
//! Profiles are positional arguments, not `--profile`: mdsam takes `--profile FILE` out of every
//! command line to profile the command itself.

use std::path::PathBuf;

use crate::calibrate::{self, AllocCost, Calibration};
use crate::error::Error;
use crate::predict::{machine, predict};
use crate::profile::Profile;
use crate::report;
use crate::sched::{self, Policy};

pub const USAGE: &str = "
Usage: mdsam hw-model <command> [options]

Projects measured mdsam runs (profiles written with --profile FILE) onto other hardware.

Commands:
  calibrate [--allocators LIST] [PROFILE...]
        measure this host (pointer-chase latency, memory bandwidth, inflate/deflate MB/s per
        core, allocator ns/op by threads) and write it into each PROFILE's run.calibration;
        without PROFILE print the calibration as JSON
  predict [options] PROFILE
        --target LIST       host, blade, sdflex, sdflex-literal, fam, csd [host]
        --threads LIST      samtools -@ values (mdsam runs N+1 workers) [the profile's]
        --fam-latency LIST  fabric memory latency in ns for target fam [400]
        --drives LIST       computational storage drives for target csd [36]
        --reads N           project the profile to an input of N reads of the same shape
                            (peak RSS, spilling past the command's memory budget)
        --page-us X         with --reads: µs a 4 KiB page costs the first time it is touched
                            (page fault and clear) [8.5, this project's VM]
        --policy LIST       for csd: conduit, dm, bw, ideal, host-only, isp-only [all]
        --mc N              parameter samples for the intervals [200]
        --seed N            sampling seed [7]
        --json FILE         also write the predictions as JSON
        --svg FILE          and draw them
  report [--svg FILE] [--mc N] [--seed N] [--scale F] DIR
        seed 000's files / pipe / fused comparison of the markdup chain projected onto the
        blade and the Superdome Flex (16-288 threads), from the profiles `record` wrote in DIR;
        --scale multiplies the input size (e.g. to seed 000's sample sizes)
  record [-@ N] [--no-calibrate] IN.bam DIR
        run the chain three ways and seed 000's single commands with --profile into DIR
  validate
        the seed-derived checks (seeds 001-003) with their deviations
";

/// Runs `mdsam hw-model ARGS…`; text goes to stdout.
pub fn run(args: &[String]) -> Result<(), Error> {
    let Some(cmd) = args.first() else { return Err(Error::Usage("no command".into())) };
    let rest = &args[1..];
    match cmd.as_str() {
        "calibrate" => calibrate_cmd(rest),
        "calibrate-alloc" => calibrate_alloc_cmd(rest),
        "predict" => predict_cmd(rest),
        "report" => report_cmd(rest),
        "record" => record_cmd(rest),
        "validate" => {
            let checks = crate::validate::checks();
            print!("{}", crate::validate::render(&checks));
            for n in crate::validate::notes() {
                println!("note: {n}");
            }
            if checks.iter().all(|c| c.passed()) {
                Ok(())
            } else {
                Err(Error::Message("some checks failed".into()))
            }
        }
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(Error::Usage(format!("unknown command \"{other}\""))),
    }
}

/// Options with values and positionals.
struct Args {
    opts: Vec<(String, String)>,
    flags: Vec<String>,
    positionals: Vec<String>,
}

fn parse(args: &[String], with_value: &[&str], flags: &[&str]) -> Result<Args, Error> {
    let mut a = Args { opts: Vec::new(), flags: Vec::new(), positionals: Vec::new() };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        if let Some((k, v)) = x.split_once('=').filter(|(k, _)| with_value.contains(k)) {
            a.opts.push((k.to_string(), v.to_string()));
        } else if with_value.contains(&x.as_str()) {
            let v = it.next().ok_or_else(|| Error::Usage(format!("{x} needs a value")))?;
            a.opts.push((x.clone(), v.clone()));
        } else if flags.contains(&x.as_str()) {
            a.flags.push(x.clone());
        } else if x.starts_with('-') && x.len() > 1 {
            return Err(Error::Usage(format!("unknown option \"{x}\"")));
        } else {
            a.positionals.push(x.clone());
        }
    }
    Ok(a)
}

impl Args {
    fn get(&self, k: &str) -> Option<&str> {
        self.opts.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.as_str())
    }

    fn list(&self, k: &str) -> Vec<String> {
        self.get(k)
            .map(|v| v.split(',').filter(|s| !s.is_empty()).map(String::from).collect())
            .unwrap_or_default()
    }

    fn numbers(&self, k: &str) -> Result<Vec<f64>, Error> {
        self.list(k)
            .iter()
            .map(|s| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| Error::Usage(format!("invalid number \"{s}\" for {k}")))
            })
            .collect()
    }

    fn number(&self, k: &str, default: f64) -> Result<f64, Error> {
        Ok(self.numbers(k)?.first().copied().unwrap_or(default))
    }
}

fn mdsam_exe() -> Result<PathBuf, Error> {
    std::env::current_exe()
        .map_err(|e| Error::Message(format!("cannot find the mdsam binary: {e}")))
}

/// Measures allocator costs by re-running this binary with `MDSAM_ALLOCATOR` set (the choice is
/// fixed before the first allocation, so it cannot change in-process).
fn allocator_costs(allocators: &[String], cpus: usize) -> Vec<AllocCost> {
    let Ok(exe) = mdsam_exe() else { return Vec::new() };
    let mut out = Vec::new();
    for a in allocators {
        for threads in [1, cpus.max(2)] {
            let r = std::process::Command::new(&exe)
                .env("MDSAM_ALLOCATOR", a)
                .args(["hw-model", "calibrate-alloc", &threads.to_string()])
                .output();
            let ns = r
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse::<f64>().ok());
            match ns {
                Some(ns) => out.push(AllocCost {
                    allocator: a.clone(),
                    threads: threads as u32,
                    ns_per_op: ns,
                }),
                None => eprintln!(
                    "[hw-model] allocator {a}: not measured (not run from the mdsam binary?)"
                ),
            }
        }
    }
    out
}

fn calibrate_alloc_cmd(args: &[String]) -> Result<(), Error> {
    let threads: usize = args
        .first()
        .and_then(|t| t.parse().ok())
        .filter(|&t| t > 0)
        .ok_or_else(|| Error::Usage("calibrate-alloc THREADS".into()))?;
    println!("{:.3}", calibrate::alloc_ns_per_op(threads, 400_000));
    Ok(())
}

/// Calibration of this host, allocators included.
pub fn calibrate_host(allocators: &[String]) -> Calibration {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = std::time::Instant::now();
    let mut cal = calibrate::measure(cpus);
    cal.alloc = allocator_costs(allocators, cpus);
    cal.seconds = start.elapsed().as_secs_f64();
    cal
}

fn default_allocators() -> Vec<String> {
    ["system", "mimalloc", "jemalloc", "bump"].map(String::from).to_vec()
}

fn calibrate_cmd(args: &[String]) -> Result<(), Error> {
    let a = parse(args, &["--allocators"], &[])?;
    let allocators =
        if a.get("--allocators").is_some() { a.list("--allocators") } else { default_allocators() };
    for p in &a.positionals {
        Profile::load(p)?; // refuse a bad file before spending seconds measuring
    }
    let cal = calibrate_host(&allocators);
    if a.positionals.is_empty() {
        println!(
            "{}",
            serde_json::to_string_pretty(&cal).map_err(|e| Error::Message(e.to_string()))?
        );
    }
    for p in &a.positionals {
        crate::record::insert_calibration(p, &cal)?;
        eprintln!("[hw-model] calibration written into {p}");
    }
    Ok(())
}

fn predict_cmd(args: &[String]) -> Result<(), Error> {
    let a = parse(
        args,
        &[
            "--target",
            "--threads",
            "--fam-latency",
            "--drives",
            "--policy",
            "--mc",
            "--seed",
            "--json",
            "--svg",
            "--reads",
            "--page-us",
        ],
        &[],
    )?;
    let [path] = a.positionals.as_slice() else {
        return Err(Error::Usage("predict needs one PROFILE".into()));
    };
    for k in ["--threads", "--fam-latency", "--drives", "--mc", "--seed", "--reads", "--page-us"] {
        a.numbers(k)?;
    }
    let mut profile = Profile::load(path)?;
    if a.get("--reads").is_some() {
        let page_s = a.number("--page-us", crate::size::FRESH_PAGE_S * 1e6)? * 1e-6;
        let projection = crate::size::project(&profile, a.number("--reads", 0.0)?, page_s)?;
        for note in &projection.notes {
            println!("[size] {note}");
        }
        println!("[size] peak RSS {:.0} MB", projection.profile.run.peak_rss_bytes / 1e6);
        profile = projection.profile;
    }
    let targets =
        if a.get("--target").is_some() { a.list("--target") } else { vec!["host".into()] };
    let threads: Vec<u32> = {
        let t = a.numbers("--threads")?;
        if t.is_empty() {
            vec![profile.run.threads]
        } else {
            t.into_iter().map(|x| x as u32).collect()
        }
    };
    let lat = {
        let l = a.numbers("--fam-latency")?;
        if l.is_empty() { vec![400.0] } else { l }
    };
    let drives = {
        let d = a.numbers("--drives")?;
        if d.is_empty() { vec![36.0] } else { d }
    };
    let policies: Vec<Policy> = if a.get("--policy").is_some() {
        a.list("--policy")
            .iter()
            .map(|p| {
                Policy::parse(p).ok_or_else(|| Error::Usage(format!("unknown policy \"{p}\"")))
            })
            .collect::<Result<_, _>>()?
    } else {
        Policy::ALL.to_vec()
    };
    let samples = a.number("--mc", 200.0)? as usize;
    let seed = a.number("--seed", 7.0)? as u64;
    let mut preds = Vec::new();
    let mut machines = Vec::new();
    for t in &targets {
        match t.as_str() {
            "fam" => lat.iter().for_each(|&l| machines.push(machine(t, &profile, l, 0.0))),
            "csd" => drives.iter().for_each(|&d| machines.push(machine(t, &profile, 0.0, d))),
            _ => machines.push(machine(t, &profile, 0.0, 0.0)),
        }
    }
    let machines = machines.into_iter().collect::<Result<Vec<_>, _>>()?;
    for m in &machines {
        for &n in &threads {
            preds.push(predict(&profile, m, n, samples, seed));
        }
    }
    print!("{}", report::prediction_table(&preds));
    for p in &preds {
        print!("\n{}", report::phase_table(p));
    }
    for m in machines.iter().filter(|m| m.kind == crate::params::Kind::Csd) {
        let work = crate::work::decompose(&profile);
        let workers = threads[0] as f64 + 1.0;
        let (sys, chunks) = sched::from_run(&work, m, workers);
        println!(
            "\nplacement of {} on {} (chunk granularity; compressed BAM rules out PuD/IFP):",
            work.command, m.name
        );
        for &pol in &policies {
            let o = sched::schedule(&sys, &chunks, pol, 0.0);
            println!(
                "  {:<10} makespan {:>9.4} s  energy {:>9.1} J  host {:>3.0}% ISP {:>3.0}% PuD {:>3.0}% IFP {:>3.0}%  PCIe {:.3e} B",
                pol.name(),
                o.makespan_s,
                o.energy_j,
                o.shares[0] * 100.0,
                o.shares[1] * 100.0,
                o.shares[2] * 100.0,
                o.shares[3] * 100.0,
                o.pcie_bytes
            );
        }
        // With every chunk on the host the scheduler is the analytic host model of the same
        // machine; the host target is that model scaled to the measured run, the CSD target is
        // not (its host part runs on other hardware).
        let host_only = sched::schedule(&sys, &chunks, Policy::HostOnly, 0.0).makespan_s;
        let analytic = crate::pipeline::compose(&work, m, workers).time;
        println!(
            "  host-only {host_only:.4} s vs analytic host model {analytic:.4} s ({:+.1} %){}",
            (host_only / analytic - 1.0) * 100.0,
            match crate::predict::anchor(&work, &crate::params::host(&profile)) {
                crate::predict::Anchor::Scale(k) => format!(
                    "; the host target scales the model by the measured wall time ({k:.2}x): {:.4} s",
                    analytic * k
                ),
                _ => String::new(),
            }
        );
        print!("{}", report::eligibility_table());
    }
    if let Some(out) = a.get("--svg") {
        write_atomically(
            out,
            &report::predictions_svg(
                &preds,
                &format!("{}: hw-model predictions", profile.run.command),
            ),
        )?;
        println!("SVG: {out}");
    }
    if let Some(out) = a.get("--json") {
        let body =
            serde_json::to_string_pretty(&preds).map_err(|e| Error::Message(e.to_string()))?;
        write_atomically(out, &body)?;
    }
    Ok(())
}

pub fn write_atomically(path: &str, body: &str) -> Result<(), Error> {
    let tmp = format!("{path}.tmp.{}", std::process::id());
    std::fs::write(&tmp, body).map_err(|e| Error::file(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::file(path, e)
    })
}

fn report_cmd(args: &[String]) -> Result<(), Error> {
    let a = parse(args, &["--svg", "--mc", "--seed", "--scale"], &[])?;
    let [dir] = a.positionals.as_slice() else {
        return Err(Error::Usage("report needs the DIR that record wrote".into()));
    };
    let scale = a.number("--scale", 1.0)?;
    if scale <= 0.0 {
        return Err(Error::Usage("--scale must be positive".into()));
    }
    let chain = report::Chain::load(dir)?.scaled(scale);
    let samples = a.number("--mc", 200.0)? as usize;
    let seed = a.number("--seed", 7.0)? as u64;
    let rows = report::chain_rows(&chain, &report::s0_points(), samples, seed, true);
    let own = report::chain_rows(&chain, &report::s0_points(), samples, seed, false);
    let input_mb = chain.fused.run.input_bytes / 1e6;
    let files_measured: f64 = chain.files.iter().map(|p| p.run.wall_s).sum();
    println!(
        "markdup chain (collate -> fixmate -m -> sort -> markdup) on {:.1} MB of BAM{}; profiled on a {}-CPU host at -@ {}:",
        input_mb,
        if scale != 1.0 { format!(" (profiles scaled {scale}x)") } else { String::new() },
        chain.fused.host_cpus(),
        chain.fused.run.threads
    );
    println!(
        "  measured here: files {:.2} s (sum of the four commands), fused {:.2} s ({:.2}x)\n",
        files_measured,
        chain.fused.run.wall_s,
        files_measured / chain.fused.run.wall_s.max(1e-9)
    );
    println!(
        "As seed 000 ran it (files and pipe: samtools 1.9's commands; fused: mdsam markdup-pipeline):"
    );
    print!("{}", report::chain_table(&rows));
    println!("\nWith mdsam's own commands in the files and pipe modes:");
    print!("{}", report::chain_table(&own));
    println!(
        "\n'order ok': share of parameter samples in which fused < pipe < files. Threads are worker threads (mdsam -@ threads-1)."
    );
    let (view, sort_n) = (format!("{dir}/view.json"), format!("{dir}/sort-n.json"));
    if std::path::Path::new(&view).is_file() && std::path::Path::new(&sort_n).is_file() {
        let fixmate = &chain.files[1];
        let checks = crate::s0::orderings(
            &Profile::load(&view)?,
            fixmate,
            &Profile::load(&sort_n)?,
            &report::Chain::load(dir)?,
        );
        println!(
            "\nseed 000's orderings from these profiles, scaled to {:.0} M records (samtools 1.9 = orig):",
            crate::s0::S0_LARGE_RECORDS / 1e6
        );
        print!("{}", crate::validate::render(&checks));
    }
    let svg_path = a.get("--svg").map(String::from).unwrap_or_else(|| format!("{dir}/chain.svg"));
    let svg = report::chain_svg(
        &rows,
        &format!("markdup chain, {input_mb:.0} MB BAM: files / pipe / fused (hw-model projection)"),
    );
    write_atomically(&svg_path, &svg)?;
    println!("SVG: {svg_path}");
    Ok(())
}

fn record_cmd(args: &[String]) -> Result<(), Error> {
    let a = parse(args, &["-@"], &["--no-calibrate"])?;
    let [input, dir] = a.positionals.as_slice() else {
        return Err(Error::Usage("record needs IN.bam and DIR".into()));
    };
    let threads = a.number("-@", 0.0)? as u32;
    let cal = (!a.flags.iter().any(|f| f == "--no-calibrate"))
        .then(|| calibrate_host(&default_allocators()));
    let made = crate::record::record(&mdsam_exe()?, input, dir, threads, cal.as_ref())?;
    println!("{} profiles in {dir}", made.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn test_usage_errors() {
        assert!(matches!(run(&[]), Err(Error::Usage(_))));
        assert!(matches!(run(&s(&["frobnicate"])), Err(Error::Usage(_))));
        assert!(matches!(run(&s(&["predict"])), Err(Error::Usage(_))));
        assert!(matches!(run(&s(&["predict", "--bogus", "x"])), Err(Error::Usage(_))));
        assert!(matches!(
            run(&s(&["predict", "--threads", "abc", "x.json"])),
            Err(Error::Usage(_))
        ));
        let e = run(&s(&["predict", "/nonexistent/p.json"])).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/p.json: "), "{e}");
    }

    #[test]
    fn test_predict_writes_json() {
        let dir = std::env::temp_dir().join(format!("hw-model-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = crate::profile::tests::sample(
            "view",
            "streaming",
            &[("read", "inflate_parse", 0.1, 1.0), ("write", "format_deflate", 0.1, 2.0)],
        );
        let path = dir.join("p.json").display().to_string();
        std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
        let out = dir.join("o.json").display().to_string();
        let svg = dir.join("o.svg").display().to_string();
        run(&s(&[
            "predict",
            "--target",
            "host,sdflex,fam,csd",
            "--threads",
            "0,1",
            "--mc",
            "20",
            "--json",
            &out,
            "--svg",
            &svg,
            &path,
        ]))
        .unwrap();
        assert!(std::fs::read_to_string(&svg).unwrap().matches("<rect").count() >= 9);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 8);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn test_predict_reads_projects_the_size() {
        let dir = std::env::temp_dir().join(format!("hw-model-size-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut p = crate::profile::tests::sample(
            "sort",
            "staged",
            &[("read", "inflate_parse", 0.1, 1.0), ("write", "format_deflate", 0.1, 2.0)],
        );
        p.run.memory_budget_bytes = 1e9;
        p.run.peak_rss_bytes = 4e8;
        let path = dir.join("p.json").display().to_string();
        std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
        let predicted = |reads: &str| {
            let out = dir.join(format!("{reads}.json")).display().to_string();
            run(&s(&["predict", "--mc", "5", "--reads", reads, "--json", &out, &path])).unwrap();
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            (v[0]["time_s"]["nominal"].as_f64().unwrap(), v[0]["peak_rss_bytes"].as_f64().unwrap())
        };
        let (t1, rss1) = predicted("1000000");
        let (t10, rss10) = predicted("10000000");
        assert!((t1 / p.run.wall_s - 1.0).abs() < 1e-6, "the profiled size reproduces the run");
        assert!(t10 > 10.0 * t1, "ten times the reads spill past the budget: {t1} -> {t10}");
        assert!(rss1 < rss10 && rss10 <= 1e9);
        let bad = run(&s(&["predict", "--reads", "-5", &path])).unwrap_err();
        assert!(bad.to_string().contains("--reads"), "{bad}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
