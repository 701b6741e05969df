//! samtools' own test cases (`../shared/peer-tests`) for every subcommand mdsam implements, run
//! through the kit's runner on the binary under test. Every case must pass, so no change can
//! break a case that passed before.

use crate::support;

/// Subcommands that exist; each one's cases must all pass.
const IMPLEMENTED: &[&str] = &["view", "sort", "collate"];

fn run_suite(command: &str) {
    let Some(shared) = support::shared_dir() else { return };
    let runner = shared.join("peer-tests/run-peer-suite.sh");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(&runner).arg(support::mdsam_bin()).arg(format!("^{command}-"));
    // The runner decodes BAM output with $ORACLE; without one it uses its Python decoder.
    match support::oracle() {
        Some(o) => cmd.env("ORACLE", o),
        None => cmd.env("ORACLE", "none"),
    };
    let out = cmd.output().expect("the peer-suite runner starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").to_string();
    let failures: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).take(20).collect();
    assert!(
        out.status.success() && last.contains(" passed, 0 failed"),
        "{command}: {last}\n{}\n{}",
        failures.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("peer suite {command}: {last}");
}

#[test]
fn view_cases_all_pass() {
    assert!(IMPLEMENTED.contains(&"view"));
    run_suite("view");
}
