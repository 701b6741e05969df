//! `validate`: the seed-derived checks of design §3.1 that need no profile, each with its
//! measured deviation. The S0 orderings need real profiles: `report` checks those.

use crate::csd::hybrid;
use crate::energy::{s1_saving, stannis_j_per_image};
use crate::fam::{access_ns, critical_latency_ns};
use crate::sched::{Policy, s2_mixed_workload, s2_system, schedule};

#[derive(Clone, Debug)]
pub struct Check {
    pub id: &'static str,
    pub what: String,
    pub got: f64,
    pub want: f64,
    /// Relative tolerance; for orderings `want` is 1 (holds) and `got` is 1 or 0.
    pub tolerance: f64,
}

impl Check {
    pub fn passed(&self) -> bool {
        if self.want == 0.0 {
            return self.got.abs() <= self.tolerance;
        }
        (self.got / self.want - 1.0).abs() <= self.tolerance + 1e-12
    }
}

fn speedup(r_host: f64, r_drive: f64, drives: f64) -> (f64, f64) {
    let s = hybrid(1.0, r_host, r_drive, drives, 0.0, 0.0, 1e15, 1e15);
    ((1.0 / r_host) / s.time, s.share)
}

pub fn checks() -> Vec<Check> {
    let mut v = Vec::new();
    let (speech, speech_share) = speedup(96.0, 5.3, 36.0);
    let (senti, senti_share) = speedup(9496.0, 364.0, 36.0);
    v.push(Check {
        id: "V-S1-1",
        what: "speech-to-text speed-up, 36 CSDs (seed: 3.1x)".into(),
        got: speech,
        want: 3.1,
        tolerance: 0.10,
    });
    v.push(Check {
        id: "V-S1-1",
        what: "sentiment speed-up, 36 CSDs (seed: 2.2x)".into(),
        got: senti,
        want: 2.2,
        tolerance: 0.10,
    });
    v.push(Check {
        id: "V-S1-2",
        what: "speech: data processed in CSDs (seed: 68 %)".into(),
        got: speech_share,
        want: 0.68,
        tolerance: 0.10,
    });
    v.push(Check {
        id: "V-S1-2",
        what: "recommender: data processed in CSDs from its 2.6x (seed: 64 %)".into(),
        got: 1.0 - 1.0 / 2.6,
        want: 0.64,
        tolerance: 0.10,
    });
    v.push(Check {
        id: "V-S1-2",
        what: "sentiment: data processed in CSDs (seed: 56 %)".into(),
        got: senti_share,
        want: 0.56,
        tolerance: 0.10,
    });
    for (name, s, want) in [
        ("speech", speech, 0.67),
        ("recommender (2.6x given)", 2.6, 0.61),
        ("sentiment", senti, 0.54),
    ] {
        v.push(Check {
            id: "V-S1-3",
            what: format!("{name}: energy saving per query (seed: {:.0} %)", want * 100.0),
            got: s1_saving(482.0, 0.28, 36.0, s),
            want,
            tolerance: 0.10,
        });
    }
    for (n, want, tol) in
        [(24.0, 4.02, 0.05), (16.0, 5.05, 0.05), (8.0, 6.84, 0.15), (4.0, 8.30, 0.15)]
    {
        v.push(Check {
            id: "V-S1-4",
            what: format!("Stannis J/image with {n} CSDs (seed: {want})"),
            got: stannis_j_per_image(13.10 * 31.05, 31.05, n, 3.08, 0.28),
            want,
            tolerance: tol,
        });
    }
    let sys = s2_system();
    let w = s2_mixed_workload(2000, 16);
    let run = |p| schedule(&sys, &w, p, 0.0);
    let (c, dm, bw) = (run(Policy::Conduit), run(Policy::Dm), run(Policy::Bw));
    v.push(Check {
        id: "V-S2-2",
        what: format!(
            "conduit faster than DM-only (seed 1.8x; model {:.2}x)",
            dm.makespan_s / c.makespan_s
        ),
        got: f64::from(c.makespan_s < dm.makespan_s),
        want: 1.0,
        tolerance: 0.0,
    });
    v.push(Check {
        id: "V-S2-2",
        what: format!(
            "conduit faster than BW-only (seed 2.0x; model {:.2}x)",
            bw.makespan_s / c.makespan_s
        ),
        got: f64::from(c.makespan_s < bw.makespan_s),
        want: 1.0,
        tolerance: 0.0,
    });
    v.push(Check {
        id: "V-S2-2",
        what: format!(
            "conduit uses less energy than DM (seed -46.8 %; model {:.1} %)",
            (c.energy_j / dm.energy_j - 1.0) * 100.0
        ),
        got: f64::from(c.energy_j < dm.energy_j),
        want: 1.0,
        tolerance: 0.0,
    });
    let (dr, ds) = dm.max_share();
    let (cr, cs) = c.max_share();
    v.push(Check {
        id: "V-S2-2",
        what: format!(
            "DM piles onto one resource ({} {:.0} % vs conduit's {} {:.0} %)",
            dr.name(),
            ds * 100.0,
            cr.name(),
            cs * 100.0
        ),
        got: f64::from(ds > cs),
        want: 1.0,
        tolerance: 0.0,
    });
    let (t_c, t_sw, p, n) = (50.0, 10.0, 10.0, 64.0);
    let l_star = critical_latency_ns(t_c, t_sw, p);
    v.push(Check {
        id: "V-S3-1",
        what: "prefetch model flat below L* (ratio at 0.95 L*)".into(),
        got: access_ns(t_c, 0.95 * l_star, n, t_sw, p) / access_ns(t_c, 90.0, n, t_sw, p),
        want: 1.0,
        tolerance: 0.05,
    });
    v
}

/// What the model does not reproduce, said beside the checks.
pub fn notes() -> Vec<String> {
    let sys = s2_system();
    let w = s2_mixed_workload(2000, 16);
    let (dm, bw) = (schedule(&sys, &w, Policy::Dm, 0.0), schedule(&sys, &w, Policy::Bw, 0.0));
    vec![
        format!(
            "S2 reports DM-offloading 1.1x faster than BW-offloading; on this mixed workload the model has BW {:.2}x faster than DM (DM's sticky placement overloads one resource)",
            dm.makespan_s / bw.makespan_s
        ),
        "S1 recommender: the seed gives no single-drive rate, so its measured 2.6x is an input, not a prediction".into(),
        "S0 orderings need real profiles: `hw-model report` and the mdsam test target hw_model check them".into(),
    ]
}

pub fn render(checks: &[Check]) -> String {
    let mut s = String::new();
    for c in checks {
        s.push_str(&format!(
            "{} {:<7} {:<72} got {:>8.4} want {:>8.4} ({:+.1} %)\n",
            if c.passed() { "PASS" } else { "FAIL" },
            c.id,
            c.what,
            c.got,
            c.want,
            if c.want != 0.0 { (c.got / c.want - 1.0) * 100.0 } else { 0.0 }
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_every_seed_check_passes() {
        let all = checks();
        let failed: Vec<&Check> = all.iter().filter(|c| !c.passed()).collect();
        assert!(failed.is_empty(), "{}", render(&all));
        assert!(all.len() >= 15);
    }

    #[test]
    fn test_a_wrong_figure_fails() {
        let c = Check { id: "x", what: "y".into(), got: 2.5, want: 3.1, tolerance: 0.10 };
        assert!(!c.passed());
    }
}
