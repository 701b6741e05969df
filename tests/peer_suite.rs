//! samtools' own test cases (`../shared/peer-tests`) for every subcommand mdsam implements, run
//! through the kit's runner on the binary under test. Every case must pass except the known
//! gaps listed below, so no change can break a case that passed before.

use crate::support;

/// Cases that fail for a documented, not-yet-built feature. Remove an entry when it lands.
const KNOWN_GAPS: &[(&str, &str)] = &[];

fn is_known_gap(id: &str) -> bool {
    let base = id.strip_suffix("-t2").unwrap_or(id);
    KNOWN_GAPS.iter().any(|(gap, _)| *gap == base)
}

/// Runs the kit's cases whose id starts with `command-` and checks every failure is a known gap.
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
    assert!(last.contains(" passed, "), "{command}: no summary line\n{stdout}");
    let unexpected: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("FAIL "))
        .filter(|l| !is_known_gap(l.split(':').next().unwrap_or("")))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{command}: {last}\nunexpected failures:\n{}",
        unexpected.join("\n")
    );
    eprintln!("peer suite {command}: {last}");
}

#[test]
fn view_cases_pass() {
    run_suite("view");
}

/// Positions past 2^31, `.sam.gz` region queries through a `.csi` included.
#[test]
fn largepos_cases_pass() {
    run_suite("largepos");
}

#[test]
fn sort_cases_pass() {
    run_suite("sort");
}

#[test]
fn collate_cases_pass() {
    run_suite("collate");
}

#[test]
fn fixmate_cases_pass() {
    run_suite("fixmate");
}

#[test]
fn markdup_cases_pass() {
    run_suite("markdup");
}

#[test]
fn quickcheck_cases_pass() {
    run_suite("quickcheck");
}

#[test]
fn head_cases_pass() {
    run_suite("head");
}

#[test]
fn idxstats_cases_pass() {
    run_suite("idxstats");
}

#[test]
fn cat_cases_pass() {
    run_suite("cat");
}

#[test]
fn merge_cases_pass() {
    run_suite("merge");
}

#[test]
fn checksum_cases_pass() {
    run_suite("checksum");
}

#[test]
fn stats_cases_pass() {
    run_suite("stats");
}

#[test]
fn index_cases_pass() {
    run_suite("index");
}

#[test]
fn cram_cases_pass() {
    run_suite("cram");
}

#[test]
fn split_cases_pass() {
    run_suite("split");
}

#[test]
fn depad_cases_pass() {
    run_suite("depad");
}

#[test]
fn ampliconclip_cases_pass() {
    run_suite("ampliconclip");
}

#[test]
fn ampliconstats_cases_pass() {
    run_suite("ampliconstats");
}

#[test]
fn depth_cases_pass() {
    run_suite("largepos-0[78]-depth");
}

#[test]
fn coverage_cases_pass() {
    run_suite("coverage");
}

#[test]
fn bedcov_cases_pass() {
    run_suite("bedcov");
}

#[test]
fn reset_cases_pass() {
    run_suite("reset");
}

#[test]
fn addrprg_cases_pass() {
    run_suite("addrprg");
}

#[test]
fn reheader_cases_pass() {
    run_suite("reheader");
}

#[test]
fn calmd_cases_pass() {
    run_suite("calmd");
}

#[test]
fn bam2fq_cases_pass() {
    run_suite("bam2fq");
}

#[test]
fn import_cases_pass() {
    run_suite("import");
}
