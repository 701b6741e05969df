//! A whole CRAM 2.1/3.x file (`io::cram::Reader`): file definition, header container, then data
//! containers, their compression headers, slices, blocks (every codec) and records.
//!
//! Each input is read four ways, as the commands read CRAM: every field (`view`), without bases
//! (no reference fetched), flags only (`view -c`, `flagstat`), and slice headers alone (`index`).
//! No reference is given, so mapped slices that need one fail early in the first way; the other
//! ways decode them. Checked beyond "no panic, no sanitizer report": every decoded record prints
//! as SAM, and a header's record count never sizes an allocation (the RSS limit).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::cram::Reader;
use mdsam::io::input::Input;
use mdsam::io::input_spec::InputSpec;
use mdsam::io::sam::format::format_record;

fuzz_target!(|data: &[u8]| {
    for way in 0..4 {
        let input = Input::from_reader("fuzz.cram", Box::new(std::io::Cursor::new(data.to_vec())));
        let Ok((mut reader, header)) = Reader::new(input, InputSpec::new(1, None)) else {
            return;
        };
        match way {
            1 => reader.without_bases(),
            2 => reader.flags_only(),
            3 => {
                let _ = reader.slices();
                continue;
            }
            _ => {}
        }
        let mut text = Vec::new();
        while let Ok(Some(batches)) = reader.read_batches() {
            for batch in &batches {
                for record in batch.iter() {
                    text.clear();
                    format_record(&mut text, &record, &header);
                }
            }
        }
    }
});
