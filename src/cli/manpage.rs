//! `mdsam man DIR`: writes one roff man page per command (`DIR/samtools-CMD.1` as samtools names
//! its pages, `DIR/mdsam-CMD.1` for mdsam's additions, `DIR/mdsam.1` for the overview), generated
//! from the usage texts in
//! [`super::catalog`], so `man` and `--help` always say the same.
//!
//! The pages hold no date, so regenerating them gives identical bytes; `tests/docs.rs` fails
//! when `doc/man/` in the repository is stale.

use super::catalog::{CommandDoc, GLOBAL_OPTIONS, documented};
use crate::error::Error;

pub const USAGE: &str = "
Usage: mdsam man DIR

Writes the man pages (samtools-CMD.1 for samtools' commands, mdsam-CMD.1 for mdsam's
additions, mdsam.1 for the overview) into DIR.
Read one with: man DIR/samtools-sort.1
";

/// Writes every page into `dir`.
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    let [dir] = args else {
        return Err(Error::Usage("man takes one directory".into()));
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::file(dir.as_str(), e))?;
    for (name, text) in pages() {
        let path = format!("{dir}/{name}");
        crate::io::output::write_file(&path, text.as_bytes())
            .map_err(|e| Error::file(path.as_str(), e))?;
    }
    Ok(())
}

/// (file name, roff text) of every page.
pub fn pages() -> Vec<(String, String)> {
    let mut pages = vec![("mdsam.1".to_string(), overview())];
    for c in documented() {
        pages.push((format!("{}.1", page_name(c)), command_page(c)));
    }
    pages
}

/// `samtools-CMD` as samtools names its pages; `mdsam-CMD` for mdsam's additions.
fn page_name(c: &CommandDoc) -> String {
    let program = if c.from_samtools { "samtools" } else { "mdsam" };
    format!("{program}-{}", c.name)
}

fn header(title: &str) -> String {
    format!(
        ".TH {} 1 \"\" \"mdsam {}\" \"mdsam manual\"\n",
        title.to_uppercase(),
        super::MDSAM_VERSION
    )
}

fn command_page(c: &CommandDoc) -> String {
    let mut t = header(&page_name(c));
    t.push_str(&format!(".SH NAME\n{} \\- {}\n", escape(&page_name(c)), escape(c.summary)));
    t.push_str(".SH SYNOPSIS\n");
    let synopsis: Vec<&str> = c
        .usage
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("Usage:").or_else(|| l.strip_prefix("or:")))
        .map(str::trim)
        .collect();
    for line in synopsis {
        t.push_str(&format!(".B {}\n.br\n", escape(line)));
    }
    t.push_str(".SH DESCRIPTION\n");
    if c.from_samtools {
        t.push_str(&format!(
            "Compatible with \\fBsamtools {}\\fR {}: the same options, outputs and exit codes. \
             mdsam additions are marked in the option list.\n",
            c.name,
            super::SAMTOOLS_VERSION
        ));
    } else {
        t.push_str("An mdsam addition (samtools has no such command).\n");
    }
    t.push_str(".SH OPTIONS\nAs printed by \\fBmdsam ");
    t.push_str(&escape(c.name));
    t.push_str(" --help\\fR:\n.PP\n.nf\n");
    for line in c.usage.trim_matches('\n').lines() {
        t.push_str(&escape_line(line));
        t.push('\n');
    }
    t.push_str(".fi\n");
    t.push_str(&global_options());
    t.push_str(".SH SEE ALSO\n.BR mdsam (1)\n");
    t
}

fn global_options() -> String {
    let mut t = String::from(".SH MDSAM OPTIONS\nAccepted by every command:\n");
    for o in GLOBAL_OPTIONS {
        t.push_str(&format!(".TP\n.B {}\n", escape(o)));
        if *o == "--no-progress" {
            t.push_str(
                "Draw no progress bar. A bar is drawn only when standard error is a terminal, \
                 so scripts never see one.\n",
            );
        }
    }
    t
}

/// The overview's paragraph on the commands mdsam lacks (rules in [`super::delegate`]).
const OTHER_COMMANDS: &str = ".SH OTHER COMMANDS
Any other samtools command runs the real samtools with the same arguments: $MDSAM_SAMTOOLS when set, else the next samtools on PATH that is not mdsam itself. With none, the command fails as samtools fails for one it lacks (exit 1). mdsam help and mdsam --version say where they go.
";

fn overview() -> String {
    let mut t = header("mdsam");
    t.push_str(".SH NAME\nmdsam \\- a samtools-compatible SAM/BAM toolkit\n");
    t.push_str(".SH SYNOPSIS\n.B mdsam\n.I command\n[options]\n.br\n.B samtools\n.I command\n[options] (installed under that name)\n");
    t.push_str(".SH COMMANDS\n");
    for c in documented() {
        t.push_str(&format!(".TP\n.B {}\n{}", escape(c.name), escape(c.summary)));
        t.push_str(if c.from_samtools { "\n" } else { " (mdsam addition)\n" });
    }
    t.push_str(&escape(OTHER_COMMANDS));
    t.push_str(&global_options());
    t.push_str(".SH SEE ALSO\n");
    let refs: Vec<String> =
        documented().map(|c| format!(".BR {} (1)", escape(&page_name(c)))).collect();
    t.push_str(&refs.join(",\n"));
    t.push('\n');
    t
}

/// Escapes roff's backslash and the hyphen, which roff may otherwise render as a typographic
/// dash (breaking copy-paste of options).
fn escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

/// [`escape`] plus a zero-width guard before a line that starts with a control character.
fn escape_line(line: &str) -> String {
    let escaped = escape(line);
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_page_with_its_options() {
        let pages = pages();
        assert_eq!(pages.len(), documented().count() + 1);
        let sort = &pages.iter().find(|(n, _)| n == "samtools-sort.1").unwrap().1;
        assert!(sort.starts_with(".TH SAMTOOLS-SORT 1"));
        assert!(sort.contains("\\-\\-write\\-index"));
        assert!(sort.contains(".B samtools sort [options...] [in.bam]"));
    }

    #[test]
    fn roff_control_characters_are_escaped() {
        assert_eq!(escape_line(".hidden -x \\n"), "\\&.hidden \\-x \\en");
    }
}
