//! A whole BAM stream after decompression (`io::bam::Reader`): header, then `block_size`-framed
//! records cut into batches, with records straddling BGZF pieces carried over.
//!
//! The fuzz input is the *inflated* BAM; it is wrapped into stored BGZF blocks
//! (`io::bgzf::plain::PlainAsBgzf`) so the fuzzer spends its time on BAM structure rather than
//! on CRCs. A small piece size makes records cross pieces often.
#![no_main]

#[path = "../shared/bam_stream.rs"]
mod bam_stream;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    bam_stream::read_all(data.to_vec());
});
