//! Inputs named by URL (issue 40): `http://`, `https://`, `s3://` (`s3+http://`, `s3+https://`)
//! and `gs://` (`gs+http://`, `gs+https://`), read with HTTP range requests.
//!
//! - [`location`]: what a URL names (the HTTP URL to ask, its credentials, the name messages use);
//! - [`s3`]: S3 region and endpoint as htslib and the AWS CLI take them;
//! - [`s3_credentials`]: S3 keys, and reading them again when they expire;
//! - [`ca_bundle`]: the certificates https servers are checked against (`CURL_CA_BUNDLE`);
//! - [`fetch`]: one range request, with bounded retries and clear errors;
//! - [`read_ahead`]: a sequential reader that keeps a bounded window of ranges in flight, and
//!   repositions for index queries (fetching only the ranges a query names);
//! - [`index_copy`]: a remote index's copy in the current directory, as htslib keeps one.
//!
//! Tuning (environment): `MDSAM_REMOTE_PARALLEL` ranges in flight (8), `MDSAM_REMOTE_CHUNK`
//! bytes a range (2 MiB), `MDSAM_REMOTE_RETRIES` tries after the first (4),
//! `MDSAM_REMOTE_BACKOFF_MS` the first wait between tries, doubled each time (200),
//! `MDSAM_REMOTE_TIMEOUT` seconds to connect and to receive one response (60).

pub mod ca_bundle;
pub mod fetch;
pub mod index_copy;
pub mod location;
pub mod read_ahead;
pub mod s3;
pub mod s3_credentials;

use std::sync::{Arc, Mutex};

pub use read_ahead::RemoteReader;

/// Whether `path` names a remote input rather than a local file.
pub fn is_url(path: &str) -> bool {
    location::scheme_of(path).is_some()
}

/// The hosts (S3 buckets) given with credentials (`user:password@`, an S3 profile or keys), as
/// (`scheme://host` without them, the same with them): the command line keeps the first.
static WITH_CREDENTIALS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// `arg` with the credentials of any URL in it (also after `##idx##`) removed, remembered for
/// [`open`]: the command line keeps only the redacted name, so no message, `@PG` line or
/// `--profile` file can show them. Every URL on the same host (an index beside the file) is
/// then opened with them.
pub fn hide_credentials(arg: &str) -> String {
    let parts: Vec<String> = arg
        .split("##idx##")
        .map(|part| {
            let hidden = location::redacted(part);
            if hidden != part {
                let (plain, full) = (origin(&hidden).to_string(), origin(part).to_string());
                let mut known = WITH_CREDENTIALS.lock().unwrap_or_else(|e| e.into_inner());
                known.retain(|(h, _)| *h != plain);
                known.push((plain, full));
            }
            hidden
        })
        .collect();
    parts.join("##idx##")
}

/// `scheme://authority` of `url`.
fn origin(url: &str) -> &str {
    let scheme = location::scheme_of(url).map_or(0, str::len);
    let end = url[scheme..].find('/').map_or(url.len(), |i| scheme + i);
    &url[..end]
}

/// The URL with its host's credentials back, when [`hide_credentials`] took them out.
fn with_credentials(url: &str) -> String {
    let known = WITH_CREDENTIALS.lock().unwrap_or_else(|e| e.into_inner());
    let plain = origin(url);
    match known.iter().find(|(h, _)| h == plain) {
        Some((_, full)) => format!("{full}{}", &url[plain.len()..]),
        None => url.to_string(),
    }
}

/// A URL opened: read in ranges (it can seek), or, from a server that ignores ranges, one
/// stream of the whole file (as a pipe: front to back).
pub enum Remote {
    Ranged(RemoteReader),
    Whole(Box<dyn std::io::Read + Send>),
}

/// Opens `url`: checks that it can be read and learns its size (one request for its first
/// bytes, which the reader keeps).
pub fn open(url: &str) -> std::io::Result<Remote> {
    open_asking(url, fetch::HEAD_BYTES, false)
}

/// [`open`] for an input read on: the connections its later ranges need are opened beside
/// the first request ([`fetch::RemoteFile::open`]).
pub fn open_input(url: &str) -> std::io::Result<Remote> {
    open_asking(url, fetch::HEAD_BYTES, true)
}

/// [`open`], asking for the first `head` bytes.
fn open_asking(url: &str, head: u64, warm: bool) -> std::io::Result<Remote> {
    let target = location::Target::parse(&with_credentials(url))?;
    Ok(match fetch::RemoteFile::open(target, head, warm)? {
        fetch::Opening::Ranged(file, head) => {
            Remote::Ranged(RemoteReader::new(Arc::from(file), head))
        }
        fetch::Opening::Whole(body) => Remote::Whole(body),
    })
}

/// The whole of `url` (an index, a reference), fetched in parallel ranges all asked at once.
pub fn read_all(url: &str) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    // The whole file is wanted: the first request asks for a range's worth (an index or a small
    // reference comes in one round trip), and the rest is asked for at once in parallel ranges
    // (a bounded seek to its end) instead of ramping up from 64 KiB.
    match open_asking(url, fetch::Settings::from_env().chunk, false)? {
        Remote::Ranged(mut reader) => {
            bytes.reserve(reader.len() as usize);
            reader.seek(0, Some(reader.len()));
            std::io::Read::read_to_end(&mut reader, &mut bytes)?;
        }
        Remote::Whole(mut body) => {
            std::io::Read::read_to_end(&mut body, &mut bytes)?;
        }
    }
    Ok(bytes)
}

/// `url` with `suffix` added to its path (before any `?query`), as htslib finds an index
/// beside a URL: `https://h/x.bam?sig` → `https://h/x.bam.bai?sig`.
pub fn with_suffix(url: &str, suffix: &str) -> String {
    match url.split_once('?') {
        Some((path, query)) => format!("{path}{suffix}?{query}"),
        None => format!("{url}{suffix}"),
    }
}

/// `url`'s path less `suffix` (before any `?query`), or `None` when it does not end so.
pub fn strip_suffix(url: &str, suffix: &str) -> Option<String> {
    match url.split_once('?') {
        Some((path, query)) => path.strip_suffix(suffix).map(|p| format!("{p}?{query}")),
        None => url.strip_suffix(suffix).map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_names_go_before_the_query() {
        assert_eq!(with_suffix("https://h/x.bam?a=b", ".bai"), "https://h/x.bam.bai?a=b");
        assert_eq!(with_suffix("s3://b/x.bam", ".csi"), "s3://b/x.bam.csi");
        assert_eq!(strip_suffix("https://h/x.bam?a", ".bam").as_deref(), Some("https://h/x?a"));
        assert_eq!(strip_suffix("https://h/x.sam", ".bam"), None);
        assert!(is_url("https://h/x") && is_url("s3+http://b/k") && is_url("gs://b/o"));
        assert!(!is_url("x.bam") && !is_url("ftp.bam") && !is_url("-"));
    }

    #[test]
    fn credentials_are_kept_apart_from_the_command_line() {
        let arg = "https://me:pw@h.test/x.bam##idx##https://me:pw@h.test/i.bai";
        assert_eq!(hide_credentials(arg), "https://h.test/x.bam##idx##https://h.test/i.bai");
        assert_eq!(with_credentials("https://h.test/i.bai"), "https://me:pw@h.test/i.bai");
        assert_eq!(with_credentials("https://h.test/x.bam.bai"), "https://me:pw@h.test/x.bam.bai");
        assert_eq!(with_credentials("https://other.test/x"), "https://other.test/x");
    }
}
