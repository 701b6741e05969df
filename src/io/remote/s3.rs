//! S3 objects (`s3://[PROFILE@]BUCKET/KEY`, `s3://ID:SECRET[:TOKEN]@BUCKET/KEY`, and the
//! `s3+http`/`s3+https` forms) with credentials, region and endpoint found as htslib's
//! `hfile_s3` and the AWS CLI find them:
//!
//! - credentials: the URL's `ID:SECRET`; else, when the URL names no profile,
//!   `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`; else the profile (the URL's,
//!   `AWS_PROFILE`, `AWS_DEFAULT_PROFILE`, or `default`) of `AWS_SHARED_CREDENTIALS_FILE`
//!   (`~/.aws/credentials`); else none (public objects, unsigned requests);
//! - region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region` in the credentials or
//!   `AWS_CONFIG_FILE` (`~/.aws/config`) file, else `us-east-1`;
//! - endpoint: `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (a whole URL, as the AWS SDKs read
//!   them), else htslib's `HTS_S3_HOST` (a host, http for `s3+http://`), both path-style unless
//!   `HTS_S3_ADDRESS_STYLE=virtual`; else AWS's `s3.REGION.amazonaws.com`, virtual-hosted.
//!
//! Each request is presigned (SigV4, by `rusty-s3`) when it is made, so no signature outlives
//! its request and none is written anywhere: messages name the `s3://` URL.

use std::io::{Error, ErrorKind};
use std::time::Duration;

use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

pub struct Object {
    bucket: Bucket,
    credentials: Option<Credentials>,
    key: String,
}

/// How long a presigned request stays valid: it is used at once.
const SIGNATURE_LIFETIME: Duration = Duration::from_secs(900);

impl Object {
    /// `rest`: the URL after its scheme; `https` unless `s3+http://`.
    pub fn parse(rest: &str, https: bool) -> std::io::Result<Object> {
        let bad = |why: &str| Error::new(ErrorKind::InvalidInput, why.to_string());
        let (authority, key) = rest.split_once('/').ok_or_else(|| bad("no object key"))?;
        let (userinfo, bucket_name) = match authority.rsplit_once('@') {
            Some((u, b)) => (Some(u), b),
            None => (None, authority),
        };
        if bucket_name.is_empty() || key.is_empty() {
            return Err(bad("an s3 URL is s3://BUCKET/KEY"));
        }
        let mut found = Found::default();
        let mut profile = None;
        match userinfo.map(|u| u.split(':').collect::<Vec<_>>()) {
            Some(parts) if parts.len() >= 2 => {
                found.key_id = Some(parts[0].to_string());
                found.secret = Some(parts[1].to_string());
                found.token = parts.get(2).map(|t| t.to_string());
            }
            Some(parts) => profile = Some(parts[0].to_string()),
            None => found.read_environment(),
        }
        let profile = profile
            .or_else(|| env("AWS_PROFILE"))
            .or_else(|| env("AWS_DEFAULT_PROFILE"))
            .unwrap_or_else(|| "default".to_string());
        found.read_files(&profile);
        let region = env("AWS_REGION")
            .or_else(|| env("AWS_DEFAULT_REGION"))
            .or(found.region.take())
            .unwrap_or_else(|| "us-east-1".to_string());
        let (endpoint, style) = endpoint(&region, bucket_name, https);
        let endpoint =
            endpoint.parse().map_err(|e| bad(&format!("bad S3 endpoint \"{endpoint}\": {e}")))?;
        let bucket = Bucket::new(endpoint, style, bucket_name.to_string(), region)
            .map_err(|e| bad(&format!("bad S3 endpoint: {e}")))?;
        let credentials = match (found.key_id, found.secret) {
            (Some(id), Some(secret)) => Some(match found.token {
                Some(token) => Credentials::new_with_token(id, secret, token),
                None => Credentials::new(id, secret),
            }),
            _ => None,
        };
        Ok(Object { bucket, credentials, key: key.to_string() })
    }

    /// A GET of the object, presigned now.
    pub fn signed_get(&self) -> String {
        let get = self.bucket.get_object(self.credentials.as_ref(), &self.key);
        get.sign(SIGNATURE_LIFETIME).to_string()
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The endpoint URL and addressing style for `bucket`.
fn endpoint(region: &str, bucket: &str, https: bool) -> (String, UrlStyle) {
    let virtual_style = env("HTS_S3_ADDRESS_STYLE").is_some_and(|s| s == "virtual");
    let style = if virtual_style { UrlStyle::VirtualHost } else { UrlStyle::Path };
    if let Some(url) = env("AWS_ENDPOINT_URL_S3").or_else(|| env("AWS_ENDPOINT_URL")) {
        return (url, style);
    }
    let scheme = if https { "https" } else { "http" };
    if let Some(host) = env("HTS_S3_HOST") {
        return (format!("{scheme}://{host}"), style);
    }
    // A bucket name with dots cannot be a host name under AWS's certificate.
    let style = if bucket.contains('.') { UrlStyle::Path } else { UrlStyle::VirtualHost };
    (format!("{scheme}://s3.{region}.amazonaws.com"), style)
}

/// What was found so far; later sources fill only what is still missing.
#[derive(Default)]
struct Found {
    key_id: Option<String>,
    secret: Option<String>,
    token: Option<String>,
    region: Option<String>,
}

impl Found {
    fn read_environment(&mut self) {
        self.key_id = env("AWS_ACCESS_KEY_ID");
        self.secret = env("AWS_SECRET_ACCESS_KEY");
        self.token = env("AWS_SESSION_TOKEN").or_else(|| env("AWS_SECURITY_TOKEN"));
    }

    /// The profile's keys from the credentials file and its region from either file.
    fn read_files(&mut self, profile: &str) {
        let home = env("HOME").unwrap_or_default();
        let credentials = env("AWS_SHARED_CREDENTIALS_FILE")
            .unwrap_or_else(|| format!("{home}/.aws/credentials"));
        let section = ini_section(&credentials, profile);
        if self.key_id.is_none() || self.secret.is_none() {
            self.key_id = section.get("aws_access_key_id").cloned();
            self.secret = section.get("aws_secret_access_key").cloned();
            self.token = section.get("aws_session_token").cloned();
        }
        self.region = section.get("region").cloned();
        if self.region.is_none() {
            let config = env("AWS_CONFIG_FILE").unwrap_or_else(|| format!("{home}/.aws/config"));
            // The config file names its sections `[profile NAME]`, but for `[default]`.
            let mut section = ini_section(&config, &format!("profile {profile}"));
            if section.is_empty() {
                section = ini_section(&config, profile);
            }
            self.region = section.get("region").cloned();
        }
    }
}

/// The `key = value` lines of section `[name]` of the INI file at `path` (empty if none).
fn ini_section(path: &str, name: &str) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let Ok(text) = std::fs::read_to_string(path) else { return out };
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = header.trim() == name;
        } else if inside && let Some((k, v)) = line.split_once('=') {
            out.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_are_read_by_name() {
        let dir = std::env::temp_dir().join(format!("mdsam-s3-ini-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("credentials");
        std::fs::write(
            &path,
            "[default]\naws_access_key_id=A\n[p2]\n aws_access_key_id = B \nregion=eu-west-2\n",
        )
        .unwrap();
        let p2 = ini_section(path.to_str().unwrap(), "p2");
        assert_eq!(p2.get("aws_access_key_id").map(String::as_str), Some("B"));
        assert_eq!(p2.get("region").map(String::as_str), Some("eu-west-2"));
        assert!(ini_section(path.to_str().unwrap(), "p3").is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keys_in_the_url_sign_the_request() {
        let object = Object::parse("ID:SECRET@bucket/dir/x.bam", true).unwrap();
        let url = object.signed_get();
        assert!(url.contains("X-Amz-Credential=ID"), "{url}");
        assert!(url.contains("dir/x.bam"), "{url}");
        assert!(!url.contains("SECRET"), "{url}");
    }
}
