//! samtools-compatible command lines: dispatch on the command (or on argv[0] when installed as
//! `samtools`) through the one command table ([`catalog::COMMANDS`]), one file per command
//! turning arguments into plain option structs and running them (its `run`).

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
pub mod cram_size;
pub mod delegate;
pub mod depad;
pub mod depth;
pub mod dict;
pub mod faidx;
pub mod fixmate;
pub mod flags;
pub mod flags_command;
pub mod flagstat;
pub mod getopt;
pub mod global;
pub mod head;
pub mod help;
pub mod hw_model;
pub mod idxstats;
pub mod import;
pub mod index;
pub mod install_shim;
pub mod load;
pub mod manpage;
pub mod markdup;
pub mod markdup_pipeline;
pub mod merge;
pub mod mpileup;
pub mod options;
pub mod outfmt;
pub mod output_errors;
pub mod permuted;
pub mod phase;
pub mod quickcheck;
pub mod reference;
pub mod reheader;
pub mod reset;
pub mod rmdup;
pub mod samples;
pub mod simulate;
pub mod sort;
pub mod split;
pub mod stats;
pub mod targetcut;
pub mod tview;
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

/// Runs a command line; returns the exit status.
pub fn run(argv: Vec<String>) -> i32 {
    let argv0 = argv.first().cloned().unwrap_or_else(|| "samtools".into());
    let args = &argv[1.min(argv.len())..];
    let Some(command) = args.first() else {
        eprint!("{}", help::main_usage());
        return 1;
    };
    let rest = &args[1..];
    match command.as_str() {
        "help" | "--help" | "-h" => match rest.first() {
            Some(cmd) => match catalog::find(cmd) {
                Some(entry) => run_command(&argv0, entry, cmd, &[]),
                None => delegate::run(&argv, cmd),
            },
            None => {
                print!("{}", help::main_usage());
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
        cmd => match catalog::find(cmd) {
            Some(entry) => run_command(&argv0, entry, cmd, rest),
            None => delegate::run(&argv, cmd),
        },
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

/// Runs the table's `entry` as `cmd` (its name or an alias).
fn run_command(argv0: &str, entry: &catalog::CommandDoc, cmd: &str, args: &[String]) -> i32 {
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
        && !entry.from_samtools
    {
        // mdsam's own commands answer --help; samtools' answer it as samtools 1.24 does.
        print!("{}", entry.usage);
        return 0;
    }
    crate::progress::init(cmd, no_progress);
    if let Some(path) = &profile_path {
        let mut argv = vec![argv0.to_string(), cmd.to_string()];
        argv.extend(args.iter().cloned());
        crate::profile::start(path, cmd, &argv);
    }
    let inv = Invocation { argv0: argv0.to_string(), command: cmd.to_string() };
    let shows_usage = match entry.no_arguments {
        catalog::NoArguments::Parse => false,
        catalog::NoArguments::Usage => args.is_empty(),
        catalog::NoArguments::UsageOnTerminal => args.is_empty() && std::io::stdin().is_terminal(),
    };
    let result = if shows_usage { Err(Error::Help) } else { (entry.run)(&inv, &args) };
    // Any bar still drawn ends here, so the messages below start on a line of their own.
    crate::progress::finish();
    let status = report(entry, cmd, result);
    if let Err(e) = crate::profile::finish() {
        eprintln!("samtools {cmd}: {e}");
        return 1;
    }
    status
}

/// The exit status of a command's result, after printing what samtools prints for it.
fn report(entry: &catalog::CommandDoc, cmd: &str, result: Result<(), Error>) -> i32 {
    let usage = entry.usage_after_error.map_or(entry.usage, |short| short());
    match result {
        Ok(()) => 0,
        Err(Error::Help) => {
            // The whole text (view's usage after a mistake is shorter).
            print!("{}", entry.usage);
            entry.help_status
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
            if entry.show_usage_on_stdout {
                print!("{usage}");
            } else {
                eprint!("{usage}");
            }
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
