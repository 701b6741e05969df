//! BED interval files (`view -L`, `--region-file`), plain or gzipped: intervals by reference name,
//! resolved to reference ids once the header is read.

use crate::error::Error;

/// One BED interval: reference name, 0-based start, end (exclusive).
pub type BedInterval = (Vec<u8>, i64, i64);

/// The intervals of the BED file at `path`, in file order. `#`, `track` and `browser` lines are
/// skipped; a line with only a name and a position is the one base there.
pub fn read_bed(path: &str) -> Result<Vec<BedInterval>, Error> {
    let raw = std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut out)
            .map_err(|e| Error::file(path, e))?;
        out
    } else {
        raw
    };
    let mut t = Vec::new();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty()
            || line.starts_with(b"#")
            || line.starts_with(b"track")
            || line.starts_with(b"browser")
        {
            continue;
        }
        let f: Vec<&[u8]> =
            line.split(|b| *b == b'\t' || *b == b' ').filter(|x| !x.is_empty()).collect();
        let num = |s: &[u8]| std::str::from_utf8(s).ok().and_then(|s| s.parse::<i64>().ok());
        let bad = || Error::file(path, format!("could not parse BED line {}", n + 1));
        let (beg, end) = match f.len() {
            0 => continue,
            1 => return Err(bad()),
            2 => {
                let p = num(f[1]).ok_or_else(bad)?;
                (p - 1, p)
            }
            _ => (num(f[1]).ok_or_else(bad)?, num(f[2]).ok_or_else(bad)?),
        };
        if end < beg {
            return Err(bad());
        }
        t.push((f[0].to_vec(), beg, end));
    }
    Ok(t)
}
