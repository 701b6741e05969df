//! `ampliconstats`' report of one file (`F` lines) or of all files (`C` lines), samtools 1.24
//! `dump_stats` line for line.

use std::fmt::Write;

use super::stats::AmpStats;
use super::{RefAmplicons, ReportOptions};
use crate::ops::ampliconstats::{TemplateCoord, aggregate_coords, depth_runs};

/// Which counts a report shows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One file's: `F` lines, with `FPCOV` (which records the coverage percentages).
    File,
    /// All files': `C` lines, with means and standard deviations.
    Combined,
}

fn stats_of(r: &mut RefAmplicons, scope: Scope) -> &mut AmpStats {
    match scope {
        Scope::File => &mut r.local,
        Scope::Combined => &mut r.global,
    }
}

/// The depths `-d` asked for: the first, then those up to the first 0.
fn depths(opts: &ReportOptions) -> impl Iterator<Item = (usize, i32)> + '_ {
    let rest = opts.min_depth.iter().skip(1).take_while(|&&d| d != 0).count();
    opts.min_depth.iter().copied().enumerate().take(1 + rest)
}

/// One value per amplicon of every reference, tab-led, after `head`.
fn per_amplicon(
    out: &mut String,
    head: &str,
    refs: &mut [RefAmplicons],
    scope: Scope,
    mut value: impl FnMut(&mut AmpStats, &RefAmplicons, usize) -> String,
) {
    out.push_str(head);
    for r in refs.iter_mut() {
        let mut stats = std::mem::replace(stats_of(r, scope), AmpStats::new(0, 0, 0));
        for i in 0..r.amps.len() {
            out.push('\t');
            out.push_str(&value(&mut stats, r, i));
        }
        *stats_of(r, scope) = stats;
    }
    out.push('\n');
}

/// `dump_stats`: appends the report to `out`; `nfile` is the number of input files.
pub fn write_report(
    out: &mut String,
    opts: &ReportOptions,
    scope: Scope,
    name: &str,
    nfile: usize,
    refs: &mut [RefAmplicons],
) {
    let t = if scope == Scope::File { 'F' } else { 'C' };
    let nf = nfile as f64;
    let _ =
        writeln!(out, "# Summary stats.\n# Use 'grep ^{t}SS | cut -f 2-' to extract this part.");
    for r in refs.iter_mut() {
        let name_ref =
            if opts.multi_ref { format!("{name}\t{}", r.name) } else { name.to_string() };
        let stats = stats_of(r, scope);
        let _ = writeln!(out, "{t}SS\t{name_ref}\traw total sequences:\t{}", stats.nseq);
        let _ = writeln!(out, "{t}SS\t{name_ref}\tfiltered sequences:\t{}", stats.nfiltered);
        let _ = writeln!(out, "{t}SS\t{name_ref}\tfailed primer match:\t{}", stats.nfailprimer);
        let _ = writeln!(out, "{t}SS\t{name_ref}\tmatching sequences:\t{}", stats.matching());
        let stats = match scope {
            Scope::File => &r.local,
            Scope::Combined => &r.global,
        };
        for (_, depth) in depths(opts) {
            // From the first to the last amplicon, each base once.
            let (mut start, mut covered, mut total) = (0i64, 0i64, 0i64);
            for (i, a) in r.amps.iter().enumerate() {
                let offset = a.min_left - 1;
                for j in start.max(a.max_left - 1)..start.max(a.min_right) {
                    if coverage_at(stats, i, j - offset) >= i64::from(depth) {
                        covered += 1;
                    }
                    total += 1;
                }
                start = start.max(a.min_right);
            }
            let _ = writeln!(
                out,
                "{t}SS\t{name_ref}\tconsensus depth count < {depth} and >= {depth}:\t{}\t{covered}",
                total - covered
            );
        }
    }

    let _ = writeln!(
        out,
        "# Absolute matching read counts per amplicon.\n# Use 'grep ^{t}READS | cut -f 2-' to extract this part."
    );
    per_amplicon(out, &format!("{t}READS\t{name}"), refs, scope, |s, _, i| s.nreads[i].to_string());
    per_amplicon(out, &format!("{t}VDEPTH\t{name}"), refs, scope, |s, _, i| {
        (s.nfull_reads[i] as i32).to_string()
    });
    if scope == Scope::Combined {
        per_amplicon(out, "CREADS\tMEAN", refs, scope, |s, _, i| {
            format!("{:.1}", s.nreads[i] as f64 / nf)
        });
        per_amplicon(out, "CREADS\tSTDDEV", refs, scope, |s, _, i| {
            let n1 = s.nreads[i] as f64;
            let sd = if nfile > 1 && s.nreads2[i] > 0 {
                (s.nreads2[i] as f64 / nf - (n1 / nf) * (n1 / nf)).sqrt()
            } else {
                0.0
            };
            format!("{sd:.1}")
        });
    }

    let _ = writeln!(
        out,
        "# Read percentage of distribution between amplicons.\n# Use 'grep ^{t}RPERC | cut -f 2-' to extract this part."
    );
    let all_nseq: i32 = refs.iter_mut().map(|r| stats_of(r, scope).matching()).sum();
    per_amplicon(out, &format!("{t}RPERC\t{name}"), refs, scope, |s, _, i| {
        let v = match scope {
            Scope::Combined => s.nrperc[i] / nf,
            Scope::File if all_nseq != 0 => 100.0 * s.nreads[i] as f64 / f64::from(all_nseq),
            Scope::File => 0.0,
        };
        format!("{v:.3}")
    });
    if scope == Scope::Combined {
        per_amplicon(out, "CRPERC\tMEAN", refs, scope, |s, _, i| {
            format!("{:.3}", s.nrperc[i] / nf)
        });
        per_amplicon(out, "CRPERC\tSTDDEV", refs, scope, |s, _, i| {
            let n1 = s.nrperc[i];
            let v = s.nrperc2[i] / nf - (n1 / nf) * (n1 / nf);
            format!("{:.3}", if v > 0.0 { v.sqrt() } else { 0.0 })
        });
    }

    let _ = writeln!(
        out,
        "# Read depth per amplicon.\n# Use 'grep ^{t}DEPTH | cut -f 2-' to extract this part."
    );
    let amplicon_len = |r: &RefAmplicons, i: usize| r.amps[i].min_right - r.amps[i].max_left + 1;
    per_amplicon(out, &format!("{t}DEPTH\t{name}"), refs, scope, |s, r, i| {
        let v =
            if s.matching() != 0 { s.nbases[i] as f64 / amplicon_len(r, i) as f64 } else { 0.0 };
        format!("{v:.1}")
    });
    if scope == Scope::Combined {
        per_amplicon(out, "CDEPTH\tMEAN", refs, scope, |s, r, i| {
            let v = if s.matching() != 0 {
                s.nbases[i] as f64 / amplicon_len(r, i) as f64 / nf
            } else {
                0.0
            };
            format!("{v:.1}")
        });
        per_amplicon(out, "CDEPTH\tSTDDEV", refs, scope, |s, r, i| {
            let alen = amplicon_len(r, i) as f64;
            let n1 = s.nbases[i] as f64 / alen;
            let v = s.nbases2[i] as f64 / (alen * alen) / nf - (n1 / nf) * (n1 / nf);
            format!("{:.1}", if v > 0.0 { v.sqrt() } else { 0.0 })
        });
    }

    if scope == Scope::File {
        let _ = writeln!(
            out,
            "# Percentage coverage per amplicon\n# Use 'grep ^FPCOV | cut -f 2-' to extract this part."
        );
        for (d, depth) in depths(opts) {
            per_amplicon(out, &format!("FPCOV-{depth}\t{name}"), refs, scope, |s, r, i| {
                let a = &r.amps[i];
                let offset = a.min_left - 1;
                let covered = (a.max_left - 1..a.min_right)
                    .filter(|j| coverage_at(s, i, j - offset) >= i64::from(depth))
                    .count();
                let perc = 100.0 * covered as f64 / amplicon_len(r, i) as f64;
                s.covered_perc[i][d] = perc;
                format!("{perc:.2}")
            });
        }
    } else {
        for (d, depth) in depths(opts) {
            per_amplicon(out, &format!("CPCOV-{depth}\tMEAN"), refs, scope, |s, _, i| {
                format!("{:.1}", s.covered_perc[i][d] / nf)
            });
            per_amplicon(out, &format!("CPCOV-{depth}\tSTDDEV"), refs, scope, |s, _, i| {
                let n1 = s.covered_perc[i][d] / nf;
                let v = s.covered_perc2[i][d] / nf - n1 * n1;
                format!("{:.1}", if v > 0.0 { v.sqrt() } else { 0.0 })
            });
        }
    }

    for (what, comment) in [
        ("DP_ALL", "# Depth per reference base for ALL data.\n"),
        ("DP_VALID", "# Depth per reference base for full-length valid amplicon data.\n"),
    ] {
        out.push_str(comment);
        let _ = writeln!(out, "# Use 'grep ^{t}{what} | cut -f 2-' to extract this part.");
        for r in refs.iter_mut() {
            let _ = write!(out, "{t}{what}\t{name}");
            if opts.multi_ref {
                let _ = write!(out, "\t{}", r.name);
            }
            let len = r.len.max(0) as usize;
            let stats = stats_of(r, scope);
            let depth = if what == "DP_ALL" { &stats.depth_all } else { &stats.depth_valid };
            for (mid, n) in depth_runs(&depth[..len.min(depth.len())], opts.depth_bin) {
                let _ = write!(out, "\t{mid},{n}");
            }
            out.push('\n');
        }
    }

    let _ = writeln!(
        out,
        "# Distribution of aligned template coordinates.\n# Use 'grep ^{t}TCOORD | cut -f 2-' to extract this part."
    );
    for r in refs.iter_mut() {
        let first_amp = r.first_amp as i64;
        let namp = r.amps.len() as i64;
        let stats = stats_of(r, scope);
        let from = if opts.header_refs == 1 { -1 } else { 0 };
        for i in from..namp {
            let table = &stats.tcoord[(i + 1) as usize];
            let mut tpos: Vec<TemplateCoord> = table
                .live_buckets()
                .into_iter()
                .filter_map(|(bucket, key)| {
                    let v = *table.value(bucket);
                    (v & 0xFFFF_FFFF != 0).then_some(TemplateCoord {
                        start: key as u32 as i32,
                        end: (key >> 32) as u32 as i32,
                        freq: v as u32,
                        status: (v >> 32) as u32,
                    })
                })
                .collect();
            if opts.tcoord_bin > 1 {
                aggregate_coords(&mut tpos, opts.tcoord_bin);
            }
            let _ = write!(out, "{t}TCOORD\t{name}\t{}", i + 1 + first_amp);
            for c in tpos.iter().filter(|c| i64::from(c.freq) >= i64::from(opts.tcoord_min_count)) {
                let _ = write!(out, "\t{},{},{},{}", c.start, c.end, c.freq, c.status);
            }
            out.push('\n');
        }
    }

    out.push_str(
        "# Classification of amplicon status.  Columns are\n\
         # number with both primers from this amplicon, number with\n\
         # primers from different amplicon, and number with a position\n\
         # not matching any valid amplicon primer site\n",
    );
    let _ = writeln!(out, "# Use 'grep ^{t}AMP | cut -f 2-' to extract this part.");
    let mut all = [0i32; 3];
    for r in refs.iter_mut() {
        for d in &stats_of(r, scope).amp_dist {
            for k in 0..3 {
                all[k] = all[k].wrapping_add(d[k]);
            }
        }
    }
    let _ = writeln!(out, "{t}AMP\t{name}\t0\t{}\t{}\t{}", all[0], all[1], all[2]);
    for r in refs.iter_mut() {
        let first_amp = r.first_amp;
        for (i, d) in stats_of(r, scope).amp_dist.iter().enumerate() {
            let _ = writeln!(
                out,
                "{t}AMP\t{name}\t{}\t{}\t{}\t{}",
                i + 1 + first_amp,
                d[0],
                d[1],
                d[2]
            );
        }
    }
}

/// The coverage of amplicon `amp` at `offset` from its outer left end; samtools reads on into
/// the next amplicon's row past the end of one, and past the last row there is nothing.
fn coverage_at(stats: &AmpStats, amp: usize, offset: i64) -> i64 {
    let at = amp as i64 * stats.max_amp_len as i64 + offset;
    usize::try_from(at).ok().and_then(|at| stats.coverage.get(at)).copied().unwrap_or(0)
}
