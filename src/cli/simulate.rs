//! `mdsam simulate`: realistic aligned test data (an mdsam addition, not a samtools command).

use super::getopt::LongOpt;
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::simulate::SimulateCommand;
use crate::simulate::{Order, SimulateOptions};

pub const USAGE: &str = "
Usage: mdsam simulate [options]

Writes deterministic, realistic paired-end alignments (SAM or BAM) for tests and benchmarks.

Options:
  -n, --pairs INT         read pairs to write [10000]
  -s, --seed INT          random seed [1]
      --order name|coordinate
                          aligner (name-grouped) or coordinate-sorted order [name]
      --read-length INT   bases per read, 75..1000 [150]
      --refs INT          number of references [8]
      --ref-length INT    length of the longest reference [2000000]
      --dup-rate FLOAT    fraction of pairs that are PCR duplicates [0.08]
      --optical-rate FLOAT
                          fraction of pairs that are optical duplicates [0.02]
      --read-groups INT   number of @RG lines [4]
      --fasta FILE        also write the reference sequences to FILE
  -o, --output FILE       output file; BAM when it ends in .bam [standard output]
  -@, --threads INT       additional threads [0]
";

pub const OPTIONS: OptionTable = OptionTable {
    command: "simulate",
    short: "n:s:o:@:?",
    long: &[
        LongOpt { name: "pairs", has_arg: true, key: "n" },
        LongOpt { name: "seed", has_arg: true, key: "s" },
        LongOpt { name: "order", has_arg: true, key: "order" },
        LongOpt { name: "read-length", has_arg: true, key: "read-length" },
        LongOpt { name: "refs", has_arg: true, key: "refs" },
        LongOpt { name: "ref-length", has_arg: true, key: "ref-length" },
        LongOpt { name: "dup-rate", has_arg: true, key: "dup-rate" },
        LongOpt { name: "optical-rate", has_arg: true, key: "optical-rate" },
        LongOpt { name: "read-groups", has_arg: true, key: "read-groups" },
        LongOpt { name: "fasta", has_arg: true, key: "fasta" },
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "threads", has_arg: true, key: "@" },
        LongOpt { name: "help", has_arg: false, key: "?" },
    ],
    globals: None,
    globals_first: false,
    unlisted: &["-?", "--help"],
};

fn number<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, Error> {
    v.parse().map_err(|_| Error::Usage(format!("invalid value \"{v}\" for {key}")))
}

pub fn parse(args: &[String]) -> Result<SimulateCommand, Error> {
    let (opts, positionals) = OPTIONS.parse_or_usage(args)?;
    if let Some(p) = positionals.first() {
        return Err(Error::Usage(format!("unexpected argument \"{p}\"")));
    }
    let mut o = SimulateOptions::default();
    let mut output = "-".to_string();
    let mut fasta = None;
    for opt in opts {
        let v = opt.value.as_deref().unwrap_or("");
        match opt.key.as_str() {
            "n" => o.pairs = number("--pairs", v)?,
            "s" => o.seed = number("--seed", v)?,
            "order" => {
                o.order = match v {
                    "name" => Order::Name,
                    "coordinate" => Order::Coordinate,
                    _ => return Err(Error::Usage(format!("unknown order \"{v}\""))),
                }
            }
            "read-length" => o.read_len = number("--read-length", v)?,
            "refs" => o.n_refs = number("--refs", v)?,
            "ref-length" => o.ref_len = number("--ref-length", v)?,
            "dup-rate" => o.dup_rate = number("--dup-rate", v)?,
            "optical-rate" => o.optical_dup_rate = number("--optical-rate", v)?,
            "read-groups" => o.read_groups = number("--read-groups", v)?,
            "fasta" => fasta = Some(v.to_string()),
            "o" => output = v.to_string(),
            "@" => o.threads = super::global::parse_threads(v)?.total(),
            "?" => return Err(Error::Help),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    Ok(SimulateCommand { options: o, output, fasta })
}

/// Runs `simulate` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    let command = parse(args)?;
    let threads = command.options.threads;
    crate::pipeline::threads::pool(threads).install(|| crate::pipeline::simulate::run(command))
}
