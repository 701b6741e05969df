//! `mdsam help`: the command list generated from the command table ([`super::catalog`]), under
//! samtools' headings, then the samtools commands mdsam lacks under a heading that says where
//! they go ([`super::delegate::summary`]). Nothing here names a native command by hand, so the
//! list cannot drift from what dispatch runs.

use super::catalog::{self, COMMANDS, Heading};
use super::{MDSAM_VERSION, SAMTOOLS_VERSION, delegate};

/// samtools 1.24's `samtools help` list: heading, command, summary. Those mdsam has no table
/// entry for are the ones `help` shows as delegated.
pub const SAMTOOLS_COMMANDS: &[(Heading, &str, &str)] = &[
    (Heading::Indexing, "dict", "create a sequence dictionary file"),
    (Heading::Indexing, "faidx", "index/extract FASTA"),
    (Heading::Indexing, "fqidx", "index/extract FASTQ"),
    (Heading::Indexing, "index", "index alignment"),
    (Heading::Editing, "calmd", "recalculate MD/NM tags and '=' bases"),
    (Heading::Editing, "fixmate", "fix mate information"),
    (Heading::Editing, "reheader", "replace BAM header"),
    (Heading::Editing, "targetcut", "cut fosmid regions (for fosmid pool only)"),
    (Heading::Editing, "addreplacerg", "adds or replaces RG tags"),
    (Heading::Editing, "markdup", "mark duplicates"),
    (Heading::Editing, "ampliconclip", "clip oligos from the end of reads"),
    (Heading::FileOperations, "collate", "shuffle and group alignments by name"),
    (Heading::FileOperations, "cat", "concatenate BAMs"),
    (Heading::FileOperations, "consensus", "produce a consensus Pileup/FASTA/FASTQ"),
    (Heading::FileOperations, "merge", "merge sorted alignments"),
    (Heading::FileOperations, "mpileup", "multi-way pileup"),
    (Heading::FileOperations, "sort", "sort alignment file"),
    (Heading::FileOperations, "split", "splits a file by read group"),
    (Heading::FileOperations, "quickcheck", "quickly check if SAM/BAM/CRAM file appears intact"),
    (Heading::FileOperations, "fastq", "converts a BAM to a FASTQ"),
    (Heading::FileOperations, "fasta", "converts a BAM to a FASTA"),
    (Heading::FileOperations, "import", "Converts FASTA or FASTQ files to SAM/BAM/CRAM"),
    (Heading::FileOperations, "reference", "Generates a reference from aligned data"),
    (Heading::FileOperations, "reset", "Reverts aligner changes in reads"),
    (Heading::Statistics, "bedcov", "read depth per BED region"),
    (Heading::Statistics, "coverage", "alignment depth and percent coverage"),
    (Heading::Statistics, "depth", "compute the depth"),
    (Heading::Statistics, "flagstat", "simple stats"),
    (Heading::Statistics, "idxstats", "BAM index stats"),
    (Heading::Statistics, "cram-size", "list CRAM Content-ID and Data-Series sizes"),
    (Heading::Statistics, "phase", "phase heterozygotes"),
    (Heading::Statistics, "stats", "generate stats (former bamcheck)"),
    (Heading::Statistics, "ampliconstats", "generate amplicon specific stats"),
    (Heading::Statistics, "checksum", "produce order-agnostic checksums of sequence content"),
    (Heading::Viewing, "flags", "explain BAM flags"),
    (Heading::Viewing, "head", "header viewer"),
    (Heading::Viewing, "tview", "text alignment viewer"),
    (Heading::Viewing, "view", "SAM<->BAM<->CRAM conversion"),
    (Heading::Viewing, "depad", "convert padded BAM to unpadded BAM"),
    (Heading::Viewing, "samples", "list the samples in a set of SAM/BAM/CRAM files"),
];

/// The words that start the delegated commands' heading; [`delegate::summary`] follows.
pub const DELEGATED_HEADING: &str = "Other samtools commands: ";

/// `mdsam help`'s whole text.
pub fn main_usage() -> String {
    include_str!("usage/main.txt")
        .replace("{VERSION}", &format!("{SAMTOOLS_VERSION} (mdsam {MDSAM_VERSION})"))
        .replace("{COMMANDS}", &command_list(&delegate::summary()))
}

/// One line as samtools writes it: the name in a 15-column field.
fn line(name: &str, summary: &str) -> String {
    let gap = if name.len() < 15 { 15 - name.len() } else { 2 };
    format!("     {name}{}{summary}\n", " ".repeat(gap))
}

/// The headed lists: the table's entries under their headings in table order, the delegated
/// samtools commands before mdsam's additions.
fn command_list(delegation: &str) -> String {
    let mut text = String::new();
    for heading in Heading::ALL {
        if heading == Heading::Additions {
            text.push_str(&format!("  -- {DELEGATED_HEADING}{delegation}\n"));
            let delegated =
                SAMTOOLS_COMMANDS.iter().filter(|(_, name, _)| catalog::find(name).is_none());
            for (_, name, summary) in delegated {
                text.push_str(&line(name, summary));
            }
            text.push('\n');
        }
        text.push_str(&format!("  -- {}\n", heading.title()));
        for c in COMMANDS.iter().filter(|c| c.heading == heading) {
            text.push_str(&line(c.name, c.summary));
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_listed_once_and_samtools_headings_are_kept() {
        let text = command_list("delegated to nowhere");
        for c in COMMANDS {
            assert_eq!(text.matches(&line(c.name, c.summary)).count(), 1, "{}", c.name);
        }
        for &(heading, name, _) in SAMTOOLS_COMMANDS {
            if let Some(c) = catalog::find(name) {
                assert_eq!(c.heading, heading, "{name}");
            }
        }
        assert!(text.contains("  -- Other samtools commands: delegated to nowhere\n"));
        assert_eq!(line("view", "x"), "     view           x\n");
        assert_eq!(line("markdup-pipeline", "x"), "     markdup-pipeline  x\n");
    }
}
