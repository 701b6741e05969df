//! The reports one `stats` run makes: the one of all reads and, with `-S`, one per value of the
//! split tag. Each group of batches is followed in input order by every report's tracker
//! ([`crate::ops::stats::tracker`]), then the records each report takes are summed on the pool,
//! while the next group is followed.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use crate::io::stats_targets::TargetFile;
use crate::ops::stats::counters::Counters;
use crate::ops::stats::overlaps::PairTable;
use crate::ops::stats::targets::Targets;
use crate::ops::stats::tracker::{Context, Tracker};
use crate::ops::stats::{ReferenceSource, Settings};
use crate::pipeline::input_filter::{InputFilter, passes};
use crate::record::{Batch, Header, RecordRef};

/// Records one task sums: enough to outweigh the task and its tables.
const RECORDS_PER_TASK: usize = 16 << 10;

pub struct ReportState {
    /// The split tag's value (`None`: the report of all reads).
    pub split_value: Option<String>,
    pub tracker: Tracker,
    pub counters: Counters,
}

/// How a new `-S` report gets its targets: `-t`'s intervals (their warning said again).
pub struct SplitSetup {
    pub tag: [u8; 2],
    pub file_targets: Option<TargetFile>,
}

pub struct Reports<'a> {
    pub settings: &'a Settings,
    pub header: &'a Header,
    pub reference: Option<&'a dyn ReferenceSource>,
    pub filter: Option<InputFilter>,
    pub split: Option<SplitSetup>,
    /// The report of all reads first, then the `-S` ones in the order their values came.
    pub states: Vec<ReportState>,
    split_index: HashMap<Vec<u8>, usize>,
    pairs: PairTable,
    pending: Option<Pending>,
    /// The input filter failed: samtools ends as for a record it cannot decode.
    pub decode_failed: bool,
}

/// A record of a batch group that a report counts: (report, batch, record).
type Take = (u32, u32, u32);

impl<'a> Reports<'a> {
    pub fn new(
        settings: &'a Settings,
        header: &'a Header,
        reference: Option<&'a dyn ReferenceSource>,
        all: Tracker,
    ) -> Reports<'a> {
        let first =
            ReportState { split_value: None, tracker: all, counters: Counters::new(settings) };
        Reports {
            settings,
            header,
            reference,
            filter: None,
            split: None,
            states: vec![first],
            split_index: HashMap::new(),
            pairs: PairTable::default(),
            pending: None,
            decode_failed: false,
        }
    }

    /// The `-S` report of `r`'s tag value, made when the value is new.
    fn split_report(&mut self, r: &RecordRef<'_>, split: &SplitSetup) -> Result<usize, String> {
        let tag_name = String::from_utf8_lossy(&split.tag).into_owned();
        let value = r
            .aux_get(split.tag)
            .filter(|f| f.ty == b'Z' || f.ty == b'H')
            .map(|f| f.value)
            .ok_or_else(|| format!("Tag '{tag_name}' not found in bam_line."))?;
        if let Some(&i) = self.split_index.get(value) {
            return Ok(i);
        }
        let targets = split.file_targets.as_ref().map(|file| {
            if let Some(w) = &file.warning {
                eprintln!("{w}");
            }
            Targets::from_file_intervals(file.intervals.clone(), &ref_lens(self.header))
        });
        self.states.push(ReportState {
            split_value: Some(String::from_utf8_lossy(value).into_owned()),
            tracker: Tracker::new(self.settings, targets, None),
            counters: Counters::new(self.settings),
        });
        self.split_index.insert(value.to_vec(), self.states.len() - 1);
        Ok(self.states.len() - 1)
    }

    /// Follows every record of `batches` in order; returns the records each report counts.
    fn track(&mut self, batches: &[Batch]) -> Result<Vec<Take>, String> {
        let mut takes = Vec::new();
        let mut warnings = Vec::new();
        let split = self.split.take();
        let result = (|| {
            for (b, batch) in batches.iter().enumerate() {
                for i in 0..batch.len() {
                    let r = batch.get(i);
                    let kept = passes(self.filter.as_ref(), &r, self.header)
                        .inspect_err(|_| self.decode_failed = true)?;
                    if !kept {
                        continue;
                    }
                    let mut reports = Vec::with_capacity(2);
                    if let Some(split) = &split {
                        reports.push(self.split_report(&r, split)?);
                    }
                    reports.push(0);
                    for report in reports {
                        let mut ctx = Context {
                            settings: self.settings,
                            header: self.header,
                            reference: self.reference,
                            pairs: &mut self.pairs,
                            warnings: &mut warnings,
                        };
                        let taken = self.states[report].tracker.track(&r, &mut ctx);
                        for w in warnings.drain(..) {
                            eprintln!("{w}");
                        }
                        if taken? {
                            takes.push((report as u32, b as u32, i as u32));
                        }
                    }
                }
            }
            Ok(())
        })();
        self.split = split;
        result.map(|()| takes)
    }

    /// Follows one group of batches in order while the previous group is summed on the pool;
    /// the group is summed with the next one, or by [`Self::finish`].
    pub fn add_batches(&mut self, batches: Vec<Batch>) -> Result<(), String> {
        let pending = self.pending.take();
        let settings = self.settings;
        let (tracked, summed) = rayon::join(
            || self.track(&batches),
            || pending.map(|p| (sum_group(settings, &p), p.batches)),
        );
        if let Some((sums, done)) = summed {
            crate::pipeline::prefetch::recycle(done);
            self.add_sums(sums)?;
        }
        self.pending = Some(Pending { batches, takes: tracked?, reports: self.states.len() });
        Ok(())
    }

    /// Sums the last group.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(p) = self.pending.take() {
            let sums = sum_group(self.settings, &p);
            crate::pipeline::prefetch::recycle(p.batches);
            self.add_sums(sums)?;
        }
        Ok(())
    }

    fn add_sums(&mut self, sums: Vec<Option<Counters>>) -> Result<(), String> {
        for (state, sum) in self.states.iter_mut().zip(sums) {
            if let Some(sum) = sum {
                state.counters.merge(sum);
            }
        }
        match self.states.iter().find_map(|s| s.counters.error.clone()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A group followed but not summed yet: its batches and the records each report takes.
struct Pending {
    batches: Vec<Batch>,
    takes: Vec<Take>,
    /// The reports there were after following it.
    reports: usize,
}

/// The sums of one followed group per report (`None` where it took nothing), counted in
/// record ranges on the pool.
fn sum_group(settings: &Settings, group: &Pending) -> Vec<Option<Counters>> {
    let n = group.reports;
    let none = || (0..n).map(|_| None).collect::<Vec<Option<Counters>>>();
    group
        .takes
        .par_chunks(RECORDS_PER_TASK)
        .map(|chunk| {
            let mut sums = none();
            for &(report, b, i) in chunk {
                let r = group.batches[b as usize].get(i as usize);
                sums[report as usize]
                    .get_or_insert_with(|| Counters::new(settings))
                    .add(&r, settings);
            }
            sums
        })
        .reduce(none, |mut a, b| {
            for (x, y) in a.iter_mut().zip(b) {
                match (x.as_mut(), y) {
                    (Some(x), Some(y)) => x.merge(y),
                    (None, y) => *x = y,
                    (Some(_), None) => {}
                }
            }
            a
        })
}

pub fn ref_lens(header: &Header) -> Vec<u64> {
    header.refs().iter().map(|r| r.len).collect()
}

/// `-I`: the read groups whose ID, or whose sample (SM), is `id`.
pub fn read_groups(header: &Header, id: &str) -> HashSet<Vec<u8>> {
    let mut groups = HashSet::new();
    for line in header.read_group_lines() {
        let Some(key) = crate::record::header::line_field(line, b"ID") else { continue };
        let sample = crate::record::header::line_field(line, b"SM");
        if key == id.as_bytes() || sample == Some(id.as_bytes()) {
            groups.insert(key.to_vec());
        }
    }
    groups
}
