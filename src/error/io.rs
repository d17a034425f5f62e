//! A file the library was asked to read ([`super::Error::File`]): which, what was being done,
//! and the operating system's answer.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What was being done with the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOperation {
    /// Opening it.
    Open,
    /// Reading it.
    Read,
}

/// A file that could not be opened or read: `cannot open PATH: REASON`, the reason as the
/// operating system gives it.
///
/// ```
/// use xla_shape::error::{FileError, FileOperation};
/// let error = std::io::Error::from(std::io::ErrorKind::NotFound);
/// let error = FileError::new(FileOperation::Open, "m.txt".into(), &error);
/// assert!(error.to_string().starts_with("cannot open m.txt: "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// What was being done.
    pub operation: FileOperation,
    /// The file.
    pub path: PathBuf,
    /// The kind of failure.
    pub kind: io::ErrorKind,
    /// The operating system's error number, when it gave one.
    pub os_error: Option<i32>,
}

impl FileError {
    /// The failure `error` of `operation` on `path`.
    pub fn new(operation: FileOperation, path: PathBuf, error: &io::Error) -> Self {
        Self { operation, path, kind: error.kind(), os_error: error.raw_os_error() }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let operation = match self.operation {
            FileOperation::Open => "open",
            FileOperation::Read => "read",
        };
        let reason = self.os_error.map_or_else(|| io::Error::from(self.kind), io::Error::from_raw_os_error);
        write!(f, "cannot {operation} {}: {reason}", self.path.display())
    }
}
