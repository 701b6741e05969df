//! Text tables and SVG plots: predictions, and seed 000's files / pipe / fused comparison of the
//! markdup chain projected onto the blade and the Superdome Flex.

use std::fmt::Write as _;

use crate::csd::eligibility;
use crate::error::Error;
use crate::host::Bound;
use crate::mc::{Interval, Rng};
use crate::params::{self, Machine};
use crate::pipeline::{self, RunTime};
use crate::predict::Prediction;
use crate::profile::Profile;
use crate::work::{RunWork, decompose};

/// The four commands of the chain, in order, as `record` names their profiles.
pub const CHAIN: [&str; 4] = ["collate", "fixmate", "sort", "markdup"];

fn iv(i: &Interval) -> String {
    format!("{:.3} [{:.3}-{:.3}]", i.nominal, i.low, i.high)
}

pub fn prediction_table(preds: &[Prediction]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<10} {:<16} {:>4}  {:<28} {:<28} {:<13}",
        "command", "target", "-@", "time s [5-95%]", "energy J [5-95%]", "bottleneck"
    );
    for p in preds {
        let _ = writeln!(
            s,
            "{:<10} {:<16} {:>4}  {:<28} {:<28} {:<13}",
            p.command,
            p.target,
            p.threads,
            iv(&p.time_s),
            iv(&p.energy_j),
            p.bound.name()
        );
    }
    s
}

pub fn phase_table(p: &Prediction) -> String {
    let mut s = format!("{} on {} with -@ {}:\n", p.command, p.target, p.threads);
    s.push_str("  phase          time s  bottleneck     placement\n");
    for ph in &p.phases {
        let _ = writeln!(
            s,
            "  {:<10} {:>10.4}  {:<14} {}",
            ph.name,
            ph.time_s,
            ph.bound.name(),
            ph.placement
        );
    }
    let l = &p.links;
    let _ = writeln!(
        s,
        "  bytes moved: storage {:.3e}, DRAM {:.3e}, UPI/fabric {:.3e}, FAM {:.3e}, PCIe {:.3e}, flash-internal {:.3e}, pipe {:.3e}",
        l.storage, l.dram, l.numa, l.fam, l.pcie, l.flash_internal, l.pipe
    );
    for w in &p.warnings {
        let _ = writeln!(s, "  note: {w}");
    }
    s
}

/// Which resources each phase kind may use, and why.
pub fn eligibility_table() -> String {
    let mut s = String::from("phase kind       ISP  PuD/IFP  why\n");
    for k in [
        "inflate_parse",
        "parse",
        "filter",
        "sort",
        "mate_pair",
        "dup_key",
        "dup_lookup",
        "merge",
        "format_deflate",
        "format",
    ] {
        let e = eligibility(k);
        let yn = |b: bool| if b { "yes" } else { "no" };
        let _ = writeln!(s, "{k:<16} {:<4} {:<8} {}", yn(e.isp), yn(e.pud_ifp), e.why);
    }
    s
}

/// The chain's profiles: the four commands through files (compressed intermediates), the same
/// four with uncompressed output (as they run in a pipe), and the fused `markdup-pipeline`.
pub struct Chain {
    pub files: Vec<Profile>,
    pub pipe: Vec<Profile>,
    pub fused: Profile,
}

impl Chain {
    /// Loads `DIR/files-<cmd>.json`, `DIR/pipe-<cmd>.json` and `DIR/fused.json`.
    pub fn load(dir: &str) -> Result<Chain, Error> {
        let get = |name: String| Profile::load(&format!("{dir}/{name}"));
        Ok(Chain {
            files: CHAIN
                .iter()
                .map(|c| get(format!("files-{c}.json")))
                .collect::<Result<_, _>>()?,
            pipe: CHAIN.iter().map(|c| get(format!("pipe-{c}.json"))).collect::<Result<_, _>>()?,
            fused: get("fused.json".into())?,
        })
    }

    pub fn scaled(&self, f: f64) -> Chain {
        Chain {
            files: self.files.iter().map(|p| p.scaled(f)).collect(),
            pipe: self.pipe.iter().map(|p| p.scaled(f)).collect(),
            fused: self.fused.scaled(f),
        }
    }
}

/// The three modes' times on one machine at `workers`.
pub fn modes(
    files: &[RunWork],
    pipe: &[RunWork],
    fused: &RunWork,
    m: &Machine,
    workers: f64,
) -> [RunTime; 3] {
    [
        pipeline::files(files, m, workers),
        pipeline::pipe(pipe, m, workers),
        pipeline::fused(fused, m, workers),
    ]
}

/// One row of the chain comparison.
#[derive(Clone, Debug)]
pub struct ChainRow {
    pub machine: String,
    pub workers: f64,
    /// files, pipe, fused
    pub times: [Interval; 3],
    pub bounds: [Bound; 3],
    /// Share of parameter samples in which fused < pipe < files holds.
    pub order_holds: f64,
}

/// The chain on each machine and thread count. With `samtools19`, the files and pipe modes run
/// samtools 1.9's commands (as in seed 000: [`crate::s0::orig_command`]); otherwise mdsam's own.
pub fn chain_rows(
    chain: &Chain,
    points: &[(Machine, Vec<f64>)],
    samples: usize,
    seed: u64,
    samtools19: bool,
) -> Vec<ChainRow> {
    let files0: Vec<RunWork> = chain.files.iter().map(decompose).collect();
    let pipe0: Vec<RunWork> = chain.pipe.iter().map(decompose).collect();
    let fused = decompose(&chain.fused);
    let mut rows = Vec::new();
    let mut rng = Rng::new(seed);
    for (m, ns) in points {
        for &n in ns {
            let convert = |v: &[RunWork]| -> Vec<RunWork> {
                if samtools19 {
                    v.iter().map(|c| crate::s0::orig_command(c, n)).collect()
                } else {
                    v.to_vec()
                }
            };
            // samtools 1.9's pipe from the same runs as its files mode (see s0::orderings).
            let (files, pipe) = if samtools19 {
                (convert(&files0), convert(&crate::pipeline::as_piped(&files0)))
            } else {
                (files0.clone(), pipe0.clone())
            };
            let nominal = modes(&files, &pipe, &fused, m, n);
            let mut draws: [Vec<f64>; 3] = Default::default();
            let mut holds = 0usize;
            for _ in 0..samples {
                let r = modes(&files, &pipe, &fused, &m.sampled(&mut rng), n);
                if r[2].time < r[1].time && r[1].time < r[0].time {
                    holds += 1;
                }
                for k in 0..3 {
                    draws[k].push(r[k].time);
                }
            }
            let times = [0, 1, 2]
                .map(|k| Interval::from_samples(nominal[k].time, std::mem::take(&mut draws[k])));
            rows.push(ChainRow {
                machine: m.name.clone(),
                workers: n,
                times,
                bounds: [0, 1, 2].map(|k| nominal[k].bound),
                order_holds: if samples > 0 { holds as f64 / samples as f64 } else { 1.0 },
            });
        }
    }
    rows
}

/// S0's points: the blade at 16, 32, 64 threads and the Superdome Flex at 16…288.
pub fn s0_points() -> Vec<(Machine, Vec<f64>)> {
    vec![
        (params::blade(), vec![16.0, 32.0, 64.0]),
        (params::sdflex(false), vec![16.0, 32.0, 64.0, 144.0, 288.0]),
    ]
}

pub fn chain_table(rows: &[ChainRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<8} {:>7}  {:<26} {:<26} {:<26} {:>7} {:>8}  bottleneck (files/pipe/fused)",
        "machine", "threads", "files s [5-95%]", "pipe s", "fused s", "f/fused", "order ok"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<8} {:>7}  {:<26} {:<26} {:<26} {:>6.2}x {:>7.0}%  {}/{}/{}",
            r.machine,
            r.workers,
            iv(&r.times[0]),
            iv(&r.times[1]),
            iv(&r.times[2]),
            r.times[0].nominal / r.times[2].nominal,
            r.order_holds * 100.0,
            r.bounds[0].name(),
            r.bounds[1].name(),
            r.bounds[2].name()
        );
    }
    s
}

/// One panel per machine: time against threads (log scale), a line per mode with its interval.
pub fn chain_svg(rows: &[ChainRow], title: &str) -> String {
    let machines: Vec<String> = rows.iter().fold(Vec::new(), |mut v, r| {
        if !v.contains(&r.machine) {
            v.push(r.machine.clone());
        }
        v
    });
    let (pw, ph, left, top) = (420.0, 300.0, 60.0, 50.0);
    let width = left + machines.len() as f64 * (pw + 40.0) + 20.0;
    let height = top + ph + 90.0;
    let tmax = rows.iter().map(|r| r.times[0].high.max(r.times[1].high)).fold(0.0, f64::max) * 1.1;
    let (nmin, nmax) = (16.0f64, 288.0f64);
    let colors = ["#d62728", "#1f77b4", "#2ca02c"];
    let names = ["files", "pipe", "fused"];
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{left}" y="22" font-size="15">{}</text>"#,
        escape(title)
    );
    for (i, mname) in machines.iter().enumerate() {
        let x0 = left + i as f64 * (pw + 40.0);
        let xs = |n: f64| x0 + (n.ln() - nmin.ln()) / (nmax.ln() - nmin.ln()) * pw;
        let ys = |t: f64| top + ph - t / tmax * ph;
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/><text x="{}" y="{}">{mname}</text>"##,
            x0 + 5.0,
            top - 6.0
        );
        for n in [16.0, 32.0, 64.0, 144.0, 288.0] {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" text-anchor="middle">{n}</text>"##,
                xs(n),
                top + ph + 16.0
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">threads</text>"#,
            x0 + pw / 2.0,
            top + ph + 34.0
        );
        for k in 0..=4 {
            let t = tmax * k as f64 / 4.0;
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" text-anchor="end">{t:.2}</text><line x1="{x0}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/>"##,
                x0 - 4.0,
                ys(t) + 4.0,
                x0 + pw,
                y = ys(t)
            );
        }
        let mine: Vec<&ChainRow> = rows.iter().filter(|r| &r.machine == mname).collect();
        for (m, color) in colors.iter().enumerate() {
            let pts: Vec<String> = mine
                .iter()
                .map(|r| format!("{:.1},{:.1}", xs(r.workers), ys(r.times[m].nominal)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
                pts.join(" "),
                color
            );
            for r in &mine {
                let x = xs(r.workers);
                let _ = writeln!(
                    s,
                    r#"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="{}"/><circle cx="{x:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                    ys(r.times[m].low),
                    ys(r.times[m].high),
                    color,
                    ys(r.times[m].nominal),
                    color
                );
            }
        }
    }
    for m in 0..3 {
        let x = left + m as f64 * 90.0;
        let y = top + ph + 60.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{}" width="14" height="4" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            y - 4.0,
            colors[m],
            x + 18.0,
            y + 1.0,
            names[m]
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}">seconds (model, 5-95 % interval over parameter ranges)</text>"#,
        left + 290.0,
        top + ph + 61.0
    );
    s.push_str("</svg>\n");
    s
}

/// Predictions as horizontal bars (nominal) with 5-95 % whiskers, one per target and `-@`.
pub fn predictions_svg(preds: &[Prediction], title: &str) -> String {
    let (left, top, bar, gap, width) = (230.0, 40.0, 14.0, 8.0, 420.0);
    let height = top + preds.len() as f64 * (bar + gap) + 40.0;
    let tmax = preds.iter().map(|p| p.time_s.high).fold(0.0, f64::max).max(1e-9) * 1.05;
    let x = |t: f64| left + t / tmax * width;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="12">"#,
        left + width + 120.0
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="10" y="20" font-size="15">{}</text>"#,
        escape(title)
    );
    for (i, p) in preds.iter().enumerate() {
        let y = top + i as f64 * (bar + gap);
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end">{} {} -@{}</text><rect x="{left}" y="{y}" width="{:.1}" height="{bar}" fill="#1f77b4"/><line x1="{:.1}" x2="{:.1}" y1="{2}" y2="{2}" stroke="black"/><text x="{:.1}" y="{}">{:.3} s, {}</text>"##,
            left - 6.0,
            y + bar - 3.0,
            escape(&p.command),
            escape(&p.target),
            p.threads,
            x(p.time_s.nominal) - left,
            x(p.time_s.low),
            x(p.time_s.high),
            x(p.time_s.high) + 6.0,
            y + bar - 3.0,
            p.time_s.nominal,
            p.bound.name()
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="{}">predicted wall time (bar: nominal; line: 5-95 % over parameter ranges)</text>"#,
        height - 12.0
    );
    s.push_str("</svg>\n");
    s
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::tests::chain;

    #[test]
    fn test_chain_rows_and_svg() {
        let (f, p, fu) = chain();
        let files: Vec<RunWork> = f;
        let m = params::blade();
        let r = modes(&files, &p, &fu, &m, 16.0);
        assert!(r[2].time < r[0].time);
        let rows = vec![ChainRow {
            machine: "blade".into(),
            workers: 16.0,
            times: [Interval::exact(3.0), Interval::exact(2.0), Interval::exact(1.0)],
            bounds: [Bound::CpuParallel; 3],
            order_holds: 1.0,
        }];
        let svg = chain_svg(&rows, "t <x>");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("t &lt;x&gt;") && svg.matches("<polyline").count() == 3);
        let t = chain_table(&rows);
        assert!(t.contains("3.00x") && t.contains("100%"), "{t}");
    }

    #[test]
    fn test_eligibility_table_names_every_kind() {
        let t = eligibility_table();
        assert!(t.contains("dup_lookup") && t.contains("DEFLATE"));
    }
}
