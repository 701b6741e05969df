//! ISA-L's stateless deflate and inflate through its C API (isal-sys, re-exported by isal-rs),
//! with one stream or inflate state per thread, on the heap, reset for every block.
//!
//! Why not isal-rs's safe `compress_into` and `decompress_into`: with `compress_into` the payloads
//! of the same input differed from run to run in a build without LTO (valid, but some blocks 50 %
//! larger; ISA-L itself gives the same bytes whatever the stream held before its init), and both
//! build their state on the stack for every block, an 82 KB stream and a zeroed 340 KB level
//! buffer, or an 87 KB inflate state moved through the stack: that copy made ISA-L's inflate of a
//! block slower than libdeflate's. Here the state starts all zeros on the heap and ISA-L
//! initialises it before each block; deflate output is the same from run to run and at any thread
//! count (tests/codecs.rs).

use isal::isal_sys::igzip_lib as ffi;

/// An ISA-L compressor at one ISA-L level (1..=3).
pub struct IsalDeflate {
    stream: Box<ffi::isal_zstream>,
    level_buf: Vec<u8>,
    level: u32,
}

// SAFETY: the stream's pointers (input, output, level buffer) are set at the start of every
// `compress` to memory that call borrows or this struct owns, and are not used between calls, so
// moving the deflater to another thread moves nothing another thread could still use.
unsafe impl Send for IsalDeflate {}

impl IsalDeflate {
    pub fn new(level: u8) -> Self {
        let (level, size) = match level {
            1 => (1, ffi::ISAL_DEF_LVL1_DEFAULT),
            2 => (2, ffi::ISAL_DEF_LVL2_DEFAULT),
            _ => (3, ffi::ISAL_DEF_LVL3_DEFAULT),
        };
        // SAFETY: `isal_zstream` is plain C data (integers, pointers and arrays of them), for which
        // all zero bytes is a valid value.
        let stream = unsafe { Box::<ffi::isal_zstream>::new_zeroed().assume_init() };
        IsalDeflate { stream, level_buf: vec![0; size as usize], level }
    }

    /// Raw DEFLATE of `data` (one final block) into the front of `out`: its length, or `None`
    /// when it does not fit.
    pub fn compress(&mut self, data: &[u8], out: &mut [u8]) -> Option<usize> {
        let (Ok(avail_in), Ok(avail_out)) = (u32::try_from(data.len()), u32::try_from(out.len()))
        else {
            return None;
        };
        let s = &mut *self.stream;
        // SAFETY: `s` is a valid stream, borrowed exclusively.
        unsafe { ffi::isal_deflate_stateless_init(s) };
        s.level = self.level;
        s.level_buf = self.level_buf.as_mut_ptr();
        s.level_buf_size = self.level_buf.len() as u32;
        s.flush = ffi::NO_FLUSH as u16;
        s.gzip_flag = ffi::IGZIP_DEFLATE as u16;
        s.end_of_stream = 1;
        // ISA-L only reads the input; the pointer is `*mut` in the C struct.
        s.next_in = data.as_ptr().cast_mut();
        s.avail_in = avail_in;
        s.next_out = out.as_mut_ptr();
        s.avail_out = avail_out;
        // SAFETY: next_in/avail_in describe `data`, next_out/avail_out `out` and level_buf/
        // level_buf_size this deflater's buffer (at least ISA-L's default size for the level);
        // all outlive the call and nothing else touches them during it.
        let ret = unsafe { ffi::isal_deflate_stateless(s) };
        clear_upper_vector_state();
        (ret == ffi::COMP_OK as i32).then_some(s.total_out as usize)
    }
}

/// An ISA-L inflater of whole gzip members.
pub struct IsalInflate {
    state: Box<ffi::inflate_state>,
}

// SAFETY: as for `IsalDeflate`: the state's pointers are set by every `inflate_member` to memory
// that call borrows, and are not used between calls.
unsafe impl Send for IsalInflate {}

impl IsalInflate {
    pub fn new() -> Self {
        // SAFETY: `inflate_state` is plain C data (integers, pointers and arrays of them), for
        // which all zero bytes is a valid value.
        let state = unsafe { Box::<ffi::inflate_state>::new_zeroed().assume_init() };
        IsalInflate { state }
    }

    /// Inflates the whole gzip member `member` (header, DEFLATE data, CRC32 and ISIZE, both
    /// checked) into the front of `out`: the inflated length, or `None` when ISA-L refuses it.
    pub fn inflate_member(&mut self, member: &[u8], out: &mut [u8]) -> Option<usize> {
        let (Ok(avail_in), Ok(avail_out)) = (u32::try_from(member.len()), u32::try_from(out.len()))
        else {
            return None;
        };
        let s = &mut *self.state;
        // SAFETY: `s` is a valid state, borrowed exclusively.
        unsafe { ffi::isal_inflate_init(s) };
        s.crc_flag = ffi::ISAL_GZIP;
        // ISA-L only reads the input; the pointer is `*mut` in the C struct.
        s.next_in = member.as_ptr().cast_mut();
        s.avail_in = avail_in;
        s.next_out = out.as_mut_ptr();
        s.avail_out = avail_out;
        // SAFETY: next_in/avail_in describe `member` and next_out/avail_out `out`; both outlive
        // the call and nothing else touches them during it. Gzip header fields are skipped (no
        // header buffers are given).
        let ret = unsafe { ffi::isal_inflate_stateless(s) };
        clear_upper_vector_state();
        // The whole member must be read: ISA-L takes the CRC32 and ISIZE right after the end of
        // the DEFLATE data, BGZF (and libdeflate's path) from the block's last 8 bytes. A block
        // whose DEFLATE data ends early has both, and could pass here while failing there (a
        // fuzzing finding); refused, it goes to libdeflate, whose verdict stands.
        (ret == ffi::ISAL_DECOMP_OK as i32 && s.avail_in == 0).then_some(s.total_out as usize)
    }
}

/// `vzeroupper` where the CPU has AVX: ISA-L's AVX2/AVX-512 assembly returns with the upper
/// halves of the YMM registers dirty, and on this thread every later call into libm's
/// VEX-encoded functions then pays a state transition (`log` 30 times slower: BAQ at half speed).
fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, all that `zero_upper` needs.
        unsafe { zero_upper() }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn zero_upper() {
    std::arch::x86_64::_mm256_zeroupper();
}
