//! One remote object and the range requests made to it: each a GET with `Range`, checked
//! (status, `Content-Range`, the whole body received) and retried with backoff when the failure
//! may pass (a 5xx, 408 or 429 status, a timeout, a reset or refused connection, a body cut
//! short). A failure that will not pass (403, 404) ends at once. A server that ignores ranges
//! (a 200 with the whole file to the first request) is read as one stream, as htslib's libcurl
//! reader does: front to back, no index queries.
//! Errors are the cause alone; the callers name the file, as for local files.

use std::io::{Error, ErrorKind, Read};
use std::time::Duration;

use super::location::Target;
use super::s3_credentials::KEYS_REFUSED;
use crate::profile::{self, Counter, Phase};

/// The environment's tuning (see [`super`]).
#[derive(Clone, Debug)]
pub struct Settings {
    pub parallel: usize,
    pub chunk: u64,
    pub retries: u32,
    pub backoff: Duration,
    pub timeout: Duration,
}

impl Settings {
    pub fn from_env() -> Settings {
        let number = |name: &str, default: u64| -> u64 {
            std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
        };
        Settings {
            parallel: number("MDSAM_REMOTE_PARALLEL", 8).clamp(1, 64) as usize,
            chunk: number("MDSAM_REMOTE_CHUNK", 2 << 20).clamp(64 << 10, 256 << 20),
            retries: number("MDSAM_REMOTE_RETRIES", 4).min(20) as u32,
            backoff: Duration::from_millis(number("MDSAM_REMOTE_BACKOFF_MS", 200).min(60_000)),
            timeout: Duration::from_secs(number("MDSAM_REMOTE_TIMEOUT", 60).max(1)),
        }
    }
}

/// The bytes asked for when a file is opened: enough for a header and the format sniffing.
pub const HEAD_BYTES: u64 = 64 << 10;

pub struct RemoteFile {
    pub target: Target,
    agent: ureq::Agent,
    pub size: u64,
    pub settings: Settings,
    /// The file's last [`TAIL_BYTES`] (or fewer, all of a shorter file), asked for beside the
    /// opening request: the EOF check then costs no round trip of its own.
    tail: Option<Vec<u8>>,
}

/// Connections an opening uses (first bytes, tail), and those a region query's pieces find
/// open ([`RemoteFile::open_connections`]).
const OPENING_CONNECTIONS: usize = 2;
const QUERY_CONNECTIONS: usize = 4;

/// Bytes of the file's end asked for at opening: a BGZF EOF block (28) or a CRAM EOF
/// container (38).
const TAIL_BYTES: u64 = 64;

/// What opening a URL gave: ranges, with the first bytes and the file's size; or, from a
/// server that ignores ranges, the whole file's body to read once, front to back.
pub enum Opening {
    Ranged(Box<RemoteFile>, Vec<u8>),
    Whole(Box<dyn Read + Send>),
}

/// A response's status, what its headers say of the sizes, and its body.
struct Answer {
    status: u16,
    /// The file's size, from `Content-Range`.
    total: Option<u64>,
    /// The body's size, from `Content-Length`.
    length: Option<u64>,
    body: ureq::BodyReader<'static>,
}

/// A failed try: whether another may succeed, and why it failed.
struct Failure {
    transient: bool,
    error: Error,
}

impl RemoteFile {
    /// Opens `target` with one request for its first `head` bytes ([`HEAD_BYTES`] for a file
    /// read as a stream), which also gives its size. `warm`: an input read on, whose later
    /// ranges go out in parallel; the connections for them are opened now (see
    /// [`Self::open_connections`]).
    pub fn open(target: Target, head: u64, warm: bool) -> std::io::Result<Opening> {
        let settings = Settings::from_env();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(super::ca_bundle::tls_config()?)
            .http_status_as_error(false)
            .timeout_connect(Some(settings.timeout))
            .timeout_recv_response(Some(settings.timeout))
            .timeout_recv_body(Some(settings.timeout))
            .max_idle_connections_per_host(settings.parallel * 2)
            .build()
            .into();
        let mut file = RemoteFile { target, agent, size: u64::MAX, settings, tail: None };
        // The two requests the opening waits on leave first, the warm-up's after them.
        let (first, tail) = std::thread::scope(|scope| {
            let first = scope.spawn(|| {
                file.with_retries(|f| {
                    let answer = f.ask(0, head)?;
                    if answer.status == 200 && answer.length.is_none_or(|l| l > head) {
                        return Ok(Err(answer.body));
                    }
                    f.answered_bytes(answer, 0, head, true).map(Ok)
                })
            });
            let tail = scope.spawn(|| file.ask_tail());
            if warm {
                file.open_connections();
            }
            let first = first.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (first, tail.join().ok().flatten())
        });
        match first? {
            Ok((head, size)) => {
                file.size = size.unwrap_or(head.len() as u64);
                file.tail = tail.filter(|(_, total)| *total == file.size).map(|(t, _)| t);
                Ok(Opening::Ranged(Box::new(file), head))
            }
            Err(body) => Ok(Opening::Whole(Box::new(body))),
        }
    }

    /// Opens the connections that a query's parallel ranges will use, beside the opening's two
    /// (first bytes, tail): each with a request for the file's first byte, on its own thread,
    /// not waited for. A query's ranges are known a round trip later (once the header and index
    /// are in), and then go out on open connections instead of each paying a handshake's round
    /// trip first (two with TLS). A failure here is left to the requests that need the bytes.
    /// Measured (100 random 10 kb queries of 6 M aligner-made reads, 20 ms link, 50 MB/s a
    /// connection): with the query's bytes in 1 MiB pieces, 124 → 109 ms a query; eight
    /// connections instead of four cost an unlimited link 10 % (each a thread of the server).
    fn open_connections(&self) {
        let (url, headers) = self.target.request();
        for _ in OPENING_CONNECTIONS..self.query_connections() {
            let (agent, url, headers) = (self.agent.clone(), url.clone(), headers.clone());
            std::thread::spawn(move || {
                if let Ok(response) = ranged_get(&agent, &url, &headers, "bytes=0-0").call() {
                    let mut body = response.into_body().into_reader();
                    let _ = std::io::copy(&mut (&mut body).take(1 << 16), &mut std::io::sink());
                    finish_body(&mut body);
                }
            });
        }
    }

    /// The connections open for a query's ranges once the file is open (the opening's and
    /// those [`Self::open_connections`] adds), within `MDSAM_REMOTE_PARALLEL`.
    pub fn query_connections(&self) -> usize {
        self.settings.parallel.min(QUERY_CONNECTIONS)
    }

    /// Bytes `[start, end)` of the file (`end` clipped to its size).
    pub fn fetch(&self, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
        let end = end.min(self.size);
        if start >= end {
            return Ok(Vec::new());
        }
        if let Some(tail) = &self.tail
            && start >= self.size - tail.len() as u64
        {
            let from = tail.len() - (self.size - start) as usize;
            return Ok(tail[from..from + (end - start) as usize].to_vec());
        }
        self.with_retries(|f| f.try_get(start, end, false)).map(|(bytes, _)| bytes)
    }

    fn with_retries<T>(
        &self,
        mut once: impl FnMut(&Self) -> Result<T, Failure>,
    ) -> std::io::Result<T> {
        let mut wait = self.settings.backoff;
        let mut tries = 1;
        loop {
            match once(self) {
                Ok(v) => return Ok(v),
                Err(f) if f.transient && tries <= self.settings.retries => {
                    std::thread::sleep(wait);
                    wait = wait.saturating_mul(2);
                    tries += 1;
                }
                Err(f) if tries > 1 => {
                    return Err(Error::new(
                        f.error.kind(),
                        format!("{} (after {tries} tries)", f.error),
                    ));
                }
                Err(f) => return Err(f.error),
            }
        }
    }

    /// One GET of `[start, end)`; `opening`: the first request, where a short file answers
    /// with less than asked (or 416 when it is empty). Gives the file's size when the response
    /// tells it.
    fn try_get(
        &self,
        start: u64,
        end: u64,
        opening: bool,
    ) -> Result<(Vec<u8>, Option<u64>), Failure> {
        let answer = self.ask(start, end)?;
        self.answered_bytes(answer, start, end, opening)
    }

    /// The file's last [`TAIL_BYTES`] and its size, in one try; `None` when that fails or the
    /// server ignores ranges (its body is then left unread).
    fn ask_tail(&self) -> Option<(Vec<u8>, u64)> {
        let answer = self.ask_range(&format!("bytes=-{TAIL_BYTES}")).ok()?;
        let total = answer.total?;
        if answer.status != 206 || answer.length.is_some_and(|l| l > TAIL_BYTES) {
            return None;
        }
        let mut bytes = Vec::with_capacity(TAIL_BYTES as usize);
        let mut body = answer.body;
        (&mut body).take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
        finish_body(&mut body);
        profile::add(Phase::Read, Counter::BytesRead, bytes.len() as u64);
        (bytes.len() as u64 == total.min(TAIL_BYTES)).then_some((bytes, total))
    }

    /// Sends the GET of `[start, end)`.
    fn ask(&self, start: u64, end: u64) -> Result<Answer, Failure> {
        self.ask_range(&format!("bytes={start}-{}", end - 1))
    }

    /// Sends a GET with this `Range` header.
    fn ask_range(&self, range: &str) -> Result<Answer, Failure> {
        let (url, headers) = self.target.request();
        let response =
            ranged_get(&self.agent, &url, &headers, range).call().map_err(transport_failure)?;
        let status = response.status().as_u16();
        let total = response
            .headers()
            .get("content-range")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit_once('/'))
            .and_then(|(_, total)| total.trim().parse::<u64>().ok());
        let length = response
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        Ok(Answer { status, total, length, body: response.into_body().into_reader() })
    }

    /// The bytes `[start, end)` an answer carries, checked (see [`Self::try_get`]).
    fn answered_bytes(
        &self,
        answer: Answer,
        start: u64,
        end: u64,
        opening: bool,
    ) -> Result<(Vec<u8>, Option<u64>), Failure> {
        let Answer { status, total, length, mut body } = answer;
        match status {
            206 => {}
            // The whole file: fine when it is the range asked for.
            200 if start == 0 && length.is_some_and(|l| l <= end) => {}
            200 => {
                let what = "the server ignores range requests (mdsam reads such URLs front to \
                            back, and only from the start)";
                return Err(Failure { transient: false, error: Error::other(what) });
            }
            416 if opening => return Ok((Vec::new(), Some(total.unwrap_or(0)))),
            _ => {
                let (mut failure, code) = status_failure(status, &mut body);
                // Expired keys: worth another try once the credentials file has new ones.
                if code.is_some_and(|c| KEYS_REFUSED.contains(&c.as_str()))
                    && self.target.keys_refused()
                {
                    failure.transient = true;
                }
                return Err(failure);
            }
        }
        let expected =
            if status == 206 { end.min(total.unwrap_or(end)) - start } else { length.unwrap_or(0) };
        let mut bytes = Vec::with_capacity(expected as usize);
        let got = (&mut body).take(expected).read_to_end(&mut bytes);
        profile::add(Phase::Read, Counter::BytesRead, bytes.len() as u64);
        if got.is_ok() {
            finish_body(&mut body);
        }
        if let Err(e) = got {
            return Err(Failure {
                transient: true,
                error: Error::new(e.kind(), body_error(&e, bytes.len(), expected)),
            });
        }
        if (bytes.len() as u64) < expected {
            let what = format!("truncated response: {} of {expected} bytes", bytes.len());
            return Err(Failure {
                transient: true,
                error: Error::new(ErrorKind::UnexpectedEof, what),
            });
        }
        Ok((bytes, if status == 206 { total } else { length }))
    }
}

/// A GET of `url` with this `Range` and the target's `headers`.
fn ranged_get(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(String, String)],
    range: &str,
) -> ureq::RequestBuilder<ureq::typestate::WithoutBody> {
    let mut request = agent.get(url).header("Range", range);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    request
}

/// Reads a body that gave all it announced to its end: only a body read to its end hands its
/// connection back for the next request (a new connection costs a round trip, two for https).
fn finish_body(body: &mut impl Read) {
    let _ = body.read(&mut [0u8; 1]);
}

fn body_error(e: &Error, got: usize, expected: u64) -> String {
    format!("response cut short after {got} of {expected} bytes: {e}")
}

/// A response that is not the bytes asked for: its status, with S3's error code when the body
/// has one (`<Code>AccessDenied</Code>`); and that code.
fn status_failure(status: u16, body: &mut impl Read) -> (Failure, Option<String>) {
    let mut text = Vec::new();
    let _ = body.take(4096).read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text);
    let code = text
        .split_once("<Code>")
        .and_then(|(_, r)| r.split_once("</Code>"))
        .map(|(c, _)| c.trim().to_string());
    let reason = ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut what = format!("HTTP {status} {reason}");
    if let Some(code) = &code {
        what.push_str(&format!(" ({code})"));
    }
    let kind = match status {
        404 | 410 => ErrorKind::NotFound,
        401 | 403 => ErrorKind::PermissionDenied,
        _ => ErrorKind::Other,
    };
    let transient = matches!(status, 408 | 429 | 500 | 502 | 503 | 504);
    (Failure { transient, error: Error::new(kind, what.trim_end().to_string()) }, code)
}

/// A request that got no response.
fn transport_failure(e: ureq::Error) -> Failure {
    let (transient, kind) = match &e {
        ureq::Error::Timeout(_) => (true, ErrorKind::TimedOut),
        ureq::Error::Io(io) => (true, io.kind()),
        ureq::Error::ConnectionFailed => (true, ErrorKind::ConnectionRefused),
        ureq::Error::HostNotFound => (false, ErrorKind::NotFound),
        _ => (false, ErrorKind::Other),
    };
    let what = match &e {
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "connection failed".to_string(),
        ureq::Error::Io(io) => crate::error::c_message(io),
        other => other.to_string(),
    };
    Failure { transient, error: Error::new(kind, what) }
}
