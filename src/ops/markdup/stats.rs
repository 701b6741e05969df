//! The markdup statistics block: counters, Picard's library-size estimate, text and JSON forms
//! exactly as samtools 1.24 prints them.

use std::fmt::Write;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub reading: u64,
    pub writing: u64,
    pub excluded: u64,
    pub duplicate: u64,
    pub single: u64,
    pub pair: u64,
    pub single_dup: u64,
    pub examined: u64,
    pub optical: u64,
    pub single_optical: u64,
    pub np_duplicate: u64,
    pub np_opt_duplicate: u64,
    /// Excluded reads that are unmapped (Picard's `UNMAPPED_READS`; not in samtools' block).
    pub unmapped: u64,
    /// Excluded mapped reads that are secondary or supplementary (Picard's
    /// `SECONDARY_OR_SUPPLEMENTARY_RDS`; not in samtools' block).
    pub secondary_or_supplementary: u64,
}

impl Stats {
    pub fn add(&mut self, o: &Stats) {
        self.reading += o.reading;
        self.writing += o.writing;
        self.excluded += o.excluded;
        self.duplicate += o.duplicate;
        self.single += o.single;
        self.pair += o.pair;
        self.single_dup += o.single_dup;
        self.examined += o.examined;
        self.optical += o.optical;
        self.single_optical += o.single_optical;
        self.np_duplicate += o.np_duplicate;
        self.np_opt_duplicate += o.np_opt_duplicate;
        self.unmapped += o.unmapped;
        self.secondary_or_supplementary += o.secondary_or_supplementary;
    }
}

fn coverage(x: f64, c: f64, n: f64) -> f64 {
    c / x - 1.0 + (-n / x).exp()
}

/// Picard's estimate; the warning (without the `samtools markdup: ` prefix) when there is none.
pub fn estimate_library_size(paired: u64, dups: u64, optical: u64) -> (u64, Option<String>) {
    let non_optical = paired.wrapping_sub(optical) / 2;
    let unique = paired.wrapping_sub(dups) / 2;
    let dup_pairs = dups.wrapping_sub(optical) / 2;
    if non_optical != 0 && dup_pairs != 0 && unique != 0 && non_optical > dup_pairs {
        let (u, n) = (unique as f64, non_optical as f64);
        let (mut m, mut big) = (1.0f64, 100.0f64);
        if coverage(m * u, u, n) < 0.0 {
            return (0, Some("warning, unable to calculate estimated library size.\n".into()));
        }
        while coverage(big * u, u, n) > 0.0 {
            big *= 10.0;
        }
        for _ in 0..40 {
            let r = (m + big) / 2.0;
            let v = coverage(r * u, u, n);
            if v > 0.0 {
                m = r;
            } else if v < 0.0 {
                big = r;
            } else {
                break;
            }
        }
        ((u * (m + big) / 2.0) as u64, None)
    } else {
        let w = format!(
            "warning, unable to calculate estimated library size. Read pairs {} should be greater than duplicate pairs {}, which should both be non zero.\n",
            non_optical as i64, dup_pairs as i64
        );
        (0, Some(w))
    }
}

const KEYS: [&str; 15] = [
    "READ",
    "WRITTEN",
    "EXCLUDED",
    "EXAMINED",
    "PAIRED",
    "SINGLE",
    "DUPLICATE PAIR",
    "DUPLICATE SINGLE",
    "DUPLICATE PAIR OPTICAL",
    "DUPLICATE SINGLE OPTICAL",
    "DUPLICATE NON PRIMARY",
    "DUPLICATE NON PRIMARY OPTICAL",
    "DUPLICATE PRIMARY TOTAL",
    "DUPLICATE TOTAL",
    "ESTIMATED_LIBRARY_SIZE",
];

fn values(s: &Stats, els: u64) -> [i64; 15] {
    [
        s.reading,
        s.writing,
        s.excluded,
        s.examined,
        s.pair,
        s.single,
        s.duplicate,
        s.single_dup,
        s.optical,
        s.single_optical,
        s.np_duplicate,
        s.np_opt_duplicate,
        s.single_dup + s.duplicate,
        s.single_dup + s.duplicate + s.np_duplicate,
        els,
    ]
    .map(|v| v as i64)
}

/// One piece of the report: text for the stats destination, or a warning for stderr.
pub enum Piece {
    Stats(String),
    Warning(String),
}

/// The report in print order: `command` is the command line; `groups` are the read-group names
/// and their counters (index 0 ungrouped) when `--use-read-groups` is on.
pub fn report(
    command: &str,
    total: &Stats,
    groups: Option<(&[Stats], &[Vec<u8>])>,
    json: bool,
) -> Vec<Piece> {
    let mut out = Vec::new();
    let block = |out: &mut Vec<Piece>, s: &Stats| -> u64 {
        let (els, warn) = estimate_library_size(s.pair, s.duplicate, s.optical);
        if let Some(w) = warn {
            out.push(Piece::Warning(w));
        }
        els
    };
    let mut named: Vec<(String, &Stats)> = Vec::new();
    if let Some((stats, names)) = groups {
        if stats[0].reading > 0 {
            named.push(("ungrouped".into(), &stats[0]));
        }
        for (i, n) in names.iter().enumerate() {
            named.push((String::from_utf8_lossy(n).into_owned(), &stats[i + 1]));
        }
    }
    if !json {
        let els = block(&mut out, total);
        let mut t = format!("COMMAND: {command}\n");
        for (k, v) in KEYS.iter().zip(values(total, els)) {
            let _ = writeln!(t, "{k}: {v}");
        }
        t.push('\n');
        out.push(Piece::Stats(t));
        for (name, s) in &named {
            let els = block(&mut out, s);
            let mut t = format!("READ GROUP: {name}\n");
            for (k, v) in KEYS.iter().zip(values(s, els)) {
                let _ = writeln!(t, "{k}: {v}");
            }
            t.push('\n');
            out.push(Piece::Stats(t));
        }
    } else {
        let json_block =
            |t: &mut String, offset: &str, group: Option<&str>, s: &Stats, els: u64, end: &str| {
                if let Some(g) = group {
                    let _ = writeln!(t, "{offset}\"READ GROUP\": \"{g}\",");
                }
                let vals = values(s, els);
                for (i, (k, v)) in KEYS.iter().zip(vals).enumerate() {
                    let _ = write!(t, "{offset}\"{k}\": {v}");
                    if i + 1 < KEYS.len() {
                        t.push_str(",\n");
                    }
                }
                t.push_str(end);
            };
        let els = block(&mut out, total);
        let mut t = format!("{{\n    \"COMMAND\": \"{command}\",\n");
        json_block(&mut t, "    ", None, total, els, if groups.is_some() { ",\n" } else { "\n" });
        if groups.is_some() {
            t.push_str("    \"READ GROUPS\": [\n");
            out.push(Piece::Stats(std::mem::take(&mut t)));
            for (i, (name, s)) in named.iter().enumerate() {
                let els = block(&mut out, s);
                let mut t = String::from("        {\n");
                json_block(&mut t, "            ", Some(name), s, els, "\n");
                t.push_str(if i + 1 < named.len() { "        },\n" } else { "        }\n" });
                out.push(Piece::Stats(t));
            }
            t.push_str("    ]\n");
        }
        t.push_str("}\n");
        out.push(Piece::Stats(t));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_size_matches_samtools() {
        // samtools test 5: PAIRED 10, DUP PAIR 4 → 4.
        assert_eq!(estimate_library_size(10, 4, 0).0, 4);
        assert!(estimate_library_size(10, 0, 0).1.is_some());
    }
}
