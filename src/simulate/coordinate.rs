//! The coordinate-order sweep: placed templates in id (genome) order through a heap of pending lines.
//!
//! Sort key (`u128`), as `samtools sort` orders records and then how it breaks ties (input order):
//!
//! | bits    | field                                        |
//! |---------|----------------------------------------------|
//! | 127–97  | tid                                          |
//! | 96–65   | pos + 1                                      |
//! | 64      | reverse strand                               |
//! | 63–8    | name-order rank of the template              |
//! | 7–0     | index of the record within its template      |
//!
//! Algorithm:
//! 1. Workers build chunks of consecutive ids: each template's records as formatted lines with
//!    their keys, and the template's anchor.
//! 2. The calling thread takes chunks in id order. Per template, it first writes every pending line
//!    whose `(tid, pos)` lies before the anchor (no later template reaches there, see
//!    [`super::fragment`]), then moves the template's lines into recycled buffers on the heap.
//! 3. At the end it drains the heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::ops::Range;

use super::reads::{SimRecord, Template};
use super::{
    Simulation, SimulationSummary, TEMPLATES_PER_CHUNK, chunk_range, flush_if_full, parallel,
    sam_text,
};

/// The high word of the sort key: tid, pos + 1 and strand.
fn position_key(tid: u32, pos_plus_one: u64, reverse: bool) -> u64 {
    (u64::from(tid) << 33) | (pos_plus_one << 1) | u64::from(reverse)
}

fn sort_key(record: &SimRecord, rank: u64, index: usize) -> u128 {
    debug_assert!(record.tid >= 0 && index < 256);
    let high = position_key(record.tid as u32, (record.pos + 1) as u64, record.is_reverse());
    (u128::from(high) << 64) | u128::from((rank << 8) | index as u64)
}

/// The formatted records of consecutive templates.
#[derive(Default)]
struct SweepChunk {
    text: Vec<u8>,
    /// Sort key and end offset in `text` of each record.
    records: Vec<(u128, usize)>,
    /// Per template: the position key of its anchor and its number of records.
    templates: Vec<(u64, usize)>,
    summary: SimulationSummary,
}

fn sweep_chunk(simulation: &Simulation, ids: Range<u64>) -> SweepChunk {
    let mut builder = simulation.builder();
    let dictionary = simulation.dictionary();
    let mut template = Template::default();
    let mut chunk = SweepChunk::default();
    for id in ids {
        let plan = simulation.plan(id);
        let (tid, start) = plan.fragment.anchor.expect("placed templates have an anchor");
        builder.build(&plan, &mut template);
        chunk.summary.count_template(&plan, &template);
        chunk
            .templates
            .push((position_key(tid, u64::from(start) + 1, false), template.records().len()));
        for (index, record) in template.records().iter().enumerate() {
            sam_text::write_record(&dictionary, &template, record, &mut chunk.text);
            chunk.records.push((sort_key(record, plan.rank, index), chunk.text.len()));
        }
    }
    chunk
}

/// Formatted lines waiting for the sweep to pass them.
#[derive(Default)]
struct PendingLines {
    heap: BinaryHeap<Reverse<(u128, u32)>>,
    lines: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl PendingLines {
    fn push(&mut self, key: u128, line: &[u8]) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.lines.push(Vec::with_capacity(512));
            (self.lines.len() - 1) as u32
        });
        self.lines[slot as usize].extend_from_slice(line);
        self.heap.push(Reverse((key, slot)));
    }

    /// Moves every line whose position key is below `limit` to `buffer`, in key order.
    fn write_before(&mut self, limit: u64, buffer: &mut Vec<u8>) {
        while let Some(&Reverse((key, slot))) = self.heap.peek() {
            if (key >> 64) as u64 >= limit {
                break;
            }
            self.heap.pop();
            buffer.extend_from_slice(&self.lines[slot as usize]);
            self.lines[slot as usize].clear();
            self.free.push(slot);
        }
    }
}

/// Writes the records of all placed templates in coordinate order.
pub(super) fn write_placed(
    simulation: &Simulation,
    summary: &mut SimulationSummary,
    out: &mut dyn Write,
) -> io::Result<()> {
    let placed = simulation.placed;
    let mut pending = PendingLines::default();
    let mut buffer = Vec::new();
    parallel::for_each_ordered(
        simulation.options.threads,
        placed.div_ceil(TEMPLATES_PER_CHUNK),
        |chunk| sweep_chunk(simulation, chunk_range(chunk, placed)),
        |chunk| {
            let mut records = chunk.records.iter();
            let mut line_start = 0;
            for &(anchor_key, record_count) in &chunk.templates {
                pending.write_before(anchor_key, &mut buffer);
                for &(key, line_end) in records.by_ref().take(record_count) {
                    pending.push(key, &chunk.text[line_start..line_end]);
                    line_start = line_end;
                }
            }
            summary.add(&chunk.summary);
            flush_if_full(&mut buffer, out)
        },
    )?;
    pending.write_before(u64::MAX, &mut buffer);
    out.write_all(&buffer)
}
