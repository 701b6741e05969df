//! The BAM binary header (`io::bam::reader::decode_header`): magic, `l_text`, text, `n_ref` and
//! the reference list, from inflated bytes.
//!
//! Checked beyond "no panic": a decoded header says how many bytes it used, within the input,
//! and every prefix of those bytes asks for more data instead of failing or decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::bam::reader::decode_header;

fuzz_target!(|data: &[u8]| {
    let Ok(Some((header, used))) = decode_header(data) else { return };
    assert!(used <= data.len());
    for cut in [0, used / 2, used.saturating_sub(1)] {
        if cut < used {
            assert!(matches!(decode_header(&data[..cut]), Ok(None)), "prefix {cut} of {used}");
        }
    }
    let _ = header.sam_text();
});
