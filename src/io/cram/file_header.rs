//! The start of a CRAM file as htslib writes it (`cram_write_SAM_hdr`): the file definition,
//! then a container holding the SAM header text and a blank block that leaves room for
//! `samtools reheader` to edit it in place. The `@SQ` lines get the `M5` (and, with `-T`, the
//! `UR`) that htslib adds. Written here rather than by noodles, whose header parser refuses what
//! htslib accepts (a duplicate `@RG` ID, for one) and whose writer re-formats the text.

use md5::{Digest, Md5};

use super::varint::itf8;
use crate::record::Header;
use crate::record::header::line_field;

/// CRAM's block content type for the SAM header (spec §8.1).
const FILE_HEADER: u8 = 0;

/// The file definition (magic, version, 20-byte file id: htslib puts the output's name there).
pub fn file_definition(version: (u8, u8), name: &str) -> Vec<u8> {
    let mut out = b"CRAM".to_vec();
    out.extend_from_slice(&[version.0, version.1]);
    let mut id = [0u8; 20];
    let n = name.len().min(20);
    id[..n].copy_from_slice(&name.as_bytes()[..n]);
    out.extend_from_slice(&id);
    out
}

/// A reference's `M5` by name, or why it has none.
pub type M5Of<'a> = dyn Fn(&[u8]) -> Result<String, String> + 'a;

/// `text` with `M5` appended to each `@SQ` line that lacks it and, when a FASTA was named with
/// `-T`, `UR` set to its absolute path, as htslib edits the header it writes. A sequence found
/// nowhere is an error naming it (htslib would embed a consensus instead, which mdsam cannot).
/// Without `m5_of` (`no_ref`: htslib reads no reference) the lines are copied as they are.
pub fn with_checksums(
    header: &Header,
    m5_of: Option<&M5Of<'_>>,
    fasta: Option<&str>,
) -> Result<Vec<u8>, String> {
    let ur = fasta.filter(|_| m5_of.is_some()).map(absolute_path);
    let text = header.sam_text();
    let mut out = Vec::with_capacity(text.len() + 64 * header.refs().len());
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    for line in text[..end].split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Some(name) = line.starts_with(b"@SQ\t").then(|| line_field(line, b"SN")).flatten()
        else {
            out.extend_from_slice(line);
            out.push(b'\n');
            continue;
        };
        let mut edited = line.to_vec();
        if let Some(m5_of) = m5_of
            && line_field(line, b"M5").is_none()
        {
            edited.extend_from_slice(b"\tM5:");
            edited.extend_from_slice(m5_of(name)?.as_bytes());
        }
        if let Some(ur) = &ur {
            edited = set_field(&edited, b"UR", ur.as_bytes());
        }
        out.extend_from_slice(&edited);
        out.push(b'\n');
    }
    Ok(out)
}

/// The MD5 of upper-case reference bases (the finder upper-cases them), as slice headers hold it.
pub fn md5(bases: &[u8]) -> [u8; 16] {
    Md5::digest(bases).into()
}

/// [`md5`] as CRAM's `M5` spells it: lower-case hex.
pub fn md5_hex(bases: &[u8]) -> String {
    md5(bases).iter().map(|b| format!("{b:02x}")).collect()
}

/// `line` with tag `key` set to `value`: in place when present, appended otherwise.
fn set_field(line: &[u8], key: &[u8; 2], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + value.len() + 4);
    let mut found = false;
    for (i, field) in line.split(|&b| b == b'\t').enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        if i > 0 && field.len() >= 3 && &field[..2] == key && field[2] == b':' {
            out.extend_from_slice(&field[..3]);
            out.extend_from_slice(value);
            found = true;
        } else {
            out.extend_from_slice(field);
        }
    }
    if !found {
        out.push(b'\t');
        out.extend_from_slice(key);
        out.push(b':');
        out.extend_from_slice(value);
    }
    out
}

/// htslib's `full_path`: a relative name is joined to the working directory.
fn absolute_path(path: &str) -> String {
    if path.starts_with('/') {
        return path.to_string();
    }
    match std::env::current_dir() {
        Ok(dir) => format!("{}/{path}", dir.display()),
        Err(_) => path.to_string(),
    }
}

/// The header container of a CRAM `major`.x file: the text in a block, then a blank raw
/// block of half its size (at most 10 000 bytes), as htslib leaves room to rewrite the header
/// in place. CRAM 2.1 has no CRC32s (its zero record counter is one byte either way).
///
/// From CRAM 3.0 the text block is gzip-compressed when that makes it smaller, as htslib's
/// `cram_write_SAM_hdr` does: a raw block made peer cases cramsize-01…05 (a 138 KB header)
/// 233 KB against samtools' 93 KB.
pub fn header_container(text: &[u8], major: u8) -> Vec<u8> {
    let crc = major >= 3;
    let mut data = (text.len() as i32).to_le_bytes().to_vec();
    data.extend_from_slice(text);
    let first = match crc.then(|| gzip(&data)).flatten() {
        Some(packed) if packed.len() < data.len() => {
            block(FILE_HEADER, GZIP, &packed, data.len(), crc)
        }
        _ => block(FILE_HEADER, RAW, &data, data.len(), crc),
    };
    let blank = vec![0; (first.len() / 2).min(10_000)];
    let blank = block(FILE_HEADER, RAW, &blank, blank.len(), crc);
    let mut fields = Vec::new();
    for value in [0, 0, 0, 0] {
        itf8(&mut fields, value); // reference id, start, span, record count
    }
    fields.extend_from_slice(&[0, 0]); // record counter and base count (LTF8 zero)
    itf8(&mut fields, 2); // blocks
    itf8(&mut fields, 2); // landmarks: where each block starts
    itf8(&mut fields, 0);
    itf8(&mut fields, first.len() as i32);
    let mut out = ((first.len() + blank.len()) as i32).to_le_bytes().to_vec();
    out.extend_from_slice(&fields);
    if crc {
        out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
    }
    out.extend_from_slice(&first);
    out.extend_from_slice(&blank);
    out
}

const RAW: u8 = 0;
const GZIP: u8 = 1;

/// `data` gzip-compressed (htslib's default level, 5); `None` if that fails.
fn gzip(data: &[u8]) -> Option<Vec<u8>> {
    let level = libdeflater::CompressionLvl::new(5).ok()?;
    let mut compressor = libdeflater::Compressor::new(level);
    let mut out = vec![0; compressor.gzip_compress_bound(data.len())];
    let n = compressor.gzip_compress(data, &mut out).ok()?;
    out.truncate(n);
    Some(out)
}

/// A block of `raw_len` bytes stored as `data` by `method`, with its CRC32 when `crc` (CRAM
/// 3.x).
fn block(content_type: u8, method: u8, data: &[u8], raw_len: usize, crc: bool) -> Vec<u8> {
    let mut out = vec![method, content_type];
    itf8(&mut out, 0); // content id
    itf8(&mut out, data.len() as i32); // compressed size
    itf8(&mut out, raw_len as i32); // raw size
    out.extend_from_slice(data);
    if crc {
        out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_container_reads_back_through_mdsam_reader() {
        let text = b"@HD\tVN:1.6\n@SQ\tSN:c\tLN:4\tM5:x\n".to_vec();
        let mut file = file_definition((3, 0), "out.cram");
        file.extend_from_slice(&header_container(&text, 3));
        file.extend_from_slice(crate::io::cram_header::eof_template(3, 0).unwrap());
        let ((major, minor), header) = crate::io::cram_header::read(&file).unwrap();
        assert_eq!((major, minor), (3, 0));
        assert_eq!(header.text(), &text[..]);
    }

    #[test]
    fn fields_are_replaced_in_place_or_appended() {
        assert_eq!(
            set_field(b"@SQ\tSN:a\tUR:x\tLN:1", b"UR", b"/r.fa"),
            b"@SQ\tSN:a\tUR:/r.fa\tLN:1"
        );
        assert_eq!(set_field(b"@SQ\tSN:a\tLN:1", b"UR", b"/r.fa"), b"@SQ\tSN:a\tLN:1\tUR:/r.fa");
    }

    #[test]
    fn md5_is_lower_case_hex() {
        assert_eq!(md5_hex(b"ACGT"), "f1f8f4bf413b16ad135722aa4591043e");
    }
}
