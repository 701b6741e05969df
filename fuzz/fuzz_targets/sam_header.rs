//! SAM header text (`record::Header`): parsing `@SQ` lines, then every edit the commands make.
//!
//! Checked beyond "no panic": every `@SQ` name resolves, the BAM encoding of an accepted header
//! decodes to the same references, and an `@HD` line exists after `update_hd`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::bam::reader::decode_header;
use mdsam::record::Header;

fuzz_target!(|data: &[u8]| {
    let Ok(mut header) = Header::from_sam_text(data.to_vec()) else { return };
    for (tid, reference) in header.refs().iter().enumerate() {
        // A duplicated name resolves to one of its references; it must resolve to some.
        let found = header.tid(&reference.name).expect("every @SQ name resolves");
        assert_eq!(header.refs()[found as usize].name, reference.name, "tid {tid}");
    }
    let bam = header.encode_bam();
    let (decoded, used) = decode_header(&bam).expect("own encoding decodes").expect("complete");
    assert_eq!(used, bam.len());
    assert_eq!(decoded.refs(), header.refs());
    let _ = header.sam_text();
    let _ = header.read_group_library(b"rg1");
    header.update_hd(&[("SO", "coordinate")], &["GO", "SS"]);
    header.add_pg("samtools", &[("PN", "samtools"), ("VN", "1.24")]);
    header.add_comment("fuzz");
    header.retain_read_groups(|id| id != b"x");
    let hd_lines = header.lines().filter(|l| l.starts_with(b"@HD")).count();
    assert!(hd_lines >= 1, "update_hd left no @HD line");
});
