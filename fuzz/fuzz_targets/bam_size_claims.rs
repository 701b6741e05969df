//! BAM records whose size fields lie (`block_size`, `l_read_name`, `n_cigar_op`, `l_seq`),
//! through `io::bam::Reader` as in `bam_stream`: a claim must be refused or read within the
//! bytes there are, never trusted for an allocation (run.sh's 2 GiB RSS limit catches that).
#![no_main]

#[path = "../shared/size_claims.rs"]
mod size_claims;

use libfuzzer_sys::fuzz_target;
use mdsam::io::bam;
use mdsam::io::bgzf::{self, plain::PlainAsBgzf};
use mdsam::io::input::Input;
use mdsam::io::sam::format::format_record;

fuzz_target!(|data: &[u8]| {
    let stream = size_claims::bam_with_size_claims(data);
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
});
