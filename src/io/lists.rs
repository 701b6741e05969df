//! Word-list files: the read names of `view -N`, the read groups of `view -R` and the tag values
//! of `view -D`, read whole as samtools reads them.

use crate::error::Error;

/// The whitespace-separated words of the file at `path` (`-N`, `-R`).
pub fn read_words(path: &str) -> Result<Vec<Vec<u8>>, Error> {
    Ok(split_words(&read(path)?, |b| b.is_ascii_whitespace()))
}

/// The values of a `-D TAG:FILE` file: words separated by whitespace or `;`.
pub fn read_tag_values(path: &str) -> Result<Vec<Vec<u8>>, Error> {
    Ok(split_words(&read(path)?, |b| b.is_ascii_whitespace() || b == b';'))
}

fn read(path: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))
}

fn split_words(text: &[u8], is_separator: impl Fn(u8) -> bool) -> Vec<Vec<u8>> {
    text.split(|&b| is_separator(b)).filter(|t| !t.is_empty()).map(<[u8]>::to_vec).collect()
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
    fn a_missing_file_names_itself() {
        let err = read_words("/nonexistent/names.txt").unwrap_err().to_string();
        assert!(err.starts_with("/nonexistent/names.txt: could not read: "), "{err}");
    }
}
