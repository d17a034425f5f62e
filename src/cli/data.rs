//! Array data of any size, in bounded memory: where `relayout` gets its source bytes and where
//! it puts the destination's (rules: `docs/relayout.md`, "The command line").
//!
//! * A regular file (an operand, or standard input redirected from one) has its length checked
//!   from its metadata before anything is read, then is memory-mapped (`map.rs`) or, with
//!   `--no-mmap`, read into memory. A mapped file truncated underneath is noticed
//!   ([`Source::check`]) before anything computed from it is written.
//! * Any other stream (a pipe) is read in chunks: kept in memory up to half the memory bound,
//!   past that spooled to an unlinked temporary file (`temp.rs`) that is then mapped. It fails
//!   with the expected and actual sizes as soon as it is longer than expected, and at its end
//!   if shorter.
//! * The output goes to standard output or to `--output` through an [`OutFile`]: a temporary
//!   file renamed into place only when complete (a failed or interrupted run removes it), or a
//!   device or FIFO written in place.

use std::fs::File;
use std::io::{self, Read, Write};
use std::ops::Deref;

use crate::cli::fail::Failure;
use crate::cli::map::{self, Mapped};
use crate::cli::outfile::{self, OutFile};
use crate::cli::temp::TempFile;

/// Bytes read from a stream per call.
const CHUNK: usize = 1 << 20;

/// The source bytes of a run.
pub enum Source {
    /// Read into memory.
    Memory(Vec<u8>),
    /// A mapped file (the input, or the spool of a long stream).
    Mapped(Mapped),
}

impl Deref for Source {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Memory(bytes) => bytes,
            Self::Mapped(map) => map,
        }
    }
}

impl Source {
    /// Fails with `NAME shrank while being read` once a mapped input was truncated underneath
    /// (`map.rs`: the pages past its new end then read as zeros): nothing computed from it may
    /// be written after that.
    pub fn check(&self) -> Result<(), Failure> {
        match self {
            Self::Mapped(map) if map.shrank() => {
                Err(Failure::invalid(format!("{} shrank while being read", map.name())))
            }
            _ => Ok(()),
        }
    }
}

/// The error for an input of `actual` bytes (`or more` when reading stopped early) where
/// `expected` were due.
pub fn length_error(actual: u64, more: bool, expected: u64, what: &str) -> Failure {
    let more = if more { " or more" } else { "" };
    Failure::invalid(format!("input has {actual}{more} bytes, expected {expected} ({what})"))
}

/// The `expected` bytes of a regular file from byte `offset` on; its length (from its
/// metadata) must match. `name` names the file in the message if it shrinks while mapped.
pub fn from_file(
    file: &mut File,
    offset: u64,
    expected: u64,
    what: &str,
    no_mmap: bool,
    name: &str,
) -> Result<Source, Failure> {
    let len = file.metadata().map_err(|e| Failure::invalid(format!("cannot read the input: {e}")))?.len();
    let actual = len.saturating_sub(offset);
    if actual != expected {
        return Err(length_error(actual, false, expected, what));
    }
    if !no_mmap {
        match map::map(file, offset, expected, name) {
            Ok(Some(mapped)) => return Ok(Source::Mapped(mapped)),
            Ok(None) => {}
            Err(e) => {
                return Err(Failure::invalid(format!(
                    "cannot map the input: {e} (--no-mmap reads it into memory instead)"
                )));
            }
        }
    }
    // The file holds exactly `expected` bytes after `offset` (checked above): read them.
    let mut bytes = Vec::new();
    let read = io::Read::by_ref(file)
        .take(expected)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::invalid(format!("cannot read the input: {e}")))?;
    // Its metadata said `expected` bytes: fewer means it was truncated while being read, as a
    // mapped file that shrinks ([`Source::check`]).
    if u64::try_from(read).unwrap_or(u64::MAX) != expected {
        return Err(Failure::invalid(format!("{name} shrank while being read")));
    }
    Ok(Source::Memory(bytes))
}

/// Exactly `expected` bytes of a stream, read in chunks: in memory up to `memory` bytes,
/// spooled to a temporary file and mapped past that. Fails as soon as the stream is longer than
/// `expected`, and at its end if it is shorter.
pub fn from_stream(reader: &mut dyn Read, expected: u64, memory: u64, what: &str) -> Result<Source, Failure> {
    let fail = |e: io::Error| Failure::invalid(format!("cannot read the input: {e}"));
    let mut held: Vec<u8> = Vec::new();
    let mut spool: Option<TempFile> = None;
    let mut total = 0u64;
    loop {
        // Read into the room after what is held: exactly one chunk more (no doubling, so the
        // memory held stays within a chunk of what was read).
        let start = held.len();
        held.try_reserve_exact(CHUNK).map_err(|e| Failure::invalid(format!("cannot read the input: {e}")))?;
        held.resize(start.saturating_add(CHUNK), 0);
        let n = loop {
            match reader.read(held.get_mut(start..).unwrap_or_default()) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other.map_err(fail)?,
            }
        };
        held.truncate(start.saturating_add(n));
        if n == 0 {
            break;
        }
        total = total.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
        if total > expected {
            return Err(length_error(total, true, expected, what));
        }
        if spool.is_none() && u64::try_from(held.len()).unwrap_or(u64::MAX) > memory {
            spool = Some(TempFile::anonymous("xla-shape-spool").map_err(|e| {
                Failure::invalid(format!("cannot create a spool file in {}: {e}", std::env::temp_dir().display()))
            })?);
        }
        if let Some(spool) = &mut spool {
            spool
                .file_mut()
                .write_all(&held)
                .map_err(|e| Failure::invalid(format!("cannot write the spool file: {e}")))?;
            held.clear();
            held.shrink_to(CHUNK);
        }
    }
    if total != expected {
        return Err(length_error(total, false, expected, what));
    }
    match spool {
        None => Ok(Source::Memory(held)),
        Some(spool) => {
            let name = "the spool file";
            match map::map(spool.file(), 0, expected, name) {
                Ok(Some(mapped)) => Ok(Source::Mapped(mapped)),
                // Under Miri: read the spool back (the test inputs are small).
                Ok(None) => from_file(&mut { spool.file().try_clone().map_err(fail)? }, 0, expected, what, true, name),
                Err(e) => Err(Failure::invalid(format!("cannot map the spool file: {e}"))),
            }
        }
    }
}

/// Where the destination's bytes go, in order.
pub enum Sink<'a> {
    /// Standard output.
    Stdout(&'a mut dyn Write),
    /// `--output`: a temporary file renamed onto it when complete, or a device or FIFO written
    /// in place (`outfile.rs`).
    File(OutFile),
}

impl Sink<'_> {
    /// Writes the next bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        match self {
            Self::Stdout(out) => outfile::write_chunked(&mut **out, bytes)
                .map_err(|e| Failure::invalid(format!("cannot write the output: {e}"))),
            Self::File(file) => file.write_bytes(bytes),
        }
    }

    /// Whether the output takes bytes at offsets ([`OutFile::positioned`]).
    pub fn positioned(&self) -> bool {
        matches!(self, Self::File(file) if file.positioned())
    }

    /// Writes `bytes` at byte `offset` of a [`positioned`](Self::positioned) output.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Failure> {
        match self {
            Self::Stdout(_) => Err(Failure::invalid("cannot write the output: standard output is written in order")),
            Self::File(file) => file.write_at(offset, bytes),
        }
    }

    /// Announces the output's length (`OutFile::reserve`; nothing for standard output).
    pub fn reserve(&mut self, len: u64) -> Result<(), Failure> {
        match self {
            Self::Stdout(_) => Ok(()),
            Self::File(file) => file.reserve(len),
        }
    }

    /// Flushes standard output, or renames the complete temporary file onto the output.
    pub fn finish(self) -> Result<(), Failure> {
        match self {
            Self::Stdout(out) => out.flush().map_err(|e| Failure::invalid(format!("cannot write the output: {e}"))),
            Self::File(file) => file.finish(),
        }
    }
}
