//! samtools' option syntax against the samtools 1.24 oracle: the global long options each command
//! takes, accepts and ignores, or refuses (`SAM_OPT_GLOBAL_OPTIONS`), and getopt's messages for
//! unknown, ambiguous and malformed options. Both tools run the same command line on the same
//! small input; exit status and the first line of stderr must agree. The usage that follows may
//! differ where mdsam documents options of its own; view's must not.

use std::path::Path;
use std::process::Output;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, oracle_ok, run, scratch_dir, simulated_sam};

/// `{in}` is the coordinate-sorted BAM (the name-grouped one for fixmate), `{out}` an output
/// path of the tool's own.
const CASES: &[(&str, &[&str])] = &[
    ("sort", &["--input-fmt=bam", "-o", "{out}", "{in}"]),
    ("sort", &["--input-fmt", "bam", "-o", "{out}", "{in}"]),
    ("sort", &["--foo=3", "-o", "{out}", "{in}"]),
    ("sort", &["--input-f=bam", "-o", "{out}", "{in}"]),
    ("sort", &["--no-PG=1", "-o", "{out}", "{in}"]),
    ("sort", &["--verbosity=3", "--reference=x", "-o", "{out}", "{in}"]),
    ("sort", &["-o", "{out}", "{in}", "--threads"]),
    ("collate", &["--input-fmt", "bam", "-o", "{out}", "{in}"]),
    ("collate", &["-Z", "-o", "{out}", "{in}"]),
    ("collate", &["--write-index", "--output-fmt-option=level=1", "-o", "{out}", "{in}"]),
    ("fixmate", &["--input-fmt=bam", "{in}", "{out}"]),
    ("fixmate", &["--write-index", "--input-fmt-option=nthreads=1", "{in}", "{out}"]),
    ("fixmate", &["--foo", "{in}", "{out}"]),
    ("markdup", &["--input-fmt", "bam", "{in}", "{out}"]),
    ("markdup", &["--input-f", "bam", "{in}", "{out}"]),
    ("markdup", &["--reference=x", "--verbosity", "2", "{in}", "{out}"]),
    ("view", &["--input-fmt=bam", "-o", "{out}", "{in}"]),
    ("view", &["--input-fmt", "bam", "-o", "{out}", "{in}"]),
    ("view", &["--foo=3", "-o", "{out}", "{in}"]),
    ("view", &["--he", "-o", "{out}", "{in}"]),
    ("view", &["-Z", "-o", "{out}", "{in}"]),
    ("view", &["-o", "{out}", "{in}", "-q"]),
    ("view", &["-o", "{out}", "{in}", "--min-MQ"]),
    ("view", &["--verbosity=3", "--input-fmt-option=nthreads=1", "-o", "{out}", "{in}"]),
    ("index", &["--input-fmt=bam", "{in}", "{out}"]),
    ("index", &["--verbosity=3", "{in}", "{out}"]),
    ("index", &["--threads=1", "{in}", "{out}"]),
    ("index", &["--foo", "{in}", "{out}"]),
    ("cat", &["--input-fmt=bam", "-o", "{out}", "{in}"]),
    ("cat", &["--threads", "2", "-o", "{out}", "{in}"]),
    ("cat", &["--write-index", "--output-fmt-option=level=1", "-o", "{out}", "{in}"]),
    ("cat", &["-Z", "-o", "{out}", "{in}"]),
    ("merge", &["--input-fmt=bam", "-o", "{out}", "{in}"]),
    ("merge", &["--threads", "2", "--reference=x", "-o", "{out}", "{in}"]),
    ("merge", &["--write-index", "--output-fmt-option=level=1", "-o", "{out}", "{in}"]),
    ("merge", &["-Z", "-o", "{out}", "{in}"]),
    ("merge", &["-o", "{out}", "{in}", "-l"]),
    ("checksum", &["--input-fmt", "bam", "-o", "{out}", "{in}"]),
    ("checksum", &["--reference=x", "--verbosity=2", "--write-index", "-o", "{out}", "{in}"]),
    ("checksum", &["--input-fmt-option=nthreads=1", "--threads=1", "-o", "{out}", "{in}"]),
    ("checksum", &["--check", "-o", "{out}", "{in}"]),
    ("stats", &["--input-fmt", "bam", "{in}"]),
    ("stats", &["--reference=x", "--verbosity=2", "--write-index", "{in}"]),
    ("stats", &["--input-fmt-option=nthreads=1", "--threads=1", "{in}"]),
    ("stats", &["--cov", "3", "{in}"]),
    ("stats", &["--customized-index-file", "{in}"]),
    ("stats", &["-h"]),
];

fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).lines().next().unwrap_or("").to_string()
}

fn summary(o: &Output) -> (Option<i32>, String) {
    (o.status.code(), first_line(&o.stderr))
}

fn args_for(args: &[&str], input: &Path, out: &Path) -> Vec<String> {
    let (input, out) = (input.display().to_string(), out.display().to_string());
    args.iter().map(|a| a.replace("{in}", &input).replace("{out}", &out)).collect()
}

#[test]
fn global_options_and_getopt_messages_match_samtools() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("command_line");
    let opts = SimulateOptions { pairs: 200, n_refs: 2, ref_len: 50_000, ..Default::default() };
    let sam = simulated_sam(&dir, &SimulateOptions { order: Order::Name, ..opts });
    let sorted = dir.join("in.sorted.bam");
    let grouped = dir.join("in.grouped.bam");
    let sam_arg = sam.display().to_string();
    oracle_ok(&oracle, &["sort", "-o", &sorted.display().to_string(), &sam_arg]);
    oracle_ok(&oracle, &["view", "-b", "-o", &grouped.display().to_string(), &sam_arg]);
    let mut wrong = Vec::new();
    for (i, (command, args)) in CASES.iter().enumerate() {
        let input = if *command == "fixmate" { &grouped } else { &sorted };
        let mut outputs = Vec::new();
        for (tool, program) in [("oracle", oracle.as_path()), ("mdsam", mdsam_bin().as_path())] {
            let out = dir.join(format!("case{i}.{tool}.out"));
            let mut full = vec![command.to_string()];
            full.extend(args_for(args, input, &out));
            let refs: Vec<&str> = full.iter().map(String::as_str).collect();
            outputs.push(run(program, &refs));
        }
        let (expected, got) = (summary(&outputs[0]), summary(&outputs[1]));
        if expected != got {
            wrong.push(format!("{command} {args:?}: samtools {expected:?}, mdsam {got:?}"));
        } else if *command == "view" && outputs[0].stderr != outputs[1].stderr {
            wrong.push(format!("{command} {args:?}: the usage after the message differs"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
