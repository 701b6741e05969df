//! A whole BAM stream after decompression (`io::bam::Reader`): header, then `block_size`-framed
//! records cut into batches, with records straddling BGZF pieces carried over.
//!
//! The fuzz input is the *inflated* BAM; it is wrapped into stored BGZF blocks
//! (`io::bgzf::plain::PlainAsBgzf`) so the fuzzer spends its time on BAM structure rather than
//! on CRCs. A small piece size makes records cross pieces often.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::bam;
use mdsam::io::bgzf::{self, plain::PlainAsBgzf};
use mdsam::io::input::Input;
use mdsam::io::sam::format::format_record;

fuzz_target!(|data: &[u8]| {
    let wrapped = PlainAsBgzf::new(std::io::Cursor::new(data.to_vec()));
    let blocks = Input::from_reader("fuzz", Box::new(wrapped));
    let Ok((mut reader, header)) = bam::Reader::new(bgzf::Reader::new(blocks, 4096)) else {
        return;
    };
    let mut text = Vec::new();
    while let Ok(Some(batch)) = reader.read_batch() {
        for record in batch.iter() {
            text.clear();
            format_record(&mut text, &record, &header);
        }
    }
});
