//! The crate's one error type: a message for the user, naming the file when there is one.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// A usage mistake; the command prints its usage after the message.
    Usage(String),
    /// Bad input or output file.
    File { path: String, what: String },
    /// Anything else, already phrased for the user.
    Message(String),
}

impl Error {
    pub fn file(path: impl Into<String>, what: impl fmt::Display) -> Error {
        Error::File { path: path.into(), what: what.to_string() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Message(m) => f.write_str(m),
            Error::File { path, what } => write!(f, "{path}: {what}"),
        }
    }
}

impl std::error::Error for Error {}
