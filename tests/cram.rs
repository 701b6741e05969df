//! CRAM input against the samtools 1.24 oracle: CRAM 3.0 and 3.1 files the oracle writes from
//! simulated reads (several references, pairs, unmapped reads, supplementary and secondary
//! records, duplicates, read groups), with and without an embedded reference, decoded with `-T`
//! and with `REF_PATH`, must give the SAM the oracle gives; sort and markdup on a CRAM must give
//! the records they give on the BAM samtools decodes from it; a missing reference and a truncated
//! file are one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run_ok, sam_without_pg, scratch_dir,
    simulated_fasta, simulated_sam,
};

fn simulated() -> SimulateOptions {
    SimulateOptions {
        pairs: 3_000,
        seed: 20,
        n_refs: 3,
        ref_len: 200_000,
        read_groups: 3,
        order: Order::Name,
        ..SimulateOptions::default()
    }
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Runs `program args…` with the reference-finding environment set to `ref_path` (or unset).
fn run_with_ref_path(program: &Path, args: &[&str], ref_path: Option<&str>) -> Output {
    let mut command = Command::new(program);
    command.args(args).env_remove("REF_CACHE").env_remove("REF_PATH");
    if let Some(ref_path) = ref_path {
        command.env("REF_PATH", ref_path);
    }
    command.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

fn ok(output: Output, what: &str) -> Vec<u8> {
    assert!(output.status.success(), "{what}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// The data every test starts from: a coordinate-sorted BAM and its reference.
struct Inputs {
    dir: PathBuf,
    bam: PathBuf,
    fasta: PathBuf,
}

fn inputs(oracle: &Path, name: &str) -> Inputs {
    let dir = scratch_dir(name);
    let opts = simulated();
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let bam = dir.join("in.bam");
    oracle_ok(oracle, &["sort", "-o", text(&bam), text(&sam)]);
    Inputs { dir, bam, fasta }
}

/// `REF_PATH`'s directory for `cram`: one file of bare upper-case bases per `@SQ`, named by
/// its M5, as `seq_cache_populate.pl` makes it.
fn ref_path_dir(oracle: &Path, cram: &Path, fasta: &Path, dir: &Path) -> String {
    let cache = dir.join("md5");
    std::fs::create_dir_all(&cache).unwrap();
    let header = oracle_ok(oracle, &["view", "-H", text(cram)]).stdout;
    let fasta = std::fs::read_to_string(fasta).unwrap();
    for line in String::from_utf8_lossy(&header).lines().filter(|l| l.starts_with("@SQ")) {
        let field = |key: &str| {
            line.split('\t').find_map(|f| f.strip_prefix(key)).expect("SN and M5").to_string()
        };
        let (name, md5) = (field("SN:"), field("M5:"));
        let bases: String = fasta
            .split('>')
            .find(|entry| entry.split_whitespace().next() == Some(name.as_str()))
            .expect("sequence in FASTA")
            .lines()
            .skip(1)
            .collect::<String>()
            .to_ascii_uppercase();
        std::fs::write(cache.join(&md5), bases).unwrap();
    }
    format!("{}/%s", cache.display())
}

/// CRAM 2.1, 3.0 and 3.1, with and without an embedded reference, decoded with `-T` and (the
/// FASTA gone) through `REF_PATH`: `mdsam view` prints what the oracle prints.
#[test]
fn oracle_crams_decode_as_the_oracle_decodes_them() {
    let Some(oracle) = oracle() else { return };
    let Inputs { dir, bam, fasta } = inputs(&oracle, "cram_decode");
    for version in ["2.1", "3.0", "3.1"] {
        for embed in [false, true] {
            let tag = format!("v{version}{}", if embed { "-embed" } else { "" });
            // A copy of the FASTA that is removed after writing: `REF_PATH` is then the only way
            // to the bases (the CRAM's `UR` names the copy).
            let copy = dir.join(format!("ref-{tag}.fa"));
            std::fs::copy(&fasta, &copy).unwrap();
            let cram = dir.join(format!("{tag}.cram"));
            let format =
                format!("cram,version={version}{}", if embed { ",embed_ref=1" } else { "" });
            oracle_ok(
                &oracle,
                &["view", "-O", &format, "-T", text(&copy), "-o", text(&cram), text(&bam)],
            );
            let ref_path = ref_path_dir(&oracle, &cram, &copy, &dir.join(&tag));
            std::fs::remove_file(&copy).unwrap();
            let with_t = ["view", "-h", "--no-PG", "-T", text(&fasta), text(&cram)];
            let want = ok(run_with_ref_path(&oracle, &with_t, None), "oracle -T");
            let got = ok(run_with_ref_path(&mdsam_bin(), &with_t, None), "mdsam -T");
            assert!(want.len() > 100_000, "{tag}: oracle decoded too little");
            assert_same_sam(&sam_without_pg(&got), &sam_without_pg(&want), &format!("{tag} -T"));
            let plain = ["view", "-h", "--no-PG", text(&cram)];
            let by_md5 = ok(run_with_ref_path(&mdsam_bin(), &plain, Some(&ref_path)), "REF_PATH");
            assert_same_sam(&by_md5, &got, &format!("{tag} REF_PATH"));
            let counted = ["view", "-c", "-@", "2", text(&cram)];
            let count = ok(run_with_ref_path(&mdsam_bin(), &counted, Some(&ref_path)), "-c");
            let records = want.split(|&b| b == b'\n').filter(|l| !l.is_empty() && l[0] != b'@');
            assert_eq!(String::from_utf8_lossy(&count).trim(), records.count().to_string());
        }
    }
}

/// SAM records of `path` as the oracle decodes them, without `@PG`.
fn records(oracle: &Path, path: &Path, fasta: &Path) -> Vec<u8> {
    let args = ["view", "-h", "--no-PG", "-T", text(fasta), text(path)];
    sam_without_pg(&oracle_ok(oracle, &args).stdout)
}

/// sort (by coordinate and by name) and markdup read a CRAM as they read the BAM samtools
/// decodes from it.
#[test]
fn sort_and_markdup_on_cram_match_the_decoded_bam() {
    let Some(oracle) = oracle() else { return };
    let Inputs { dir, bam, fasta } = inputs(&oracle, "cram_commands");
    let path = |name: &str| dir.join(name);
    // markdup wants fixmate's MC and ms tags.
    let by_name = path("by-name.bam");
    let fixed = path("fixed.bam");
    let sorted = path("sorted.bam");
    oracle_ok(&oracle, &["sort", "-n", "-o", text(&by_name), text(&bam)]);
    oracle_ok(&oracle, &["fixmate", "-m", text(&by_name), text(&fixed)]);
    oracle_ok(&oracle, &["sort", "-o", text(&sorted), text(&fixed)]);
    let cram = path("sorted.cram");
    let decoded = path("decoded.bam");
    oracle_ok(&oracle, &["view", "-C", "-T", text(&fasta), "-o", text(&cram), text(&sorted)]);
    oracle_ok(&oracle, &["view", "-b", "-T", text(&fasta), "-o", text(&decoded), text(&cram)]);
    let mdsam = mdsam_bin();
    let commands: [&[&str]; 3] =
        [&["sort", "-@", "2"], &["sort", "-n", "-@", "2"], &["markdup", "-@", "2", "-s"]];
    for (i, command) in commands.iter().enumerate() {
        let mut outputs = Vec::new();
        for (input, kind) in [(&cram, "cram"), (&decoded, "bam")] {
            let out = path(&format!("out-{i}-{kind}.bam"));
            let mut args = command.to_vec();
            let (input, out_text) = (text(input), text(&out));
            if command[0] == "markdup" {
                args.extend_from_slice(&["--reference", text(&fasta), input, out_text]);
            } else {
                args.extend_from_slice(&["--reference", text(&fasta), "-o", out_text, input]);
            }
            run_ok(&mdsam, &args);
            outputs.push(records(&oracle, &out, &fasta));
        }
        assert!(outputs[0].len() > 100_000, "{command:?}: too little output");
        assert_same_sam(&outputs[0], &outputs[1], &format!("{command:?} CRAM vs BAM"));
    }
}

/// A reference found nowhere, and a CRAM cut short: exit status 1 and one line naming the file
/// (and, for the reference, its `@SQ` and M5); no panic.
#[test]
fn missing_reference_and_truncation_are_one_line_errors() {
    let Some(oracle) = oracle() else { return };
    let Inputs { dir, bam, fasta } = inputs(&oracle, "cram_errors");
    let copy = dir.join("gone.fa");
    std::fs::copy(&fasta, &copy).unwrap();
    let cram = dir.join("in.cram");
    oracle_ok(&oracle, &["view", "-C", "-T", text(&copy), "-o", text(&cram), text(&bam)]);
    std::fs::remove_file(&copy).unwrap();
    let empty = dir.join("empty-cache");
    std::fs::create_dir_all(&empty).unwrap();
    let ref_path = format!("{}/%s", empty.display());

    let missing = run_with_ref_path(&mdsam_bin(), &["view", text(&cram)], Some(&ref_path));
    let stderr = String::from_utf8_lossy(&missing.stderr).into_owned();
    assert_eq!(missing.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(text(&cram)) && stderr.contains("@SQ SN:chr1"), "{stderr}");
    assert!(stderr.contains("M5:") && !stderr.contains("M5:none"), "{stderr}");

    let bytes = std::fs::read(&cram).unwrap();
    let cut = dir.join("cut.cram");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let truncated =
        run_with_ref_path(&mdsam_bin(), &["view", "-c", "-T", text(&fasta), text(&cut)], None);
    let stderr = String::from_utf8_lossy(&truncated.stderr).into_owned();
    assert_eq!(truncated.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("[W::")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(text(&cut)) && errors[0].contains("truncated"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut text = Vec::new();
    let file = std::fs::File::open(path).unwrap();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(file), &mut text).unwrap();
    text
}

/// `index` writes the `.crai` samtools writes; region queries through it (one region, several,
/// `*`, `-M`) give the oracle's records.
#[test]
fn index_and_region_queries_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let Inputs { dir, bam, fasta } = inputs(&oracle, "cram_regions");
    let cram = dir.join("in.cram");
    oracle_ok(&oracle, &["view", "-C", "-T", text(&fasta), "-o", text(&cram), text(&bam)]);
    let (ours, theirs) = (dir.join("ours.crai"), dir.join("in.cram.crai"));
    run_ok(&mdsam_bin(), &["index", text(&cram), text(&ours)]);
    oracle_ok(&oracle, &["index", text(&cram)]);
    assert_eq!(String::from_utf8_lossy(&gunzip(&ours)), String::from_utf8_lossy(&gunzip(&theirs)));
    let queries: [&[&str]; 4] = [
        &["chr2:1000-50000"],
        &["chr1:5000-9000", "chr3", "chr1:7000-20000"],
        &["*"],
        &["-M", "chr1:5000-9000", "chr1:7000-20000", "chr2"],
    ];
    for query in queries {
        let mut args = vec!["view", "--no-PG", "-T", text(&fasta), text(&cram)];
        args.extend_from_slice(query);
        let want = oracle_ok(&oracle, &args).stdout;
        let got = run_ok(&mdsam_bin(), &args).stdout;
        assert!(!want.is_empty(), "{query:?}: oracle found nothing");
        assert_same_sam(&got, &want, &format!("{query:?}"));
    }
}
