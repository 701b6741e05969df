//! One BAM record → one FASTQ or FASTA entry, byte for byte as htslib's `fastq_format1` (what
//! `samtools fastq` and `fasta` write through `sam_write1`).
//!
//! - The name gets the UMI (`-U`), then `/1` or `/2` (`rnum`, paired reads only), then the
//!   CASAVA comment (`-i`), then the chosen aux tags as SAM text, each after a tab.
//! - A reverse-strand read is reverse-complemented (`=` becomes `!`, as htslib's table has it)
//!   and its qualities reversed; missing qualities (0xff) print as `B`.

use crate::io::fastq::style::{AuxChoice, FastqStyle};
use crate::io::sam::format::{push_aux_field, push_seq};
use crate::record::RecordRef;
use crate::record::layout::flags;

/// htslib's complement of each 4-bit base code.
const COMPLEMENT_CODES: &[u8; 16] = b"!TGKCYSBAWRDMHVN";

/// Appends the entry for `r` (its last line ended).
pub fn format_entry(out: &mut Vec<u8>, r: &RecordRef<'_>, style: &FastqStyle) {
    let flag = r.flag();
    let len = r.l_seq();
    out.reserve(2 * len + r.read_name().len() + 16);
    out.push(if style.fasta { b'>' } else { b'@' });
    let name_start = out.len();
    out.extend_from_slice(r.read_name());
    if !style.umi_tags.is_empty() {
        push_umi(out, name_start, r, &style.umi_tags);
    }
    if style.rnum && flag & flags::PAIRED != 0 {
        match flag & (flags::READ1 | flags::READ2) {
            flags::READ1 => out.extend_from_slice(b"/1"),
            flags::READ2 => out.extend_from_slice(b"/2"),
            _ => {}
        }
    }
    if style.casava {
        push_casava(out, r, style.barcode_tag);
    }
    if style.aux != AuxChoice::None {
        for f in r.aux().filter(|f| style.aux.wants(f.tag)) {
            out.push(b'\t');
            push_aux_field(out, &f);
        }
    }
    out.push(b'\n');
    let reverse = flag & flags::REVERSE != 0;
    if reverse {
        push_reverse_complement(out, r.seq_packed(), len);
    } else {
        push_seq(out, r.seq_packed(), len);
    }
    if !style.fasta {
        out.extend_from_slice(b"\n+\n");
        let qual = r.qual();
        if qual.first() == Some(&0xff) {
            out.extend(std::iter::repeat_n(b'B', len));
        } else if reverse {
            out.extend(qual.iter().rev().map(|q| q.wrapping_add(33)));
        } else {
            out.extend(qual.iter().map(|q| q.wrapping_add(33)));
        }
    }
    out.push(b'\n');
}

/// Per packed byte, its two bases complemented and in reverse order.
const REVERSE_COMPLEMENT_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [COMPLEMENT_CODES[i & 0xf], COMPLEMENT_CODES[i >> 4]];
        i += 1;
    }
    t
};

/// Appends the reverse complement of the `len` bases of `packed`, a byte (two bases) a step.
fn push_reverse_complement(out: &mut Vec<u8>, packed: &[u8], len: usize) {
    let at = out.len();
    out.resize(at + packed.len() * 2, 0);
    for (pair, &b) in out[at..].as_chunks_mut::<2>().0.iter_mut().zip(packed.iter().rev()) {
        *pair = REVERSE_COMPLEMENT_PAIRS[b as usize];
    }
    // An odd length's last byte holds padding in its low half: the first letter written.
    if len % 2 == 1 {
        out.remove(at);
    }
    out.truncate(at + len);
}

/// `:UMI` after the name, before any `#index` that ends it; the UMI upper-cased, with `+` for
/// anything but letters.
fn push_umi(out: &mut Vec<u8>, name_start: usize, r: &RecordRef<'_>, tags: &[[u8; 2]]) {
    const MAX_PLEX: usize = 255;
    // The last `:` or `#` of the name: a `#` starts the multiplex suffix kept after the UMI.
    let plex_at = out[name_start..]
        .iter()
        .rposition(|&c| c == b':' || c == b'#')
        .map(|i| name_start + i)
        .filter(|&at| out[at] == b'#' && out.len() - at < MAX_PLEX);
    let plex = plex_at.map(|at| out.split_off(at));
    let umi = tags.iter().find_map(|&t| r.aux_get(t));
    if let Some(f) = umi.filter(|f| f.ty == b'Z') {
        out.push(b':');
        out.extend(
            f.value
                .iter()
                .map(|&c| if c.is_ascii_alphabetic() { c.to_ascii_uppercase() } else { b'+' }),
        );
    }
    if let Some(plex) = plex {
        out.extend_from_slice(&plex);
    }
}

/// ` READ:FILTERED:0:BARCODE`; a barcode that does not start with a letter is `0`.
fn push_casava(out: &mut Vec<u8>, r: &RecordRef<'_>, barcode_tag: [u8; 2]) {
    let flag = r.flag();
    let rnum = if flag & flags::READ1 != 0 {
        b'1'
    } else if flag & flags::READ2 != 0 {
        b'2'
    } else {
        b'0'
    };
    let filtered = if flag & flags::QCFAIL != 0 { b'Y' } else { b'N' };
    out.extend_from_slice(&[b' ', rnum, b':', filtered, b':', b'0', b':']);
    match r.aux_get(barcode_tag) {
        Some(f) if f.ty == b'Z' && f.value.first().is_some_and(u8::is_ascii_alphabetic) => out
            .extend(
                f.value
                    .iter()
                    .map(|&c| if c.is_ascii_alphabetic() { c.to_ascii_uppercase() } else { b'+' }),
            ),
        Some(_) => {
            eprintln!("[W::fastq_format1] BC tag starts with non-sequence base; using '0'");
            out.push(b'0');
        }
        None => out.push(b'0'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::layout::SEQ_NT16;

    #[test]
    fn reverse_reads_are_reverse_complemented() {
        let mut b = vec![0u8; crate::record::layout::FIXED_LEN];
        b[crate::record::layout::L_READ_NAME] = 2;
        b[crate::record::layout::FLAG..][..2].copy_from_slice(&0x51u16.to_le_bytes());
        b[crate::record::layout::L_SEQ..][..4].copy_from_slice(&3i32.to_le_bytes());
        b.extend_from_slice(b"r\0");
        b.push(SEQ_NT16[b'A' as usize] << 4 | SEQ_NT16[b'C' as usize]);
        b.push(SEQ_NT16[b'=' as usize] << 4);
        b.extend_from_slice(&[0, 1, 2]);
        let style = FastqStyle { rnum: true, ..FastqStyle::default() };
        let mut out = Vec::new();
        format_entry(&mut out, &RecordRef::new(&b), &style);
        assert_eq!(out, b"@r/1\n!GT\n+\n#\"!\n");
    }
}
