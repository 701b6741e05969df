//! `sort`'s command line → [`SortOptions`] (samtools 1.24 `bam_sort.c` options and defaults).

use std::io::IsTerminal;

use super::Invocation;
use super::c_number::parse_int_value;
use super::common::CommonOptions;
use super::getopt::LongOpt;
use super::global::Globals;
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::index_request;
use crate::ops::sort::minhash::Minimiser;
use crate::ops::sort::{NameOrder, SortOrder};
use crate::pipeline::memory_budget::{MemoryBudget, PER_THREAD_DEFAULT};
use crate::pipeline::sort::SortOptions;

pub const USAGE: &str = include_str!("usage/sort.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "sort",
    short: "l:m:nNo:O:T:@:t:MI:K:uRw:H",
    long: &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "template-coordinate", has_arg: false, key: "template-coordinate" },
        LongOpt { name: "max-memory", has_arg: true, key: "max-memory" },
    ],
    globals: Some(Globals::O_AND_THREADS),
    globals_first: false,
    unlisted: &[],
};

/// `-m`: `strtol(.., 0)` (hex `0x`, octal leading `0`, else decimal) with an optional K/M/G suffix.
pub(crate) fn parse_memory(v: &str) -> u64 {
    let read = super::c_number::strtol(v, 0);
    // A negative size is refused later as below the minimum.
    let n = read.value.max(0) as u64;
    match v.as_bytes().get(read.used) {
        Some(b'k' | b'K') => n << 10,
        Some(b'm' | b'M') => n << 20,
        Some(b'g' | b'G') => n << 30,
        _ => n,
    }
}

fn complain_about_memory(max_mem: u64) -> Error {
    let (mut m, mut suffix) = (max_mem, "");
    let nine_k = 9 << 10;
    if m > nine_k {
        m >>= 10;
        suffix = "K";
    }
    if m > nine_k {
        m >>= 10;
        suffix = "M";
    }
    Error::Bare(format!(
        "[bam_sort] -m setting ({m}{suffix} bytes) is less than the minimum required (1M).\n\n\
Trying to run with -m too small can lead to the creation of a very large number\n\
of temporary files.  This may make sort fail due to it exceeding limits on the\n\
number of files it can have open at the same time.\n\n\
Please check your -m parameter.  It should be an integer followed by one of the\n\
letters K (for kilobytes), M (megabytes) or G (gigabytes).  You should ensure it\n\
is at least the minimum above, and much higher if you are sorting a large file."
    ))
}

/// Parses `sort`'s arguments.
pub fn parse(inv: &Invocation, args: &[String]) -> Result<SortOptions, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    let mut output = "-".to_string();
    let mut name: Option<NameOrder> = None;
    let mut tag: Option<[u8; 2]> = None;
    let mut minimiser = Minimiser { kmer: 20, try_rev: true, squash: false };
    let mut max_mem: u64 = PER_THREAD_DEFAULT;
    let mut total_mem: Option<u64> = None;
    let mut tmp_prefix: Option<String> = None;
    let mut minimiser_ref: Option<String> = None;
    let mut window = 100usize;
    // -O, --output-fmt-option, -l and -u all set the level; the last one wins.
    let mut out = OutputChoice::default();
    let mut common = CommonOptions::default();
    // parse_int_value; its messages come without the `samtools sort: ` prefix.
    let int = |v: &str, what: &str| -> Result<i64, Error> {
        parse_int_value(v).map(i64::from).ok_or_else(|| Error::ShowUsage(Some(what.to_string())))
    };
    for o in &opts {
        if common.take(&o.key, o.value.as_deref())? {
            continue;
        }
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "o" => output = v.to_string(),
            "n" => name = Some(name.unwrap_or(NameOrder::Natural)),
            "N" => name = Some(NameOrder::Lexicographic),
            "t" => {
                let b = v.as_bytes();
                tag = Some([b.first().copied().unwrap_or(0), b.get(1).copied().unwrap_or(0)]);
            }
            "m" => max_mem = parse_memory(v),
            "T" => tmp_prefix = Some(v.to_string()),
            "max-memory" => {
                total_mem = Some(parse_memory(v));
                if total_mem == Some(0) {
                    return Err(Error::Usage(format!("invalid --max-memory size \"{v}\"")));
                }
            }
            "l" => out.level = Some(int(v, "Invalid compression level")? as i32),
            "u" => out.level = Some(0),
            "template-coordinate" | "M" => {}
            "I" => minimiser_ref = Some(v.to_string()),
            "w" => window = int(v, "Invalid window")?.max(0) as usize,
            "H" => minimiser.squash = true,
            "R" => minimiser.try_rev = false,
            "K" => minimiser.kmer = int(v, "Invalid kmer")?.clamp(1, 31) as u32,
            "O" => out.set_format(v)?,
            "output-fmt-option" => out.set_option(v),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    // The last of -n/-N/-M/--template-coordinate wins as in samtools' switch; tags refine it.
    let mut order = SortOrder::Coordinate;
    for o in &opts {
        match o.key.as_str() {
            "n" | "N" => order = SortOrder::Name(name.unwrap_or(NameOrder::Natural)),
            "template-coordinate" => order = SortOrder::TemplateCoordinate,
            "M" | "I" => order = SortOrder::MinHash(minimiser),
            _ => {}
        }
    }
    if let SortOrder::MinHash(_) = order {
        order = SortOrder::MinHash(minimiser);
    }
    if let Some(tag) = tag {
        order = match order {
            SortOrder::Name(n) => SortOrder::Tag { tag, then: Some(n) },
            _ => SortOrder::Tag { tag, then: None },
        };
    }
    if positionals.is_empty() && std::io::stdin().is_terminal() {
        return Err(Error::Help);
    }
    if positionals.len() >= 2 {
        let hint = "[bam_sort] Use -T PREFIX / -o FILE to specify temporary and final output files";
        return Err(Error::ShowUsage((positionals.len() == 2).then(|| hint.to_string())));
    }
    if common.write_index && !order.is_positional() {
        eprintln!(
            "[W::bam_sort] Ignoring --write-index as it only works for position sorted files."
        );
        common.write_index = false;
    }
    if max_mem < 1 << 20 {
        return Err(complain_about_memory(max_mem));
    }
    let (output, index) = if common.write_index {
        let (out, idx, bai) = index_request(&output);
        if out == "-" {
            return Err(Error::Message("failed to create \"-\": Invalid argument".into()));
        }
        (out, Some((idx, bai)))
    } else {
        (output, None)
    };
    let format = out.format(&output);
    out.use_reference(common.reference.as_deref());
    Ok(SortOptions {
        input: positionals.into_iter().next().unwrap_or_else(|| "-".to_string()),
        output,
        spec: out.spec(format, out.level.map_or(-1, |l| l.min(9))),
        threads: common.threads.total(),
        reference: common.reference.clone(),
        // samtools keeps up to -m per sorting thread (-@, at least one) in memory.
        memory: MemoryBudget::per_sorting_thread(total_mem, max_mem, common.threads).limit(),
        tmp_prefix,
        minimiser_ref: minimiser_ref.map(|r| (r, window)),
        order,
        pg: common.pg(inv, &super::permuted::permuted(&OPTIONS, args)),
        index,
    })
}

/// Runs `sort` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    parse(inv, args).and_then(crate::pipeline::sort::run_on_pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory("768M"), 768 << 20);
        assert_eq!(parse_memory("10m"), 10 << 20);
        assert_eq!(parse_memory("2G"), 2 << 30);
        assert_eq!(parse_memory("0x100000"), 1 << 20);
        assert_eq!(parse_memory("100K"), 100 << 10);
        assert_eq!(parse_memory("1000"), 1000);
    }
}
