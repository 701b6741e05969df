//! mdsam's CRAM 3.1 encoders — rANS Nx16 (`io::cram::rans_nx16_encode`) and the name tokeniser
//! (`io::cram::tok3_encode`) — against htscodecs itself (its decoders read every stream back,
//! and its encoders write the same bytes) and the samtools 1.24 oracle, which must read
//! `-O cram,version=3.1` output back to the input's records.

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::Path;

use mdsam::io::cram::rans_nx16_encode::{CAT, ORDER1, PACK, RLE, STRIPE, compress as nx16};
use mdsam::io::cram::tok3_encode;
use mdsam::simulate::{Order, SimulateOptions};

use crate::cram_codecs::{blocks, compress, htscodecs, samples, take, uncompress};
use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run_ok, sam_records, scratch_dir, shared_dir,
    simulated_fasta, simulated_sam,
};

/// htscodecs' `RANS_ORDER_SIMD_AUTO`: 32 states from 50 000 bytes, as htslib asks.
const SIMD_AUTO: c_int = 1 << 17;

/// The flag combinations htslib's 3.1 profile and the name tokeniser ask for, and stored.
const FLAGS: [u8; 11] = [
    0,
    ORDER1,
    RLE,
    STRIPE | ORDER1,
    PACK,
    PACK | RLE | ORDER1,
    PACK | RLE,
    PACK | ORDER1,
    PACK | STRIPE,
    PACK | RLE | STRIPE,
    CAT,
];

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Quality-like bytes over 1 MB: 32 states, large order-1 tables (compressed themselves).
fn large_block() -> Vec<u8> {
    let mut x = 0x9e37_79b9_u32;
    (0..1_100_000)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 101 < 4 { b'#' } else { b'!' + 10 + (x % 31) as u8 }
        })
        .collect()
}

/// Whether the system's htscodecs is 1.6 or later, the encoders htslib 1.23 bundles (Debian
/// 12 has 1.3.0).
fn htscodecs_is_current() -> bool {
    let name = CString::new("libhtscodecs.so.2").unwrap();
    let symbol = CString::new("htscodecs_version").unwrap();
    // SAFETY: dlopen/dlsym with NUL-terminated names; `htscodecs_version` is
    // `const char *(void)`, returning a static string.
    let text = unsafe {
        let lib = libc::dlopen(name.as_ptr(), libc::RTLD_NOW);
        if lib.is_null() {
            return false;
        }
        let f = libc::dlsym(lib, symbol.as_ptr());
        if f.is_null() {
            return false;
        }
        let f =
            std::mem::transmute::<*mut libc::c_void, unsafe extern "C" fn() -> *const c_char>(f);
        CStr::from_ptr(f()).to_string_lossy().into_owned()
    };
    let mut parts = text.split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (1, 6)
}

fn symbols(src: &[u8]) -> usize {
    let mut seen = [false; 256];
    src.iter().for_each(|&b| seen[b as usize] = true);
    seen.iter().filter(|&&s| s).count()
}

/// Every stream decodes with htscodecs, and is the very bytes its encoder writes for the same
/// flags (checked in full against htscodecs 1.6.7, built from the source pysam ships).
#[test]
fn nx16_streams_are_htscodecs_own_bytes_and_decode_with_it() {
    let Some(h) = htscodecs() else { return };
    let current = htscodecs_is_current();
    let mut all = samples();
    all.push(("empty", Vec::new()));
    all.push(("256 symbols", (0..=255).collect()));
    all.push(("large", large_block()));
    for (what, src) in all {
        for flags in FLAGS {
            for auto in [false, true] {
                let ours = nx16(&src, flags, auto).expect("mdsam compresses");
                let back = uncompress(h.nx16_decode, &ours);
                assert!(back.as_deref() == Some(&src[..]), "{what}, flags {flags:#x}, auto {auto}");
                let simd = if auto { SIMD_AUTO } else { 0 };
                let theirs = compress(h.nx16, &src, c_int::from(flags) | simd);
                // htscodecs before 1.6 keeps the PACK flag (with an empty map) on data it cannot
                // pack; from 1.6, as htslib 1.23 bundles it, the flag is dropped, as here.
                if !current && flags & PACK != 0 && symbols(&src) > 16 {
                    continue;
                }
                assert!(
                    ours == theirs,
                    "{what}, flags {flags:#x}, auto {auto}: {} bytes, htscodecs {}",
                    ours.len(),
                    theirs.len()
                );
            }
        }
    }
}

/// Read names of several platforms' shapes, NUL-terminated.
fn name_block() -> Vec<u8> {
    super::cram_codecs::platform_names(6000, 6)
}

#[test]
fn name_tokeniser_blocks_are_htscodecs_own_bytes_and_decode_with_it() {
    let Some(h) = htscodecs() else { return };
    let current = htscodecs_is_current();
    let simulated: Vec<u8> = (0..3000u32)
        .flat_map(|i| {
            format!("sim:1:FCX:1:{}:{}:{}", 1101 + i / 1000, i * 31 % 30000, i * 7)
                .into_bytes()
                .into_iter()
                .chain([0])
        })
        .collect();
    for (what, names) in
        [("mixed", name_block()), ("illumina", simulated), ("one", b"r\0".to_vec())]
    {
        let ours = tok3_encode::encode(&names).expect("mdsam tokenises");
        assert_eq!(uncompress(h.tok3_decode, &ours).as_deref(), Some(&names[..]), "{what}");
        let mut len: c_int = 0;
        // SAFETY: htscodecs reads `names.len()` bytes of NUL-terminated names (level 3, the
        // one htslib's normal profile uses, rANS streams).
        let p = unsafe {
            (h.tok3)(
                names.as_ptr().cast(),
                names.len() as c_int,
                3,
                0,
                &mut len,
                std::ptr::null_mut(),
            )
        };
        let theirs = take(p, len as usize).expect("htscodecs tokenises");
        // The tokeniser of htscodecs before 1.6 differs (measured: 1.3.0 writes 43 894 bytes
        // for the mixed names, 1.6.7 and mdsam 13 099).
        if !current {
            continue;
        }
        assert!(ours == theirs, "{what}: {} bytes, htscodecs {}", ours.len(), theirs.len());
    }
}

/// mdsam's `version=3.1` CRAM of `input`: the oracle reads it back to the records it reads
/// from mdsam's default CRAM (rANS 4x8 and gzip, the same records), as many as the input has,
/// and every rANS Nx16 and name tokeniser block in it decodes with htscodecs.
fn oracle_reads_back(dir: &Path, input: &Path, fasta: Option<&Path>, tag: &str) {
    let oracle = oracle().expect("oracle");
    let view = |path: &Path| {
        let mut args = vec!["view", "--no-PG"];
        if let Some(fasta) = fasta {
            args.extend(["-T", text(fasta)]);
        }
        args.push(text(path));
        sam_records(&oracle_ok(&oracle, &args).stdout)
    };
    let mut records = Vec::new();
    for format in ["cram", "cram,version=3.1"] {
        let cram = dir.join(format!("{tag}-{}.cram", records.len()));
        let mut args = vec!["view", "-O", format, "-o", text(&cram)];
        if let Some(fasta) = fasta {
            args.extend(["-T", text(fasta)]);
        }
        args.push(text(input));
        run_ok(&mdsam_bin(), &args);
        records.push((view(&cram), std::fs::read(&cram).unwrap()));
    }
    let lines = |sam: &[u8]| sam.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(lines(&records[1].0), lines(&view(input)), "{tag}: records");
    assert_same_sam(&records[1].0, &records[0].0, tag);
    let mut methods = [0usize; 9];
    if let Some(h) = htscodecs() {
        for (method, id, data, raw) in blocks(&records[1].1) {
            let theirs = match method {
                5 => uncompress(h.nx16_decode, &data),
                8 => uncompress(h.tok3_decode, &data),
                _ => continue,
            };
            assert_eq!(theirs.map(|t| t.len()), Some(raw), "{tag}: method {method}, block {id}");
            methods[method as usize] += 1;
        }
        assert!(methods[5] > 0 && methods[8] > 0, "{tag}: no Nx16 or tokeniser block: {methods:?}");
    }
}

#[test]
fn oracle_reads_mdsam_3_1_output_of_simulated_reads() {
    if oracle().is_none() {
        return;
    }
    let dir = scratch_dir("cram_nx16_encode_sim");
    let opts = SimulateOptions {
        pairs: 4_000,
        seed: 77,
        n_refs: 2,
        ref_len: 120_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    oracle_reads_back(&dir, &sam, Some(&fasta), "sim");
}

#[test]
fn oracle_reads_mdsam_3_1_output_of_the_mpileup_peer_data() {
    let Some(shared) = shared_dir() else { return };
    if oracle().is_none() {
        return;
    }
    let data = shared.join("peer-tests/samtools/mpileup");
    let dir = scratch_dir("cram_nx16_encode_peer");
    // SAFETY: tests in this binary that read REF_PATH set it to the same value.
    unsafe { std::env::set_var("REF_PATH", format!("{}/md5/%s", data.display())) };
    oracle_reads_back(&dir, &data.join("mpileup.1.bam"), None, "mpileup1");
}

/// Peer case cramsize-03: htslib writes this merge under 91 923 bytes at 3.1; mdsam wrote
/// 94 295 with rANS 4x8 and gzip for the names.
#[test]
fn merged_3_1_output_is_as_small_as_htslib_requires() {
    let Some(shared) = shared_dir() else { return };
    let Some(oracle) = oracle() else { return };
    let data = shared.join("peer-tests/samtools/mpileup");
    let dir = scratch_dir("cram_nx16_encode_merge");
    let out = dir.join("merged.cram");
    let bams: Vec<_> = (1..=3).map(|i| data.join(format!("mpileup.{i}.bam"))).collect();
    let ref_path = format!("{}/md5/%s", data.display());
    let mdsam = std::process::Command::new(mdsam_bin())
        .env("REF_PATH", &ref_path)
        .args(["merge", "-f", "-O", "cram,version=3.1,seqs_per_slice=500", text(&out)])
        .args(bams.iter().map(|b| text(b)))
        .output()
        .unwrap();
    assert!(mdsam.status.success(), "{}", String::from_utf8_lossy(&mdsam.stderr));
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(size < 91_923, "{size} bytes");
    // The same records as the 3.0 merge's (rANS 4x8 and gzip).
    let v30 = dir.join("merged30.cram");
    let status = std::process::Command::new(mdsam_bin())
        .env("REF_PATH", &ref_path)
        .args(["merge", "-f", "-O", "cram,version=3.0,seqs_per_slice=500", text(&v30)])
        .args(bams.iter().map(|b| text(b)))
        .status()
        .unwrap();
    assert!(status.success());
    let view = |path: &Path| {
        let out = std::process::Command::new(&oracle)
            .env("REF_PATH", &ref_path)
            .args(["view", "--no-PG", text(path)])
            .output()
            .unwrap();
        sam_records(&out.stdout)
    };
    let merged = view(&out);
    assert_eq!(merged.iter().filter(|&&b| b == b'\n').count(), 1037);
    assert_same_sam(&merged, &view(&v30), "merge");
}

/// Without `version=3.1` mdsam keeps its own methods, whatever the level or profile: no rANS
/// Nx16 or tokeniser block (its default and 3.0 output stay byte for byte as before).
#[test]
fn default_output_keeps_mdsam_methods() {
    let dir = scratch_dir("cram_nx16_encode_default");
    let opts = SimulateOptions {
        pairs: 500,
        seed: 5,
        n_refs: 1,
        ref_len: 50_000,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let formats = [
        ("default", "cram"),
        ("v30", "cram,version=3.0"),
        ("v30_level9", "cram,version=3.0,level=9"),
        ("v30_archive", "cram,version=3.0,archive"),
        ("level9", "cram,level=9"),
        ("v31", "cram,version=3.1"),
    ];
    for (tag, format) in formats {
        let cram = dir.join(format!("{tag}.cram"));
        run_ok(
            &mdsam_bin(),
            &["view", "-O", format, "-T", text(&fasta), "-o", text(&cram), text(&sam)],
        );
        let methods: Vec<u8> = blocks(&std::fs::read(&cram).unwrap()).iter().map(|b| b.0).collect();
        let new = methods.iter().any(|&m| m == 5 || m == 8);
        assert_eq!(new, tag == "v31", "{tag}: methods {methods:?}");
    }
}
