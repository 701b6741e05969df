//! BAM streams whose records lie about their sizes, built from fuzz bytes: each record is a
//! valid one (name, CIGAR, SEQ, QUAL) with one size field replaced by a claim taken from the
//! input (`block_size`, `l_read_name`, `n_cigar_op` or `l_seq`) and arbitrary bytes appended.
//! Shared by the `bam_size_claims` fuzz target and `tests/resource_limits.rs`.

/// The uncompressed BAM: a header with one 1000-base reference, then the records `data` asks
/// for, 6 bytes a record (`kind`, a little-endian claim, how many bytes of `data` follow).
pub fn bam_with_size_claims(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"BAM\x01");
    out.extend_from_slice(&0u32.to_le_bytes()); // l_text
    out.extend_from_slice(&1u32.to_le_bytes()); // n_ref
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(b"c\0");
    out.extend_from_slice(&1000u32.to_le_bytes());
    let mut rest = data;
    while rest.len() >= 6 {
        let (kind, claim, extra) =
            (rest[0], u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]), rest[5] as usize);
        rest = &rest[6..];
        let extra = &rest[..extra.min(rest.len())];
        rest = &rest[extra.len()..];
        push_record(&mut out, kind % 5, claim, extra);
    }
    out
}

/// A valid 4M record at position 10, then `claim` written over the field `field` picks (4:
/// none), then `extra` appended (counted in `block_size` unless that is the lying field).
fn push_record(out: &mut Vec<u8>, field: u8, claim: u32, extra: &[u8]) {
    let mut body = Vec::new();
    body.extend_from_slice(&0i32.to_le_bytes()); // refID
    body.extend_from_slice(&10i32.to_le_bytes()); // pos
    body.push(2); // l_read_name
    body.push(60); // mapq
    body.extend_from_slice(&4680u16.to_le_bytes()); // bin
    body.extend_from_slice(&1u16.to_le_bytes()); // n_cigar_op
    body.extend_from_slice(&0u16.to_le_bytes()); // flag
    body.extend_from_slice(&4u32.to_le_bytes()); // l_seq
    body.extend_from_slice(&(-1i32).to_le_bytes()); // next refID
    body.extend_from_slice(&(-1i32).to_le_bytes()); // next pos
    body.extend_from_slice(&0i32.to_le_bytes()); // tlen
    body.extend_from_slice(b"r\0");
    body.extend_from_slice(&(4u32 << 4).to_le_bytes()); // 4M
    body.extend_from_slice(&[0x12, 0x48]); // ACGT
    body.extend_from_slice(&[30; 4]);
    body.extend_from_slice(extra);
    match field {
        1 => body[8] = claim as u8,
        2 => body[12..14].copy_from_slice(&(claim as u16).to_le_bytes()),
        3 => body[16..20].copy_from_slice(&claim.to_le_bytes()),
        _ => {}
    }
    let block_size = if field == 0 { claim } else { body.len() as u32 };
    out.extend_from_slice(&block_size.to_le_bytes());
    out.extend_from_slice(&body);
}
