//! Where a CRAM's reference bases come from, in htslib's order (`cram_populate_ref`): the FASTA
//! given with `-T`/`--reference` (its `.fai` beside it, plain or BGZF), then `REF_CACHE` and
//! `REF_PATH` directory templates on the `@SQ`'s `M5`, then the `@SQ`'s `UR` when it names a local
//! file. `http(s)://` (and `s3://`, `gs://`) entries of `REF_PATH` are fetched (`io::remote`) and,
//! when their MD5 is right, written to `REF_CACHE` as htslib fills it; `ftp:` entries are skipped.
//! Embedded references never reach this module (the slice carries them).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, OnceLock};

use noodles_fasta as fasta;

use crate::io::fasta::Fasta;
use crate::io::fasta::scan::bare_or_first_sequence;
use crate::record::Header;
use crate::record::header::line_field;

/// What the header says of one `@SQ`: enough to find its bases.
#[derive(Clone, Debug, Default)]
struct SequenceLine {
    md5: Option<String>,
    uri: Option<String>,
}

/// Finds reference sequences by `@SQ` name for one CRAM file; shared by the decoding threads.
pub struct ReferenceFinder {
    fasta_path: Option<String>,
    /// Loaded on first use: a CRAM with embedded or no references never reads it.
    fasta: OnceLock<Result<Fasta, String>>,
    lines: HashMap<Vec<u8>, SequenceLine>,
    ref_path: Option<String>,
    ref_cache: Option<String>,
}

impl ReferenceFinder {
    /// A finder for the `@SQ` lines of `header`, with the chosen FASTA and the environment's
    /// `REF_PATH` and `REF_CACHE`.
    pub fn new(header: &Header, fasta_path: Option<String>) -> Self {
        let mut lines = HashMap::new();
        for line in header.lines().filter(|l| l.starts_with(b"@SQ\t")) {
            let Some(name) = line_field(line, b"SN") else { continue };
            let text = |key: &[u8; 2]| {
                line_field(line, key).map(|v| String::from_utf8_lossy(v).into_owned())
            };
            lines.insert(name.to_vec(), SequenceLine { md5: text(b"M5"), uri: text(b"UR") });
        }
        ReferenceFinder {
            fasta_path,
            fasta: OnceLock::new(),
            lines,
            ref_path: std::env::var("REF_PATH").ok(),
            ref_cache: std::env::var("REF_CACHE").ok(),
        }
    }

    /// The bases of `name` in upper case (htslib compares and substitutes upper-case bases), or
    /// the one-line reason none was found.
    pub fn find(&self, name: &[u8]) -> Result<Vec<u8>, String> {
        let line = self.lines.get(name).cloned().unwrap_or_default();
        if let Some(bases) = self.in_chosen_fasta(name)? {
            return Ok(upper(bases));
        }
        if let Some(md5) = line.md5.as_deref() {
            let md5 = md5.to_ascii_lowercase();
            for templates in [&self.ref_cache, &self.ref_path].into_iter().flatten() {
                for path in expand_templates(templates, &md5) {
                    if crate::io::remote::is_url(&path) {
                        if let Some(bases) = self.fetch_and_cache(&path, &md5)? {
                            return Ok(bases);
                        }
                    } else if let Ok(bytes) = std::fs::read(&path) {
                        return Ok(upper(bare_or_first_sequence(bytes)));
                    }
                }
            }
        }
        if let Some(uri) = line.uri.as_deref() {
            let path = uri.strip_prefix("file://").unwrap_or(uri);
            if !is_url(path)
                && std::path::Path::new(path).is_file()
                && let Ok(fasta) = Fasta::read_whole(path)
                && let Some(bases) = fasta.sequence(name)
            {
                return Ok(upper(bases));
            }
        }
        Err(missing_reference(name, line.md5.as_deref()))
    }

    /// A reference from a `REF_PATH` URL: `None` when there is none there (htslib tries the
    /// next entry); an error when it cannot be fetched or its MD5 is not `md5`. Written to the
    /// first `REF_CACHE` entry (bare upper-case bases, by a rename so that no reader sees half
    /// a file), as htslib's `cram_populate_ref` does.
    fn fetch_and_cache(&self, url: &str, md5: &str) -> Result<Option<Vec<u8>>, String> {
        let bytes = match crate::io::remote::read_all(url) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{url}: {e}")),
        };
        let bases = upper(bare_or_first_sequence(bytes));
        let got = super::file_header::md5_hex(&bases);
        if got != md5 {
            return Err(format!("{url}: the reference fetched has MD5 {got}, not {md5}"));
        }
        let cache =
            self.ref_cache.as_deref().and_then(|t| expand_templates(t, md5).into_iter().next());
        if let Some(cached) = cache.filter(|c| !crate::io::remote::is_url(c)) {
            let cached = std::path::Path::new(&cached);
            if let Some(dir) = cached.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let partial = cached.with_extension(format!("tmp.{}", std::process::id()));
            if std::fs::write(&partial, &bases).is_ok() {
                let _ = std::fs::rename(&partial, cached);
            }
            let _ = std::fs::remove_file(&partial);
        }
        Ok(Some(bases))
    }

    fn in_chosen_fasta(&self, name: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let Some(path) = &self.fasta_path else { return Ok(None) };
        let fasta = self.fasta.get_or_init(|| {
            Fasta::read_whole(path).map_err(|e| e.lines().last().unwrap_or_default().to_string())
        });
        match fasta {
            Ok(fasta) => Ok(fasta.sequence(name)),
            Err(e) => Err(e.clone()),
        }
    }
}

/// The message for a reference found nowhere.
fn missing_reference(name: &[u8], md5: Option<&str>) -> String {
    let name = String::from_utf8_lossy(name);
    format!(
        "no reference sequence for @SQ SN:{name} (M5:{}): give its FASTA with -T/--reference or set REF_PATH",
        md5.unwrap_or("none")
    )
}

fn upper(mut bases: Vec<u8>) -> Vec<u8> {
    bases.make_ascii_uppercase();
    bases
}

fn is_url(s: &str) -> bool {
    ["http:", "https:", "ftp:"].iter().any(|p| s.starts_with(p))
}

/// The file names a `:`-separated list of templates gives for `md5`, as htslib's `expand_cache_path`:
/// `%Ns` takes the next N characters of the checksum, `%s` the rest; an entry without `%s` gets
/// `/%s` appended. A URL entry (`http://…`: its `:` does not separate) stays one entry, but for
/// `ftp://`, which mdsam does not read.
pub fn expand_templates(templates: &str, md5: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    let mut parts = templates.split(':').peekable();
    while let Some(part) = parts.next() {
        if crate::io::remote::location::scheme_of(&format!("{part}://x")).is_some()
            && let Some(rest) = parts.next_if(|p| p.starts_with("//"))
        {
            // A port (`http://host:8080/…`) is the next part: a number before a slash.
            let mut url = format!("{part}:{rest}");
            while let Some(port) = parts.next_if(|p| p.starts_with(|c: char| c.is_ascii_digit())) {
                url.push(':');
                url.push_str(port);
            }
            entries.push(url);
            continue;
        }
        if part == "ftp" && parts.peek().is_some_and(|p| p.starts_with("//")) {
            parts.next();
            continue;
        }
        if !part.is_empty() {
            entries.push(part.to_string());
        }
    }
    entries.into_iter().map(|t| expand_one(&t, md5)).collect()
}

fn expand_one(template: &str, md5: &str) -> String {
    let template =
        if template.contains("%s") { template.to_string() } else { format!("{template}/%s") };
    let mut out = String::new();
    let mut rest = md5;
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            digits.push(*d);
            chars.next();
        }
        match chars.next() {
            Some('s') => {
                let n = digits.parse::<usize>().map_or(rest.len(), |n| n.min(rest.len()));
                out.push_str(&rest[..n]);
                rest = &rest[n..];
            }
            Some(other) => {
                out.push('%');
                out.push_str(&digits);
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Shared handle, as the decoding threads hold it.
pub type SharedFinder = Arc<ReferenceFinder>;

/// A reference found nowhere, carried through noodles' `io::Error` to keep its message whole.
#[derive(Debug)]
pub struct MissingReference(pub String);

impl std::fmt::Display for MissingReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MissingReference {}

/// noodles' reference repository, answered by `finder` (noodles caches what it returns).
pub fn repository(finder: SharedFinder) -> fasta::Repository {
    fasta::Repository::new(FinderAdapter(finder))
}

/// noodles' reference lookup, answered by mdsam's [`ReferenceFinder`].
struct FinderAdapter(SharedFinder);

impl fasta::repository::Adapter for FinderAdapter {
    fn get(&mut self, name: &[u8]) -> Option<io::Result<fasta::Record>> {
        Some(match self.0.find(name) {
            Ok(bases) => {
                let definition = fasta::record::Definition::new(name.to_vec(), None);
                Ok(fasta::Record::new(definition, fasta::record::Sequence::from(bases)))
            }
            Err(why) => Err(io::Error::new(io::ErrorKind::NotFound, MissingReference(why))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_as_htslib() {
        let md5 = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            expand_templates("/c/%2s/%2s/%s", md5),
            vec!["/c/01/23/456789abcdef0123456789abcdef".to_string()]
        );
        assert_eq!(
            expand_templates("/a:http://x.org/%s:/b/%s:ftp://y.org/%s", md5),
            vec![format!("/a/{md5}"), format!("http://x.org/{md5}"), format!("/b/{md5}")]
        );
        assert_eq!(
            expand_templates("https://127.0.0.1:8080/r/%2s/%s:/c", md5),
            vec![format!("https://127.0.0.1:8080/r/01/{}", &md5[2..]), format!("/c/{md5}")]
        );
    }

    #[test]
    fn a_missing_reference_names_its_sq_and_m5() {
        let header = Header::from_sam_text(b"@SQ\tSN:c1\tLN:4\tM5:abc\n".to_vec()).unwrap();
        let finder = ReferenceFinder {
            ref_path: Some("/nonexistent".into()),
            ref_cache: None,
            ..ReferenceFinder::new(&header, None)
        };
        let e = finder.find(b"c1").unwrap_err();
        assert!(e.contains("@SQ SN:c1") && e.contains("M5:abc"), "{e}");
    }
}
