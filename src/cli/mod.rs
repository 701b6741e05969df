//! samtools-compatible command lines: dispatch on the command (or on argv[0] when installed as
//! `samtools`), one file per command turning arguments into plain option structs.

pub mod addreplacerg;
pub mod ampliconclip;
pub mod ampliconstats;
pub mod bam2fq;
pub mod bedcov;
pub mod c_number;
pub mod calmd;
pub mod cat;
pub mod catalog;
pub mod checksum;
pub mod collate;
pub mod common;
pub mod completion;
pub mod consensus;
pub mod coverage;
pub mod delegate;
pub mod depad;
pub mod depth;
pub mod dict;
pub mod faidx;
pub mod fixmate;
pub mod flags;
pub mod flagstat;
pub mod getopt;
pub mod global;
pub mod head;
pub mod hw_model;
pub mod idxstats;
pub mod import;
pub mod index;
pub mod install_shim;
pub mod manpage;
pub mod markdup;
pub mod markdup_pipeline;
pub mod merge;
pub mod options;
pub mod outfmt;
pub mod output_errors;
pub mod permuted;
pub mod quickcheck;
pub mod reheader;
pub mod reset;
pub mod simulate;
pub mod sort;
pub mod split;
pub mod stats;
pub mod view;

use std::io::{IsTerminal, Write};

use crate::error::Error;

/// The samtools release whose behaviour mdsam reproduces.
pub const SAMTOOLS_VERSION: &str = "1.24";
pub const MDSAM_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How the program was called.
pub struct Invocation {
    /// argv[0] exactly as given (goes into `@PG CL`).
    pub argv0: String,
    /// The subcommand name.
    pub command: String,
}

impl Invocation {
    /// `@PG` fields after `ID`: `PN`, `VN`, `CL` as samtools writes them.
    pub fn pg_fields(&self, args: &[String]) -> Vec<(String, String)> {
        let mut cl = format!("{} {}", self.argv0, self.command);
        for a in args {
            cl.push(' ');
            cl.push_str(&a.replace('\t', " "));
        }
        vec![
            ("PN".into(), "samtools".into()),
            ("VN".into(), format!("{SAMTOOLS_VERSION} (mdsam {MDSAM_VERSION})")),
            ("CL".into(), cl),
        ]
    }
}

pub fn version_line() -> String {
    format!("samtools {SAMTOOLS_VERSION} (mdsam {MDSAM_VERSION})")
}

fn main_usage() -> String {
    include_str!("usage/main.txt")
        .replace("{VERSION}", &format!("{SAMTOOLS_VERSION} (mdsam {MDSAM_VERSION})"))
        .replace("{DELEGATION}", &delegate::summary())
}

/// Prints the version text in one write, so `samtools --version | head -1` under `pipefail`
/// never sees a SIGPIPE from a second write after `head` has exited.
fn print_version() {
    let (from_samtools, additions) = delegate::native_commands();
    let text = format!(
        "{}\nUsing mdsam {MDSAM_VERSION}: a samtools-compatible reimplementation in Rust (libdeflate and ISA-L for BGZF)\nAllocator: {}\nNative commands: {}; mdsam additions: {}\nOther commands: {}\n",
        version_line(),
        crate::alloc::active().name(),
        from_samtools.join(" "),
        additions.join(" "),
        delegate::summary()
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

const LOAD_USAGE: &str = "
Usage: mdsam load [-@ INT] <in.bam|in.sam>

Reads the whole input into memory and prints: seconds, records, record bytes, allocations,
allocator, threads (tab-separated). Allocations are counted with MDSAM_COUNT_ALLOCS=1.
";

fn load(args: &[String]) -> Result<(), Error> {
    let (opts, positionals) =
        getopt::parse(args, "@:", &[]).map_err(|e| Error::Usage(e.to_string()))?;
    let mut threads = 1;
    for o in opts {
        if o.key == "@" {
            threads = global::parse_threads(o.value.as_deref().unwrap_or("0"))? + 1;
        }
    }
    let input = positionals.first().ok_or_else(|| Error::Usage("no input".into()))?;
    let r = crate::pipeline::threads::pool(threads)
        .install(|| crate::pipeline::load::run(input, threads))?;
    println!(
        "{:.6}\t{}\t{}\t{}\t{}\t{}",
        r.seconds,
        r.records,
        r.bytes,
        r.allocations,
        crate::alloc::active().name(),
        threads
    );
    Ok(())
}

/// Runs a command line; returns the exit status.
pub fn run(argv: Vec<String>) -> i32 {
    let argv0 = argv.first().cloned().unwrap_or_else(|| "samtools".into());
    let args = &argv[1.min(argv.len())..];
    let Some(command) = args.first() else {
        eprint!("{}", main_usage());
        return 1;
    };
    let rest = &args[1..];
    match command.as_str() {
        "help" | "--help" | "-h" => match rest.first() {
            Some(cmd) if !delegate::is_native(cmd) => delegate::run(&argv, cmd),
            Some(cmd) => run_command(&argv0, cmd, &[]),
            None => {
                print!("{}", main_usage());
                0
            }
        },
        "version" | "--version" => {
            print_version();
            0
        }
        "--version-only" => {
            println!("{SAMTOOLS_VERSION}+mdsam{MDSAM_VERSION}");
            0
        }
        cmd if !delegate::is_native(cmd) => delegate::run(&argv, cmd),
        cmd => run_command(&argv0, cmd, rest),
    }
}

/// Takes mdsam's own `--no-progress` out of a command's arguments (before any `--`), so the
/// per-command parsers and `@PG` never see it; returns whether it was there.
fn strip_no_progress(args: &[String]) -> (Vec<String>, bool) {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let found = args[..end].iter().any(|a| a == "--no-progress");
    let kept = args.iter().enumerate().filter(|(i, a)| *i >= end || *a != "--no-progress");
    (kept.map(|(_, a)| a.clone()).collect(), found)
}

fn run_command(argv0: &str, cmd: &str, args: &[String]) -> i32 {
    let (args, no_progress) = strip_no_progress(args);
    let (args, profile_path) = match global::take_profile(&args) {
        Ok(taken) => taken,
        Err(e) => {
            eprintln!("samtools {cmd}: {e}");
            return 1;
        }
    };
    if let [help] = &args[..]
        && (help == "--help" || help == "-h")
        && let Some(doc) = catalog::find(cmd).filter(|c| !c.from_samtools)
    {
        // mdsam's own commands answer --help; samtools' answer it as samtools 1.24 does.
        print!("{}", doc.usage);
        return 0;
    }
    crate::progress::init(cmd, no_progress);
    if let Some(path) = &profile_path {
        let mut argv = vec![argv0.to_string(), cmd.to_string()];
        argv.extend(args.iter().cloned());
        crate::profile::start(path, cmd, &argv);
    }
    let status = run_parsed_command(argv0, cmd, &args);
    if let Err(e) = crate::profile::finish() {
        eprintln!("samtools {cmd}: {e}");
        return 1;
    }
    status
}

fn run_parsed_command(argv0: &str, cmd: &str, args: &[String]) -> i32 {
    let inv = Invocation { argv0: argv0.to_string(), command: cmd.to_string() };
    let (usage, result) = match cmd {
        "view" => {
            if args.is_empty() && std::io::stdin().is_terminal() {
                print!("{}", view::USAGE);
                return 0;
            }
            let run = crate::pipeline::view::run_request(view::parse(&inv, args));
            (view::error_usage(), run)
        }
        "load" => (LOAD_USAGE, load(args)),
        "hw-model" => (hw_model::USAGE, hw_model::run(args)),
        "install-shim" => (install_shim::USAGE, install_shim::run(args)),
        "man" => (manpage::USAGE, manpage::run(args)),
        "completion" => (completion::USAGE, completion::run(args)),
        "simulate" => (
            simulate::USAGE,
            simulate::parse(args).and_then(|c| {
                let threads = c.options.threads;
                crate::pipeline::threads::pool(threads)
                    .install(|| crate::pipeline::simulate::run(c))
            }),
        ),
        "sort" => {
            (sort::USAGE, sort::parse(&inv, args).and_then(crate::pipeline::sort::run_on_pool))
        }
        "collate" | "bamshuf" => (
            collate::USAGE,
            collate::parse(&inv, args).and_then(crate::pipeline::collate::run_on_pool),
        ),
        "index" => {
            if args.is_empty() {
                print!("{}", index::USAGE);
                return 0;
            }
            (index::USAGE, index::parse(args).and_then(crate::pipeline::index::run))
        }
        "cat" => (cat::USAGE, cat::parse(&inv, args).and_then(crate::pipeline::cat::run)),
        "merge" => {
            (merge::USAGE, merge::parse(&inv, args).and_then(crate::pipeline::merge::run_on_pool))
        }
        "checksum" => {
            if args.is_empty() && std::io::stdin().is_terminal() {
                // samtools prints the global options part to stdout, the rest to stderr.
                let (head, globals) = checksum::USAGE.split_at(
                    checksum::USAGE.find(checksum::GLOBAL_PART).unwrap_or(checksum::USAGE.len()),
                );
                eprint!("{head}");
                print!("{globals}");
                return 0;
            }
            (checksum::USAGE, checksum::parse(args).and_then(crate::pipeline::checksum::run))
        }
        "fixmate" => {
            if args.is_empty() {
                print!("{}", fixmate::USAGE);
                return 0;
            }
            (
                fixmate::USAGE,
                fixmate::parse(&inv, args).and_then(crate::pipeline::fixmate::run_on_pool),
            )
        }
        "markdup" => (
            markdup::USAGE,
            markdup::parse(&inv, args).and_then(crate::pipeline::markdup::run_on_pool),
        ),
        "head" => match head::parse(args, std::io::stdin().is_terminal()) {
            Ok(head::HeadRequest::UsageOnTerminal) => {
                print!("{}", head::USAGE);
                return 0;
            }
            Ok(head::HeadRequest::Run(options)) => {
                (head::USAGE, crate::pipeline::head::run(&options))
            }
            Err(e) => (head::USAGE, Err(e)),
        },
        "idxstats" => match idxstats::parse(args) {
            Ok(idxstats::IdxstatsRequest::Usage) => {
                print!("{}", idxstats::USAGE);
                return 0;
            }
            Ok(idxstats::IdxstatsRequest::Run(options)) => {
                (idxstats::USAGE, crate::pipeline::idxstats::run(&options))
            }
            Err(e) => (idxstats::USAGE, Err(e)),
        },
        "flagstat" => match flagstat::parse(args) {
            Ok(flagstat::FlagstatRequest::Usage) => {
                print!("{}", flagstat::USAGE);
                return 0;
            }
            Ok(flagstat::FlagstatRequest::Run(options)) => {
                (flagstat::USAGE, crate::pipeline::flagstat::run(&options))
            }
            Err(e) => (flagstat::USAGE, Err(e)),
        },
        "stats" => match stats::parse(args, std::io::stdin().is_terminal()) {
            Ok(stats::StatsRequest::Run(options)) => {
                (stats::USAGE, crate::pipeline::stats::run(*options))
            }
            // samtools prints its usage on stdout and exits 1 for -h and for a bad option.
            Ok(stats::StatsRequest::Usage) => {
                print!("{}", stats::USAGE);
                return 1;
            }
            Err(Error::ShowUsage(line)) => {
                if let Some(line) = line {
                    eprintln!("{line}");
                }
                print!("{}", stats::USAGE);
                return 1;
            }
            Err(e) => (stats::USAGE, Err(e)),
        },
        "quickcheck" => match quickcheck::parse(args) {
            Ok(options) if options.inputs.is_empty() => {
                print!("{}", quickcheck::USAGE);
                return 1;
            }
            parsed => {
                (quickcheck::USAGE, parsed.and_then(|o| crate::pipeline::quickcheck::run(&o)))
            }
        },
        "markdup-pipeline" => {
            if args.is_empty() {
                print!("{}", markdup_pipeline::USAGE);
                return 0;
            }
            (
                markdup_pipeline::USAGE,
                markdup_pipeline::parse(&inv, args)
                    .and_then(crate::pipeline::markdup_pipeline::run_on_pool),
            )
        }
        "faidx" | "fqidx" => {
            let usage = if cmd == "fqidx" { faidx::FQIDX_USAGE } else { faidx::USAGE };
            match faidx::parse(args, cmd == "fqidx") {
                Ok(faidx::FaidxRequest::Usage) => {
                    print!("{usage}");
                    return 0;
                }
                Ok(faidx::FaidxRequest::Run(options)) => {
                    (usage, crate::pipeline::faidx::run(&options))
                }
                Err(e) => (usage, Err(e)),
            }
        }
        "ampliconstats" => match ampliconstats::parse(args, std::io::stdin().is_terminal()) {
            Ok(ampliconstats::AmpliconstatsRequest::Usage) => {
                print!("{}", ampliconstats::USAGE);
                return 0;
            }
            Ok(ampliconstats::AmpliconstatsRequest::Run(o)) => {
                (ampliconstats::USAGE, crate::pipeline::ampliconstats::run(&o))
            }
            Err(e) => (ampliconstats::USAGE, Err(e)),
        },
        "ampliconclip" => (
            ampliconclip::USAGE,
            ampliconclip::parse(&inv, args).and_then(crate::pipeline::ampliconclip::run_on_pool),
        ),
        "depad" => {
            (depad::USAGE, depad::parse(&inv, args).and_then(|o| crate::pipeline::depad::run(&o)))
        }
        "split" => {
            (split::USAGE, split::parse(&inv, args).and_then(crate::pipeline::split::run_on_pool))
        }
        "consensus" => (consensus::USAGE, consensus::run(&inv, args)),
        "depth" => (depth::USAGE, depth::parse(args).and_then(|o| crate::pipeline::depth::run(&o))),
        "coverage" => (
            coverage::USAGE,
            coverage::parse(args).and_then(|o| crate::pipeline::coverage::run(&o)),
        ),
        "bedcov" => {
            (bedcov::USAGE, bedcov::parse(args).and_then(|o| crate::pipeline::bedcov::run(&o)))
        }
        "addreplacerg" => match addreplacerg::parse(&inv, args) {
            Ok(addreplacerg::AddReplaceRgRequest::Usage) => {
                print!("{}", addreplacerg::USAGE);
                return 1;
            }
            Ok(addreplacerg::AddReplaceRgRequest::Run(o)) => {
                (addreplacerg::USAGE, crate::pipeline::addreplacerg::run(*o))
            }
            Err(e) => (addreplacerg::USAGE, Err(e)),
        },
        "calmd" => (calmd::USAGE, calmd::parse(&inv, args).and_then(crate::pipeline::calmd::run)),
        "reheader" => match reheader::parse(&inv, args) {
            Ok(reheader::ReheaderRequest::Help) => {
                print!("{}", reheader::USAGE);
                return 0;
            }
            Ok(reheader::ReheaderRequest::Run(o)) => {
                (reheader::USAGE, crate::pipeline::reheader::run(o))
            }
            Err(e) => (reheader::USAGE, Err(e)),
        },
        "reset" => match reset::parse(&inv, args, std::io::stdin().is_terminal()) {
            Ok(reset::ResetRequest::Usage) => {
                print!("{}", reset::USAGE);
                return 0;
            }
            Ok(reset::ResetRequest::Run(o)) => (reset::USAGE, crate::pipeline::reset::run(*o)),
            Err(e) => (reset::USAGE, Err(e)),
        },
        "fastq" | "fasta" | "bam2fq" => {
            let usage = match cmd {
                "fasta" => bam2fq::FASTA_USAGE,
                "bam2fq" => bam2fq::BAM2FQ_USAGE,
                _ => bam2fq::FASTQ_USAGE,
            };
            match bam2fq::parse(args, cmd, std::io::stdin().is_terminal()) {
                Ok(bam2fq::Bam2fqRequest::Usage) => {
                    print!("{usage}");
                    return 0;
                }
                Ok(bam2fq::Bam2fqRequest::Run(o)) => (usage, crate::pipeline::bam2fq::run(&o)),
                Err(e) => (usage, Err(e)),
            }
        }
        "import" => match import::parse(&inv, args) {
            Ok(import::ImportRequest::Usage) => {
                print!("{}", import::USAGE);
                return 0;
            }
            Ok(import::ImportRequest::Run(o)) => (import::USAGE, crate::pipeline::import::run(&o)),
            Err(e) => (import::USAGE, Err(e)),
        },
        "dict" => (
            dict::USAGE,
            dict::parse(args, std::io::stdin().is_terminal())
                .and_then(|o| crate::pipeline::dict::run(&o)),
        ),
        // Commands that are not native were delegated before this point (cli::delegate).
        _ => {
            eprintln!("[main] unrecognized command '{cmd}'");
            return 1;
        }
    };
    // Any bar still drawn ends here, so the messages below start on a line of their own.
    crate::progress::finish();
    match result {
        Ok(()) => 0,
        Err(Error::Help) => {
            // The whole text (view's usage after a mistake is shorter).
            print!("{}", catalog::find(cmd).map_or(usage, |c| c.usage));
            0
        }
        Err(Error::BrokenPipe) => 0,
        Err(Error::Failed) => 1,
        Err(Error::Status(status)) => status,
        Err(Error::Bare(msg)) => {
            let _ = std::io::stdout().flush();
            eprintln!("{msg}");
            1
        }
        Err(Error::CannotCreate { path, reason }) => {
            let _ = std::io::stdout().flush();
            eprintln!("{}", output_errors::cannot_create(cmd, &path, &reason));
            1
        }
        Err(Error::ShowUsage(line)) => {
            let _ = std::io::stdout().flush();
            if let Some(line) = line {
                eprintln!("{line}");
            }
            eprint!("{usage}");
            1
        }
        Err(Error::Usage(msg)) => {
            let _ = std::io::stdout().flush();
            eprintln!("samtools {cmd}: {msg}");
            eprint!("{usage}");
            1
        }
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("samtools {cmd}: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_progress_is_taken_out_before_any_double_dash() {
        let args: Vec<String> =
            ["-c", "--no-progress", "in.bam", "--", "--no-progress"].map(String::from).to_vec();
        let (kept, found) = strip_no_progress(&args);
        assert!(found);
        assert_eq!(kept, ["-c", "in.bam", "--", "--no-progress"]);
        let (kept, found) = strip_no_progress(&kept[2..]);
        assert!(!found);
        assert_eq!(kept, ["--", "--no-progress"]);
    }
}
