//! mdsam's CRAM block decoders (`mdsam::io::cram::block_codecs`) against htscodecs itself:
//! the system's `libhtscodecs.so.2` (loaded at run time; its encoders write every rANS Nx16
//! flag combination and name tokeniser blocks) and the blocks of CRAM files the samtools 1.24
//! oracle writes, whose every block must decode to what htscodecs decodes it to.

use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::path::Path;

use mdsam::io::cram::block_codecs::decompress;
use mdsam::io::cram::codec_error::CodecError;
use mdsam::io::cram::varint::Cursor;
use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{oracle, oracle_ok, scratch_dir, simulated_fasta, simulated_sam};

pub(crate) type Compress = unsafe extern "C" fn(*const u8, c_uint, *mut c_uint, c_int) -> *mut u8;
pub(crate) type Uncompress = unsafe extern "C" fn(*const u8, c_uint, *mut c_uint) -> *mut u8;
pub(crate) type TokEncode =
    unsafe extern "C" fn(*const c_char, c_int, c_int, c_int, *mut c_int, *mut c_int) -> *mut u8;

/// htscodecs' entry points, from the shared library samtools' Debian package installs.
pub(crate) struct Htscodecs {
    pub(crate) rans4x8: Compress,
    pub(crate) rans4x8_decode: Uncompress,
    pub(crate) nx16: Compress,
    pub(crate) nx16_decode: Uncompress,
    pub(crate) arith: Compress,
    pub(crate) arith_decode: Uncompress,
    pub(crate) tok3: TokEncode,
    pub(crate) tok3_decode: Uncompress,
}

pub(crate) fn htscodecs() -> Option<Htscodecs> {
    let name = CString::new("libhtscodecs.so.2").unwrap();
    // SAFETY: dlopen/dlsym with NUL-terminated names; the symbols' C signatures are
    // htscodecs' public ones (rANS_static.h, rANS_static4x16.h, arith_dynamic.h,
    // tokenise_name3.h), and the library stays loaded for the process.
    unsafe {
        let lib = libc::dlopen(name.as_ptr(), libc::RTLD_NOW);
        if lib.is_null() {
            let what = "libhtscodecs.so.2 not found (Debian's libhtscodecs2)";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{what}; CI=true");
            eprintln!("skipping: {what}");
            return None;
        }
        let symbol = |s: &str| -> *mut c_void {
            let s = CString::new(s).unwrap();
            let p = libc::dlsym(lib, s.as_ptr());
            assert!(!p.is_null(), "libhtscodecs lacks {s:?}");
            p
        };
        Some(Htscodecs {
            rans4x8: std::mem::transmute::<*mut c_void, Compress>(symbol("rans_compress")),
            rans4x8_decode: std::mem::transmute::<*mut c_void, Uncompress>(symbol(
                "rans_uncompress",
            )),
            nx16: std::mem::transmute::<*mut c_void, Compress>(symbol("rans_compress_4x16")),
            nx16_decode: std::mem::transmute::<*mut c_void, Uncompress>(symbol(
                "rans_uncompress_4x16",
            )),
            arith: std::mem::transmute::<*mut c_void, Compress>(symbol("arith_compress")),
            arith_decode: std::mem::transmute::<*mut c_void, Uncompress>(symbol(
                "arith_uncompress",
            )),
            tok3: std::mem::transmute::<*mut c_void, TokEncode>(symbol("tok3_encode_names")),
            tok3_decode: std::mem::transmute::<*mut c_void, Uncompress>(symbol(
                "tok3_decode_names",
            )),
        })
    }
}

/// Copies and frees a buffer htscodecs returned (`None` for NULL).
pub(crate) fn take(p: *mut u8, len: usize) -> Option<Vec<u8>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: htscodecs returned a malloc'ed buffer of at least `len` bytes.
    unsafe {
        let v = std::slice::from_raw_parts(p, len).to_vec();
        libc::free(p.cast());
        Some(v)
    }
}

pub(crate) fn compress(f: Compress, src: &[u8], flags: c_int) -> Vec<u8> {
    let mut len: c_uint = 0;
    // SAFETY: htscodecs reads `src.len()` bytes and writes the length.
    let p = unsafe { f(src.as_ptr(), src.len() as c_uint, &mut len, flags) };
    take(p, len as usize).expect("htscodecs compresses")
}

pub(crate) fn uncompress(f: Uncompress, src: &[u8]) -> Option<Vec<u8>> {
    let mut len: c_uint = 0;
    // SAFETY: as in `compress`.
    let p = unsafe { f(src.as_ptr(), src.len() as c_uint, &mut len) };
    take(p, len as usize)
}

pub(crate) fn samples() -> Vec<(&'static str, Vec<u8>)> {
    let mut seed = 0x2545_f491_u32;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let noise: Vec<u8> = (0..40_000).map(|_| random() as u8).collect();
    let quality: Vec<u8> = (0..60_003)
        .map(|i| if i % 150 < 3 { b'#' } else { b'!' + 20 + (random() % 21) as u8 })
        .collect();
    let runs: Vec<u8> = (0..30_001).map(|i| b"ACGT"[(i / 97) % 4]).collect();
    let few: Vec<u8> = (0..20_000).map(|_| b"AC"[(random() % 2) as usize]).collect();
    vec![
        ("one byte", vec![b'q']),
        ("short", b"ACGTTGCA".to_vec()),
        ("noise", noise),
        ("quality", quality),
        ("runs", runs),
        ("two symbols", few),
        ("constant", vec![30; 5000]),
    ]
}

#[test]
fn rans_nx16_decodes_htscodecs_output_for_every_flag_combination() {
    let Some(h) = htscodecs() else { return };
    for (what, src) in samples() {
        // ORDER, X32, STRIPE, NOSZ, CAT, RLE, PACK.
        for bits in 0..128u32 {
            let flags = [0x01, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80]
                .iter()
                .enumerate()
                .filter(|(k, _)| bits >> k & 1 == 1)
                .fold(0, |acc, (_, f)| acc | f);
            let packed = compress(h.nx16, &src, flags);
            let ours = decompress(5, &packed, src.len());
            assert!(
                ours.as_ref().is_ok_and(|o| *o == src),
                "{what}, flags {flags:#x}: {:?}",
                ours.err()
            );
        }
    }
}

#[test]
fn arithmetic_coder_decodes_htscodecs_output_for_every_flag_combination() {
    let Some(h) = htscodecs() else { return };
    for (what, src) in samples() {
        // ORDER, EXT (bzip2), STRIPE, NOSZ, CAT, RLE, PACK.
        for bits in 0..128u32 {
            let flags = [0x01, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80]
                .iter()
                .enumerate()
                .filter(|(k, _)| bits >> k & 1 == 1)
                .fold(0, |acc, (_, f)| acc | f);
            let packed = compress(h.arith, &src, flags);
            // htscodecs' encoder writes some combinations on small inputs that its own decoder
            // cannot read back (CAT after PACK, EXT with CAT): only what it reads back counts.
            // NOSZ streams it can only decode with the size given: judged without the flag.
            let checked = if flags & 0x10 == 0 {
                packed.clone()
            } else {
                compress(h.arith, &src, flags & !0x10)
            };
            if uncompress(h.arith_decode, &checked).is_none_or(|theirs| theirs != src) {
                continue;
            }
            let ours = decompress(6, &packed, src.len());
            assert!(
                ours.as_ref().is_ok_and(|o| *o == src),
                "{what}, flags {flags:#x}: {:?}",
                ours.err()
            );
        }
    }
}

#[test]
fn rans_4x8_decodes_htscodecs_output() {
    let Some(h) = htscodecs() else { return };
    for (what, src) in samples() {
        for order in [0, 1] {
            let packed = compress(h.rans4x8, &src, order);
            let ours = decompress(4, &packed, src.len()).unwrap();
            assert!(ours == src, "{what}, order {order}");
        }
    }
}

#[test]
fn name_tokeniser_decodes_htscodecs_output() {
    let Some(h) = htscodecs() else { return };
    let names = platform_names(5000, 5);
    for (level, arith) in [(1, 0), (5, 0), (9, 0), (5, 1), (9, 1)] {
        let mut len: c_int = 0;
        // SAFETY: htscodecs reads `names.len()` bytes of NUL-terminated names.
        let p = unsafe {
            (h.tok3)(
                names.as_ptr().cast(),
                names.len() as c_int,
                level,
                arith,
                &mut len,
                std::ptr::null_mut(),
            )
        };
        let packed = take(p, len as usize).expect("htscodecs tokenises");
        let ours = decompress(8, &packed, names.len()).unwrap();
        assert!(ours == names, "level {level}, arith {arith}");
        assert_eq!(uncompress(h.tok3_decode, &packed).unwrap(), names);
    }
}

/// htscodecs' output for every flag, damaged byte by byte or cut short, decodes to an error or
/// to some bytes, never to a panic or a hang.
#[test]
fn damaged_htscodecs_streams_never_panic() {
    let Some(h) = htscodecs() else { return };
    let mut seed = 0x1234_5678_9abc_def0_u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let quality = &samples()[3].1[..3000];
    let mut streams = Vec::new();
    for flags in 0..=255 {
        if flags & 0x02 == 0 {
            streams.push((5, compress(h.nx16, quality, flags)));
        }
    }
    for order in [0, 1] {
        streams.push((4, compress(h.rans4x8, quality, order)));
    }
    for flags in [0x00, 0x01, 0x40, 0x41, 0x80, 0x81, 0xc1, 0x09, 0x04, 0x20] {
        streams.push((6, compress(h.arith, quality, flags)));
    }
    for (method, packed) in streams {
        for cut in [1, 2, 5, 9, 17, packed.len() / 3, packed.len() - 1] {
            let _ = decompress(method, &packed[..cut.min(packed.len())], quality.len());
        }
        for _ in 0..200 {
            let mut bad = packed.clone();
            for _ in 0..1 + next() % 3 {
                let at = next() % bad.len();
                bad[at] = next() as u8;
            }
            let _ = decompress(method, &bad, quality.len());
        }
    }
}

/// Every block of a CRAM file: (method, content id, compressed data, raw size).
pub(crate) fn blocks(cram: &[u8]) -> Vec<(u8, i32, Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut at = 26; // file definition
    while at + 4 <= cram.len() {
        let length = i32::from_le_bytes(cram[at..at + 4].try_into().unwrap()) as usize;
        let mut c = Cursor::new(&cram[at + 4..]);
        for _ in 0..4 {
            c.itf8().unwrap(); // reference, start, span, records
        }
        c.ltf8().unwrap(); // record counter
        c.ltf8().unwrap(); // bases
        c.itf8().unwrap(); // blocks
        let landmarks = c.itf8().unwrap();
        for _ in 0..landmarks {
            c.itf8().unwrap();
        }
        c.take(4).unwrap(); // CRC32
        let body_start = at + 4 + c.at;
        let mut b = Cursor::new(&cram[body_start..body_start + length]);
        while b.at < length {
            let method = b.byte().unwrap();
            let _content_type = b.byte().unwrap();
            let id = b.itf8().unwrap();
            let compressed = b.itf8().unwrap() as usize;
            let raw = b.itf8().unwrap() as usize;
            out.push((method, id, b.take(compressed).unwrap().to_vec(), raw));
            b.take(4).unwrap(); // CRC32
        }
        at = body_start + length;
    }
    out
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

#[test]
fn oracle_cram_blocks_decode_as_htscodecs_decodes_them() {
    let Some(oracle) = oracle() else { return };
    let Some(h) = htscodecs() else { return };
    let dir = scratch_dir("cram_codecs");
    let opts = SimulateOptions {
        pairs: 3_000,
        seed: 31,
        n_refs: 2,
        ref_len: 150_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let variants: [(&str, &[&str]); 7] = [
        ("v30", &["version=3.0"]),
        ("v31", &["version=3.1"]),
        ("v31_small", &["version=3.1", "small"]),
        ("v31_archive", &["version=3.1", "archive", "level=9"]),
        ("v31_arith", &["version=3.1", "use_arith=1", "use_fqz=1"]),
        ("v31_bzip2_lzma", &["version=3.1", "use_bzip2=1", "use_lzma=1", "level=9"]),
        ("v30_fast", &["version=3.0", "fast"]),
    ];
    let mut decoded = [0usize; 9];
    for (tag, options) in variants {
        let cram = dir.join(format!("{tag}.cram"));
        let mut args = vec!["view", "-C", "-T", text(&fasta), "-o", text(&cram)];
        for o in options {
            args.extend(["--output-fmt-option", o]);
        }
        args.push(text(&sam));
        oracle_ok(&oracle, &args);
        let bytes = std::fs::read(&cram).unwrap();
        for (method, id, data, raw) in blocks(&bytes) {
            let ours = decompress(method, &data, raw);
            let theirs = match method {
                4 => uncompress(h.rans4x8_decode, &data),
                5 => uncompress(h.nx16_decode, &data),
                6 => uncompress(h.arith_decode, &data),
                8 => uncompress(h.tok3_decode, &data),
                _ => None,
            };
            match ours {
                Ok(ours) => {
                    if let Some(theirs) = theirs {
                        assert!(ours == theirs, "{tag}: method {method}, block {id}");
                    }
                    decoded[method as usize] += 1;
                }
                Err(CodecError::Unsupported(m)) => assert_eq!(m, 7, "{tag}"),
                Err(e) => panic!("{tag}: method {method}, block {id}: {e}"),
            }
        }
    }
    eprintln!("blocks decoded by method: {decoded:?}");
    for method in [0, 1, 2, 3, 4, 5, 6, 8] {
        assert!(decoded[method] > 0, "no block with method {method} was decoded");
    }
}

/// Throughput of each decoder against htscodecs' on the largest block of each method in an
/// oracle CRAM (a quality series of about 1 MB): `cargo test --release --test main
/// cram_codecs::speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed() {
    let Some(oracle) = oracle() else { return };
    let Some(h) = htscodecs() else { return };
    let dir = scratch_dir("cram_codecs_speed");
    let opts = SimulateOptions {
        pairs: 5_000,
        seed: 32,
        n_refs: 1,
        ref_len: 300_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    for (tag, options) in [
        ("3.0", vec!["version=3.0"]),
        ("3.1", vec!["version=3.1"]),
        ("3.1arith", vec!["version=3.1", "use_arith=1"]),
    ] {
        let cram = dir.join("speed.cram");
        let mut args = vec!["view", "-C", "-T", text(&fasta), "-o", text(&cram)];
        for o in &options {
            args.extend(["--output-fmt-option", o]);
        }
        args.extend(["--output-fmt-option", "seqs_per_slice=10000"]);
        args.push(text(&sam));
        oracle_ok(&oracle, &args);
        let all = blocks(&std::fs::read(&cram).unwrap());
        for method in [4u8, 5, 6, 8] {
            let Some((_, id, data, raw)) = all.iter().filter(|b| b.0 == method).max_by_key(|b| b.3)
            else {
                continue;
            };
            // Kept for measuring other decoders on the same bytes (noodles': see the report).
            std::fs::write(dir.join(format!("block-{tag}-m{method}-{raw}.bin")), data).unwrap();
            let decoded = decompress(method, data, *raw).unwrap();
            std::fs::write(dir.join(format!("block-{tag}-m{method}-{raw}.out")), decoded).unwrap();
            let theirs_fn = match method {
                4 => h.rans4x8_decode,
                5 => h.nx16_decode,
                6 => h.arith_decode,
                _ => h.tok3_decode,
            };
            let rounds = (200_000_000 / raw.max(&1)).clamp(3, 500);
            let time = |f: &dyn Fn()| {
                let start = std::time::Instant::now();
                for _ in 0..rounds {
                    f();
                }
                (raw * rounds) as f64 / start.elapsed().as_secs_f64() / 1e6
            };
            let ours = time(&|| {
                std::hint::black_box(decompress(method, data, *raw).unwrap());
            });
            let theirs = time(&|| {
                std::hint::black_box(uncompress(theirs_fn, data).unwrap());
            });
            eprintln!(
                "CRAM {tag}: method {method} (flags {:#04x}), block {id}, {raw} bytes: mdsam {ours:.0} MB/s, htscodecs {theirs:.0} MB/s",
                data[0]
            );
            if method == 5 && tag == "3.1" {
                // The same quality bytes under each entropy-coder variant.
                let src = decompress(method, data, *raw).unwrap();
                for flags in [0x00, 0x01, 0x04, 0x05, 0x41, 0x45] {
                    let packed = compress(h.nx16, &src, flags);
                    let name = format!("block-flags{flags:#04x}-m5-{}.bin", src.len());
                    std::fs::write(dir.join(name), &packed).unwrap();
                    let ours = time(&|| {
                        std::hint::black_box(decompress(5, &packed, src.len()).unwrap());
                    });
                    let theirs = time(&|| {
                        std::hint::black_box(uncompress(h.nx16_decode, &packed).unwrap());
                    });
                    eprintln!(
                        "    flags {flags:#04x}: mdsam {ours:.0} MB/s, htscodecs {theirs:.0} MB/s"
                    );
                }
            }
        }
    }
}

/// `count` NUL-terminated read names cycling through `forms` (5, or 6 with nanopore's) of
/// several platforms' shapes: the name tokeniser's test input.
pub(crate) fn platform_names(count: u32, forms: u32) -> Vec<u8> {
    let mut names = Vec::new();
    for i in 0..count {
        let name = match i % forms {
            0 => format!("SRR062634.{i}"),
            1 => format!("HWI-ST1:8:1101:{}:{:05}#0/1", 1000 + i * 7, i * 13),
            2 => format!("read_{:03}_x{}", i % 1000, i / 3),
            3 => format!("SRR062634.{}", i - 3),
            4 if forms == 6 => format!("f33d30d5-6eb8-4115-8f46-{:012x}_Basecall", i / 2),
            _ => format!(
                "q{}:{}:{}",
                i % 7,
                i.wrapping_mul(1_000_003),
                "ACGT".repeat((i % 4) as usize)
            ),
        };
        names.extend_from_slice(name.as_bytes());
        names.push(0);
    }
    names
}
