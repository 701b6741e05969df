//! `quickcheck`, `head` and `idxstats` against the samtools 1.24 oracle: on simulated data
//! (several references, unmapped and unplaced reads), on damaged files (truncated BAMs, a
//! missing EOF block, a text file, an empty file, a directory), CRAM headers, and their usage
//! errors.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_bin, oracle, oracle_ok, run, scratch_dir, simulated_sam};

/// A sorted, indexed BAM (BAI and CSI), its SAM, and damaged copies.
struct Files {
    sam: PathBuf,
    bam: PathBuf,
    csi_only: PathBuf,
    unsorted: PathBuf,
    truncated: Vec<PathBuf>,
    text: PathBuf,
    empty: PathBuf,
    missing: PathBuf,
    directory: PathBuf,
}

fn files(dir: &Path, oracle: &Path) -> Files {
    let opts = SimulateOptions {
        pairs: 2_000,
        seed: 43,
        n_refs: 5,
        ref_len: 100_000,
        order: Order::Coordinate,
        unmapped_pair_rate: 0.05,
        mate_unmapped_rate: 0.05,
        secondary_rate: 0.02,
        qc_fail_rate: 0.02,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(dir, &opts);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let bam = dir.join("sorted.bam");
    oracle_ok(oracle, &["sort", "-o", &s(&bam), &s(&sam)]);
    oracle_ok(oracle, &["index", &s(&bam)]);
    let csi_only = dir.join("csi.bam");
    std::fs::copy(&bam, &csi_only).unwrap();
    oracle_ok(oracle, &["index", "-c", &s(&csi_only)]);
    let unsorted = dir.join("unsorted.bam");
    oracle_ok(oracle, &["sort", "-n", "-o", &s(&unsorted), &s(&sam)]);
    let bytes = std::fs::read(&bam).unwrap();
    let truncated = [30, 300, bytes.len() / 2, bytes.len() - 28]
        .iter()
        .map(|&n| {
            let p = dir.join(format!("cut{n}.bam"));
            std::fs::write(&p, &bytes[..n]).unwrap();
            p
        })
        .collect();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "just some text\n").unwrap();
    let empty = dir.join("empty.bam");
    std::fs::write(&empty, "").unwrap();
    let directory = dir.join("a-directory");
    std::fs::create_dir_all(&directory).unwrap();
    let missing = dir.join("none.bam");
    Files { sam, bam, csi_only, unsorted, truncated, text, empty, missing, directory }
}

/// Runs `args` under both tools and compares exit status, stdout, and stderr without the
/// htslib-internal `[E::bgzf…]`/`[E::bam_hdr_read]` lines that describe a damaged block (mdsam
/// prints samtools' own line about it).
fn same(oracle: &Path, args: &[&str]) {
    let (want, got) = (run(oracle, args), run(&mdsam_bin(), args));
    // The oracle is samtools inside pysam, whose build renames stdout in the usage texts.
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace("samtools_stdout", "stdout");
    let stderr = |o: &std::process::Output| {
        text(&o.stderr)
            .lines()
            .filter(|l| !l.starts_with("[E::bgzf") && !l.starts_with("[E::bam_hdr_read]"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    assert_eq!(got.status.code(), want.status.code(), "{args:?}: {}", stderr(&got));
    assert_eq!(text(&got.stdout), text(&want.stdout), "{args:?}");
    assert_eq!(stderr(&got), stderr(&want), "{args:?}");
}

fn all(f: &Files) -> Vec<&PathBuf> {
    let mut v = vec![&f.sam, &f.bam, &f.csi_only, &f.unsorted, &f.text, &f.empty, &f.missing];
    v.push(&f.directory);
    v.extend(f.truncated.iter());
    v
}

#[test]
fn quickcheck_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("inspect-quickcheck");
    let f = files(&dir, &oracle);
    let paths: Vec<&str> = all(&f).iter().map(|p| p.to_str().unwrap()).collect();
    for flags in [&[][..], &["-v"], &["-q"], &["-qv"], &["-u"]] {
        for path in &paths {
            let mut args = vec!["quickcheck"];
            args.extend_from_slice(flags);
            args.push(path);
            same(&oracle, &args);
        }
    }
    // Several files: the status ORs their failure bits, -v lists the failed ones.
    let mut args = vec!["quickcheck", "-v"];
    args.extend(paths.iter());
    same(&oracle, &args);
    for usage in [&["quickcheck"][..], &["quickcheck", "-x", "a"], &["quickcheck", "--help"]] {
        same(&oracle, usage);
    }
}

#[test]
fn head_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("inspect-head");
    let f = files(&dir, &oracle);
    for path in all(&f) {
        let path = path.to_str().unwrap();
        for opts in [
            &[][..],
            &["-h", "0", "-n", "3"],
            &["-h", "2"],
            &["-n", "0x10"],
            &["-h", "-1", "-n", "50"],
        ] {
            let mut args = vec!["head"];
            args.extend_from_slice(opts);
            args.push(path);
            same(&oracle, &args);
        }
    }
    let bam = f.bam.to_str().unwrap();
    for args in [
        &["head", "--records=5", "--headers", "3", "-@", "2", bam][..],
        &["head", "-@", "x", bam],
        &["head", "a", "b"],
        &["head", "--output-fmt", "sam", bam],
        // getopt names the candidates in samtools' table order (globals first).
        &["head", "--re", "1", bam],
    ] {
        same(&oracle, args);
    }
}

#[test]
fn idxstats_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("inspect-idxstats");
    let f = files(&dir, &oracle);
    for path in all(&f) {
        let path = path.to_str().unwrap();
        same(&oracle, &["idxstats", path]);
        same(&oracle, &["idxstats", "-@", "2", path]);
    }
    let (bam, csi) = (f.bam.to_str().unwrap(), f.csi_only.to_str().unwrap());
    let csi_index = format!("{csi}.csi");
    let missing = f.missing.to_str().unwrap();
    for args in [
        &["idxstats", "-X", csi, &csi_index][..],
        &["idxstats", "-X", bam, missing],
        &["idxstats"],
        &["idxstats", "-X", bam],
        &["idxstats", bam, bam],
        &["idxstats", "--reference", "x", bam],
    ] {
        same(&oracle, args);
    }
}

/// A CRAM's header comes from its header container; head and quickcheck
/// read CRAM 2.1 and 3.0 headers and EOF containers (and head the 3.0 records).
#[test]
fn cram_headers_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let Some(shared) = crate::support::shared_dir() else { return };
    let dat = shared.join("peer-tests/samtools");
    let crams = [
        "dat/test_input_1_a.cram",
        "quickcheck/6.quickcheck.cram21.ok.cram",
        "quickcheck/7.quickcheck.cram30.ok.cram",
        "quickcheck/9.quickcheck.cram30.truncated.cram",
    ];
    for cram in crams {
        let path = dat.join(cram);
        let path = path.to_str().unwrap();
        same(&oracle, &["head", path]);
        same(&oracle, &["head", "-h", "2", path]);
        same(&oracle, &["quickcheck", "-vvv", path]);
    }
}
