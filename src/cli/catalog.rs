//! Every command's name, one-line summary, `--help` text and option table: the one definition
//! that the man pages ([`super::manpage`]) and shell completions ([`super::completion`]) are
//! generated from, so they cannot drift from what `mdsam CMD --help` prints or what it parses.
//!
//! Options are read back out of the usage texts (samtools' layout: an option line starts with
//! `-x`, `--long` or `-x, --long`); a test checks them against each command's table both ways.

use super::options::OptionTable;
use super::{
    Invocation, addreplacerg, ampliconclip, ampliconstats, bam2fq, bedcov, calmd, cat, checksum,
    collate, completion, consensus, coverage, cram_size, depad, depth, dict, faidx, fixmate,
    flags_command, flagstat, head, hw_model, idxstats, import, index, install_shim, load, manpage,
    markdup, markdup_pipeline, merge, mpileup, phase, quickcheck, reference, reheader, reset,
    rmdup, samples, simulate, sort, split, stats, targetcut, tview, view,
};
use crate::error::Error;
use Heading::{Additions, Editing, FileOperations, Indexing, Statistics, Viewing};
use NoArguments::{Usage, UsageOnTerminal};

/// A command's `run`: one signature for every command, native or mdsam's own.
pub type RunFn = fn(&Invocation, &[String]) -> Result<(), Error>;

/// The groups of `mdsam help`: samtools 1.24's own headings, then mdsam's additions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heading {
    Indexing,
    Editing,
    FileOperations,
    Statistics,
    Viewing,
    Additions,
}

impl Heading {
    pub const ALL: [Heading; 6] = [
        Heading::Indexing,
        Heading::Editing,
        Heading::FileOperations,
        Heading::Statistics,
        Heading::Viewing,
        Heading::Additions,
    ];

    /// The heading's words in `help` (samtools' spelling for its own).
    pub fn title(self) -> &'static str {
        match self {
            Heading::Indexing => "Indexing",
            Heading::Editing => "Editing",
            Heading::FileOperations => "File operations",
            Heading::Statistics => "Statistics",
            Heading::Viewing => "Viewing",
            Heading::Additions => "mdsam additions",
        }
    }
}

/// What a command line of the command name alone means, decided before its parser runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoArguments {
    /// The parser decides (most commands: read stdin, or the parser's own usage case).
    Parse,
    /// The usage on stdout, exit 0 (samtools' `if (argc == 1) usage(stdout)`).
    Usage,
    /// The same, only when stdin is a terminal (samtools' `isatty(STDIN_FILENO)` test).
    UsageOnTerminal,
}

/// One command: its name, what it does, its usage text, how it runs.
pub struct CommandDoc {
    pub name: &'static str,
    /// Other names it answers to (samtools' `bamshuf` for `collate`).
    pub aliases: &'static [&'static str],
    pub heading: Heading,
    pub summary: &'static str,
    pub usage: &'static str,
    /// samtools has this command (else it is an mdsam addition).
    pub from_samtools: bool,
    /// The options it parses (`None`: positionals only).
    pub options: Option<&'static OptionTable>,
    pub run: RunFn,
    pub no_arguments: NoArguments,
    /// The exit status after printing the usage for [`Error::Help`] (samtools' stats,
    /// addreplacerg and quickcheck print it and exit 1).
    pub help_status: i32,
    /// [`Error::ShowUsage`] prints the usage on stdout (stats), not stderr.
    pub show_usage_on_stdout: bool,
    /// The usage printed after a mistake, when shorter than `usage` (view drops its notes).
    pub usage_after_error: Option<fn() -> &'static str>,
    /// Gets a man page and completion (hw-model's usage names its subcommands' options, which
    /// no option table parses; hw-model/PROFILE.md documents it).
    pub documented: bool,
}

/// A samtools command, with the defaults most commands share.
const fn samtools(
    heading: Heading,
    name: &'static str,
    summary: &'static str,
    usage: &'static str,
    options: &'static OptionTable,
    run: RunFn,
) -> CommandDoc {
    CommandDoc {
        name,
        aliases: &[],
        heading,
        summary,
        usage,
        from_samtools: true,
        options: Some(options),
        run,
        no_arguments: NoArguments::Parse,
        help_status: 0,
        show_usage_on_stdout: false,
        usage_after_error: None,
        documented: true,
    }
}

/// An mdsam addition.
const fn addition(
    name: &'static str,
    summary: &'static str,
    usage: &'static str,
    options: Option<&'static OptionTable>,
    run: RunFn,
) -> CommandDoc {
    CommandDoc {
        name,
        aliases: &[],
        heading: Additions,
        summary,
        usage,
        from_samtools: false,
        options,
        run,
        no_arguments: NoArguments::Parse,
        help_status: 0,
        show_usage_on_stdout: false,
        usage_after_error: None,
        documented: true,
    }
}

impl CommandDoc {
    const fn no_arguments(self, no_arguments: NoArguments) -> Self {
        CommandDoc { no_arguments, ..self }
    }

    const fn help_status(self, help_status: i32) -> Self {
        CommandDoc { help_status, ..self }
    }

    const fn aliases(self, aliases: &'static [&'static str]) -> Self {
        CommandDoc { aliases, ..self }
    }
}

/// Every native command, in `mdsam help` order (samtools' own order under its headings).
pub const COMMANDS: &[CommandDoc] = &[
    samtools(
        Indexing,
        "dict",
        "create a sequence dictionary file",
        dict::USAGE,
        &dict::OPTIONS,
        dict::run,
    ),
    samtools(Indexing, "faidx", "index/extract FASTA", faidx::USAGE, &faidx::OPTIONS, faidx::run),
    samtools(
        Indexing,
        "fqidx",
        "index/extract FASTQ",
        faidx::FQIDX_USAGE,
        &faidx::FQIDX_OPTIONS,
        faidx::run,
    ),
    samtools(Indexing, "index", "index alignment", index::USAGE, &index::OPTIONS, index::run)
        .no_arguments(Usage),
    samtools(
        Editing,
        "calmd",
        "recalculate MD/NM tags and '=' bases",
        calmd::USAGE,
        &calmd::OPTIONS,
        calmd::run,
    ),
    samtools(
        Editing,
        "fixmate",
        "fix mate information",
        fixmate::USAGE,
        &fixmate::OPTIONS,
        fixmate::run,
    )
    .no_arguments(Usage),
    samtools(
        Editing,
        "reheader",
        "replace BAM header",
        reheader::USAGE,
        &reheader::OPTIONS,
        reheader::run,
    ),
    samtools(
        Editing,
        "targetcut",
        "cut fosmid regions (for fosmid pool only)",
        targetcut::USAGE,
        &targetcut::OPTIONS,
        targetcut::run,
    ),
    samtools(
        Editing,
        "addreplacerg",
        "adds or replaces RG tags",
        addreplacerg::USAGE,
        &addreplacerg::OPTIONS,
        addreplacerg::run,
    )
    .help_status(1),
    samtools(
        Editing,
        "markdup",
        "mark duplicates",
        markdup::USAGE,
        &markdup::OPTIONS,
        markdup::run,
    ),
    samtools(
        Editing,
        "rmdup",
        "remove PCR duplicates (old; markdup is preferred)",
        rmdup::USAGE,
        &rmdup::OPTIONS,
        rmdup::run,
    ),
    samtools(
        Editing,
        "ampliconclip",
        "clip oligos from the end of reads",
        ampliconclip::USAGE,
        &ampliconclip::OPTIONS,
        ampliconclip::run,
    ),
    CommandDoc {
        aliases: &["bamshuf"],
        ..samtools(
            FileOperations,
            "collate",
            "shuffle and group alignments by name",
            collate::USAGE,
            &collate::OPTIONS,
            collate::run,
        )
    },
    samtools(FileOperations, "cat", "concatenate BAMs", cat::USAGE, &cat::OPTIONS, cat::run),
    samtools(
        FileOperations,
        "consensus",
        "produce a consensus Pileup/FASTA/FASTQ",
        consensus::USAGE,
        &consensus::OPTIONS,
        consensus::run,
    ),
    samtools(
        FileOperations,
        "merge",
        "merge sorted alignments",
        merge::USAGE,
        &merge::OPTIONS,
        merge::run,
    ),
    samtools(
        FileOperations,
        "mpileup",
        "multi-way pileup",
        mpileup::USAGE,
        &mpileup::OPTIONS,
        mpileup::run,
    ),
    samtools(FileOperations, "sort", "sort alignment file", sort::USAGE, &sort::OPTIONS, sort::run),
    samtools(
        FileOperations,
        "split",
        "splits a file by read group",
        split::USAGE,
        &split::OPTIONS,
        split::run,
    ),
    samtools(
        FileOperations,
        "quickcheck",
        "quickly check if SAM/BAM/CRAM file appears intact",
        quickcheck::USAGE,
        &quickcheck::OPTIONS,
        quickcheck::run,
    )
    .help_status(1),
    samtools(
        FileOperations,
        "fastq",
        "converts a BAM to a FASTQ",
        bam2fq::FASTQ_USAGE,
        &bam2fq::FASTQ_OPTIONS,
        bam2fq::run,
    ),
    samtools(
        FileOperations,
        "fasta",
        "converts a BAM to a FASTA",
        bam2fq::FASTA_USAGE,
        &bam2fq::FASTA_OPTIONS,
        bam2fq::run,
    ),
    samtools(
        FileOperations,
        "bam2fq",
        "converts a BAM to a FASTQ (the old name of fastq)",
        bam2fq::BAM2FQ_USAGE,
        &bam2fq::BAM2FQ_OPTIONS,
        bam2fq::run,
    ),
    samtools(
        FileOperations,
        "import",
        "Converts FASTA or FASTQ files to SAM/BAM/CRAM",
        import::USAGE,
        &import::OPTIONS,
        import::run,
    ),
    samtools(
        FileOperations,
        "reference",
        "Generates a reference from aligned data",
        reference::USAGE,
        &reference::OPTIONS,
        reference::run,
    ),
    samtools(
        FileOperations,
        "reset",
        "Reverts aligner changes in reads",
        reset::USAGE,
        &reset::OPTIONS,
        reset::run,
    ),
    samtools(
        Statistics,
        "bedcov",
        "read depth per BED region",
        bedcov::USAGE,
        &bedcov::OPTIONS,
        bedcov::run,
    ),
    samtools(
        Statistics,
        "coverage",
        "alignment depth and percent coverage",
        coverage::USAGE,
        &coverage::OPTIONS,
        coverage::run,
    ),
    samtools(Statistics, "depth", "compute the depth", depth::USAGE, &depth::OPTIONS, depth::run),
    samtools(
        Statistics,
        "flagstat",
        "simple stats",
        flagstat::USAGE,
        &flagstat::OPTIONS,
        flagstat::run,
    ),
    samtools(
        Statistics,
        "idxstats",
        "BAM index stats",
        idxstats::USAGE,
        &idxstats::OPTIONS,
        idxstats::run,
    ),
    samtools(
        Statistics,
        "cram-size",
        "list CRAM Content-ID and Data-Series sizes",
        cram_size::USAGE,
        &cram_size::OPTIONS,
        cram_size::run,
    ),
    samtools(Statistics, "phase", "phase heterozygotes", phase::USAGE, &phase::OPTIONS, phase::run),
    // samtools prints its usage on stdout and exits 1 for -h and for a bad option.
    CommandDoc {
        show_usage_on_stdout: true,
        ..samtools(
            Statistics,
            "stats",
            "generate stats (former bamcheck)",
            stats::USAGE,
            &stats::OPTIONS,
            stats::run,
        )
        .help_status(1)
    },
    samtools(
        Statistics,
        "ampliconstats",
        "generate amplicon specific stats",
        ampliconstats::USAGE,
        &ampliconstats::OPTIONS,
        ampliconstats::run,
    ),
    samtools(
        Statistics,
        "checksum",
        "produce order-agnostic checksums of sequence content",
        checksum::USAGE,
        &checksum::OPTIONS,
        checksum::run,
    ),
    samtools(
        Viewing,
        "flags",
        "explain BAM flags",
        flags_command::USAGE,
        &flags_command::OPTIONS,
        flags_command::run,
    ),
    samtools(Viewing, "head", "header viewer", head::USAGE, &head::OPTIONS, head::run),
    samtools(Viewing, "tview", "text alignment viewer", tview::USAGE, &tview::OPTIONS, tview::run),
    CommandDoc {
        usage_after_error: Some(view::error_usage),
        ..samtools(
            Viewing,
            "view",
            "SAM<->BAM<->CRAM conversion",
            view::USAGE,
            &view::OPTIONS,
            view::run,
        )
        .no_arguments(UsageOnTerminal)
    },
    samtools(
        Viewing,
        "depad",
        "convert padded BAM to unpadded BAM",
        depad::USAGE,
        &depad::OPTIONS,
        depad::run,
    )
    .aliases(&["pad2unpad"]),
    samtools(
        Viewing,
        "samples",
        "list the samples in a set of SAM/BAM/CRAM files",
        samples::USAGE,
        &samples::OPTIONS,
        samples::run,
    ),
    addition(
        "markdup-pipeline",
        "collate + fixmate -m + sort + markdup in memory",
        markdup_pipeline::USAGE,
        Some(&markdup_pipeline::OPTIONS),
        markdup_pipeline::run,
    )
    .no_arguments(Usage),
    addition(
        "simulate",
        "write realistic simulated alignments (SAM/BAM)",
        simulate::USAGE,
        Some(&simulate::OPTIONS),
        simulate::run,
    ),
    addition(
        "install-shim",
        "put a samtools that is mdsam into a directory",
        install_shim::USAGE,
        None,
        install_shim::run,
    ),
    addition("man", "write the man pages into a directory", manpage::USAGE, None, manpage::run),
    addition(
        "completion",
        "print a shell completion script",
        completion::USAGE,
        None,
        completion::run,
    ),
    CommandDoc {
        documented: false,
        ..addition(
            "hw-model",
            "calibrate | predict | report: project a profiled run onto other hardware",
            hw_model::USAGE,
            None,
            hw_model::run,
        )
    },
    addition(
        "load",
        "read a whole file into memory and report time, records and allocations",
        load::USAGE,
        Some(&load::OPTIONS),
        load::run,
    ),
];

/// The commands with a man page and completion.
pub fn documented() -> impl Iterator<Item = &'static CommandDoc> {
    COMMANDS.iter().filter(|c| c.documented)
}

/// Options every command accepts (mdsam's own, taken out before the command's parser runs).
pub const GLOBAL_OPTIONS: &[&str] = &["--no-progress"];

/// The option names (`-x`, `--long`) of a usage text, in order of appearance, without repeats.
pub fn options(usage: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in usage.lines() {
        // `cat` names its first option on the heading's line: "Options: -b FILE  …".
        let line = line.strip_prefix("Options:").unwrap_or(line);
        let rest = line.trim_start();
        if !rest.starts_with('-') || line.len() == rest.len() {
            continue;
        }
        for raw in rest.split_whitespace() {
            let token = raw.trim_end_matches(',');
            if !token.starts_with('-') || token == "-" {
                // "-U, --unoutput FILE, --output-unselected FILE": a comma goes on to the next.
                if raw.ends_with(',') {
                    continue;
                }
                break;
            }
            // depth's "-a -a, -aa": a letter repeated is that option given twice.
            let bytes = token.as_bytes();
            if bytes.len() == 3 && bytes[0] == b'-' && bytes[1] == bytes[2] && bytes[1] != b'-' {
                continue;
            }
            // "--region[s]-file" and "--excl[ude]-flags" name both spellings; "--opt=VAL" and
            // "--opt[=VAL]" name --opt.
            let spellings = match token.split_once('[').map(|(h, t)| (h, t.split_once(']'))) {
                Some((head, Some((inner, rest)))) => {
                    vec![format!("{head}{rest}"), format!("{head}{inner}{rest}")]
                }
                Some((head, None)) => vec![head.to_string()],
                None => vec![token.to_string()],
            };
            let mut names: Vec<String> = Vec::new();
            for s in spellings {
                let name = s.split('=').next().unwrap_or(&s).to_string();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            for name in names {
                let valid = name.len() >= 2
                    && name[1..]
                        .trim_start_matches('-')
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '@');
                if valid && !found.contains(&name) {
                    found.push(name);
                }
            }
        }
    }
    found
}

/// The command called `name` (or one of its aliases): mdsam runs it natively.
pub fn find(name: &str) -> Option<&'static CommandDoc> {
    COMMANDS.iter().find(|c| c.name == name || c.aliases.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_from_samtools_layout() {
        let usage = "Usage: x\nOptions: -b FILE  list\n  -l INT     level\n  -@, --threads INT  threads\n      --region[s]-file FILE  regions\n  -F, --excl[ude]-flags FLAG  flags\n  -m --mode TYPE   mode\n      --input-fmt-option OPT[=VAL]\n not -an option line\n";
        assert_eq!(
            options(usage),
            [
                "-b",
                "-l",
                "-@",
                "--threads",
                "--region-file",
                "--regions-file",
                "-F",
                "--excl-flags",
                "--exclude-flags",
                "-m",
                "--mode",
                "--input-fmt-option"
            ]
        );
    }

    #[test]
    fn every_command_has_options_and_a_unique_name() {
        for c in COMMANDS {
            let named = |o: &CommandDoc| o.name == c.name || o.aliases.contains(&c.name);
            assert_eq!(COMMANDS.iter().filter(|o| named(o)).count(), 1, "{}", c.name);
            if c.documented
                && !matches!(
                    c.name,
                    "install-shim"
                        | "man"
                        | "completion"
                        | "index"
                        | "flags"
                        | "reference"
                        // samtools' usage is one line; its options are in brackets.
                        | "cram-size"
                )
            {
                assert!(!options(c.usage).is_empty(), "{} has no options", c.name);
            }
        }
        assert!(options(find("markdup").unwrap().usage).contains(&"--metrics".to_string()));
    }

    /// Options samtools 1.24's usage names and its getopt refuses: ampliconstats parses
    /// `--flag-require`/`--flag-filter` and has no short `-I`.
    const REFUSED_BUT_DOCUMENTED: &[(&str, &str)] = &[
        ("ampliconstats", "--required-flag"),
        ("ampliconstats", "--filter-flag"),
        ("ampliconstats", "-I"),
    ];

    /// The usage text names only options the table parses, and the table parses only options
    /// the usage names or lists as unlisted.
    #[test]
    fn usage_texts_and_option_tables_name_the_same_options() {
        let mut wrong = Vec::new();
        for c in documented() {
            let documented = options(c.usage);
            let Some(table) = c.options else {
                if !documented.is_empty() {
                    wrong.push(format!("{}: documents options it cannot parse", c.name));
                }
                continue;
            };
            let parsed = table.names();
            // getopt takes an unambiguous abbreviation of a long option (import's `--UMI` is
            // its `--UMI-tag`).
            let abbreviates = |o: &String| {
                o.starts_with("--")
                    && parsed.iter().filter(|p| p.starts_with(o.as_str())).count() == 1
            };
            // samtools' usage names options its getopt refuses (ampliconstats).
            let refused = |o: &String| {
                REFUSED_BUT_DOCUMENTED.iter().any(|&(c2, r)| c2 == c.name && r == o.as_str())
            };
            for o in
                documented.iter().filter(|o| !parsed.contains(o) && !abbreviates(o) && !refused(o))
            {
                wrong.push(format!("{}: usage names {o}, which it does not parse", c.name));
            }
            for o in parsed.iter().filter(|o| !documented.contains(o)) {
                if !table.unlisted.contains(&o.as_str()) {
                    wrong.push(format!("{}: parses {o}, which its usage does not name", c.name));
                }
            }
            for o in table.unlisted.iter().filter(|o| !parsed.iter().any(|p| p == *o)) {
                wrong.push(format!("{}: unlisted {o} is not parsed", c.name));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
