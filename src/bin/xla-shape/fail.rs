//! The one error type of the binary and its exit codes.

use std::fmt;
use std::process::ExitCode;

/// Why a command failed.
#[derive(Debug)]
pub enum Failure {
    /// The input is invalid or unreadable: exit 1.
    Invalid(String),
    /// The command line is inconsistent in a way clap cannot express: exit 2.
    Usage(String),
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Invalid(_) => ExitCode::from(1),
            Self::Usage(_) => ExitCode::from(2),
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

impl From<xla_shape::Error> for Failure {
    fn from(e: xla_shape::Error) -> Self {
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
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> Self {
        match status {
            Status::Ok => ExitCode::SUCCESS,
            Status::Failed => ExitCode::from(1),
        }
    }
}
