//! Reads a whole BAM stream (plain bytes, framed as BGZF blocks) through `io::bam::Reader` and
//! formats every record as SAM, as `view` would: shared by the `bam_stream` and
//! `bam_size_claims` targets.

use mdsam::io::bam;
use mdsam::io::bgzf::{self, plain::PlainAsBgzf};
use mdsam::io::input::Input;
use mdsam::io::sam::format::format_record;

pub fn read_all(stream: Vec<u8>) {
    let wrapped = PlainAsBgzf::new(std::io::Cursor::new(stream));
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
}
