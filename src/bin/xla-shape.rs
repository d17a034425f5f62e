//! `xla-shape`: XLA shapes and layouts on the command line. Everything happens in
//! [`xla_shape::cli::run`]; this is the process around it.

use std::io;
use std::process::ExitCode;

fn main() -> ExitCode {
    let status = xla_shape::cli::run(
        std::env::args_os(),
        &mut io::stdin().lock(),
        &mut io::stdout().lock(),
        &mut io::stderr().lock(),
    );
    ExitCode::from(status)
}
