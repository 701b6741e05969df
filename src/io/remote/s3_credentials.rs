//! Where an S3 object's keys come from, and when they are read again.
//!
//! Keys come from the URL (`ID:SECRET[:TOKEN]@`), else (when the URL names no profile) the
//! environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), else the
//! profile's section of `AWS_SHARED_CREDENTIALS_FILE` (`~/.aws/credentials`).
//!
//! Keys from the credentials file can be short-lived: a credential helper (`aws sso`, an IAM role
//! refresher) rewrites the file before they expire. As htslib's `hfile_s3` does, a section's
//! `expiry_time` (RFC 3339, the key botocore uses) makes the file be read again before each
//! request from 60 s before that time. Beyond htslib, a request the store refuses because its
//! keys expired or are unknown (`ExpiredToken`, `InvalidAccessKeyId`, ...) reads the file again,
//! and is tried again when the keys found there are new; htslib ends the run there.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusty_s3::Credentials;

/// How long before `expiry_time` the file is read again (htslib's `CREDENTIAL_LIFETIME`).
const REREAD_BEFORE_EXPIRY: Duration = Duration::from_secs(60);

/// The S3 error codes that say the request's keys, not its object, were refused.
pub const KEYS_REFUSED: &[&str] = &[
    "ExpiredToken",
    "TokenRefreshRequired",
    "InvalidToken",
    "InvalidAccessKeyId",
    "RequestExpired",
];

/// What was found so far; later sources fill only what is still missing.
#[derive(Default)]
pub struct Found {
    pub key_id: Option<String>,
    pub secret: Option<String>,
    pub token: Option<String>,
    pub region: Option<String>,
    /// Seconds since the epoch at which the file's keys expire.
    expiry: Option<u64>,
}

impl Found {
    pub fn read_environment(&mut self) {
        self.key_id = env("AWS_ACCESS_KEY_ID");
        self.secret = env("AWS_SECRET_ACCESS_KEY");
        self.token = env("AWS_SESSION_TOKEN").or_else(|| env("AWS_SECURITY_TOKEN"));
    }

    /// The profile's keys from the credentials file and its region from either file.
    pub fn read_files(&mut self, profile: &str) {
        let home = env("HOME").unwrap_or_default();
        let section = ini_section(&credentials_file(), profile);
        if self.key_id.is_none() || self.secret.is_none() {
            self.take_keys(&section);
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

    fn take_keys(&mut self, section: &HashMap<String, String>) {
        self.key_id = section.get("aws_access_key_id").cloned();
        self.secret = section.get("aws_secret_access_key").cloned();
        self.token = section.get("aws_session_token").cloned();
        self.expiry = section.get("expiry_time").and_then(|t| rfc3339_seconds(t));
    }

    fn credentials(&self) -> Option<Credentials> {
        let (id, secret) = (self.key_id.clone()?, self.secret.clone()?);
        Some(match &self.token {
            Some(token) => Credentials::new_with_token(id, secret, token.clone()),
            None => Credentials::new(id, secret),
        })
    }
}

/// An object's keys; those from the credentials file are read again when they expire.
pub struct Keys {
    /// The credentials file and the profile whose section gave the keys, if the file did.
    from_file: Option<(String, String)>,
    current: Mutex<(Option<Credentials>, Option<u64>)>,
}

impl Keys {
    /// The keys `found` holds; `profile` when they came from the credentials file.
    pub fn new(found: &Found, profile: Option<String>) -> Keys {
        let from_file = profile.filter(|_| found.key_id.is_some()).map(|p| (credentials_file(), p));
        Keys { from_file, current: Mutex::new((found.credentials(), found.expiry)) }
    }

    /// The keys to sign a request with now (the file read again from a minute before expiry).
    pub fn now(&self) -> Option<Credentials> {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let expiring = current.1.is_some_and(|at| {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
            at.saturating_sub(now) < REREAD_BEFORE_EXPIRY.as_secs()
        });
        if expiring && let Some(fresh) = self.reread() {
            *current = fresh;
        }
        current.0.clone()
    }

    /// After the store refused the keys: reads the credentials file again; true when it now
    /// holds other keys (worth another try).
    pub fn refused(&self) -> bool {
        let Some(fresh) = self.reread() else { return false };
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let changed = fresh.0.as_ref().map(Credentials::key)
            != current.0.as_ref().map(Credentials::key)
            || fresh.0.as_ref().and_then(Credentials::token)
                != current.0.as_ref().and_then(Credentials::token);
        *current = fresh;
        changed
    }

    fn reread(&self) -> Option<(Option<Credentials>, Option<u64>)> {
        let (file, profile) = self.from_file.as_ref()?;
        let mut found = Found::default();
        found.take_keys(&ini_section(file, profile));
        found.key_id.is_some().then(|| (found.credentials(), found.expiry))
    }
}

pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn credentials_file() -> String {
    env("AWS_SHARED_CREDENTIALS_FILE")
        .unwrap_or_else(|| format!("{}/.aws/credentials", env("HOME").unwrap_or_default()))
}

/// The `key = value` lines of section `[name]` of the INI file at `path` (empty if none).
pub fn ini_section(path: &str, name: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
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

/// `YYYY-MM-DDTHH:MM:SS` and a zone (`Z` or `±HH:MM`) as seconds since the epoch, as htslib's
/// `parse_rfc3339_date` reads it (fractions of a second are not accepted; no zone: none).
fn rfc3339_seconds(text: &str) -> Option<u64> {
    let b = text.trim().as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = std::str::from_utf8(b.get(range)?).ok()?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let offset = match b.get(19..)? {
        [b'Z' | b'z', ..] => 0,
        [sign @ (b'+' | b'-'), ..] => {
            let (h, m) = (digits(20..22)?, digits(23..25)?);
            let east = (h * 60 + m) * 60;
            if *sign == b'+' { -east } else { east }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second + offset;
    u64::try_from(seconds).ok()
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

    /// A file written with `key` under `[p]`, expiring at `expiry` (seconds from now).
    fn write_keys(path: &std::path::Path, key: &str, expiry: Option<i64>) {
        let mut text = format!("[p]\naws_access_key_id = {key}\naws_secret_access_key = s\n");
        if let Some(from_now) = expiry {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
            let (days, rest) = ((now + from_now).div_euclid(86_400), (now + from_now) % 86_400);
            // Civil date from days (the inverse of rfc3339_seconds' algorithm).
            let z = days + 719_468;
            let era = z.div_euclid(146_097);
            let doe = z - era * 146_097;
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
            let mp = (5 * doy + 2) / 153;
            let day = doy - (153 * mp + 2) / 5 + 1;
            let month = if mp < 10 { mp + 3 } else { mp - 9 };
            let year = yoe + era * 400 + i64::from(month <= 2);
            let (h, m, sec) = (rest / 3600, rest / 60 % 60, rest % 60);
            text.push_str(&format!(
                "expiry_time = {year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}Z\n"
            ));
        }
        std::fs::write(path, text).unwrap();
    }

    fn keys_in(path: &std::path::Path) -> Keys {
        let mut found = Found::default();
        found.take_keys(&ini_section(path.to_str().unwrap(), "p"));
        Keys {
            from_file: Some((path.to_str().unwrap().into(), "p".into())),
            ..Keys::new(&found, None)
        }
    }

    #[test]
    fn expiring_keys_are_read_again_and_others_kept() {
        let dir = std::env::temp_dir().join(format!("mdsam-s3-expiry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (soon, later, none) = (dir.join("soon"), dir.join("later"), dir.join("none"));
        write_keys(&soon, "OLD", Some(30));
        write_keys(&later, "OLD", Some(3600));
        write_keys(&none, "OLD", None);
        let keys = [keys_in(&soon), keys_in(&later), keys_in(&none)];
        for path in [&soon, &later, &none] {
            write_keys(path, "NEW", Some(3600));
        }
        let now: Vec<String> = keys.iter().map(|k| k.now().unwrap().key().to_string()).collect();
        assert_eq!(now, ["NEW", "OLD", "OLD"], "only keys within a minute of expiry are re-read");
        assert!(keys[2].refused(), "a refusal finds the rewritten keys");
        assert_eq!(keys[2].now().unwrap().key(), "NEW");
        assert!(!keys[2].refused(), "the same keys again are not worth another try");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn expiry_times_read_as_htslib_reads_them() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_seconds("2026-12-06T17:40:00Z"), Some(1_796_578_800));
        assert_eq!(rfc3339_seconds("2026-12-06 18:40:00+01:00"), Some(1_796_578_800));
        assert_eq!(rfc3339_seconds("2026-12-06T16:40:00-01:00"), Some(1_796_578_800));
        assert_eq!(rfc3339_seconds("2000-02-29T00:00:00z"), Some(951_782_400));
        assert_eq!(rfc3339_seconds("2026-12-06T17:40:00"), None, "no zone");
        assert_eq!(rfc3339_seconds("2026-12-06X17:40:00Z"), None);
        assert_eq!(rfc3339_seconds("soon"), None);
    }
}
