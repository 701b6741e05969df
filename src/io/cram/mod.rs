//! CRAM: mdsam's own container reader, record decoder, block codecs and encoder, and the only
//! place mdsam names a noodles crate (containers with fqzcomp blocks are decoded by noodles, and
//! its types carry the header and reference). Records come out as raw BAM records in
//! [`crate::record::Batch`]es, so every command reads CRAM as it reads BAM.
//!
//! - [`reader`]: containers read in order, decoded in parallel, one batch a container;
//! - [`decode`]: mdsam's own record decoder, noodles' where it does not apply;
//! - [`reference`]: where reference bases come from (`-T`, `REF_CACHE`/`REF_PATH`, `UR`);
//! - [`convert`]: noodles' records and header ⇄ mdsam's;
//! - [`htslib_fields`]: what htslib's decoder adds (MD, NM) or drops (cF) beyond the stored data;
//! - [`layout`]: the container fields noodles keeps private;
//! - [`index`]: `.crai` files, for region queries;
//! - [`structure`]: containers, encodings and blocks as `cram-size` lists them;
//! - [`writer`]: CRAM output, containers encoded in parallel; [`file_header`]: its header.
//! - [`block_method`]: each block's compression method; [`rans_nx16_encode`] and
//!   [`tok3_encode`]: CRAM 3.1's rANS Nx16 and name tokeniser encoders (`version=3.1`).

pub mod arith_dynamic;
pub mod block_codecs;
pub mod block_method;
pub mod codec_error;
pub mod consensus;
pub mod container_in;
pub mod container_out;
pub mod context_slots;
pub mod convert;
pub mod decode;
pub mod file_header;
pub mod guard;
pub mod htslib_fields;
pub mod index;
pub mod layout;
pub mod mate_links;
pub mod rans;
pub mod rans4x8_decode;
pub mod rans_nx16;
pub mod rans_nx16_encode;
mod rans_nx16_entropy;
mod rans_nx16_simd;
pub mod reader;
pub mod records_out;
pub mod reference;
pub mod structure;
pub mod tok3;
pub mod tok3_encode;
pub mod varint;
pub mod writer;

pub use reader::{CramError, Reader};
