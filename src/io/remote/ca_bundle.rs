//! The certificates https servers are checked against: Mozilla's roots, or, as libcurl (and so
//! htslib) takes them, only those of the PEM file `CURL_CA_BUNDLE` names (a site's own CA, a
//! test server's).
//!
//! The bundle is read here rather than with `ureq::tls::parse_pem`: that decodes base64 in
//! constant time (rustls-pki-types, made for private keys) and took 3.4 ms of CPU for Debian's
//! 220 KB bundle, in every run that opens a URL (a 10 kb region query over a 20 ms link: 80.5
//! against 75.7 ms with the variable unset). Public certificates need no constant time: read
//! with the `base64` crate (already ureq's), the same query's CPU is the same with the bundle
//! as without it (29.0 against 29.0 ms task-clock, 10 runs each).

use std::io::Error;
use std::sync::Arc;

use base64::Engine;
use ureq::tls::{Certificate, RootCerts, TlsConfig};

const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const END: &str = "-----END CERTIFICATE-----";

/// The TLS settings of every request: `CURL_CA_BUNDLE`'s certificates when it names a file.
pub fn tls_config() -> std::io::Result<TlsConfig> {
    let mut config = TlsConfig::builder();
    if let Some(bundle) = std::env::var_os("CURL_CA_BUNDLE").filter(|b| !b.is_empty()) {
        let shown = bundle.to_string_lossy().into_owned();
        let failed = |why: String| Error::other(format!("CURL_CA_BUNDLE {shown}: {why}"));
        let pem = std::fs::read(&bundle)
            .map_err(|e| Error::new(e.kind(), format!("CURL_CA_BUNDLE {shown}: {e}")))?;
        let certs = certificates(&pem).map_err(failed)?;
        if certs.is_empty() {
            return Err(failed("no certificate in it".to_string()));
        }
        config = config.root_certs(RootCerts::Specific(Arc::new(certs)));
    }
    Ok(config.build())
}

/// The certificates (DER) of the `CERTIFICATE` sections of a PEM file; other sections (keys,
/// parameters) and text between sections are passed over, as rustls-pki-types does.
fn certificates(pem: &[u8]) -> Result<Vec<Certificate<'static>>, String> {
    let text = String::from_utf8_lossy(pem);
    let mut certs = Vec::new();
    let mut body: Option<String> = None;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        match &mut body {
            None if line == BEGIN => body = Some(String::new()),
            None => {}
            Some(b64) if line == END => {
                let der = base64::engine::general_purpose::STANDARD
                    .decode(b64.as_bytes())
                    .map_err(|e| format!("certificate ending on line {}: {e}", number + 1))?;
                certs.push(Certificate::from_der(&der).to_owned());
                body = None;
            }
            Some(_) if line.starts_with("-----") => {
                return Err(format!("line {}: {line} inside a certificate", number + 1));
            }
            Some(b64) => b64.push_str(line),
        }
    }
    if body.is_some() {
        return Err(format!("no {END} after the last {BEGIN}"));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_sections_are_decoded_and_others_passed_over() {
        let der: Vec<u8> = (0..=255).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&der);
        let (first, rest) = b64.split_at(64);
        let pem = format!(
            "# a comment\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n\
             {BEGIN}\n{first}\r\n{rest}\n{END}\nbetween\n{BEGIN}\n{b64}\n{END}\n"
        );
        let certs = certificates(pem.as_bytes()).unwrap();
        assert_eq!(certs.len(), 2);
        assert!(certs.iter().all(|c| c.der() == der));
    }

    /// The system's bundle gives the certificates ureq's own reader gives (skipped without one).
    #[test]
    fn the_system_bundle_reads_as_ureq_reads_it() {
        let Ok(pem) = std::fs::read("/etc/ssl/certs/ca-certificates.crt") else {
            eprintln!("skipped: no /etc/ssl/certs/ca-certificates.crt");
            return;
        };
        let ours: Vec<Vec<u8>> =
            certificates(&pem).unwrap().iter().map(|c| c.der().to_vec()).collect();
        let theirs: Vec<Vec<u8>> = ureq::tls::parse_pem(&pem)
            .filter_map(|item| match item.unwrap() {
                ureq::tls::PemItem::Certificate(c) => Some(c.der().to_vec()),
                _ => None,
            })
            .collect();
        assert!(!ours.is_empty());
        assert_eq!(ours, theirs);
    }

    #[test]
    fn broken_sections_are_refused() {
        let unended = format!("{BEGIN}\nAAAA\n");
        assert!(certificates(unended.as_bytes()).unwrap_err().contains("no -----END"));
        let bad = format!("{BEGIN}\nA*AA\n{END}\n");
        assert!(certificates(bad.as_bytes()).unwrap_err().contains("line 3"));
        let nested = format!("{BEGIN}\nAAAA\n{BEGIN}\n");
        assert!(certificates(nested.as_bytes()).unwrap_err().contains("inside a certificate"));
        assert!(certificates(b"no pem here\n").unwrap().is_empty());
    }
}
