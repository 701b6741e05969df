//! One BAM record's bytes (`record::view::validate` and `io::bam::reader::validate_record`):
//! the length fields (`l_read_name`, `n_cigar_op`, `l_seq`) and the aux block against the record
//! size, and the reference ids against a two-reference header.
//!
//! Checked beyond "no panic": a record that passes can be read through every `RecordRef`
//! accessor and printed as SAM.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::bam::reader::validate_record;
use mdsam::io::sam::format::format_record;
use mdsam::record::{Header, RecordRef, view};

fuzz_target!(|data: &[u8]| {
    let checked = view::validate(data);
    let with_ids = validate_record(data, 2, 1);
    if checked.is_err() {
        assert!(with_ids.is_err(), "validate_record accepted what validate refused");
        return;
    }
    let record = RecordRef::new(data);
    let _ = (record.ref_id(), record.pos(), record.mapq(), record.bin(), record.flag());
    let _ = (record.next_ref_id(), record.next_pos(), record.tlen(), record.end_pos());
    let _ = (record.read_name(), record.cigar().count(), record.qual(), record.aux_bytes());
    for i in 0..record.l_seq() {
        assert!(record.base_code(i) < 16);
    }
    for field in record.aux() {
        let _ = field.typed();
    }
    if with_ids.is_ok() {
        let header =
            Header::from_sam_text(b"@SQ\tSN:chr1\tLN:5000\n@SQ\tSN:chr2\tLN:3000\n".to_vec())
                .expect("fixed header parses");
        let mut text = Vec::new();
        format_record(&mut text, &record, &header);
        assert_eq!(text.last(), Some(&b'\n'));
    }
});
