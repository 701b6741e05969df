//! `mpileup -M`: the base modifications (`MM`/`ML` tags) at each read base, as htslib's
//! `bam_parse_basemod` and `bam_mods_at_qpos` give them. A reverse read's `MM` counts bases of
//! the original strand, so it is walked from the stored sequence's end over complemented bases.

use std::cell::Cell;

use crate::record::RecordRef;
use crate::record::aux::AuxValue;
use crate::record::layout::{SEQ_NT16, flags};

/// One modification at a base: `MM`'s strand (`+`/`-`), its code (a letter, or minus a ChEBI
/// number) and its `ML` probability (-1 without one).
#[derive(Clone, Copy, Debug)]
pub struct Mod {
    strand: u8,
    code: i32,
    qual: i32,
}

/// A read's modifications by query position, and how far the pileup has asked (htslib's state
/// only moves forward: a position asked for after a later one gives none).
pub struct ReadMods {
    at: Vec<Vec<Mod>>,
    next: Cell<i64>,
}

/// Whether an entry of a reverse read's `MM` counts more bases than the read has (htslib
/// checks this up front for reverse reads only; a forward read's excess is never reached).
fn reverse_overrun(r: &RecordRef<'_>, mm: &[u8]) -> bool {
    mm.split(|&c| c == b';').filter(|e| e.len() > 2).any(|entry| {
        let canonical = SEQ_NT16[entry[0] as usize];
        let want = COMPLEMENT[canonical as usize];
        let have = (0..r.l_seq()).filter(|&i| canonical == 15 || r.base_code(i) == want).count();
        let needed: usize = entry
            .split(|&c| c == b',')
            .skip(1)
            .filter_map(|d| std::str::from_utf8(d).ok()?.trim().parse::<usize>().ok())
            .map(|d| d + 1)
            .sum();
        needed > have
    })
}

/// `seq_nt16` code of the complement.
const COMPLEMENT: [u8; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

impl ReadMods {
    /// The modifications of `rec`: `Ok(None)` without an `MM` tag or where a part does not
    /// parse; an entry without its closing `;` is htslib's error (its log line).
    pub fn parse(rec: &[u8]) -> Result<Option<ReadMods>, String> {
        let r = RecordRef::new(rec);
        let Some(mm) = r.aux_get(*b"MM").or_else(|| r.aux_get(*b"Mm")) else { return Ok(None) };
        let AuxValue::Str(mm) = mm.typed() else { return Ok(None) };
        if mm.last().is_some_and(|&c| c != b';') {
            return Err(format!(
                "[E::bam_parse_basemod2] {}: Hit end of MM tag. Missing semicolon?",
                String::from_utf8_lossy(r.read_name())
            ));
        }
        if r.flag() & flags::REVERSE != 0 && reverse_overrun(&r, mm) {
            return Err(format!(
                "[E::bam_parse_basemod2] {}: MM tag refers to bases beyond sequence length",
                String::from_utf8_lossy(r.read_name())
            ));
        }
        Ok(Self::parse_entries(&r, mm))
    }

    fn parse_entries(r: &RecordRef<'_>, mm: &[u8]) -> Option<ReadMods> {
        let ml: Vec<i32> = match r.aux_get(*b"ML").or_else(|| r.aux_get(*b"Ml")).map(|f| f.typed())
        {
            Some(AuxValue::Array(b'C', bytes)) => bytes.iter().map(|&b| i32::from(b)).collect(),
            _ => Vec::new(),
        };
        let n = r.l_seq();
        let rev = r.flag() & flags::REVERSE != 0;
        let mut at: Vec<Vec<Mod>> = vec![Vec::new(); n];
        let mut ml_at = 0usize;
        let mut per_type: Vec<Vec<(usize, Mod)>> = Vec::new();
        for entry in mm.split(|&c| c == b';').filter(|e| !e.is_empty()) {
            let (&base, rest) = entry.split_first()?;
            let (&strand, rest) = rest.split_first()?;
            let mut parts = rest.split(|&c| c == b',');
            let codes_text = parts.next()?;
            let codes_text = codes_text
                .strip_suffix(b".")
                .or_else(|| codes_text.strip_suffix(b"?"))
                .unwrap_or(codes_text);
            let codes: Vec<i32> = if codes_text.first().is_some_and(u8::is_ascii_digit) {
                vec![-std::str::from_utf8(codes_text).ok()?.parse::<i32>().ok()?]
            } else {
                codes_text.iter().map(|&c| i32::from(c)).collect()
            };
            let canonical = SEQ_NT16[base as usize];
            let want = if rev { COMPLEMENT[canonical as usize] } else { canonical };
            let matches = |i: usize| canonical == 15 || r.base_code(i) == want;
            let order: Box<dyn Iterator<Item = usize>> =
                if rev { Box::new((0..n).rev()) } else { Box::new(0..n) };
            let mut candidates = order.filter(|&i| matches(i));
            let first_type = per_type.len();
            per_type.extend(codes.iter().map(|_| Vec::new()));
            for delta in parts {
                let skip: usize = std::str::from_utf8(delta).ok()?.trim().parse().ok()?;
                // Deltas past the read's last such base are never reached (htslib reads them
                // lazily), but their ML values still count.
                let Some(qpos) = candidates.nth(skip) else {
                    ml_at += codes.len();
                    continue;
                };
                for (k, &code) in codes.iter().enumerate() {
                    let qual = ml.get(ml_at).copied().unwrap_or(-1);
                    ml_at += 1;
                    per_type[first_type + k].push((qpos, Mod { strand, code, qual }));
                }
            }
        }
        for list in per_type {
            for (qpos, m) in list {
                at[qpos].push(m);
            }
        }
        Some(ReadMods { at, next: Cell::new(0) })
    }

    /// `bam_mods_at_qpos` then the `[...]` text, appended to `out`; nothing where none.
    pub fn push_at(&self, qpos: i64, out: &mut Vec<u8>) {
        if qpos < self.next.get() {
            return;
        }
        self.next.set(qpos + 1);
        let Some(mods) = usize::try_from(qpos).ok().and_then(|q| self.at.get(q)) else { return };
        if mods.is_empty() {
            return;
        }
        out.push(b'[');
        for m in mods {
            out.push(m.strand);
            if m.code < 0 {
                out.push(b'(');
                out.extend_from_slice(itoa::Buffer::new().format(-m.code).as_bytes());
                out.push(b')');
            } else {
                out.push(m.code as u8);
            }
            if m.qual >= 0 {
                out.extend_from_slice(itoa::Buffer::new().format(m.qual).as_bytes());
            }
        }
        out.push(b']');
    }
}
