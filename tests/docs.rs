//! The documentation generated from the `--help` texts: every command prints its help, the man
//! pages and the bash completion committed under `doc/` are what mdsam generates now, and the
//! completion works in bash.

use std::path::Path;
use std::process::Command;

use mdsam::cli::catalog::COMMANDS;

use crate::support::{mdsam_bin, run, run_ok, scratch_dir};

const REFRESH: &str = "refresh with: target/release/mdsam man doc/man && target/release/mdsam completion bash > doc/completions/mdsam.bash";

/// `CMD --help` shows the usage text the man page is made from: as samtools does for its own
/// commands (some print it on stderr and exit 1 for the unknown option, as samtools 1.24), on
/// stdout with exit 0 for mdsam's additions.
#[test]
fn every_command_shows_its_help() {
    for c in COMMANDS {
        let out = run(&mdsam_bin(), &[c.name, "--help"]);
        let shown = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        let shown = String::from_utf8_lossy(&shown);
        assert!(shown.contains(c.usage.trim()), "{} --help shows:\n{shown}", c.name);
        if !c.from_samtools {
            assert!(out.status.success(), "{} --help", c.name);
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), c.usage.trim(), "{}", c.name);
        }
    }
}

#[test]
fn committed_man_pages_are_up_to_date() {
    let dir = scratch_dir("docs_man");
    run_ok(&mdsam_bin(), &["man", dir.to_str().unwrap()]);
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("doc/man");
    let names = |d: &Path| {
        let mut n: Vec<String> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}; {REFRESH}", d.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&committed), names(&dir), "doc/man has other pages; {REFRESH}");
    assert!(names(&dir).contains(&"samtools-markdup.1".to_string()));
    for name in names(&dir) {
        let fresh = std::fs::read(dir.join(&name)).unwrap();
        let old = std::fs::read(committed.join(&name)).unwrap();
        assert!(fresh == old, "doc/man/{name} is stale; {REFRESH}");
    }
    // The pages render without roff warnings where man is installed.
    if Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success()) {
        let page = dir.join("samtools-markdup.1");
        let out = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANWIDTH", "100")
            .env("MAN_KEEP_FORMATTING", "0")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("--metrics"),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "roff warnings: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The completions bash offers after `words` (the last one being completed).
fn complete(script: &Path, words: &[&str]) -> Vec<String> {
    let line = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; _mdsam; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
        words.len() - 1
    );
    let out = Command::new("bash").arg("-c").arg(line).output().expect("bash runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut found: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    found.sort();
    found
}

#[test]
fn committed_bash_completion_is_up_to_date_and_completes() {
    let fresh = run_ok(&mdsam_bin(), &["completion", "bash"]).stdout;
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("doc/completions/mdsam.bash");
    let old = std::fs::read(&committed).unwrap_or_default();
    assert!(fresh == old, "doc/completions/mdsam.bash is stale; {REFRESH}");

    let script = scratch_dir("docs_completion").join("mdsam.bash");
    std::fs::write(&script, &fresh).unwrap();
    assert_eq!(complete(&script, &["samtools", "markd"]), ["markdup", "markdup-pipeline"]);
    assert_eq!(complete(&script, &["mdsam", "sort", "--write-i"]), ["--write-index"]);
    assert_eq!(complete(&script, &["mdsam", "markdup", "--metr"]), ["--metrics"]);
    assert_eq!(complete(&script, &["mdsam", "view", "--no-pro"]), ["--no-progress"]);
}
