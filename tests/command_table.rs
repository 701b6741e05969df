//! The one command table (issue 41): `mdsam help` lists exactly the commands dispatch runs
//! natively, under samtools 1.24's own headings, and the rest under the heading that names where
//! they go; the table's per-command usage cases exit and print as samtools does.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use mdsam::cli::catalog::COMMANDS;

use crate::support::{mdsam_bin, oracle, scratch_dir};

/// The heading of the samtools commands mdsam does not run itself.
const DELEGATED: &str = "Other samtools commands: ";

/// Runs `exe args` with nothing on stdin and PATH holding only `path` (no samtools to delegate
/// to), so a command that is not native fails with samtools' "unrecognized command".
fn run_isolated(exe: &Path, args: &[&str], path: &Path) -> Output {
    Command::new(exe)
        .args(args)
        .env("PATH", path)
        .env_remove("MDSAM_SAMTOOLS")
        .env_remove("MDSAM_DELEGATED")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()))
}

/// `help`'s command lists: (heading, command names) in order, without the option and misc parts.
fn sections(help: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in help.lines() {
        if let Some(heading) = line.strip_prefix("  -- ") {
            out.push((heading.to_string(), Vec::new()));
        } else if let (Some(entry), Some((_, names))) = (line.strip_prefix("     "), out.last_mut())
        {
            names.push(entry.split_whitespace().next().unwrap_or_default().to_string());
        }
    }
    out.retain(|(h, _)| !h.starts_with("Options for every command") && h != "Misc");
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_lists_exactly_the_commands_that_dispatch_runs_natively() {
    let empty = scratch_dir("command_table_no_samtools");
    let out = run_isolated(&mdsam_bin(), &["help"], &empty);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    let sections = sections(&help);
    let (delegated, native): (Vec<_>, Vec<_>) =
        sections.iter().partition(|(h, _)| h.starts_with(DELEGATED));
    assert_eq!(delegated.len(), 1, "{help}");
    assert!(delegated[0].0.contains("fail: no samtools found"), "{help}");

    let listed: Vec<&String> = native.iter().flat_map(|(_, names)| names).collect();
    let listed_set: BTreeSet<&str> = listed.iter().map(|n| n.as_str()).collect();
    assert_eq!(listed.len(), listed_set.len(), "a command listed twice:\n{help}");
    let table: BTreeSet<&str> = COMMANDS.iter().map(|c| c.name).collect();
    assert_eq!(listed_set, table, "help and the command table differ:\n{help}");

    // Every listed command (and alias) runs natively; every delegated one does not.
    let aliases = COMMANDS.iter().flat_map(|c| c.aliases.iter().copied());
    for name in listed_set.iter().copied().chain(aliases) {
        let out = run_isolated(&mdsam_bin(), &[name, "--help"], &empty);
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("unrecognized command"), "{name} is not native: {stderr}");
        assert!(!out.stdout.is_empty() || !out.stderr.is_empty(), "{name} --help says nothing");
    }
    for name in &delegated[0].1 {
        let out = run_isolated(&mdsam_bin(), &[name], &empty);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert_eq!(text(&out.stderr), format!("[main] unrecognized command '{name}'\n"));
    }
}

#[test]
fn help_keeps_samtools_headings_and_order_and_lists_every_samtools_command() {
    let Some(oracle) = oracle() else { return };
    let empty = scratch_dir("command_table_headings");
    let ours = sections(&text(&run_isolated(&mdsam_bin(), &["help"], &empty).stdout));
    let theirs = sections(&text(&run_isolated(&oracle, &["help"], &empty).stdout));
    assert!(theirs.len() >= 5, "samtools help: {theirs:?}");
    let delegated = &ours.iter().find(|(h, _)| h.starts_with(DELEGATED)).unwrap().1;
    for (heading, names) in &theirs {
        let mine = ours.iter().find(|(h, _)| h == heading).map(|(_, n)| n);
        let mine = mine.unwrap_or_else(|| panic!("mdsam help has no heading {heading}"));
        for name in names {
            assert!(
                mine.contains(name) != delegated.contains(name),
                "{name} (samtools: {heading}) is not listed once, natively or delegated"
            );
        }
        // Under a shared heading, samtools' commands keep samtools' order.
        let shared: Vec<&String> = mine.iter().filter(|n| names.contains(n)).collect();
        let expected: Vec<&String> = names.iter().filter(|n| mine.contains(n)).collect();
        assert_eq!(shared, expected, "order under {heading}");
    }
}

/// The table's usage cases (usage on stdout or stderr, exit 0 or 1) against samtools', with no
/// input on stdin: `index`/`fixmate` with no arguments, `stats -h` (stdout, exit 1),
/// `addreplacerg` and `quickcheck` with no arguments (stdout, exit 1), a bad option to stats
/// (message on stderr, usage on stdout), and bad options elsewhere (all on stderr).
#[test]
fn usage_cases_exit_and_print_where_samtools_does() {
    let Some(oracle) = oracle() else { return };
    let empty = scratch_dir("command_table_usage");
    let cases: &[&[&str]] = &[
        &["index"],
        &["fixmate"],
        &["stats", "-h"],
        &["stats", "--no-such-option"],
        &["addreplacerg"],
        &["addreplacerg", "-h"],
        &["quickcheck"],
        &["reheader", "-h"],
        &["faidx"],
        &["fqidx"],
        &["flagstat"],
        &["idxstats"],
        &["import"],
        &["ampliconstats"],
        &["view", "--no-such-option"],
        &["sort", "-Z"],
        &["bamshuf", "-Z"],
    ];
    for args in cases {
        let ours = run_isolated(&mdsam_bin(), args, &empty);
        let theirs = run_isolated(&oracle, args, &empty);
        let shape = |o: &Output| (o.status.code(), !o.stdout.is_empty(), !o.stderr.is_empty());
        assert_eq!(
            shape(&ours),
            shape(&theirs),
            "{args:?}: (status, stdout, stderr)\nmdsam stdout: {}\nmdsam stderr: {}",
            text(&ours.stdout),
            text(&ours.stderr)
        );
    }
}

/// `-@ N` is N threads besides the main one: `load` reports the total it ran with.
#[test]
fn threads_option_counts_extra_threads() {
    let dir = scratch_dir("command_table_threads");
    let sam = dir.join("in.sam");
    std::fs::write(&sam, "@SQ\tSN:c\tLN:10\nr\t0\tc\t1\t0\t2M\t*\t0\t0\tAC\tII\n").unwrap();
    for (extra, total) in [("0", "1"), ("2", "3"), ("-4", "1")] {
        let out = run_isolated(&mdsam_bin(), &["load", "-@", extra, sam.to_str().unwrap()], &dir);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert_eq!(stdout.trim_end().rsplit('\t').next(), Some(total), "-@ {extra}: {stdout}");
    }
}
