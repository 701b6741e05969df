//! The top-level error: one line for the user, exit status 1.

/// An error that ends a command. Its `Display` is the whole message after `samtools <cmd>: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or output: names the file and what is wrong with it.
    #[error("{path}: {what}")]
    File { path: String, what: String },
    /// An output file that cannot be opened for writing (`reason`: the C library's message);
    /// the command line layer words it as the samtools command does.
    #[error("{path}: could not open for writing: {reason}")]
    CannotCreate { path: String, reason: String },
    /// A usage mistake; the command prints its usage after the message.
    #[error("{0}")]
    Usage(String),
    /// Anything else, already phrased for the user.
    #[error("{0}")]
    Message(String),
    /// A complete line printed as it is (no `samtools <cmd>: ` prefix), as htslib-style logs.
    #[error("{0}")]
    Bare(String),
    /// A complete line as [`Error::Bare`] (if any), then the command's usage on stderr.
    #[error("{}", .0.as_deref().unwrap_or("usage"))]
    ShowUsage(Option<String>),
    /// Failure already reported on stderr: exit 1 without another message.
    #[error("failed")]
    Failed,
    /// Failure already reported, with the exit status samtools gives it (quickcheck's bitmask,
    /// 255 for a `return -1` from samtools' main).
    #[error("exit status {0}")]
    Status(i32),
    /// `--help`: print the command's usage to stdout and exit 0.
    #[error("help")]
    Help,
    /// The output pipe closed (e.g. `| head`): exit quietly.
    #[error("broken pipe")]
    BrokenPipe,
}

impl Error {
    pub fn file(path: impl Into<String>, what: impl std::fmt::Display) -> Self {
        Error::File { path: path.into(), what: what.to_string() }
    }

    /// Wraps an I/O error on `path`, keeping broken pipes recognisable.
    pub fn io(path: impl Into<String>, e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Error::BrokenPipe
        } else {
            Error::File { path: path.into(), what: e.to_string() }
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The C library's message for an I/O error (`strerror`), without Rust's ` (os error N)`, for
/// the lines samtools and htslib print.
pub fn c_message(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let text = std::io::Error::from_raw_os_error(code).to_string();
            text.split(" (os error").next().unwrap_or(&text).to_string()
        }
        // `io::input::Input::open` refuses a directory before the C library would.
        None if e.kind() == std::io::ErrorKind::InvalidInput => "Is a directory".to_string(),
        None => e.to_string(),
    }
}
