//! `predict`: one profile projected onto a target at some thread counts, with intervals.
//!
//! Threads are samtools' `-@` (extra threads): mdsam runs `-@ N` on a pool of N+1 workers, so
//! `predict --threads 1` means two workers. On the profiling host the model is anchored to the
//! measured run: the ratio of the profile's wall time to the modelled time at the profiled
//! thread count is carried as a factor to the other thread counts. A factor, not an addition,
//! because what the model does not see grows with the run: waiting for a CPU on a shared host,
//! page-cache misses, stalls beyond the counted ones; when the run overlapped more than modelled
//! the factor is below 1.

use serde::Serialize;

use crate::csd;
use crate::energy;
use crate::error::Error;
use crate::host::{Bound, Links};
use crate::mc::{Interval, Rng};
use crate::params::{self, Kind, Machine};
use crate::pipeline::{self, RunTime};
use crate::profile::Profile;
use crate::work::{RunWork, decompose};

#[derive(Clone, Debug, Serialize)]
pub struct PhasePrediction {
    pub name: String,
    pub time_s: f64,
    pub bound: Bound,
    pub placement: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    pub command: String,
    pub target: String,
    /// samtools `-@`.
    pub threads: u32,
    pub time_s: Interval,
    pub energy_j: Interval,
    pub bound: Bound,
    pub links: Links,
    /// The profiled run's peak RSS, or its projection under `--reads`.
    pub peak_rss_bytes: f64,
    pub phases: Vec<PhasePrediction>,
    pub warnings: Vec<String>,
}

/// The anchoring of the host target to the measured run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchor {
    None,
    Scale(f64),
}

impl Anchor {
    pub fn apply(self, t: f64) -> f64 {
        match self {
            Anchor::None => t,
            Anchor::Scale(k) => t * k,
        }
    }
}

/// Builds a target by name.
pub fn machine(
    name: &str,
    profile: &Profile,
    fam_latency_ns: f64,
    drives: f64,
) -> Result<Machine, Error> {
    Ok(match name {
        "host" => params::host(profile),
        "blade" => params::blade(),
        "sdflex" => params::sdflex(false),
        "sdflex-literal" => params::sdflex(true),
        "fam" => params::fam(profile, fam_latency_ns),
        "csd" => params::csd(profile, drives),
        _ => {
            return Err(Error::Usage(format!(
                "unknown target \"{name}\" (host, blade, sdflex, sdflex-literal, fam, csd)"
            )));
        }
    })
}

/// One evaluation: the run's time and energy on `m` with `workers` workers.
pub fn evaluate(work: &RunWork, m: &Machine, workers: f64) -> (RunTime, f64) {
    match m.kind {
        Kind::Csd => {
            let r = csd::compose(work, m, workers);
            let busy = csd::isp_busy_s(&r, m);
            let e = energy::csd_j(m, &r, busy);
            (r, e)
        }
        _ => {
            let r = pipeline::compose(work, m, workers);
            let e = energy::server_j(m, &r);
            (r, e)
        }
    }
}

/// How the host model at the profiled thread count relates to the measured wall time.
pub fn anchor(work: &RunWork, host: &Machine) -> Anchor {
    if work.wall_s <= 0.0 {
        return Anchor::None;
    }
    let modelled = evaluate(work, host, work.workers).0.time;
    if modelled <= 0.0 { Anchor::None } else { Anchor::Scale(work.wall_s / modelled) }
}

pub fn predict(
    profile: &Profile,
    m: &Machine,
    threads: u32,
    samples: usize,
    seed: u64,
) -> Prediction {
    let work = decompose(profile);
    let workers = threads as f64 + 1.0;
    let anchor = if m.name == "host" { anchor(&work, m) } else { Anchor::None };
    let (nominal, e_nominal) = evaluate(&work, m, workers);
    let mut rng = Rng::new(seed);
    let (mut ts, mut es) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for _ in 0..samples {
        let (r, e) = evaluate(&work, &m.sampled(&mut rng), workers);
        ts.push(anchor.apply(r.time));
        es.push(e);
    }
    let mut warnings = Vec::new();
    if profile.run.calibration.is_none() {
        warnings.push("profile has no calibration: host latency, bandwidth and codec rates are class-D defaults".into());
    }
    if profile.workers() <= 1 {
        warnings.push("one-worker profile: serial/parallel split from per-kind priors (class D); profile at -@ 1 or more to measure it".into());
    }
    if workers > m.get("hw_threads") {
        warnings.push(format!(
            "{workers} workers oversubscribe {} hardware threads",
            m.get("hw_threads")
        ));
    }
    // The class C/D parameters a prediction leans on most, named in every report.
    const LEANS_ON: [&str; 6] =
        ["l_flex_ns", "b_flex_gbs", "s_arm", "s_core", "b_ch_gbs", "fam_bw_gbs"];
    for p in m.weak_params().into_iter().filter(|p| LEANS_ON.contains(&p.key) && p.high > p.low) {
        warnings.push(format!(
            "uses class-{:?} {} = {} [{}, {}]: {}",
            p.class, p.key, p.nominal, p.low, p.high, p.source
        ));
    }
    if m.kind == Kind::Fam {
        warnings.push(
            "FAME has no timing model: this is a fabric memory with the given latency, not FAME"
                .into(),
        );
    }
    if m.kind == Kind::Csd {
        warnings.push("CSD placement is per phase share (chunk granularity), not Conduit's per instruction; compressed BAM rules out PuD/IFP".into());
    }
    Prediction {
        command: profile.run.command.clone(),
        target: m.name.clone(),
        threads,
        time_s: Interval::from_samples(anchor.apply(nominal.time), ts),
        energy_j: Interval::from_samples(e_nominal, es),
        bound: nominal.bound,
        links: nominal.links,
        peak_rss_bytes: profile.run.peak_rss_bytes,
        phases: nominal
            .phases
            .iter()
            .map(|p| PhasePrediction {
                name: p.name.clone(),
                time_s: p.time,
                bound: p.bound,
                placement: p.placement.clone(),
            })
            .collect(),
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample;

    fn prof() -> Profile {
        let mut p = sample(
            "sort",
            "staged",
            &[
                ("read", "inflate_parse", 0.2, 2.0),
                ("sort", "sort", 0.3, 1.5),
                ("write", "format_deflate", 0.1, 4.0),
            ],
        );
        p.run.wall_s += 0.5; // waiting the model does not see
        p
    }

    #[test]
    fn test_host_at_the_profiled_threads_reproduces_the_measured_wall() {
        let p = prof();
        let m = machine("host", &p, 0.0, 0.0).unwrap();
        let pr = predict(&p, &m, 0, 50, 7);
        assert!((pr.time_s.nominal / p.run.wall_s - 1.0).abs() < 1e-9, "{pr:?}");
        // Two workers on two cores: faster, but not twice (serial parts).
        let two = predict(&p, &m, 1, 50, 7);
        assert!(
            two.time_s.nominal < pr.time_s.nominal && two.time_s.nominal > pr.time_s.nominal / 2.0
        );
        assert!(two.time_s.low <= two.time_s.nominal && two.time_s.nominal <= two.time_s.high);
    }

    #[test]
    fn test_same_seed_same_json() {
        let p = prof();
        let m = machine("sdflex", &p, 0.0, 0.0).unwrap();
        let a = serde_json::to_string(&predict(&p, &m, 143, 100, 7)).unwrap();
        let b = serde_json::to_string(&predict(&p, &m, 143, 100, 7)).unwrap();
        assert_eq!(a, b);
        assert!(a.contains("l_flex_ns"));
    }

    #[test]
    fn test_doubling_the_input_doubles_the_time() {
        let p = prof();
        let mut m = machine("blade", &p, 0.0, 0.0).unwrap();
        m.fix("cmd_start_s", 0.0, "test");
        let a = predict(&p, &m, 31, 0, 1).time_s.nominal;
        let b = predict(&p.scaled(2.0), &m, 31, 0, 1).time_s.nominal;
        assert!((b / a - 2.0).abs() < 0.1, "{a} {b}");
    }

    #[test]
    fn test_csd_with_zero_drives_is_the_host_and_drives_help_reading() {
        let p = prof();
        let host = predict(&p, &machine("host", &p, 0.0, 0.0).unwrap(), 1, 0, 1);
        let zero = predict(&p, &machine("csd", &p, 0.0, 0.0).unwrap(), 1, 0, 1);
        let many = predict(&p, &machine("csd", &p, 0.0, 36.0).unwrap(), 1, 0, 1);
        // The host target is anchored to the measured run; compare unanchored phase sums.
        let sum = |x: &Prediction| x.phases.iter().map(|p| p.time_s).sum::<f64>();
        assert!((sum(&zero) - sum(&host)).abs() < 1e-9 * sum(&host).max(1.0));
        assert!(sum(&many) < sum(&zero));
        assert!(many.phases[0].placement.contains("ISP"), "{:?}", many.phases[0]);
        assert_eq!(many.phases[1].placement, "host");
    }

    #[test]
    fn test_unknown_target_is_a_usage_error() {
        assert!(matches!(machine("cray", &prof(), 0.0, 0.0), Err(Error::Usage(_))));
    }
}
