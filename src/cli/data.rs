//! Array data of any size, in bounded memory: where `relayout` gets its source bytes and where
//! it puts the destination's (rules: `docs/relayout.md`, "The command line").
//!
//! * A regular file (an operand, or standard input redirected from one) has its length checked
//!   from its metadata before anything is read, then is memory-mapped (`map.rs`) or, with
//!   `--no-mmap`, read into memory.
//! * Any other stream (a pipe) is read in chunks: kept in memory up to half the memory bound,
//!   past that spooled to an unlinked temporary file that is then mapped. It fails with the
//!   expected and actual sizes as soon as it is longer than expected, and at its end if shorter.
//! * The output goes to standard output or to a temporary file beside `--output` (the file a
//!   symbolic link names), renamed into place only when complete (a failed run removes it); an
//!   `--output` that exists and is not a regular file (`/dev/null`, a FIFO) is written in place.

use std::fs::File;
use std::io::{self, Read, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::cli::fail::Failure;
use crate::cli::map::{self, Mapped};

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

/// The error for an input of `actual` bytes (`or more` when reading stopped early) where
/// `expected` were due.
pub fn length_error(actual: u64, more: bool, expected: u64, what: &str) -> Failure {
    let more = if more { " or more" } else { "" };
    Failure::invalid(format!("input has {actual}{more} bytes, expected {expected} ({what})"))
}

/// The `expected` bytes of a regular file from byte `offset` on; its length (from its
/// metadata) must match.
pub fn from_file(file: &mut File, offset: u64, expected: u64, what: &str, no_mmap: bool) -> Result<Source, Failure> {
    let len = file.metadata().map_err(|e| Failure::invalid(format!("cannot read the input: {e}")))?.len();
    let actual = len.saturating_sub(offset);
    if actual != expected {
        return Err(length_error(actual, false, expected, what));
    }
    if !no_mmap {
        match map::map(file, offset, expected) {
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
    let read = u64::try_from(read).unwrap_or(u64::MAX);
    if read != expected {
        return Err(length_error(read, false, expected, what));
    }
    Ok(Source::Memory(bytes))
}

/// An unlinked temporary file (removed at once on Unix, when dropped elsewhere).
struct Spool {
    file: File,
    path: Option<PathBuf>,
}

impl Spool {
    fn new() -> Result<Self, Failure> {
        let dir = std::env::temp_dir();
        let (file, path) = create_beside(&dir, "xla-shape-spool")
            .map_err(|e| Failure::invalid(format!("cannot create a spool file in {}: {e}", dir.display())))?;
        // Unix keeps an unlinked file's data while it is open: nothing is left behind, even
        // if the process is killed.
        let path = if cfg!(unix) && std::fs::remove_file(&path).is_ok() { None } else { Some(path) };
        Ok(Self { file, path })
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Exactly `expected` bytes of a stream, read in chunks: in memory up to `memory` bytes,
/// spooled to a temporary file and mapped past that. Fails as soon as the stream is longer than
/// `expected`, and at its end if it is shorter.
pub fn from_stream(reader: &mut dyn Read, expected: u64, memory: u64, what: &str) -> Result<Source, Failure> {
    let fail = |e: io::Error| Failure::invalid(format!("cannot read the input: {e}"));
    let mut held: Vec<u8> = Vec::new();
    let mut spool: Option<Spool> = None;
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
            spool = Some(Spool::new()?);
        }
        if let Some(spool) = &mut spool {
            spool.file.write_all(&held).map_err(|e| Failure::invalid(format!("cannot write the spool file: {e}")))?;
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
            match map::map(&spool.file, 0, expected) {
                Ok(Some(mapped)) => Ok(Source::Mapped(mapped)),
                // Under Miri: read the spool back (the test inputs are small).
                Ok(None) => from_file(&mut { spool.file.try_clone().map_err(fail)? }, 0, expected, what, true),
                Err(e) => Err(Failure::invalid(format!("cannot map the spool file: {e}"))),
            }
        }
    }
}

/// Creates a new file in `dir` named `.{stem}.{pid}.{k}.tmp` for the first free `k`.
fn create_beside(dir: &Path, stem: &str) -> io::Result<(File, PathBuf)> {
    let pid = std::process::id();
    let mut last = io::Error::other("no free temporary name");
    for k in 0..100u32 {
        let path = dir.join(format!(".{stem}.{pid}.{k}.tmp"));
        match File::options().write(true).read(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Where the destination's bytes go, in order.
pub enum Sink<'a> {
    /// Standard output.
    Stdout(&'a mut dyn Write),
    /// An `--output` that is not a regular file (a device such as `/dev/null`, a FIFO, a
    /// socket): written in place, since it cannot be replaced.
    Stream { file: File, target: PathBuf },
    /// A temporary file beside the output, renamed onto it by [`Sink::finish`].
    File(Pending),
}

/// A temporary output file; removed when dropped before [`Sink::finish`] renamed it.
pub struct Pending {
    file: File,
    temp: PathBuf,
    target: PathBuf,
    done: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Symbolic links followed this many times at most (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The path `path` names after following symbolic links, if it is one: the file to replace
/// (the link stays, as `cp` and the shell's `>` write through it), with its metadata if it
/// exists yet.
fn follow_links(path: &Path) -> io::Result<(PathBuf, Option<std::fs::Metadata>)> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(m) => return Ok((path, Some(m))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((path, None)),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

impl Sink<'_> {
    /// The output `target`. A regular file (or none yet) is written through a temporary file in
    /// the same directory (so that the rename is atomic) that takes an existing file's
    /// permissions; a symbolic link is followed; anything else that exists (a device, a FIFO)
    /// is written in place, in order, since renaming onto it would replace it.
    pub fn file(target: &Path) -> Result<Self, Failure> {
        let fail = |e: io::Error| Failure::invalid(format!("cannot create {}: {e}", target.display()));
        let (resolved, existing) = follow_links(target).map_err(fail)?;
        match existing {
            Some(m) if m.is_dir() => Err(fail(io::Error::other("it is a directory"))),
            Some(m) if !m.is_file() => {
                let file = File::options().write(true).open(&resolved).map_err(fail)?;
                Ok(Self::Stream { file, target: target.to_path_buf() })
            }
            existing => {
                let dir = match resolved.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir,
                    _ => Path::new("."),
                };
                let stem = resolved.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
                let (file, temp) = create_beside(dir, &stem).map_err(fail)?;
                let pending = Pending { file, temp, target: resolved, done: false };
                if let Some(m) = existing {
                    pending.file.set_permissions(m.permissions()).map_err(fail)?;
                }
                Ok(Self::File(pending))
            }
        }
    }

    /// Writes the next bytes.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        match self {
            Self::Stdout(out) => {
                out.write_all(bytes).map_err(|e| Failure::invalid(format!("cannot write the output: {e}")))
            }
            Self::Stream { file, target } | Self::File(Pending { file, target, .. }) => {
                file.write_all(bytes).map_err(|e| Failure::invalid(format!("cannot write {}: {e}", target.display())))
            }
        }
    }

    /// Flushes standard output, or renames the complete temporary file onto the output.
    pub fn finish(self) -> Result<(), Failure> {
        match self {
            Self::Stdout(out) => out.flush().map_err(|e| Failure::invalid(format!("cannot write the output: {e}"))),
            Self::Stream { mut file, target } => {
                file.flush().map_err(|e| Failure::invalid(format!("cannot write {}: {e}", target.display())))
            }
            Self::File(mut p) => {
                p.file.flush().map_err(|e| Failure::invalid(format!("cannot write {}: {e}", p.target.display())))?;
                std::fs::rename(&p.temp, &p.target)
                    .map_err(|e| Failure::invalid(format!("cannot write {}: {e}", p.target.display())))?;
                p.done = true;
                Ok(())
            }
        }
    }
}
