//! Which DEFLATE implementation inflates and deflates BGZF payloads: the one place that chooses,
//! so readers and writers only ask for an [`Inflater`] or a [`PayloadDeflater`].
//!
//! - Inflate: ISA-L (igzip) when the CPU has its fast paths (x86-64 with AVX2, or AArch64),
//!   libdeflate otherwise or with `MDSAM_INFLATE=libdeflate`. The bytes are the same. Issue 22
//!   measured ISA-L at 0.48–0.50 s of CPU against libdeflate's 0.55–0.62 s on 400 MB of SAM text;
//!   with Debian's ISA-L 2.30, `view -c` of a BAM gains 0–5 %. ISA-L reads the whole gzip member
//!   and checks CRC32 (`crc32_gzip_refl`) and ISIZE itself; a block it refuses goes to
//!   libdeflate, so both engines accept the same blocks and report the same errors.
//! - Deflate: libdeflate at htslib's levels by default (output byte-for-byte as before), ISA-L
//!   with `--output-fmt-option deflate=isal` or `MDSAM_DEFLATE=isal`: a 64 KiB block at
//!   samtools' default level in 0.17 ms instead of 1.3 ms, 2–5 % larger; at level 1 in 0.11 ms
//!   instead of 0.25 ms, 3 % larger (README.md).

use std::sync::OnceLock;

use libdeflater::{CompressionLvl, Compressor, Decompressor};

use super::isal_ffi::{IsalDeflate, IsalInflate};

/// A DEFLATE implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Libdeflate,
    Isal,
}

impl Engine {
    /// `libdeflate` or `isal` (any case), as `deflate=` and the environment variables spell them.
    pub fn parse(name: &str) -> Option<Engine> {
        match name.to_ascii_lowercase().as_str() {
            "libdeflate" => Some(Engine::Libdeflate),
            "isal" | "isa-l" => Some(Engine::Isal),
            _ => None,
        }
    }
}

/// Whether ISA-L has its SIMD inflate here; its portable C fallback is slower than libdeflate.
fn isal_is_fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

fn engine_from_env(name: &str) -> Option<Engine> {
    std::env::var(name).ok().and_then(|v| Engine::parse(&v))
}

/// The inflate engine of this process: `MDSAM_INFLATE`, else ISA-L where it is fast.
pub fn inflate_engine() -> Engine {
    static CHOICE: OnceLock<Engine> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        engine_from_env("MDSAM_INFLATE").unwrap_or(if isal_is_fast() {
            Engine::Isal
        } else {
            Engine::Libdeflate
        })
    })
}

/// The deflate engine when no `deflate=` option chose one (the option travels in
/// [`crate::io::output_spec::OutputSpec`]): `MDSAM_DEFLATE`, else libdeflate.
pub fn deflate_engine() -> Engine {
    static FROM_ENV: OnceLock<Engine> = OnceLock::new();
    *FROM_ENV.get_or_init(|| engine_from_env("MDSAM_DEFLATE").unwrap_or(Engine::Libdeflate))
}

/// Inflates BGZF payloads; one per thread.
pub struct Inflater {
    /// ISA-L's state, when it is the engine.
    isal: Option<IsalInflate>,
    /// Made on first use: with ISA-L it serves only blocks ISA-L refused.
    libdeflate: Option<Decompressor>,
}

impl Default for Inflater {
    fn default() -> Self {
        Self::new()
    }
}

impl Inflater {
    /// An inflater with this process's engine ([`inflate_engine`]).
    pub fn new() -> Self {
        Self::with_engine(inflate_engine())
    }

    pub fn with_engine(engine: Engine) -> Self {
        Inflater { isal: (engine == Engine::Isal).then(IsalInflate::new), libdeflate: None }
    }

    /// ISA-L's answer for a whole gzip member (a BGZF block): its inflated length in `out`, with
    /// CRC32 and ISIZE checked. `None` when ISA-L is not in use or refused the block (bad data,
    /// CRC or ISIZE, `out` too small): the caller then asks libdeflate, whose verdict stands.
    pub fn inflate_checked_member(&mut self, member: &[u8], out: &mut [u8]) -> Option<usize> {
        // FEXTRA alone, as BGZF writes it: ISA-L would also read a name, comment or header CRC
        // that the libdeflate path (DEFLATE data right after the extra field) does not expect.
        if member.get(3) != Some(&4) {
            return None;
        }
        self.isal.as_mut()?.inflate_member(member, out)
    }

    /// libdeflate, for raw DEFLATE data.
    pub fn libdeflate(&mut self) -> &mut Decompressor {
        self.libdeflate.get_or_insert_with(Decompressor::new)
    }
}

/// libdeflate level for a samtools compression level (htslib's `lvl_map`); −1 is the default, 6.
pub fn libdeflate_level(samtools_level: i32) -> i32 {
    const MAP: [i32; 10] = [0, 1, 2, 3, 5, 6, 7, 8, 10, 12];
    let l = if samtools_level < 0 { 6 } else { samtools_level.min(9) };
    MAP[l as usize]
}

/// ISA-L level for a samtools level 1..9 or −1 (default): 1 stays 1 (the fast level, as
/// libdeflate's 1), every other level is ISA-L's best, 3. Level 0 (stored blocks) never gets here.
pub fn isal_level(samtools_level: i32) -> u8 {
    if samtools_level == 1 { 1 } else { 3 }
}

/// Compresses BGZF payloads at one samtools level; one per thread.
pub enum PayloadDeflater {
    /// Level 0: the caller writes stored blocks, whatever the engine.
    Stored,
    Libdeflate(Compressor),
    Isal(IsalDeflate),
}

impl PayloadDeflater {
    /// A deflater with the default engine ([`deflate_engine`]).
    pub fn new(samtools_level: i32) -> Self {
        Self::with_engine(samtools_level, deflate_engine())
    }

    pub fn with_engine(samtools_level: i32, engine: Engine) -> Self {
        if samtools_level == 0 {
            return PayloadDeflater::Stored;
        }
        match engine {
            Engine::Libdeflate => {
                let lvl = libdeflate_level(samtools_level);
                // unwrap_or: levels 1..=12 are always valid for libdeflate.
                PayloadDeflater::Libdeflate(Compressor::new(
                    CompressionLvl::new(lvl).unwrap_or_default(),
                ))
            }
            Engine::Isal => PayloadDeflater::Isal(IsalDeflate::new(isal_level(samtools_level))),
        }
    }

    /// Room [`Self::compress`] may need for `n` bytes (the caller caps it to fit a block); `None`
    /// at level 0, where the caller writes a stored block.
    pub fn bound(&mut self, n: usize) -> Option<usize> {
        match self {
            PayloadDeflater::Stored => None,
            PayloadDeflater::Libdeflate(c) => Some(c.deflate_compress_bound(n)),
            // Stored blocks at worst, 5 bytes each, plus the end of the last one.
            PayloadDeflater::Isal(_) => Some(n + 5 * (n / 0xffff + 1) + 16),
        }
    }

    /// Raw DEFLATE of `data` into the front of `out`: its length, or `None` when it does not fit
    /// and the caller writes a stored block.
    pub fn compress(&mut self, data: &[u8], out: &mut [u8]) -> Option<usize> {
        match self {
            PayloadDeflater::Stored => None,
            PayloadDeflater::Libdeflate(c) => c.deflate_compress(data, out).ok(),
            PayloadDeflater::Isal(c) => c.compress(data, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_levels_like_htslib_and_onto_isal() {
        assert_eq!(libdeflate_level(-1), 7);
        assert_eq!(libdeflate_level(1), 1);
        assert_eq!(libdeflate_level(9), 12);
        assert_eq!(isal_level(1), 1);
        for l in [-1, 2, 6, 9] {
            assert_eq!(isal_level(l), 3);
        }
        assert!(matches!(PayloadDeflater::with_engine(0, Engine::Isal), PayloadDeflater::Stored));
    }

    #[test]
    fn engine_names() {
        assert_eq!(Engine::parse("isal"), Some(Engine::Isal));
        assert_eq!(Engine::parse("ISAL"), Some(Engine::Isal));
        assert_eq!(Engine::parse("libdeflate"), Some(Engine::Libdeflate));
        assert_eq!(Engine::parse("zlib"), None);
    }

    /// Both engines' payloads inflate with both engines; data that does not compress fits.
    #[test]
    fn isal_payload_round_trips() {
        let text: Vec<u8> = (0..0xff00u32).map(|i| b"ACGTN\t"[(i * i % 7 % 6) as usize]).collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..0xff00)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        for data in [&text[..], &noise[..], b"", b"a"] {
            for level in [1, -1, 9] {
                let mut d = PayloadDeflater::with_engine(level, Engine::Isal);
                let mut out = vec![0; d.bound(data.len()).unwrap()];
                let n = d.compress(data, &mut out).expect("fits its bound");
                let mut back = vec![0; data.len() + 1];
                let mut lib = Decompressor::new();
                assert_eq!(lib.deflate_decompress(&out[..n], &mut back).unwrap(), data.len());
                assert_eq!(&back[..data.len()], data);
            }
        }
        // Too little room: no payload, the caller writes a stored block.
        let mut small = vec![0; 100];
        assert_eq!(
            PayloadDeflater::with_engine(-1, Engine::Isal).compress(&noise, &mut small),
            None
        );
    }
}
