//! `xla-shape`: XLA shapes and layouts on the command line.
//!
//! Exit status: 0 on success, 1 for invalid input (a wire error, a validation failure, a parse
//! failure, an unreadable or oversized input), 2 for a usage error (clap's own code).
//!
//! The binary is thin: every computation is a library call. `args` defines the command line,
//! `input` loads bytes and shapes, `output` writes text, JSON and `--lines` results, and `cmd`
//! holds one module per subcommand.

mod args;
mod cmd;
mod fail;
mod input;
mod output;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Decode(args) => cmd::decode::run(&args),
        Command::Encode(args) => cmd::encode::run(&args),
        Command::Validate(args) => cmd::validate::run(&args),
        Command::Offset(args) => cmd::offset::run_offset(&args),
        Command::Index(args) => cmd::offset::run_index(&args),
        Command::Info(args) => cmd::info::run(&args),
        Command::Map(args) => cmd::map::run(&args),
        Command::Hlo(args) => cmd::hlo::run(&args),
    };
    match result {
        Ok(status) => status.into(),
        Err(failure) => {
            // A closed stderr leaves nothing else to report to.
            let _ = writeln!(std::io::stderr(), "error: {failure}");
            failure.exit_code()
        }
    }
}
