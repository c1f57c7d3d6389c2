//! The one error type of the library.

use std::path::PathBuf;

/// Everything that can go wrong in the library.
///
/// Configuration errors are structured so that callers (and the command line) can say
/// exactly which setting was wrong and why.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The number of min-hash values is not a multiple of the number of supershingles.
    #[error(
        "{minhashes} min-hash values cannot be split into {supershingles} equal supershingles"
    )]
    SupershinglesDoNotDivide {
        /// Configured number of min-hash values.
        minhashes: usize,
        /// Configured number of supershingles.
        supershingles: usize,
    },
    /// A numeric setting is outside its allowed range (inclusive bounds).
    #[error("{name} = {value} is out of range {min}..={max}")]
    OutOfRange {
        /// The setting's name.
        name: &'static str,
        /// The value given.
        value: u64,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
    },
    /// The number of Charikar bits must be a multiple of 64.
    #[error("charikar bits = {0} is not a multiple of 64 in 64..=1024")]
    CharikarBits(usize),
    /// Any other invalid combination of settings.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An input record could not be used.
    #[error("{source_name}: record {record}{}: {reason}", id.as_ref().map(|i| format!(" (id {i})")).unwrap_or_default())]
    BadRecord {
        /// The file (or `-` for standard input) the record came from.
        source_name: String,
        /// The record's position: line number for JSONL (1-based), byte offset for WARC.
        record: u64,
        /// The record's id, when it could be read.
        id: Option<String>,
        /// What was wrong.
        reason: String,
    },
    /// A saved file is damaged, truncated, of another format or of an unsupported version.
    #[error("{path}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was found wrong.
        reason: String,
    },
    /// The records of a run do not add up: a record was lost or counted twice.
    #[error("accounting broken: {0}")]
    Accounting(String),
    /// Sketches computed with different settings cannot be compared.
    #[error("sketch settings differ: {0}")]
    Incompatible(String),
    /// An online deduper's state failed earlier (an I/O error of its log or snapshot,
    /// or a panic while it was being changed) and takes no more changes until it is
    /// reopened, so that memory never holds what the disk does not.
    #[error(
        "the deduper's state takes no more changes until it is reopened: it failed earlier: {0}"
    )]
    Failed(String),
    /// The system refused memory an online deduper's tables needed to grow; the call
    /// that asked changed nothing (the document was neither logged nor stored), and
    /// the deduper goes on.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// An input changed between the two passes of a run (more records, another length):
    /// the second pass cannot write what the first decided.
    #[error("{0}")]
    InputChanged(String),
    /// An output cannot be made or written as asked (`name` is the output).
    #[error("{name}: {reason}")]
    Output {
        /// The output's name.
        name: String,
        /// What went wrong.
        reason: String,
    },
    /// An I/O error, with the path it concerns when known.
    #[error("{}{source}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Io {
        /// The file concerned, if any.
        path: Option<PathBuf>,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: Some(path.into()),
            source,
        }
    }
}

impl Error {
    /// An output that cannot be made or written: `name` and the reason.
    pub fn output(name: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Error::Output {
            name: name.into(),
            reason: reason.to_string(),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Self {
        Error::Io { path: None, source }
    }
}

/// `Result` with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks `min <= value <= max` for the setting `name`.
pub(crate) fn check_range(name: &'static str, value: u64, min: u64, max: u64) -> Result<()> {
    if value < min || value > max {
        Err(Error::OutOfRange {
            name,
            value,
            min,
            max,
        })
    } else {
        Ok(())
    }
}
