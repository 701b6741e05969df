//! SAM text lines → BAM records (`io::sam::parse::parse_line`).
//!
//! Input: SAM lines against a fixed two-reference header. Checked beyond "no panic":
//! - every record the parser accepts passes `record::view::validate` (the BAM reader's check);
//! - SAM printed from it parses again and prints the same text (format ∘ parse is a fixpoint).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::sam::format::format_record;
use mdsam::io::sam::parse::parse_line;
use mdsam::record::{Batch, Header, view};

fn header() -> Header {
    Header::from_sam_text(b"@SQ\tSN:chr1\tLN:5000\n@SQ\tSN:chr2\tLN:3000\n".to_vec())
        .expect("fixed header parses")
}

/// The SAM line of the only record in `batch`, without its newline.
fn format_single(batch: &Batch, header: &Header) -> Vec<u8> {
    let mut text = Vec::new();
    format_record(&mut text, &batch.get(0), header);
    assert_eq!(text.pop(), Some(b'\n'));
    text
}

fuzz_target!(|data: &[u8]| {
    let header = header();
    let mut warnings = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        let mut batch = Batch::default();
        if parse_line(line, &header, &mut batch, &mut warnings).is_err() {
            assert!(batch.is_empty(), "a rejected line left a record behind");
            continue;
        }
        assert_eq!(batch.len(), 1);
        view::validate(&batch.framed(0)[4..]).expect("parsed record is a valid BAM record");
        let first = format_single(&batch, &header);
        let mut again = Batch::default();
        parse_line(&first, &header, &mut again, &mut warnings)
            .unwrap_or_else(|e| panic!("printed line does not parse: {e}"));
        assert_eq!(format_single(&again, &header), first, "printing is not a fixpoint");
    }
});
