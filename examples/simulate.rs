//! Writes simulated SAM (or its reference FASTA) to stdout and reports the speed on stderr.
//!
//! `cargo run --release --example simulate -- PAIRS [name|coordinate|fasta] [THREADS] [SEED]`

use std::io::{BufWriter, Write};
use std::time::Instant;

use mdsam::simulate::{Order, SimulateOptions, write_fasta, write_sam_with_summary};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pairs = args.first().map_or(Ok(10_000), |p| p.parse()).expect("PAIRS must be a number");
    let mode = args.get(1).map_or("name", String::as_str);
    let threads = args.get(2).map_or(Ok(1), |t| t.parse()).expect("THREADS must be a number");
    let seed = args.get(3).map_or(Ok(1), |s| s.parse()).expect("SEED must be a number");
    let order = if mode == "coordinate" { Order::Coordinate } else { Order::Name };
    let options = SimulateOptions { pairs, seed, order, threads, ..SimulateOptions::default() };
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    if mode == "fasta" {
        return write_fasta(&options, &mut out);
    }
    let started = Instant::now();
    let summary = write_sam_with_summary(&options, &mut out)?;
    out.flush()?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{pairs} pairs, {} records, {threads} thread(s), {mode} order: {seconds:.2} s, {:.0} pairs/s",
        summary.records,
        pairs as f64 / seconds
    );
    eprintln!("{summary:?}");
    Ok(())
}
