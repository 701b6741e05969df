//! ISA-L beside libdeflate (issue 22): ISA-L inflates real BGZF blocks to the same bytes and
//! refuses damaged ones with the same errors; `deflate=isal` (option or `MDSAM_DEFLATE`) writes
//! BAM the oracle decodes to the same records, with the default writer's block layout.

use std::path::{Path, PathBuf};
use std::process::Command;

use mdsam::io::bgzf::block::{self, BlockError};
use mdsam::io::bgzf::codec::{Engine, Inflater};
use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, run_ok, scratch_dir, simulated_sam, to_sam,
};

fn simulation() -> SimulateOptions {
    SimulateOptions {
        pairs: 4_000,
        seed: 22,
        n_refs: 2,
        ref_len: 300_000,
        order: Order::Coordinate,
        extra_tag_rate: 0.2,
        ..SimulateOptions::default()
    }
}

/// `dir/name.bam` written from `sam` by `view -b --no-PG` (the `@PG` line would hold the
/// arguments) with `extra` arguments and `env` variables.
fn view_bam(dir: &Path, sam: &Path, name: &str, extra: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let out = dir.join(format!("{name}.bam"));
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(["view", "--no-PG", "-b", "-@", "2", "-o"]).arg(&out).args(extra).arg(sam);
    cmd.env_remove("MDSAM_DEFLATE").env_remove("MDSAM_INFLATE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd.status().expect("run mdsam");
    assert!(status.success(), "mdsam view -b {extra:?} {env:?} failed");
    out
}

/// Every block of a BGZF file, in order.
fn blocks(file: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < file.len() {
        let size = block::block_size(&file[at..]).expect("a BGZF block");
        out.push(&file[at..at + size]);
        at += size;
    }
    out
}

/// (ISIZE, CRC32) of every block: where the writer cut the data, and what each block holds.
fn layout(file: &[u8]) -> Vec<(usize, [u8; 4])> {
    blocks(file)
        .iter()
        .map(|b| {
            let n = b.len();
            (block::inflated_size(b), [b[n - 8], b[n - 7], b[n - 6], b[n - 5]])
        })
        .collect()
}

/// Both engines' answer for one block: `inflate_unsized` into a full-size buffer, and `inflate`
/// into one of ISIZE bytes.
type Answer = (Result<Vec<u8>, BlockError>, Result<Vec<u8>, BlockError>);

fn answer(engine: Engine, b: &[u8]) -> Answer {
    let mut inflater = Inflater::with_engine(engine);
    let mut scratch = vec![0; block::BLOCK_MAX];
    let unsized_ =
        block::inflate_unsized(b, &mut scratch, &mut inflater).map(|n| scratch[..n].to_vec());
    let mut exact = vec![0; block::inflated_size(b).min(block::BLOCK_MAX)];
    let sized = block::inflate(b, &mut exact, &mut inflater).map(|()| exact);
    (unsized_, sized)
}

#[test]
fn isal_inflates_real_blocks_to_libdeflates_bytes() {
    let dir = scratch_dir("codecs_real_blocks");
    let sam = simulated_sam(&dir, &simulation());
    let default = std::fs::read(view_bam(&dir, &sam, "default", &[], &[])).unwrap();
    let level1 = std::fs::read(view_bam(&dir, &sam, "level1", &["-1"], &[])).unwrap();
    let isal =
        std::fs::read(view_bam(&dir, &sam, "isal", &["--output-fmt-option", "deflate=isal"], &[]))
            .unwrap();
    let mut n = 0;
    for file in [&default, &level1, &isal] {
        for b in blocks(file) {
            let libdeflate = answer(Engine::Libdeflate, b);
            assert!(libdeflate.0.is_ok() && libdeflate.1.is_ok());
            assert_eq!(answer(Engine::Isal, b), libdeflate);
            // ISA-L itself read the block (no fall back to libdeflate).
            let mut out = vec![0; block::BLOCK_MAX];
            let got = Inflater::with_engine(Engine::Isal).inflate_checked_member(b, &mut out);
            assert_eq!(got, Some(block::inflated_size(b)));
            n += 1;
        }
    }
    assert!(n > 20, "only {n} blocks");
}

#[test]
fn isal_refuses_damaged_blocks_with_libdeflates_errors() {
    let dir = scratch_dir("codecs_damaged_blocks");
    let sam = simulated_sam(&dir, &simulation());
    let file = std::fs::read(view_bam(&dir, &sam, "default", &[], &[])).unwrap();
    let good = blocks(&file)[1].to_vec();
    let n = good.len();
    let mut damaged: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut bad_crc = good.clone();
    bad_crc[n - 8] ^= 1;
    damaged.push(("CRC32", bad_crc));
    for at in [18, 19, 40, n / 2, n - 12] {
        let mut bad_data = good.clone();
        bad_data[at] ^= 0x5a;
        damaged.push(("deflate data", bad_data));
    }
    for lie in [1u32, 0x10000] {
        let mut bad_isize = good.clone();
        bad_isize[n - 4..]
            .copy_from_slice(&(block::inflated_size(&good) as u32 ^ lie).to_le_bytes());
        damaged.push(("ISIZE", bad_isize));
    }
    let mut cut = good[..n - 20].to_vec();
    cut.extend_from_slice(&good[n - 8..]);
    damaged.push(("cut deflate data", cut));
    let mut fname = good.clone();
    fname[3] |= 8; // FNAME: not BGZF's header, left to the libdeflate path.
    damaged.push(("FNAME flag", fname));
    for (what, b) in &damaged {
        let libdeflate = answer(Engine::Libdeflate, b);
        assert_eq!(answer(Engine::Isal, b), libdeflate, "{what}");
    }
    let crc = answer(Engine::Isal, &damaged[0].1);
    assert!(matches!(crc.0, Err(BlockError::CrcMismatch { .. })), "{:?}", crc.0);
    // A wrong ISIZE is read at the real size (htslib ignores it) but refused at ISIZE's.
    let isize = answer(Engine::Isal, &damaged[6].1);
    assert!(isize.0.is_ok() && isize.1.is_err(), "{isize:?}");
}

#[test]
fn deflate_isal_decodes_with_the_oracle_to_the_same_records_in_the_same_blocks() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("codecs_deflate_isal");
    let sam = simulated_sam(&dir, &simulation());
    for (level, args) in [("default", &[][..]), ("level 1", &["-1"][..])] {
        let default = view_bam(&dir, &sam, "default", args, &[]);
        let mut isal_args = args.to_vec();
        isal_args.extend(["--output-fmt-option", "deflate=isal"]);
        let isal = view_bam(&dir, &sam, "isal", &isal_args, &[]);
        let (a, b) = (std::fs::read(&default).unwrap(), std::fs::read(&isal).unwrap());
        assert!(a != b, "{level}: deflate=isal wrote libdeflate's bytes");
        assert_eq!(layout(&a), layout(&b), "{level}: block layout");
        assert!(b.ends_with(&block::EOF_BLOCK));
        let ratio = b.len() as f64 / a.len() as f64;
        assert!(ratio < 1.12, "{level}: ISA-L output {ratio:.3}x the default's size");
        assert_same_sam(&to_sam(&oracle, &isal), &to_sam(&oracle, &default), level);
    }
}

#[test]
fn mdsam_deflate_selects_isal_and_the_option_overrides_it() {
    let dir = scratch_dir("codecs_env");
    let sam = simulated_sam(&dir, &simulation());
    let read = |p: PathBuf| std::fs::read(p).unwrap();
    let default = read(view_bam(&dir, &sam, "default", &[], &[]));
    let option = read(view_bam(&dir, &sam, "option", &["-O", "bam,deflate=isal"], &[]));
    let env = read(view_bam(&dir, &sam, "env", &[], &[("MDSAM_DEFLATE", "isal")]));
    let back = read(view_bam(
        &dir,
        &sam,
        "back",
        &["--output-fmt-option", "deflate=libdeflate"],
        &[("MDSAM_DEFLATE", "isal")],
    ));
    let libdeflate_in =
        read(view_bam(&dir, &sam, "inflate", &[], &[("MDSAM_INFLATE", "libdeflate")]));
    // Whole files compared with assert! (assert_eq! would print megabytes).
    assert!(option != default, "-O bam,deflate=isal wrote libdeflate's bytes");
    // The same bytes at any thread count and on every run.
    for (name, threads) in [("serial", "0"), ("again", "2"), ("more", "5")] {
        let isal =
            read(view_bam(&dir, &sam, name, &["-O", "bam,deflate=isal", "-@", threads], &[]));
        assert!(isal == option, "deflate=isal with -@ {threads} ({name}) wrote other bytes");
    }
    assert!(env == option, "MDSAM_DEFLATE=isal differs from deflate=isal");
    assert!(back == default, "deflate=libdeflate over MDSAM_DEFLATE=isal");
    assert!(libdeflate_in == default, "MDSAM_INFLATE changed the output");
    // Level 0 stays stored blocks, byte for byte.
    let stored = read(view_bam(&dir, &sam, "u", &["-u"], &[]));
    let stored_isal = read(view_bam(&dir, &sam, "u_isal", &["-u"], &[("MDSAM_DEFLATE", "isal")]));
    assert!(stored == stored_isal, "-u with deflate=isal changed the stored blocks");
}

/// Commands beyond `view` take `deflate=isal`: their output decodes to the default's records.
#[test]
fn sort_and_markdup_pipeline_write_isal_bam() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("codecs_commands");
    let sam = simulated_sam(&dir, &SimulateOptions { order: Order::Name, ..simulation() });
    let sam = sam.to_str().unwrap();
    for command in ["sort", "markdup-pipeline"] {
        let outputs: Vec<PathBuf> = ["default", "isal"]
            .iter()
            .map(|name| {
                let out = dir.join(format!("{command}-{name}.bam"));
                let mut args = vec![command, "--no-PG", "-@", "2", "-o", out.to_str().unwrap()];
                if command == "markdup-pipeline" {
                    args = vec![command, "--no-PG", "-@", "2"];
                }
                if *name == "isal" {
                    args.extend(["--output-fmt-option", "deflate=isal"]);
                }
                args.push(sam);
                if command == "markdup-pipeline" {
                    args.push(out.to_str().unwrap());
                }
                run_ok(&mdsam_bin(), &args);
                out
            })
            .collect();
        let (a, b) = (std::fs::read(&outputs[0]).unwrap(), std::fs::read(&outputs[1]).unwrap());
        assert!(a != b, "{command}: deflate=isal wrote libdeflate's bytes");
        assert_eq!(layout(&a), layout(&b), "{command}: block layout");
        assert_same_sam(&to_sam(&oracle, &outputs[1]), &to_sam(&oracle, &outputs[0]), command);
    }
}
