//! `--ref-stats`: length and GC content of the reference sequences (or target regions) the
//! report covers (samtools' `collect_refstats`).

use super::ReferenceSource;
use super::targets::{TO_END, Targets};
use crate::record::Header;

pub struct RefSequence {
    /// The name, or `name:start-end` for part of a sequence.
    pub name: String,
    pub len: i64,
    /// GC share of the A/C/G/T bases (-1 without a reference).
    pub gc: f32,
    /// N bases (-1 without a reference).
    pub unknown: i64,
}

pub struct RefStats {
    pub total_count: usize,
    pub count: i32,
    pub avg_gc: f32,
    pub min_len: i64,
    pub max_len: i64,
    pub avg_len: f32,
    pub combined_len: i64,
    pub sequences: Vec<RefSequence>,
}

/// The bases counted over one stretch: G+C, A+T, N.
#[derive(Default)]
struct Composition {
    gc: i64,
    at: i64,
    n: i64,
}

/// Reads `[start, end]` (1-based) of `name` in chunks of `chunk` bases; `None` when the
/// reference lacks the sequence.
fn composition(
    source: &dyn ReferenceSource,
    name: &[u8],
    start: i64,
    end: i64,
    chunk: i64,
) -> Option<Composition> {
    let mut counts = Composition::default();
    let mut at = start - 1;
    let mut left = end - at;
    while left > 0 {
        let want = left.min(chunk);
        let bases = source.fetch(name, at, at + want - 1)?;
        for &b in &bases {
            match b {
                b'G' | b'g' | b'C' | b'c' => counts.gc += 1,
                b'A' | b'a' | b'T' | b't' => counts.at += 1,
                b'N' | b'n' => counts.n += 1,
                _ => {}
            }
        }
        let got = bases.len() as i64;
        if got < want {
            break;
        }
        at += got;
        left -= got;
    }
    Some(counts)
}

/// The statistics of `targets`' intervals, or of every reference without targets; the
/// warnings are samtools' stderr lines.
pub fn collect(
    header: &Header,
    targets: Option<&Targets>,
    source: Option<&dyn ReferenceSource>,
    chunk: i64,
    warnings: &mut Vec<String>,
) -> RefStats {
    let refs = header.refs();
    let whole: Vec<Vec<(i64, i64)>>;
    let (intervals, all_refs) = match targets.filter(|t| !t.intervals.is_empty()) {
        Some(t) => (&t.intervals, false),
        None => {
            whole = refs.iter().map(|_| vec![(1, TO_END)]).collect();
            (&whole, true)
        }
    };
    let mut rs = RefStats {
        total_count: refs.len(),
        count: 0,
        avg_gc: 0.0,
        min_len: 0,
        max_len: 0,
        avg_len: 0.0,
        combined_len: 0,
        sequences: Vec::new(),
    };
    let (mut gc_sum, mut warned) = (0f32, false);
    for (tid, list) in intervals.iter().enumerate() {
        let Some(r) = refs.get(tid) else { continue };
        let name = String::from_utf8_lossy(&r.name).into_owned();
        for &(start, stop) in list {
            let end = if stop == TO_END { r.len as i64 } else { stop };
            if end < start {
                continue;
            }
            rs.count += 1;
            let (label, len) = if all_refs {
                (name.clone(), r.len as i64)
            } else if start == 1 && stop == TO_END {
                (name.clone(), (end - start + 1).min(r.len as i64))
            } else {
                (format!("{name}:{start}-{end}"), (end - start + 1).min(r.len as i64))
            };
            rs.combined_len += len;
            if rs.min_len == 0 || rs.min_len > len {
                rs.min_len = len;
            }
            rs.max_len = rs.max_len.max(len);
            let mut seq = RefSequence { name: label, len, gc: -1.0, unknown: -1 };
            match source {
                None => gc_sum = -1.0,
                Some(source) => {
                    let counts = composition(source, &r.name, start, end, chunk)
                        .unwrap_or_else(|| {
                            if !warned {
                                warnings.push(format!("Warning: Some sequences not present in the reference, e.g. \"{name}\".{}This message is printed only once.", " ".repeat(29)));
                                warned = true;
                            }
                            Composition::default()
                        });
                    let acgt = counts.gc + counts.at;
                    seq.gc = if acgt != 0 { counts.gc as f32 / acgt as f32 } else { 0.0 };
                    gc_sum += seq.gc;
                    seq.unknown = counts.n;
                }
            }
            rs.sequences.push(seq);
        }
    }
    if rs.count != 0 {
        rs.avg_len = rs.combined_len as f32 / rs.count as f32;
        rs.avg_gc = if gc_sum < 0.0 { -1.0 } else { gc_sum / rs.count as f32 };
    } else {
        rs.avg_len = -1.0;
        rs.avg_gc = -1.0;
    }
    rs
}
