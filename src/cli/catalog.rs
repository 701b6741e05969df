//! Every command's name, one-line summary, `--help` text and option table: the one definition
//! that the man pages ([`super::manpage`]) and shell completions ([`super::completion`]) are
//! generated from, so they cannot drift from what `mdsam CMD --help` prints or what it parses.
//!
//! Options are read back out of the usage texts (samtools' layout: an option line starts with
//! `-x`, `--long` or `-x, --long`); a test checks them against each command's table both ways.

use super::options::OptionTable;

/// One command: its name, what it does, its usage text.
pub struct CommandDoc {
    pub name: &'static str,
    pub summary: &'static str,
    pub usage: &'static str,
    /// samtools has this command (else it is an mdsam addition).
    pub from_samtools: bool,
    /// The options it parses (`None`: positionals only).
    pub options: Option<&'static OptionTable>,
}

/// The commands in `mdsam help` order.
pub const COMMANDS: &[CommandDoc] = &[
    CommandDoc {
        name: "bedcov",
        summary: "read depth per BED region",
        usage: super::bedcov::USAGE,
        from_samtools: true,
        options: Some(&super::bedcov::OPTIONS),
    },
    CommandDoc {
        name: "coverage",
        summary: "alignment depth and percent coverage",
        usage: super::coverage::USAGE,
        from_samtools: true,
        options: Some(&super::coverage::OPTIONS),
    },
    CommandDoc {
        name: "depth",
        summary: "compute the depth",
        usage: super::depth::USAGE,
        from_samtools: true,
        options: Some(&super::depth::OPTIONS),
    },
    CommandDoc {
        name: "dict",
        summary: "create a sequence dictionary file",
        usage: super::dict::USAGE,
        from_samtools: true,
        options: Some(&super::dict::OPTIONS),
    },
    CommandDoc {
        name: "faidx",
        summary: "index/extract FASTA",
        usage: super::faidx::USAGE,
        from_samtools: true,
        options: Some(&super::faidx::OPTIONS),
    },
    CommandDoc {
        name: "fqidx",
        summary: "index/extract FASTQ",
        usage: super::faidx::FQIDX_USAGE,
        from_samtools: true,
        options: Some(&super::faidx::FQIDX_OPTIONS),
    },
    CommandDoc {
        name: "fastq",
        summary: "converts a BAM to a FASTQ",
        usage: super::bam2fq::FASTQ_USAGE,
        from_samtools: true,
        options: Some(&super::bam2fq::FASTQ_OPTIONS),
    },
    CommandDoc {
        name: "fasta",
        summary: "converts a BAM to a FASTA",
        usage: super::bam2fq::FASTA_USAGE,
        from_samtools: true,
        options: Some(&super::bam2fq::FASTA_OPTIONS),
    },
    CommandDoc {
        name: "bam2fq",
        summary: "converts a BAM to a FASTQ (the old name of fastq)",
        usage: super::bam2fq::BAM2FQ_USAGE,
        from_samtools: true,
        options: Some(&super::bam2fq::BAM2FQ_OPTIONS),
    },
    CommandDoc {
        name: "import",
        summary: "converts FASTQ files to unmapped SAM/BAM/CRAM",
        usage: super::import::USAGE,
        from_samtools: true,
        options: Some(&super::import::OPTIONS),
    },
    CommandDoc {
        name: "index",
        summary: "index alignment",
        usage: super::index::USAGE,
        from_samtools: true,
        options: Some(&super::index::OPTIONS),
    },
    CommandDoc {
        name: "fixmate",
        summary: "fix mate information",
        usage: super::fixmate::USAGE,
        from_samtools: true,
        options: Some(&super::fixmate::OPTIONS),
    },
    CommandDoc {
        name: "markdup",
        summary: "mark duplicates",
        usage: super::markdup::USAGE,
        from_samtools: true,
        options: Some(&super::markdup::OPTIONS),
    },
    CommandDoc {
        name: "collate",
        summary: "shuffle and group alignments by name",
        usage: super::collate::USAGE,
        from_samtools: true,
        options: Some(&super::collate::OPTIONS),
    },
    CommandDoc {
        name: "cat",
        summary: "concatenate BAMs",
        usage: super::cat::USAGE,
        from_samtools: true,
        options: Some(&super::cat::OPTIONS),
    },
    CommandDoc {
        name: "merge",
        summary: "merge sorted alignments",
        usage: super::merge::USAGE,
        from_samtools: true,
        options: Some(&super::merge::OPTIONS),
    },
    CommandDoc {
        name: "sort",
        summary: "sort alignment file",
        usage: super::sort::USAGE,
        from_samtools: true,
        options: Some(&super::sort::OPTIONS),
    },
    CommandDoc {
        name: "quickcheck",
        summary: "quickly check if SAM/BAM/CRAM file appears intact",
        usage: super::quickcheck::USAGE,
        from_samtools: true,
        options: Some(&super::quickcheck::OPTIONS),
    },
    CommandDoc {
        name: "flagstat",
        summary: "simple stats",
        usage: super::flagstat::USAGE,
        from_samtools: true,
        options: Some(&super::flagstat::OPTIONS),
    },
    CommandDoc {
        name: "idxstats",
        summary: "BAM index stats",
        usage: super::idxstats::USAGE,
        from_samtools: true,
        options: Some(&super::idxstats::OPTIONS),
    },
    CommandDoc {
        name: "stats",
        summary: "produces summary statistics",
        usage: super::stats::USAGE,
        from_samtools: true,
        options: Some(&super::stats::OPTIONS),
    },
    CommandDoc {
        name: "checksum",
        summary: "produce order-agnostic checksums of sequence content",
        usage: super::checksum::USAGE,
        from_samtools: true,
        options: Some(&super::checksum::OPTIONS),
    },
    CommandDoc {
        name: "head",
        summary: "header viewer",
        usage: super::head::USAGE,
        from_samtools: true,
        options: Some(&super::head::OPTIONS),
    },
    CommandDoc {
        name: "addreplacerg",
        summary: "adds or replaces RG tags",
        usage: super::addreplacerg::USAGE,
        from_samtools: true,
        options: Some(&super::addreplacerg::OPTIONS),
    },
    CommandDoc {
        name: "calmd",
        summary: "recalculate MD/NM tags and '=' bases",
        usage: super::calmd::USAGE,
        from_samtools: true,
        options: Some(&super::calmd::OPTIONS),
    },
    CommandDoc {
        name: "consensus",
        summary: "produce a consensus Pileup/FASTA/FASTQ",
        usage: super::consensus::USAGE,
        from_samtools: true,
        options: Some(&super::consensus::OPTIONS),
    },
    CommandDoc {
        name: "reheader",
        summary: "replace BAM header",
        usage: super::reheader::USAGE,
        from_samtools: true,
        options: Some(&super::reheader::OPTIONS),
    },
    CommandDoc {
        name: "reset",
        summary: "Reverts aligner changes in reads",
        usage: super::reset::USAGE,
        from_samtools: true,
        options: Some(&super::reset::OPTIONS),
    },
    CommandDoc {
        name: "view",
        summary: "SAM<->BAM conversion",
        usage: super::view::USAGE,
        from_samtools: true,
        options: Some(&super::view::OPTIONS),
    },
    CommandDoc {
        name: "split",
        summary: "splits a file by read group",
        usage: super::split::USAGE,
        from_samtools: true,
        options: Some(&super::split::OPTIONS),
    },
    CommandDoc {
        name: "depad",
        summary: "convert padded BAM to unpadded BAM",
        usage: super::depad::USAGE,
        from_samtools: true,
        options: Some(&super::depad::OPTIONS),
    },
    CommandDoc {
        name: "ampliconclip",
        summary: "clip oligos from the end of reads",
        usage: super::ampliconclip::USAGE,
        from_samtools: true,
        options: Some(&super::ampliconclip::OPTIONS),
    },
    CommandDoc {
        name: "ampliconstats",
        summary: "generate amplicon specific stats",
        usage: super::ampliconstats::USAGE,
        from_samtools: true,
        options: Some(&super::ampliconstats::OPTIONS),
    },
    CommandDoc {
        name: "markdup-pipeline",
        summary: "collate + fixmate -m + sort + markdup in memory",
        usage: super::markdup_pipeline::USAGE,
        from_samtools: false,
        options: Some(&super::markdup_pipeline::OPTIONS),
    },
    CommandDoc {
        name: "simulate",
        summary: "write realistic simulated alignments (SAM/BAM)",
        usage: super::simulate::USAGE,
        from_samtools: false,
        options: Some(&super::simulate::OPTIONS),
    },
    CommandDoc {
        name: "install-shim",
        summary: "put a samtools that is mdsam into a directory",
        usage: super::install_shim::USAGE,
        from_samtools: false,
        options: None,
    },
    CommandDoc {
        name: "man",
        summary: "write the man pages into a directory",
        usage: super::manpage::USAGE,
        from_samtools: false,
        options: None,
    },
    CommandDoc {
        name: "completion",
        summary: "print a shell completion script",
        usage: super::completion::USAGE,
        from_samtools: false,
        options: None,
    },
];

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

/// The command called `name`.
pub fn find(name: &str) -> Option<&'static CommandDoc> {
    COMMANDS.iter().find(|c| c.name == name)
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
            assert_eq!(COMMANDS.iter().filter(|o| o.name == c.name).count(), 1, "{}", c.name);
            if !matches!(c.name, "install-shim" | "man" | "completion" | "index") {
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
        for c in COMMANDS {
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
