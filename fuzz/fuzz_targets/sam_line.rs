//! SAM text lines → BAM records (`io::sam::parse::parse_line`).
//!
//! Input: SAM lines against a fixed two-reference header. Checked beyond "no panic":
//! - every record the parser accepts passes `record::view::validate` (the BAM reader's check);
//! - SAM printed from it parses again and prints the same text (format ∘ parse is a fixpoint);
//! - one `LineParser` reused across the lines (as the reader uses it, with its reference cache)
//!   gives the same records and warnings as a fresh parse of each line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::sam::format::format_record;
use mdsam::io::sam::parse::{LineParser, parse_line};
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
    let mut reused = LineParser::new(&header);
    for line in data.split(|&b| b == b'\n') {
        let mut batch = Batch::default();
        let fresh = parse_line(line, &header, &mut batch, &mut warnings);
        if !line.contains(&0) {
            let (mut same, mut same_warnings) = (Batch::default(), Vec::new());
            let mut fresh_warnings = Vec::new();
            let again = parse_line(line, &header, &mut Batch::default(), &mut fresh_warnings);
            let reused_result = reused.parse(line, &mut same, &mut same_warnings);
            assert_eq!(reused_result.is_ok(), again.is_ok(), "a reused parser decided otherwise");
            assert_eq!(same_warnings, fresh_warnings, "a reused parser warned otherwise");
            if fresh.is_ok() {
                assert_eq!(same.framed(0), batch.framed(0), "a reused parser encoded otherwise");
            }
        }
        if fresh.is_err() {
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
