//! S3 objects (`s3://[PROFILE@]BUCKET/KEY`, `s3://ID:SECRET[:TOKEN]@BUCKET/KEY`, and the
//! `s3+http`/`s3+https` forms) with credentials, region and endpoint found as htslib's
//! `hfile_s3` and the AWS CLI find them:
//!
//! - credentials: see [`super::s3_credentials`] (the URL's, the environment's, or the profile's
//!   (the URL's, `AWS_PROFILE`, `AWS_DEFAULT_PROFILE`, or `default`) in the credentials file,
//!   read again when they expire); else none (public objects, unsigned requests);
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

use rusty_s3::{Bucket, S3Action, UrlStyle};

use super::s3_credentials::{Found, Keys, env};

pub struct Object {
    bucket: Bucket,
    keys: Keys,
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
        let keys_from_file = found.key_id.is_none() || found.secret.is_none();
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
        let keys = Keys::new(&found, keys_from_file.then_some(profile));
        Ok(Object { bucket, keys, key: key.to_string() })
    }

    /// A GET of the object, presigned now.
    pub fn signed_get(&self) -> String {
        let keys = self.keys.now();
        let get = self.bucket.get_object(keys.as_ref(), &self.key);
        get.sign(SIGNATURE_LIFETIME).to_string()
    }

    /// The store refused the request's keys: true when fresh ones were found to try again with.
    pub fn keys_refused(&self) -> bool {
        self.keys.refused()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_the_url_sign_the_request() {
        let object = Object::parse("ID:SECRET@bucket/dir/x.bam", true).unwrap();
        let url = object.signed_get();
        assert!(url.contains("X-Amz-Credential=ID"), "{url}");
        assert!(url.contains("dir/x.bam"), "{url}");
        assert!(!url.contains("SECRET"), "{url}");
    }
}
