//! One template fixed as its records arrive, for templates too long to hold in memory (a million
//! records of one name). samtools reads the whole template first; the result only needs:
//!
//! - the first primary (`pre`), which every later primary pairs with and which is final only
//!   once the template ends;
//! - the last primary of READ1 and of READ2 (`rnum`), which the secondary and supplementary
//!   records take their mate fields and base modifications from at the end.
//!
//! Every later primary is final once paired. So the caller can keep the records anywhere (a
//! temporary file) as they were after [`StreamedTemplate::push`], and correct each one with
//! [`StreamedTemplate::finish_record`] on the way out, in input order: the output is
//! [`super::fix_template`]'s, record for record.

use super::{FixmateOptions, basemod, fix_secondary, is_primary, pair_primaries, unpaired};

/// The last primary of one read number.
enum Latest {
    /// The template's first primary (held in `pre`).
    Pre,
    /// A later primary, as it was after pairing.
    Copy(Vec<u8>),
}

pub struct StreamedTemplate {
    opts: FixmateOptions,
    /// Records seen so far.
    count: u64,
    /// The first primary: its position in the template, bytes and end when first seen.
    pre: Option<(u64, Vec<u8>, i64)>,
    paired: bool,
    rnum: [Option<Latest>; 2],
}

impl StreamedTemplate {
    pub fn new(opts: FixmateOptions) -> Self {
        StreamedTemplate { opts, count: 0, pre: None, paired: false, rnum: [None, None] }
    }

    /// Takes the template's next record (sanitised) and fixes what can be fixed now; the caller
    /// keeps `b` as it is left and hands it to [`Self::finish_record`] at the end.
    pub fn push(&mut self, b: &mut Vec<u8>) {
        let at = self.count;
        self.count += 1;
        if !is_primary(b) {
            return;
        }
        if self.opts.base_mods {
            basemod::fix_primary(b);
        }
        let slot = super::read_slot(b);
        match &mut self.pre {
            None => {
                self.pre = Some((at, b.clone(), super::primary_end(b)));
                self.rnum[slot] = Some(Latest::Pre);
            }
            Some((_, pre, pre_end)) => {
                pair_primaries(pre, *pre_end, b, &self.opts);
                self.paired = true;
                // Reuses the buffer of the copy it replaces.
                match &mut self.rnum[slot] {
                    Some(Latest::Copy(copy)) => {
                        copy.clear();
                        copy.extend_from_slice(b);
                    }
                    other => *other = Some(Latest::Copy(b.clone())),
                }
            }
        }
    }

    /// After the template's last record: the first primary's own final fixes.
    pub fn finish(&mut self) {
        if let (false, Some((_, pre, _))) = (self.paired, &mut self.pre) {
            unpaired(pre);
        }
    }

    /// The final form of the template's record number `at`, given as [`Self::push`] left it
    /// (after [`Self::finish`]).
    pub fn finish_record(&self, at: u64, b: &mut Vec<u8>) {
        if let Some((pre_at, pre, _)) = &self.pre
            && *pre_at == at
        {
            b.clear();
            b.extend_from_slice(pre);
            return;
        }
        if is_primary(b) {
            return;
        }
        let latest = |slot: usize| -> Option<&[u8]> {
            match self.rnum[slot].as_ref()? {
                Latest::Pre => self.pre.as_ref().map(|p| &p.1[..]),
                Latest::Copy(c) => Some(c),
            }
        };
        fix_secondary(b, [latest(0), latest(1)], &self.opts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    fn mk(tid: i32, pos: i32, flag: u16) -> Vec<u8> {
        let r = RecordBuilder::new(b"t").tid(tid).pos(pos).mapq(30).flag(flag);
        r.cigar(&[10 << 4]).seq_fill(0x11, 10).qual(&[30; 10]).build()
    }

    /// Three and more primaries, supplementaries before and after them, a secondary: the same
    /// records as fixing the whole template at once.
    #[test]
    fn streamed_equals_whole_template() {
        let template = vec![
            mk(0, 50, 0x841),
            mk(0, 100, 0x41),
            mk(0, 300, 0x91),
            mk(0, 700, 0x141),
            mk(0, 200, 0x41),
            mk(0, 900, 0x891),
            mk(0, 400, 0xb1),
            mk(0, 800, 0x881),
        ];
        for opts in [
            FixmateOptions::default(),
            FixmateOptions { mate_score: true, template_cigar: true, ..Default::default() },
            FixmateOptions { remove: true, base_mods: true, ..Default::default() },
        ] {
            let mut whole = template.clone();
            super::super::fix_template(&mut whole, &opts);
            let mut s = StreamedTemplate::new(opts);
            let mut kept: Vec<Vec<u8>> = template.clone();
            for b in &mut kept {
                s.push(b);
            }
            s.finish();
            for (i, b) in kept.iter_mut().enumerate() {
                s.finish_record(i as u64, b);
            }
            assert_eq!(kept, whole);
        }
    }
}
