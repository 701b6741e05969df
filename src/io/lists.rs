//! Word-list files: the read names of `view -N`, the read groups of `view -R` and the tag values
//! of `view -D`, and the file names of `cat -b`, read whole as samtools reads them.

use crate::error::Error;

/// The whitespace-separated words of the file at `path` (`-N`, `-R`).
pub fn read_words(path: &str) -> Result<Vec<Vec<u8>>, Error> {
    Ok(split_words(&read(path)?, |b| b.is_ascii_whitespace()))
}

/// The values of a `-D TAG:FILE` file: words separated by whitespace or `;`.
pub fn read_tag_values(path: &str) -> Result<Vec<Vec<u8>>, Error> {
    Ok(split_words(&read(path)?, |b| b.is_ascii_whitespace() || b == b';'))
}

/// The non-empty lines of a list file, as htslib's `hts_readlines` reads them (`cat -b`): a
/// plain or gzipped file, else a `:a,b,c` list in the argument itself; `None` when neither.
pub fn read_lines(path: &str) -> Option<Vec<String>> {
    let Ok(bytes) = std::fs::read(path) else {
        return path.strip_prefix(':').map(|list| list.split(',').map(String::from).collect());
    };
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut plain)
            .ok()?;
        plain
    } else {
        bytes
    };
    let lines = text.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    // Each line is a C string to htslib: a NUL ends it.
    let names = lines.map(|l| &l[..memchr::memchr(0, l).unwrap_or(l.len())]);
    Some(names.filter(|l| !l.is_empty()).map(|l| String::from_utf8_lossy(l).into_owned()).collect())
}

fn read(path: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))
}

fn split_words(text: &[u8], is_separator: impl Fn(u8) -> bool) -> Vec<Vec<u8>> {
    text.split(|&b| is_separator(b)).filter(|t| !t.is_empty()).map(<[u8]>::to_vec).collect()
}

/// mpileup's `-G`: the read group names in `path`, whitespace separated.
pub fn read_mpileup_read_groups(path: &str) -> Result<std::collections::HashSet<Vec<u8>>, Error> {
    let text = std::fs::read(path).map_err(|_| {
        Error::Bare(format!("[bam_mpileup] Fail to open file {path}. Continue anyway."))
    })?;
    Ok(text
        .split(|c| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// `is_url`: a scheme of letters, digits, `+`, `.` or `-` before a `:`.
fn is_url(s: &str) -> bool {
    let scheme = s.bytes().take_while(|c| c.is_ascii_alphanumeric() || b"+.-".contains(c)).count();
    s.as_bytes().get(scheme) == Some(&b':')
}

/// mpileup's `-b`: its own `read_file_list`: one input a line (trailing spaces dropped), each an
/// existing file or a URL.
pub fn read_mpileup_file_list(list: &str) -> Result<Vec<String>, Error> {
    let text = std::fs::read(list)
        .map_err(|e| Error::Bare(format!("{list}: {}", crate::error::c_message(&e))))?;
    let mut files = Vec::new();
    for line in text.split(|&c| c == b'\n') {
        let end = line.iter().rposition(|c| !c.is_ascii_whitespace()).map_or(0, |i| i + 1);
        if end == 0 {
            continue;
        }
        let name = String::from_utf8_lossy(&line[..end]).into_owned();
        if !(is_url(&name) || std::fs::metadata(&name).is_ok()) {
            let printable = line[..end].iter().all(|c| (0x20..0x7f).contains(c));
            return Err(Error::Bare(if printable {
                format!("The file list \"{list}\" appears broken, could not locate: {name}")
            } else {
                format!("Does the file \"{list}\" really contain a list of files and do all exist?")
            }));
        }
        files.push(name);
    }
    if files.is_empty() {
        return Err(Error::Bare(format!("No files read from {list}")));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_tag_values_split_as_samtools_does() {
        let text = b" a\tb\n\nc;d\r\n";
        assert_eq!(split_words(text, |b| b.is_ascii_whitespace()), [&b"a"[..], b"b", b"c;d"]);
        let values = split_words(text, |b| b.is_ascii_whitespace() || b == b';');
        assert_eq!(values, [&b"a"[..], b"b", b"c", b"d"]);
    }

    #[test]
    fn list_lines_as_htslib_reads_them() {
        let dir = std::env::temp_dir().join(format!("mdsam-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l.txt");
        std::fs::write(&path, b"a.bam\r\n\n b.bam\nc\0x\nd").unwrap();
        let lines = read_lines(path.to_str().unwrap()).unwrap();
        assert_eq!(lines, ["a.bam", " b.bam", "c", "d"]);
        assert_eq!(read_lines(":x,y").unwrap(), ["x", "y"]);
        assert!(read_lines("/nonexistent/list").is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_names_itself() {
        let err = read_words("/nonexistent/names.txt").unwrap_err().to_string();
        assert!(err.starts_with("/nonexistent/names.txt: could not read: "), "{err}");
    }
}
