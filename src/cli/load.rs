//! `mdsam load` (an mdsam addition): reads a whole file into memory and reports how long that
//! took, a baseline for the cost of reading apart from any command's work.

use super::Invocation;
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::threads::Threads;

pub const USAGE: &str = "
Usage: mdsam load [-@ INT] <in.bam|in.sam>

Reads the whole input into memory and prints: seconds, records, record bytes, allocations,
allocator, threads (tab-separated). Allocations are counted with MDSAM_COUNT_ALLOCS=1.

Options:
  -@ INT   number of additional threads to use [0]
";

pub const OPTIONS: OptionTable = OptionTable {
    command: "load",
    short: "@:",
    long: &[],
    globals: None,
    unlisted: &[],
    globals_first: false,
};

pub fn run(_inv: &Invocation, args: &[String]) -> Result<(), Error> {
    let (opts, positionals) = OPTIONS.parse(args).map_err(|e| Error::Usage(e.to_string()))?;
    let mut threads = Threads::default();
    for o in opts {
        if o.key == "@" {
            threads = super::global::parse_threads(o.value.as_deref().unwrap_or("0"))?;
        }
    }
    let input = positionals.first().ok_or_else(|| Error::Usage("no input".into()))?;
    let r = threads.pool().install(|| crate::pipeline::load::run(input, threads.total()))?;
    println!(
        "{:.6}\t{}\t{}\t{}\t{}\t{}",
        r.seconds,
        r.records,
        r.bytes,
        r.allocations,
        crate::alloc::active().name(),
        threads.total()
    );
    Ok(())
}
