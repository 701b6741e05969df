//! Every command's name, one-line summary and `--help` text: the one definition that the man
//! pages ([`super::manpage`]) and shell completions ([`super::completion`]) are generated from,
//! so they cannot drift from what `mdsam CMD --help` prints.
//!
//! Options are read back out of the usage texts (samtools' layout: an option line starts with
//! `-x`, `--long` or `-x, --long`), so adding an option to a usage text adds it everywhere.

/// One command: its name, what it does, its usage text.
pub struct CommandDoc {
    pub name: &'static str,
    pub summary: &'static str,
    pub usage: &'static str,
    /// samtools has this command (else it is an mdsam addition).
    pub from_samtools: bool,
}

/// The commands in `mdsam help` order.
pub const COMMANDS: &[CommandDoc] = &[
    CommandDoc {
        name: "index",
        summary: "index alignment",
        usage: super::index::USAGE,
        from_samtools: true,
    },
    CommandDoc {
        name: "fixmate",
        summary: "fix mate information",
        usage: super::fixmate::USAGE,
        from_samtools: true,
    },
    CommandDoc {
        name: "markdup",
        summary: "mark duplicates",
        usage: super::markdup::USAGE,
        from_samtools: true,
    },
    CommandDoc {
        name: "collate",
        summary: "shuffle and group alignments by name",
        usage: super::collate::USAGE,
        from_samtools: true,
    },
    CommandDoc {
        name: "sort",
        summary: "sort alignment file",
        usage: super::sort::USAGE,
        from_samtools: true,
    },
    CommandDoc {
        name: "view",
        summary: "SAM<->BAM conversion",
        usage: super::view::USAGE,
        from_samtools: true,
    },
    CommandDoc {
        name: "markdup-pipeline",
        summary: "collate + fixmate -m + sort + markdup in memory",
        usage: super::markdup_pipeline::USAGE,
        from_samtools: false,
    },
    CommandDoc {
        name: "simulate",
        summary: "write realistic simulated alignments (SAM/BAM)",
        usage: super::simulate::USAGE,
        from_samtools: false,
    },
    CommandDoc {
        name: "install-shim",
        summary: "put a samtools that is mdsam into a directory",
        usage: super::install_shim::USAGE,
        from_samtools: false,
    },
    CommandDoc {
        name: "man",
        summary: "write the man pages into a directory",
        usage: super::manpage::USAGE,
        from_samtools: false,
    },
    CommandDoc {
        name: "completion",
        summary: "print a shell completion script",
        usage: super::completion::USAGE,
        from_samtools: false,
    },
];

/// Options every command accepts (mdsam's own, taken out before the command's parser runs).
pub const GLOBAL_OPTIONS: &[&str] = &["--no-progress"];

/// The option names (`-x`, `--long`) of a usage text, in order of appearance, without repeats.
pub fn options(usage: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in usage.lines() {
        let rest = line.trim_start();
        if !rest.starts_with('-') || line.len() == rest.len() {
            continue;
        }
        for token in rest.split_whitespace() {
            let token = token.trim_end_matches(',');
            if !token.starts_with('-') || token == "-" {
                break;
            }
            // "--region[s]-file" names both spellings; "--opt=VAL" and "--opt[=VAL]" name --opt.
            let names = match token.split_once('[') {
                Some((head, tail)) if tail.starts_with("s]") => {
                    vec![format!("{head}{}", &tail[2..]), format!("{head}s{}", &tail[2..])]
                }
                Some((head, _)) => vec![head.to_string()],
                None => vec![token.split('=').next().unwrap_or(token).to_string()],
            };
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
        let usage = "Usage: x\nOptions:\n  -l INT     level\n  -@, --threads INT  threads\n      --region[s]-file FILE  regions\n  -m --mode TYPE   mode\n      --input-fmt-option OPT[=VAL]\n not -an option line\n";
        assert_eq!(
            options(usage),
            [
                "-l",
                "-@",
                "--threads",
                "--region-file",
                "--regions-file",
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
}
