//! The one error type of the binary and its exit codes.

use std::fmt;

/// Why a command failed.
#[derive(Debug)]
pub enum Failure {
    /// The input is invalid or unreadable: exit 1.
    Invalid(String),
    /// The command line is inconsistent in a way clap cannot express: exit 2.
    Usage(String),
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Invalid(_) => 1,
            Self::Usage(_) => 2,
        }
    }

    pub fn invalid(message: impl fmt::Display) -> Self {
        Self::Invalid(message.to_string())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(message) | Self::Usage(message) => f.write_str(message),
        }
    }
}

impl From<crate::Error> for Failure {
    fn from(e: crate::Error) -> Self {
        Self::invalid(e)
    }
}

/// Whether every input succeeded (exit 0) or some failed (exit 1, already reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Failed,
}

impl Status {
    pub fn from_ok(ok: bool) -> Self {
        if ok { Self::Ok } else { Self::Failed }
    }

    pub fn code(self) -> u8 {
        match self {
            Self::Ok => 0,
            Self::Failed => 1,
        }
    }
}
