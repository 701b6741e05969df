//! Fetching a region through the index: htslib's `fai_retrieve`, from a file read at offsets
//! ([`super::source::Source`]) or from bytes already in memory ([`InMemory`]).

use super::index::Entry;

/// What [`retrieve`] reads from: htslib's `bgzf_useek` and `bgzf_read_small`.
pub trait Seekable {
    /// Moves to the uncompressed `offset`.
    fn seek(&mut self, offset: u64) -> std::io::Result<()>;
    /// Up to `n` bytes into `out`; fewer only at the end or on an error.
    fn read_small(&mut self, out: &mut [u8], n: usize) -> usize;
}

/// A file's bytes already in memory, read as a file would be.
pub struct InMemory<'a> {
    pub bytes: &'a [u8],
    pub pos: usize,
}

impl Seekable for InMemory<'_> {
    fn seek(&mut self, offset: u64) -> std::io::Result<()> {
        self.pos = usize::try_from(offset).unwrap_or(usize::MAX);
        Ok(())
    }

    fn read_small(&mut self, out: &mut [u8], n: usize) -> usize {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        let got = n.min(rest.len());
        out[..got].copy_from_slice(&rest[..got]);
        self.pos += got;
        got
    }
}

/// Why a fetch failed: htslib's error line (`len` -1, never ignored by `--continue`).
pub type FetchError = String;

/// `fai_retrieve`: `end - beg` bytes of the sequence (or quality) that starts at `offset`,
/// with the line ends taken out by the index's layout, not by looking at the bytes.
///
/// The buffer grows with what is read (htslib allocates the whole region first), so a `.fai`
/// that claims more than the file holds fails at the end of the file, not in the allocator.
pub fn retrieve(
    source: &mut impl Seekable,
    entry: &Entry,
    offset: u64,
    beg: i64,
    end: i64,
) -> Result<Vec<u8>, FetchError> {
    if entry.line_bases == 0 || entry.line_width < entry.line_bases {
        // htslib checks only for 0; a line shorter than its bases would overrun its buffer.
        return Err(format!(
            "[E::fai_retrieve] Invalid line length in index: {}",
            entry.line_bases
        ));
    }
    let (blen, llen) = (u64::from(entry.line_bases), u64::from(entry.line_width));
    let beg = beg.max(0) as u64;
    let start = offset.wrapping_add(beg / blen * llen + beg % blen);
    if source.seek(start).is_err() {
        return Err("[E::fai_retrieve] Failed to retrieve block. (Seeking in a compressed, .gzi unindexed, file?)".into());
    }
    let total = (end.max(0) as u64).saturating_sub(beg);
    let mut out = Vec::with_capacity(total.min(1 << 26) as usize);
    let mut buf = Vec::new();
    let first_bases = blen - beg % blen;
    if total <= first_bases {
        // Inside one line.
        read_lines(source, &mut buf, &mut out, 1, total, total)?;
        return Ok(out);
    }
    // The first (partial) line with its end, the whole lines, then the rest of the last.
    read_lines(source, &mut buf, &mut out, 1, llen - beg % blen, first_bases)?;
    let mut whole_lines = (total - first_bases - 1) / blen;
    let last = total - first_bases - whole_lines * blen;
    // htslib reads a line a call; a batch of lines a call made whole-sequence fetches twice as
    // fast (the commit that made it says what was measured).
    let batch_lines = ((1 << 20) / llen).max(1);
    while whole_lines > 0 {
        let lines = whole_lines.min(batch_lines);
        read_lines(source, &mut buf, &mut out, lines, llen, blen)?;
        whole_lines -= lines;
    }
    read_lines(source, &mut buf, &mut out, 1, last, last)?;
    Ok(out)
}

/// Reads `lines` lines of `width` bytes and keeps the first `keep` bytes of each; a line cut
/// short is htslib's error (nothing of it read: the end of the file).
fn read_lines(
    source: &mut impl Seekable,
    buf: &mut Vec<u8>,
    out: &mut Vec<u8>,
    lines: u64,
    width: u64,
    keep: u64,
) -> Result<(), FetchError> {
    if width == 0 {
        return Ok(());
    }
    buf.resize((lines * width) as usize, 0);
    let want = buf.len();
    let got = source.read_small(buf, want) as u64;
    for line in buf[..(got / width * width) as usize].chunks_exact(width as usize) {
        out.extend_from_slice(&line[..keep as usize]);
    }
    if got < lines * width {
        let why =
            if got.is_multiple_of(width) { "unexpected end of file" } else { "error reading file" };
        return Err(format!("[E::fai_retrieve] Failed to retrieve block: {why}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::source::Source;
    use super::*;

    #[test]
    fn retrieve_follows_the_line_layout_and_fails_past_the_end() {
        let path = std::env::temp_dir().join(format!("mdsam-retrieve-{}.fa", std::process::id()));
        std::fs::write(&path, b">a\nACGTACGTAC\nGTac\n").unwrap();
        let mut source = Source::plain(std::fs::File::open(&path).unwrap());
        let entry = |len, line_bases, line_width| Entry {
            name: b"a".to_vec(),
            len,
            seq_offset: 3,
            line_bases,
            line_width,
            qual_offset: 0,
        };
        let e = entry(14, 10, 11);
        assert_eq!(retrieve(&mut source, &e, 3, 8, 13).unwrap(), b"ACGTa");
        assert_eq!(retrieve(&mut source, &e, 3, 0, 14).unwrap(), b"ACGTACGTACGTac");
        let too_long = entry(1 << 50, 10, 11);
        let err = retrieve(&mut source, &too_long, 3, 0, 1 << 50).unwrap_err();
        assert!(err.contains("Failed to retrieve block"), "{err}");
        let err = retrieve(&mut source, &entry(14, 10, 4), 3, 0, 14).unwrap_err();
        assert!(err.contains("Invalid line length"), "{err}");
        let _ = std::fs::remove_file(&path);
        let bytes = b">a\nACGTACGTAC\nGTac\n";
        let mut memory = InMemory { bytes, pos: 0 };
        assert_eq!(retrieve(&mut memory, &e, 3, 8, 13).unwrap(), b"ACGTa");
        assert!(retrieve(&mut memory, &too_long, 3, 0, 1 << 50).is_err());
    }
}
