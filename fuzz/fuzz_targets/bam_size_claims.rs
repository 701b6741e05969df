//! BAM records whose size fields lie (`block_size`, `l_read_name`, `n_cigar_op`, `l_seq`),
//! through `io::bam::Reader` as in `bam_stream`: a claim must be refused or read within the
//! bytes there are, never trusted for an allocation (run.sh's 2 GiB RSS limit catches that).
#![no_main]

#[path = "../shared/bam_stream.rs"]
mod bam_stream;

#[path = "../shared/size_claims.rs"]
mod size_claims;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    bam_stream::read_all(size_claims::bam_with_size_claims(data));
});
