//! The `xla-shape` command-line tool, as a library function (feature `cli`).
//!
//! The binary is one call to [`run`] with the process's arguments and standard streams; tests and
//! the fuzz target call it in-process with in-memory streams. Every computation is a library
//! call: `args` defines the command line, `input` loads bytes and shapes (with the input caps),
//! `output` writes text, JSON and `--lines` results, and `cmd` holds one module per subcommand.
//!
//! Exit status: 0 on success, 1 for invalid input (a wire error, a validation failure, a parse
//! failure, an unreadable or oversized input, an input that shrank while mapped), 2 for a usage
//! error. The binary ([`main`]) also ends by SIGINT, SIGTERM or SIGHUP (the shell's 130, 143,
//! 129) after removing every temporary file; files it writes appear whole or not at all.
//!
//! ```
//! let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
//! let status = xla_shape::cli::run(
//!     ["xla-shape", "offset", "f32[2,3]{0,1}", "1,0"],
//!     &mut &b""[..],
//!     &mut stdout,
//!     &mut stderr,
//! );
//! assert_eq!((status, stdout.as_slice()), (0, &b"1\n"[..]));
//!
//! // An invalid shape is exit status 1 and a message on stderr.
//! let status = xla_shape::cli::run(["xla-shape", "info", "f32[2]{1}"], &mut &b""[..], &mut stdout, &mut stderr);
//! assert_eq!(status, 1);
//! assert!(String::from_utf8_lossy(&stderr).starts_with("error: "));
//! ```

mod args;
mod blocks;
mod cmd;
mod data;
mod fail;
mod input;
mod interrupt;
mod map;
mod outfile;
mod output;
mod parts;
mod temp;

use std::ffi::OsString;
use std::io::{BufRead, Write};

use clap::Parser;

pub use input::MAX_INPUT_BYTES;

use args::{Cli, Command};

/// The standard streams of one run.
pub(crate) struct Io<'a> {
    pub stdin: &'a mut dyn BufRead,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    /// Whether `stdin` is the process's standard input, so that a regular file behind it may be
    /// used as a file ([`main`]).
    pub process_stdin: bool,
}

/// Runs the tool on `args` (the first item is the program name, as in `std::env::args_os`)
/// and returns the exit status: 0 success, 1 invalid input, 2 usage error.
///
/// Results go to `stdout`, warnings and errors to `stderr`; `stdin` is read only when the
/// command takes its input from there. Nothing else of the process is touched, except that
/// `--file` (and `hlo --lines`) open the files they name.
///
/// ```
/// let mut stdout = Vec::new();
/// let status = xla_shape::cli::run(
///     ["xla-shape", "decode", "--hex", "100b1a0103", "--optional-layout"],
///     &mut &b""[..],
///     &mut stdout,
///     &mut std::io::sink(),
/// );
/// assert_eq!((status, String::from_utf8(stdout).unwrap()), (0, "f32[3]\n".to_owned()));
/// ```
pub fn run<I, T>(args: I, stdin: &mut dyn BufRead, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_io(args, Io { stdin, stdout, stderr, process_stdin: false })
}

/// Runs the tool as the `xla-shape` binary: the process's arguments and standard streams.
/// Unlike [`run`], a regular file on standard input (`xla-shape relayout A B < FILE`) is used
/// as a file: `relayout` checks its length and maps it instead of reading it; and SIGINT,
/// SIGTERM and SIGHUP remove the run's temporary files before they end the process (the
/// handlers are installed here, once, never by [`run`]).
pub fn main() -> u8 {
    interrupt::install();
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    run_io(
        std::env::args_os(),
        Io { stdin: &mut stdin.lock(), stdout: &mut stdout.lock(), stderr: &mut stderr.lock(), process_stdin: true },
    )
}

fn run_io<I, T>(args: I, mut io: Io<'_>) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version are clap "errors" that belong on stdout with status 0.
            let rendered = error.render();
            // A closed stream leaves nothing else to report to.
            let _ = if error.use_stderr() { write!(io.stderr, "{rendered}") } else { write!(io.stdout, "{rendered}") };
            return u8::try_from(error.exit_code()).unwrap_or(2);
        }
    };
    let result = match &cli.command {
        Command::Decode(args) => cmd::decode::run(args, &mut io),
        Command::Encode(args) => cmd::encode::run(args, &mut io),
        Command::Validate(args) => cmd::validate::run(args, &mut io),
        Command::Offset(args) => cmd::offset::run_offset(args, &mut io),
        Command::Index(args) => cmd::offset::run_index(args, &mut io),
        Command::Info(args) => cmd::info::run(args, &mut io),
        Command::Map(args) => cmd::map::run(args, &mut io),
        Command::Draw(args) => cmd::draw::run(args, &mut io),
        Command::Hlo(args) => cmd::hlo::run(args, &mut io),
        Command::Relayout(args) => cmd::relayout::run(args, &mut io),
        Command::Shards(args) => cmd::shards::run(args, &mut io),
        Command::Values(args) => cmd::values::run(args, &mut io),
    };
    match result {
        Ok(status) => status.code(),
        Err(failure) => {
            let _ = writeln!(io.stderr, "error: {failure}");
            failure.exit_code()
        }
    }
}
