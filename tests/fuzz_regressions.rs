//! The inputs fuzzing found crashes with (`fuzz/regressions/<target>/`, see `fuzz/README.md`),
//! replayed through the library functions their fuzz target calls, with the target's checks.
//! CI does not fuzz; these keep the findings fixed.

use std::path::Path;

use mdsam::io::bam::reader::decode_header;
use mdsam::io::sam::format::format_record;
use mdsam::io::sam::parse::parse_line;
use mdsam::record::{Batch, Header, view};

fn regressions(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target);
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("directory entry").path();
            let bytes = std::fs::read(&path).expect("read regression input");
            (path.display().to_string(), bytes)
        })
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    inputs
}

fn two_references() -> Header {
    Header::from_sam_text(b"@SQ\tSN:chr1\tLN:5000\n@SQ\tSN:chr2\tLN:3000\n".to_vec())
        .expect("fixed header parses")
}

/// A line the SAM parser accepts is a valid BAM record that prints as SAM.
#[test]
fn sam_line_findings() {
    let header = two_references();
    for (name, data) in regressions("sam_line") {
        let mut warnings = Vec::new();
        let mut refused = 0;
        for line in data.split(|&b| b == b'\n') {
            let mut batch = Batch::default();
            if parse_line(line, &header, &mut batch, &mut warnings).is_err() {
                refused += 1;
                continue;
            }
            view::validate(&batch.framed(0)[4..])
                .unwrap_or_else(|e| panic!("{name}: parsed record is invalid: {e}"));
            format_record(&mut Vec::new(), &batch.get(0), &header);
        }
        assert!(refused > 0, "{name}: the line with the NUL byte was accepted");
    }
}

/// Reference names survive the BAM reference list.
#[test]
fn sam_header_findings() {
    for (name, data) in regressions("sam_header") {
        let Ok(header) = Header::from_sam_text(data) else { continue };
        let bam = header.encode_bam();
        let (decoded, _) = decode_header(&bam).expect("decodes").expect("complete");
        assert_eq!(decoded.refs(), header.refs(), "{name}");
    }
}

/// A lying reference count neither aborts on allocation nor decodes.
#[test]
fn bam_header_findings() {
    for (name, data) in regressions("bam_header") {
        if let Ok(Some((_, used))) = decode_header(&data) {
            assert!(used <= data.len(), "{name}");
        }
    }
}

/// ISA-L and libdeflate give the same answer (bytes or error) for every BGZF block, as the
/// `bgzf_block` target checks.
#[test]
fn bgzf_block_findings() {
    use mdsam::io::bgzf::block;
    use mdsam::io::bgzf::codec::{Engine, Inflater};
    for (name, data) in regressions("bgzf_block") {
        let Ok(size) = block::block_size(&data) else { continue };
        let Some(whole) = data.get(..size) else { continue };
        let (mut isal, mut libdeflate) =
            (Inflater::with_engine(Engine::Isal), Inflater::with_engine(Engine::Libdeflate));
        let (mut a, mut b) = (vec![0; block::BLOCK_MAX], vec![0; block::BLOCK_MAX]);
        let by_isal = block::inflate_unsized(whole, &mut a, &mut isal);
        let by_libdeflate = block::inflate_unsized(whole, &mut b, &mut libdeflate);
        assert_eq!(by_isal, by_libdeflate, "{name}: ISA-L and libdeflate disagree");
        if let Ok(n) = by_isal {
            assert_eq!(a[..n], b[..n], "{name}");
        }
    }
}
