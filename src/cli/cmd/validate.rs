//! `validate`: decode and validate; `ok` or the error.

use crate::cli::Io;
use crate::cli::args::BytesArgs;
use crate::cli::cmd::decode;
use crate::cli::fail::{Failure, Status};
use crate::cli::input;
use crate::cli::output::{self, Reply};

fn reply(args: &BytesArgs, bytes: &[u8]) -> Reply {
    let mut reply = decode::reply(args.message, bytes, args.optional_layout);
    if reply.error.is_none() {
        "ok".clone_into(&mut reply.text);
    }
    reply
}

pub fn run(args: &BytesArgs, io: &mut Io<'_>) -> Result<Status, Failure> {
    if args.output.lines {
        return output::each_line(io, args.output.json, input::LineKind::Hex, |line| {
            Ok(reply(args, &input::decode_hex(line.as_bytes())?))
        });
    }
    let bytes = super::read_bytes(args, io)?;
    let reply = reply(args, &bytes);
    match (&reply.error, args.output.json) {
        // The error is the whole answer: on stderr, nothing on stdout.
        (Some(error), false) => {
            output::warn(io.stderr, "", &reply.warnings);
            Err(Failure::invalid(output::shorten(error)))
        }
        _ => output::emit(io, &reply, args.output.json),
    }
}
