//! BGZF framing and inflating (`io::bgzf::block` and `io::bgzf::Reader`): gzip header, `XLEN`,
//! the `BC` subfield's `BSIZE`, DEFLATE data, CRC32 and `ISIZE`.
//!
//! Checked beyond "no panic": a block size is never smaller than a header and footer, the
//! reader's pieces hold at most `BLOCK_MAX` bytes per block, and ISA-L and libdeflate give the
//! same answer (bytes or error) for every block.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdsam::io::bgzf::codec::{Engine, Inflater};
use mdsam::io::bgzf::{self, block};
use mdsam::io::input::Input;

fuzz_target!(|data: &[u8]| {
    if let Ok(size) = block::block_size(data) {
        assert!(size >= 20, "block size {size} has no room for header and footer");
        if let Some(whole) = data.get(..size) {
            let mut isal = Inflater::with_engine(Engine::Isal);
            let mut libdeflate = Inflater::with_engine(Engine::Libdeflate);
            let mut scratch = vec![0; block::BLOCK_MAX];
            let mut other = vec![0; block::BLOCK_MAX];
            let a = block::inflate_unsized(whole, &mut scratch, &mut isal);
            let b = block::inflate_unsized(whole, &mut other, &mut libdeflate);
            assert_eq!(a, b, "ISA-L and libdeflate disagree");
            if let Ok(n) = a {
                assert_eq!(scratch[..n], other[..n], "ISA-L and libdeflate inflate differently");
            }
            let mut exact = vec![0; block::inflated_size(whole).min(block::BLOCK_MAX)];
            let _ = block::inflate(whole, &mut exact, &mut isal);
        }
    }
    let input = Input::from_reader("fuzz", Box::new(std::io::Cursor::new(data.to_vec())));
    let mut reader = bgzf::Reader::new(input, 1 << 16);
    while let Ok(Some(piece)) = reader.read_piece(Vec::new()) {
        if piece.blocks.is_empty() {
            break;
        }
        assert!(piece.data.len() <= piece.blocks.len() * block::BLOCK_MAX);
    }
});
