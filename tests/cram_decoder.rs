//! mdsam's own CRAM decoder (`src/io/cram/decode/`) against the samtools 1.24 oracle: CRAMs the
//! oracle writes with each codec and layout option decode to the SAM the oracle prints, with the
//! decoder forced on (`MDSAM_CRAM_DECODER=own`: no container may fall back to noodles) where it
//! reads every block; `idxstats` and `view -c` read a CRAM whose reference is nowhere.

use std::path::Path;
use std::process::Command;

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, sam_without_pg, scratch_dir, simulated_fasta,
    simulated_sam,
};

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// `mdsam args…` with the decoder chosen by `MDSAM_CRAM_DECODER=decoder`; stdout.
fn mdsam_with(decoder: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(mdsam_bin())
        .args(args)
        .env("MDSAM_CRAM_DECODER", decoder)
        .env_remove("REF_PATH")
        .env_remove("REF_CACHE")
        .output()
        .expect("run mdsam");
    assert!(
        out.status.success(),
        "mdsam {args:?} ({decoder}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The options each CRAM is written with, and whether every block of it is one mdsam's decoder
/// reads (fqzcomp is not: those containers go to noodles).
const LAYOUTS: &[(&str, &str, bool)] = &[
    ("gzip", "version=3.0,use_rans=0", true),
    ("rans4x8", "version=3.0", true),
    ("nx16-tok3", "version=3.1", true),
    ("arith", "version=3.1,use_arith=1", true),
    ("bzip2-lzma", "version=3.0,use_bzip2=1,use_lzma=1", true),
    ("fqzcomp", "version=3.1,use_fqz=1", false),
    ("lossy-names", "version=3.1,lossy_names=1", true),
    ("embedded", "version=3.0,embed_ref=1", true),
    ("no-ref", "version=3.1,no_ref=1", true),
    ("small-slices", "version=3.0,seqs_per_slice=300,slices_per_container=3", true),
];

#[test]
fn every_layout_decodes_as_the_oracle_decodes_it() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_decoder");
    let opts = SimulateOptions {
        pairs: 2_000,
        seed: 31,
        n_refs: 4,
        ref_len: 60_000,
        read_groups: 2,
        order: Order::Name,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let bam = dir.join("in.bam");
    oracle_ok(&oracle, &["sort", "-o", text(&bam), text(&sam)]);
    let mut unsupported = Vec::new();
    for &(name, options, all_own) in LAYOUTS {
        let cram = dir.join(format!("{name}.cram"));
        let format = format!("cram,{options}");
        oracle_ok(
            &oracle,
            &["view", "-O", &format, "-T", text(&fasta), "-o", text(&cram), text(&bam)],
        );
        let args = ["view", "-h", "--no-PG", "-T", text(&fasta), text(&cram)];
        let want = sam_without_pg(&oracle_ok(&oracle, &args).stdout);
        assert!(want.len() > 100_000, "{name}: the oracle decoded too little");
        let got = sam_without_pg(&mdsam_with("", &args));
        assert_same_sam(&got, &want, name);
        if all_own {
            let own = sam_without_pg(&mdsam_with("own", &args));
            assert_same_sam(&own, &want, &format!("{name}, own decoder only"));
        } else {
            unsupported.push(name);
        }
    }
    assert_eq!(unsupported, ["fqzcomp"]);
}

/// A CRAM whose reference is nowhere: `idxstats`, `view -c` and `flagstat` need no bases, so they
/// read it (as htslib does, without fetching the reference); `view` says which reference is
/// missing.
#[test]
fn counting_commands_need_no_reference() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_decoder_noref");
    let opts = SimulateOptions {
        pairs: 1_500,
        seed: 32,
        n_refs: 2,
        ref_len: 40_000,
        ..Default::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let copy = dir.join("gone.fa");
    std::fs::copy(&fasta, &copy).unwrap();
    let cram = dir.join("in.cram");
    let format = "cram";
    oracle_ok(
        &oracle,
        &["sort", "-O", format, "--reference", text(&copy), "-o", text(&cram), text(&sam)],
    );
    std::fs::remove_file(&copy).unwrap();
    let _ = std::fs::remove_file(dir.join("gone.fa.fai"));
    let counting: [&[&str]; 6] = [
        &["idxstats"],
        &["view", "-c"],
        &["view", "-c", "-F", "0x904", "-q", "20"],
        &["view", "-c", "-f", "1", "-r", "H5L2VDSXY.2"],
        &["flagstat"],
        &["flagstat", "-O", "tsv"],
    ];
    for command in counting {
        let args: Vec<&str> = command.iter().copied().chain([text(&cram)]).collect();
        let want = Command::new(&oracle)
            .args(&args)
            .env("REF_PATH", "/nonexistent/%s")
            .env_remove("REF_CACHE")
            .output()
            .unwrap();
        assert!(want.status.success(), "oracle {args:?}");
        let got = Command::new(mdsam_bin())
            .args(&args)
            .env("REF_PATH", "/nonexistent/%s")
            .env_remove("REF_CACHE")
            .output()
            .unwrap();
        assert!(got.status.success(), "mdsam {args:?}: {}", String::from_utf8_lossy(&got.stderr));
        assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&want.stdout));
    }
    let view = Command::new(mdsam_bin())
        .args(["view", text(&cram)])
        .env("REF_PATH", "/nonexistent/%s")
        .env_remove("REF_CACHE")
        .output()
        .unwrap();
    assert_eq!(view.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&view.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("@SQ SN:"), "{stderr}");
}
