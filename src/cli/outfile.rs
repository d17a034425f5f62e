//! An output file that appears whole or not at all: every file the tool writes (`relayout -o`,
//! `shards --split`/`--assemble`, `values --npy`, `draw -o`) goes through [`OutFile`].
//!
//! A regular file (or a name that does not exist yet) is written to a new temporary file in the
//! same directory ([`TempFile`], registered for the interrupt thread) and renamed onto its name
//! by [`OutFile::finish`], atomically: a failed, dropped or interrupted output removes the
//! temporary file and leaves an existing file as it was. The temporary file takes an existing
//! file's permissions. A symbolic link is followed (the link stays; the file it names is
//! replaced, as `cp` and the shell's `>` write through it). Anything else that exists (a device
//! such as `/dev/null`, a FIFO, a socket) is written in place, since renaming onto it would
//! replace it.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::cli::fail::Failure;
use crate::cli::temp::TempFile;

/// Symbolic links followed this many times at most (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The path `path` names after following symbolic links, if it is one: the file to replace,
/// with its metadata if it exists yet.
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

/// An output file being written.
#[derive(Debug)]
pub struct OutFile {
    /// Where the bytes go now.
    to: To,
    /// The name the user gave, for messages.
    shown: PathBuf,
}

#[derive(Debug)]
enum To {
    /// Not a regular file: written in place.
    InPlace(File),
    /// A temporary file, renamed onto `target` (links followed) when complete.
    Temp { temp: TempFile, target: PathBuf },
}

impl OutFile {
    /// Starts writing `target`.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …` when it is a directory, or cannot be opened, or no temporary file
    /// can be created beside it.
    pub fn create(target: &Path) -> Result<Self, Failure> {
        let fail = |e: io::Error| Failure::invalid(format!("cannot write {}: {e}", target.display()));
        let (resolved, existing) = follow_links(target).map_err(fail)?;
        let to = match existing {
            Some(m) if m.is_dir() => return Err(fail(io::Error::other("it is a directory"))),
            Some(m) if !m.is_file() => To::InPlace(File::options().write(true).open(&resolved).map_err(fail)?),
            existing => {
                let dir = match resolved.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir,
                    _ => Path::new("."),
                };
                let stem = resolved.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
                let temp = TempFile::new_in(dir, &stem).map_err(fail)?;
                if let Some(m) = existing {
                    temp.file().set_permissions(m.permissions()).map_err(fail)?;
                }
                To::Temp { temp, target: resolved }
            }
        };
        Ok(Self { to, shown: target.to_path_buf() })
    }

    fn file(&mut self) -> &mut File {
        match &mut self.to {
            To::InPlace(file) => file,
            To::Temp { temp, .. } => temp.file_mut(),
        }
    }

    fn failure(&self, e: &io::Error) -> Failure {
        Failure::invalid(format!("cannot write {}: {e}", self.shown.display()))
    }

    /// Writes the next bytes.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …`.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        self.file().write_all(bytes).map_err(|e| self.failure(&e))
    }

    /// Copies the next `len` bytes from `input` at byte `offset` (`copy_file_range` where the
    /// system has it, through `std::io::copy`: no copy through user space). `name` names the
    /// input in the message when it has fewer bytes than that (it shrank while being read).
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …`, `cannot read NAME: …`, `NAME shrank while being read`.
    pub fn copy_from(&mut self, input: &File, offset: u64, len: u64, name: &str) -> Result<(), Failure> {
        let mut reader = input;
        reader.seek(io::SeekFrom::Start(offset)).map_err(|e| Failure::invalid(format!("cannot read {name}: {e}")))?;
        let copied = io::copy(&mut reader.take(len), self.file()).map_err(|e| self.failure(&e))?;
        if copied == len { Ok(()) } else { Err(Failure::invalid(format!("{name} shrank while being read"))) }
    }

    /// Ends the output: the temporary file, complete, is renamed onto the target.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …` (the temporary file is then removed).
    pub fn finish(mut self) -> Result<(), Failure> {
        self.file().flush().map_err(|e| self.failure(&e))?;
        let shown = self.shown;
        match self.to {
            To::InPlace(_) => Ok(()),
            To::Temp { temp, target } => {
                temp.persist(&target).map_err(|e| Failure::invalid(format!("cannot write {}: {e}", shown.display())))
            }
        }
    }
}

impl Write for OutFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.file().write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}
