//! The top-level error: one line for the user, exit status 1.

/// An error that ends a command. Its `Display` is the whole message after `samtools <cmd>: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or output: names the file and what is wrong with it.
    #[error("{path}: {what}")]
    File { path: String, what: String },
    /// A usage mistake; the command prints its usage after the message.
    #[error("{0}")]
    Usage(String),
    /// Anything else, already phrased for the user.
    #[error("{0}")]
    Message(String),
    /// A complete line printed as it is (no `samtools <cmd>: ` prefix), as htslib-style logs.
    #[error("{0}")]
    Bare(String),
    /// Lines printed as they are, then this exit status (samtools' `return -1` is 255).
    #[error("{message}")]
    Status { message: String, status: i32 },
    /// A complete line as [`Error::Bare`] (if any), then the command's usage on stderr.
    #[error("{}", .0.as_deref().unwrap_or("usage"))]
    ShowUsage(Option<String>),
    /// Failure already reported on stderr: exit 1 without another message.
    #[error("failed")]
    Failed,
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

/// The C library's wording of an I/O error (`strerror`), as samtools prints it after a colon.
pub fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) if e.raw_os_error().is_some() => text[..at].to_string(),
        _ => text,
    }
}
