//! htslib's local copy of a remote index. For an input named by URL, htslib looks in the current
//! directory for the index under its own file name (`x.bam.bai` for `https://h/d/x.bam.bai?sig`)
//! and uses it without asking the server; else it fetches the index and keeps a copy there
//! (`idx_test_and_fetch` with `HTS_IDX_SAVE_REMOTE`, as every `sam_index_load` asks). Scripts
//! that query one URL region by region then fetch its index once, and so does mdsam.
//!
//! Beyond htslib: where the copy cannot be written (a read-only directory), the fetched index is
//! used all the same; htslib fails the query there.

/// The file name a copy of the index at `url` is kept under: its last path segment, before any
/// `?query` or `#fragment` (S3 keys may hold `#`: only the query is cut there, as htslib does).
pub fn local_name(url: &str) -> Option<&str> {
    let s3 = ["s3://", "s3+http://", "s3+https://"].iter().any(|p| url.starts_with(p));
    let cut = if s3 { url.find('?') } else { url.find(['?', '#']) };
    let path = &url[..cut.unwrap_or(url.len())];
    let name = &path[path.rfind('/').map_or(0, |i| i + 1)..];
    (!name.is_empty() && name != "." && name != "..").then_some(name)
}

/// The first of `candidates` (index paths or URLs, in the order they are tried) that can be
/// read, and its bytes. For URLs, copies already in the current directory are looked for first,
/// all of them before any request (htslib's `hts_idx_check_local`); a fetched index is kept
/// there for the next run.
pub fn first_readable(candidates: &[String]) -> Option<(String, Vec<u8>)> {
    let copied = |c: &String| local_copy(c).map(|bytes| (c.clone(), bytes));
    if let Some(found) = candidates.iter().find_map(copied) {
        return Some(found);
    }
    candidates.iter().find_map(|c| fetch_or_read(c).ok().map(|bytes| (c.clone(), bytes)))
}

/// The index at `path`: a local file read as it is; a URL from its copy in the current
/// directory, else fetched and copied there.
pub fn read(path: &str) -> std::io::Result<Vec<u8>> {
    local_copy(path).map_or_else(|| fetch_or_read(path), Ok)
}

/// The copy of the index at URL `path` in the current directory, if there is one.
fn local_copy(path: &str) -> Option<Vec<u8>> {
    let name = local_name(path).filter(|_| super::is_url(path))?;
    std::fs::read(name).ok()
}

/// A local file as it is; a URL fetched, with a copy kept in the current directory.
fn fetch_or_read(path: &str) -> std::io::Result<Vec<u8>> {
    if !super::is_url(path) {
        return std::fs::read(path);
    }
    let bytes = super::read_all(path)?;
    if let Some(name) = local_name(path) {
        // Written to a temporary name and renamed, so that a run beside this one never reads
        // half a copy; a directory that cannot take it only costs the next run a fetch.
        let _ = crate::io::output::write_file(name, &bytes);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_is_named_by_the_last_path_segment() {
        assert_eq!(local_name("https://h/d/x.bam.bai?sig=1#f"), Some("x.bam.bai"));
        assert_eq!(local_name("http://h/x.bai#frag"), Some("x.bai"));
        assert_eq!(local_name("s3://bucket/a#b.bam.bai?v=2"), Some("a#b.bam.bai"));
        assert_eq!(local_name("https://h/"), None);
        assert_eq!(local_name("https://h/.."), None);
    }
}
