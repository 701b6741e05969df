//! What a URL names: the HTTP(S) URL each range request goes to, the headers it carries, and the
//! name that messages use (the URL as given, less any `user:password@`).
//!
//! - `http(s)://[user:password@]host/path`: asked as it is (ureq sends the user and password as
//!   Basic authentication);
//! - `s3://`, `s3+http://`, `s3+https://`: [`super::s3`] signs each request;
//! - `gs://BUCKET/OBJECT` (`gs+http://`, `gs+https://`): htslib's mapping to
//!   `https://storage.googleapis.com/BUCKET/OBJECT`, with `GCS_OAUTH_TOKEN` as a bearer token and
//!   `GCS_REQUESTER_PAYS_PROJECT` as `X-Goog-User-Project`. `MDSAM_GCS_ENDPOINT` (mdsam's own,
//!   for tests and emulators) replaces `https://storage.googleapis.com`.

use std::io::{Error, ErrorKind};

use super::s3;

/// The URL forms read, each with whether it is https by default.
const SCHEMES: [&str; 8] = [
    "http://",
    "https://",
    "s3://",
    "s3+http://",
    "s3+https://",
    "gs://",
    "gs+http://",
    "gs+https://",
];

/// The scheme prefix of `path` when it is a URL mdsam reads.
pub fn scheme_of(path: &str) -> Option<&'static str> {
    SCHEMES.iter().copied().find(|s| {
        path.len() > s.len() && path.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes())
    })
}

/// `url` without a `user:password@` before its host.
pub fn redacted(url: &str) -> String {
    let Some(scheme) = scheme_of(url) else { return url.to_string() };
    let rest = &url[scheme.len()..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// One remote object and how to ask for its bytes.
pub struct Target {
    /// The URL as messages name it (no credentials).
    pub display: String,
    access: Access,
}

enum Access {
    Http { url: String, headers: Vec<(String, String)> },
    S3(Box<s3::Object>),
}

impl Target {
    pub fn parse(url: &str) -> std::io::Result<Target> {
        let scheme = scheme_of(url)
            .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "not an http(s), s3 or gs URL"))?;
        let display = redacted(url);
        let rest = &url[scheme.len()..];
        let access = match scheme {
            "http://" | "https://" => Access::Http { url: url.to_string(), headers: Vec::new() },
            "s3://" | "s3+https://" => Access::S3(Box::new(s3::Object::parse(rest, true)?)),
            "s3+http://" => Access::S3(Box::new(s3::Object::parse(rest, false)?)),
            _ => gcs(rest, scheme != "gs+http://"),
        };
        Ok(Target { display, access })
    }

    /// The URL and extra headers of one GET (signed now, for S3).
    pub fn request(&self) -> (String, Vec<(String, String)>) {
        match &self.access {
            Access::Http { url, headers } => (url.clone(), headers.clone()),
            Access::S3(object) => (object.signed_get(), Vec::new()),
        }
    }

    /// The server refused the request's keys: true when fresh ones were found (S3 keys from a
    /// credentials file that was rewritten), so another try may succeed.
    pub fn keys_refused(&self) -> bool {
        match &self.access {
            Access::Http { .. } => false,
            Access::S3(object) => object.keys_refused(),
        }
    }
}

fn gcs(bucket_and_object: &str, https: bool) -> Access {
    let default =
        if https { "https://storage.googleapis.com" } else { "http://storage.googleapis.com" };
    let endpoint = std::env::var("MDSAM_GCS_ENDPOINT").unwrap_or_else(|_| default.to_string());
    let url = format!("{}/{bucket_and_object}", endpoint.trim_end_matches('/'));
    let mut headers = Vec::new();
    if let Ok(token) = std::env::var("GCS_OAUTH_TOKEN") {
        headers.push(("Authorization".to_string(), format!("Bearer {token}")));
    }
    if let Ok(project) = std::env::var("GCS_REQUESTER_PAYS_PROJECT") {
        headers.push(("X-Goog-User-Project".to_string(), project));
    }
    Access::Http { url, headers }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_leave_the_display_name() {
        assert_eq!(redacted("https://u:p@h:8/x.bam"), "https://h:8/x.bam");
        assert_eq!(redacted("https://h/a@b.bam"), "https://h/a@b.bam");
        assert_eq!(redacted("s3://prof@bucket/k"), "s3://bucket/k");
        assert_eq!(redacted("x.bam"), "x.bam");
        assert_eq!(scheme_of("HTTPS://h/x"), Some("https://"));
        assert_eq!(scheme_of("https://"), None);
    }

    #[test]
    fn gs_maps_to_the_storage_host() {
        let t = Target::parse("gs://bkt/dir/x.bam").unwrap();
        let (url, _) = t.request();
        if std::env::var("MDSAM_GCS_ENDPOINT").is_err() {
            assert_eq!(url, "https://storage.googleapis.com/bkt/dir/x.bam");
        }
        assert_eq!(t.display, "gs://bkt/dir/x.bam");
    }
}
