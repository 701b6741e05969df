//! The progress bar on an interactive terminal: bytes of the main input read, records parsed,
//! rate and (for files, whose size is known) ETA, drawn on stderr with `indicatif`.
//!
//! Where it sits: used by every layer like [`crate::error`], but hooked in at two places only:
//! [`crate::io::open::RecordReader::read_batches`] reports each batch ([`advance`]) and end of
//! input ([`reached_end`]); `cli::run_command` decides once per process whether bars are drawn
//! ([`init`]) and ends any bar before printing the outcome ([`finish`], also called before a
//! reader's warnings or errors are printed).
//!
//! Rules:
//! 1. A bar is drawn only when stderr is a terminal and `--no-progress` was not given: scripts
//!    that read samtools' stderr see exactly what samtools prints.
//! 2. Only the first input a command reads gets the bar (sort's merge of its own temporary runs,
//!    read later, does not restart it).
//! 3. Records written to a terminal stdout turn the bar off ([`disable`]), so it never mixes with
//!    SAM text on the screen.
//! 4. At end of input the bar stays as a one-line summary (bytes, records, time, rate).

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Decided once by [`init`]; read on every batch, so an atomic rather than the lock.
static ENABLED: AtomicBool = AtomicBool::new(false);

static CURRENT: Mutex<Option<Tracker>> = Mutex::new(None);

/// The command name shown before the bar.
static COMMAND: Mutex<String> = Mutex::new(String::new());

/// The bar of the first input read.
struct Tracker {
    path: String,
    bar: ProgressBar,
    records: u64,
    done: bool,
}

/// Bars are redrawn at least this often, so a reader blocked on a slow pipe still shows its rate.
const TICK: Duration = Duration::from_millis(250);

/// Whether progress is shown: stderr is a terminal and `--no-progress` was not given. Call once
/// at start, before any input is opened.
pub fn init(command: &str, no_progress: bool) {
    let on = !no_progress && std::io::stderr().is_terminal();
    ENABLED.store(on, Ordering::Relaxed);
    if let Ok(mut c) = COMMAND.lock() {
        *c = command.to_string();
    }
}

/// Turns bars off for the rest of the run (records are being written to a terminal stdout) and
/// removes any bar drawn so far.
pub fn disable() {
    ENABLED.store(false, Ordering::Relaxed);
    if let Ok(mut current) = CURRENT.lock()
        && let Some(t) = current.take()
    {
        t.bar.finish_and_clear();
    }
}

/// Whether bars are drawn.
pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// `records` more were read from `path`, whose input now stands at byte `position` (compressed
/// bytes consumed, when known).
pub fn advance(path: &str, records: u64, position: Option<u64>) {
    if !is_enabled() {
        return;
    }
    let Ok(mut current) = CURRENT.lock() else { return };
    let tracker = current.get_or_insert_with(|| start(path));
    if tracker.done || tracker.path != path {
        return;
    }
    tracker.records += records;
    if let Some(p) = position {
        tracker.bar.set_position(p);
    }
    tracker.bar.set_message(records_message(tracker.records, tracker.bar.elapsed()));
}

/// `path` has no more records: the bar of that input is drawn one last time and kept.
pub fn reached_end(path: &str) {
    if !is_enabled() {
        return;
    }
    let Ok(mut current) = CURRENT.lock() else { return };
    if let Some(t) = current.as_mut()
        && t.path == path
        && !t.done
    {
        t.done = true;
        if let Some(total) = t.bar.length() {
            t.bar.set_position(total);
        }
        t.bar.set_message(records_message(t.records, t.bar.elapsed()));
        t.bar.finish();
    }
}

/// Ends progress for the rest of the run (a warning or an error is about to be printed, or the
/// command is over): a bar still running is left as it was, so the next message starts on a
/// line of its own, and no new bar starts.
pub fn finish() {
    ENABLED.store(false, Ordering::Relaxed);
    if let Ok(mut current) = CURRENT.lock()
        && let Some(t) = current.as_mut()
        && !t.done
    {
        t.done = true;
        t.bar.abandon();
    }
}

fn start(path: &str) -> Tracker {
    // The size of a regular file gives a percentage and an ETA; stdin and pipes have none.
    let total = (path != "-")
        .then(|| std::fs::metadata(path).ok())
        .flatten()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let command = COMMAND.lock().map(|c| c.clone()).unwrap_or_default();
    let bar = match total {
        Some(len) => ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
            .with_style(style(KNOWN_SIZE)),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(style(UNKNOWN_SIZE)),
    };
    bar.set_prefix(command);
    bar.enable_steady_tick(TICK);
    Tracker { path: path.to_string(), bar, records: 0, done: false }
}

const KNOWN_SIZE: &str = "{prefix} [{elapsed_precise}] [{bar:24}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, ETA {eta}) {msg}";
const UNKNOWN_SIZE: &str =
    "{prefix} [{elapsed_precise}] {spinner} {binary_bytes} ({binary_bytes_per_sec}) {msg}";

fn style(template: &str) -> ProgressStyle {
    // SAFETY of the fallback: both templates are constants checked by the test below.
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// "1,234,567 records (250,000/s)".
fn records_message(records: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { (records as f64 / secs) as u64 } else { 0 };
    format!("{} records ({}/s)", thousands(records), thousands(rate))
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse() {
        assert!(ProgressStyle::with_template(KNOWN_SIZE).is_ok());
        assert!(ProgressStyle::with_template(UNKNOWN_SIZE).is_ok());
    }

    #[test]
    fn record_counts_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(records_message(500, Duration::from_secs(2)), "500 records (250/s)");
    }
}
