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
use std::io::{self, IoSlice, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::cli::fail::Failure;
use crate::cli::temp::TempFile;
use crate::memory::extent::len_u64;

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

/// Slices given to one `writev` at most (Linux's `IOV_MAX`).
const MAX_SLICES: usize = 1024;

/// Bytes given to one `write` or `writev` at most. Linux's page cache takes folios as large as
/// one call's bytes (up to 2 MiB), and on this project's VM — whose host takes back the guest's
/// free 2 MiB blocks at once (virtio-balloon free page reporting, `page_reporting_order` 9) —
/// large folios land on pages the host must supply anew, several times slower to fill: a 1 GiB
/// file written from a 16 MiB buffer took 3.3–6.0 s in whole writes and 0.86–1.03 s in writes of
/// 128 KiB, beside `cp`'s 0.66–0.89 s (`docs/relayout.md`, "The command line"). Pipes and devices
/// take the same calls.
pub const WRITE_BYTES: usize = 128 << 10;

/// Writes every byte of `bytes`, at most [`WRITE_BYTES`] in one call.
pub fn write_chunked(out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    bytes.chunks(WRITE_BYTES).try_for_each(|chunk| out.write_all(chunk))
}

/// Whether a `write` failed because its bytes could not be read (`EFAULT`: a mapped input's page
/// past its file's new end).
#[cfg(unix)]
fn is_fault(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EFAULT)
}

#[cfg(not(unix))]
fn is_fault(_: &io::Error) -> bool {
    false
}

/// Gives `file` its `len` bytes' blocks before they are written (`fallocate`, Linux): a disk
/// too small fails here, before any work, and the writes that follow fill allocated blocks
/// instead of reserving them a block at a time (ext4's delayed allocation: 1 GiB written in
/// 0.83–1.23 s instead of 1.03–1.47 s, `docs/relayout.md`). A file system that cannot
/// preallocate is written without.
#[cfg(target_os = "linux")]
fn preallocate(file: &File, len: u64) -> io::Result<()> {
    use rustix::io::Errno;
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, len) {
        Err(e) if e == Errno::NOSPC || e == Errno::DQUOT || e == Errno::FBIG => Err(e.into()),
        // Not supported here, or any other reason: the writes report their own errors.
        _ => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
fn preallocate(_: &File, _: u64) -> io::Result<()> {
    Ok(())
}

/// Writes every byte of `slices` (std's `write_all_vectored` is not stable yet).
fn write_all_vectored(file: &mut File, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// An output file being written.
#[derive(Debug)]
pub struct OutFile {
    /// Where the bytes go now.
    to: To,
    /// The name the user gave, for messages.
    shown: PathBuf,
    /// The length announced by [`OutFile::reserve`], checked by [`OutFile::finish`].
    reserved: Option<u64>,
    /// The bytes written so far, in order or at offsets.
    written: u64,
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
        Ok(Self { to, shown: target.to_path_buf(), reserved: None, written: 0 })
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

    /// Announces the output's length, `len` bytes, before the first write: a temporary file
    /// gets its blocks at once (`fallocate` where the file system has it), so that a disk too
    /// small fails now, before any work, and the writes are faster; a device or FIFO is left
    /// alone. Writing fewer bytes than announced would leave the rest zeros: the callers
    /// announce exactly what they write.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: No space left on device` (or the quota's or file size limit's
    /// error).
    pub fn reserve(&mut self, len: u64) -> Result<(), Failure> {
        match &self.to {
            To::InPlace(_) => Ok(()),
            To::Temp { temp, .. } => {
                preallocate(temp.file(), len).map_err(|e| self.failure(&e))?;
                self.reserved = Some(len);
                Ok(())
            }
        }
    }

    /// Writes the next bytes.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …`.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        write_chunked(self.file(), bytes).map_err(|e| self.failure(&e))?;
        self.count(bytes.len());
        Ok(())
    }

    fn count(&mut self, len: usize) {
        self.written = self.written.saturating_add(len_u64(len));
    }

    /// Whether [`OutFile::write_at`] can place bytes anywhere: a temporary regular file (Unix),
    /// not a device or FIFO written in place.
    pub fn positioned(&self) -> bool {
        cfg!(unix) && matches!(self.to, To::Temp { .. })
    }

    /// Writes `bytes` at byte `offset` of the file (`pwrite`, at most [`WRITE_BYTES`] in one
    /// call), without moving the position the in-order writes continue from. The callers write
    /// each byte once, so that [`OutFile::finish`] can check the count against the reservation.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …`, and an error when the output is not [`positioned`](Self::positioned).
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Failure> {
        #[cfg(unix)]
        if let To::Temp { temp, .. } = &self.to {
            use std::os::unix::fs::FileExt;
            let mut at = offset;
            for chunk in bytes.chunks(WRITE_BYTES) {
                temp.file().write_all_at(chunk, at).map_err(|e| self.failure(&e))?;
                at = at.saturating_add(len_u64(chunk.len()));
            }
            self.count(bytes.len());
            return Ok(());
        }
        let _ = (offset, bytes);
        Err(self.failure(&io::Error::other("this output is written in order only")))
    }

    /// Copies the next `len` bytes from `input` at byte `offset` (`copy_file_range` where the
    /// system has it, through `std::io::copy`: no copy through user space, and no page of the
    /// input mapped). `name` names the input in the message when it has fewer bytes than that
    /// (it shrank while being read).
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …`, `cannot read NAME: …`, `NAME shrank while being read`.
    pub fn copy_from(&mut self, input: &File, offset: u64, len: u64, name: &str) -> Result<(), Failure> {
        let mut reader = input;
        reader.seek(io::SeekFrom::Start(offset)).map_err(|e| Failure::invalid(format!("cannot read {name}: {e}")))?;
        let copied = io::copy(&mut reader.take(len), self.file()).map_err(|e| self.failure(&e))?;
        self.written = self.written.saturating_add(copied);
        if copied == len { Ok(()) } else { Err(Failure::invalid(format!("{name} shrank while being read"))) }
    }

    /// Writes `slices` in order, up to [`WRITE_BYTES`] in one call (`writev`): the byte runs of
    /// a mapped input go into the output in one copy, the kernel's, as [`OutFile::copy_from`]
    /// does, but with one system call for several short runs instead of one each
    /// (`docs/shard-buffers.md` §8). `name` names the input in the message when its pages cannot
    /// be read (a mapped file truncated underneath: the kernel's copy then fails with `EFAULT`
    /// instead of raising `SIGBUS`).
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …`, `NAME shrank while being read` (`name` is asked then).
    pub fn write_slices<'a>(
        &mut self,
        slices: impl IntoIterator<Item = &'a [u8]>,
        name: impl Fn() -> String,
    ) -> Result<(), Failure> {
        let mut batch: Vec<IoSlice<'a>> = Vec::with_capacity(MAX_SLICES);
        let (mut held, mut total) = (0usize, 0usize);
        let mut result = Ok(());
        for piece in slices.into_iter().flat_map(|slice| slice.chunks(WRITE_BYTES)) {
            if held.saturating_add(piece.len()) > WRITE_BYTES || batch.len() == MAX_SLICES {
                result = write_all_vectored(self.file(), &mut batch);
                if result.is_err() {
                    break;
                }
                batch.clear();
                held = 0;
            }
            batch.push(IoSlice::new(piece));
            held = held.saturating_add(piece.len());
            total = total.saturating_add(piece.len());
        }
        if result.is_ok() {
            result = write_all_vectored(self.file(), &mut batch);
        }
        if result.is_ok() {
            self.count(total);
        }
        result.map_err(|e| {
            if is_fault(&e) {
                Failure::invalid(format!("{} shrank while being read", name()))
            } else {
                self.failure(&e)
            }
        })
    }

    /// Ends the output: the temporary file, complete, is renamed onto the target.
    ///
    /// # Errors
    ///
    /// `cannot write TARGET: …` (the temporary file is then removed).
    pub fn finish(mut self) -> Result<(), Failure> {
        self.file().flush().map_err(|e| self.failure(&e))?;
        if let Some(len) = self.reserved {
            // Fewer bytes than announced would end in the preallocated zeros.
            let at = self.written;
            if at != len {
                return Err(self.failure(&io::Error::other(format!("{at} bytes written of the {len} announced"))));
            }
        }
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
        let n = self.file().write(bytes)?;
        self.count(n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|k| u8::try_from((k * 7 + k / 251) % 251).unwrap()).collect()
    }

    /// Slices of every kind — empty, one byte, longer than one call, and more than `IOV_MAX` of
    /// them — arrive whole and in order, after a reservation of exactly their length.
    #[test]
    fn slices_arrive_whole_and_in_order() {
        let dir = tempfile::TempDir::new().unwrap();
        let target = dir.path().join("out.bin");
        let data = pattern(6 * WRITE_BYTES + 3 * MAX_SLICES * 7 + 1);
        let mut cuts = vec![0, 0, 1, 1, WRITE_BYTES + 1, 3 * WRITE_BYTES, 2 * WRITE_BYTES - 2];
        cuts.extend(std::iter::repeat_n(7, 3 * MAX_SLICES));
        let mut slices = Vec::new();
        let mut at = 0;
        for len in cuts {
            slices.push(&data[at..at + len]);
            at += len;
        }
        slices.push(&data[at..]);
        let mut out = OutFile::create(&target).unwrap();
        out.reserve(u64::try_from(data.len()).unwrap()).unwrap();
        out.write_slices(slices, String::new).unwrap();
        out.write_bytes(b"").unwrap();
        out.finish().unwrap();
        assert!(std::fs::read(&target).unwrap() == data);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// An output that ends short of its reservation is an error, not a file padded with zeros,
    /// and leaves nothing.
    #[test]
    fn an_output_short_of_its_reservation_fails_and_leaves_nothing() {
        let dir = tempfile::TempDir::new().unwrap();
        let target = dir.path().join("out.bin");
        let mut out = OutFile::create(&target).unwrap();
        out.reserve(1000).unwrap();
        out.write_bytes(&[1; 999]).unwrap();
        let err = out.finish().unwrap_err().to_string();
        assert!(err.contains("999 bytes written of the 1000 announced"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A mapped input truncated underneath: the kernel's copy of its lost pages fails (`EFAULT`,
    /// no `SIGBUS`), and the message names the input. (Miri maps nothing.)
    #[cfg(all(target_os = "linux", not(miri)))]
    #[test]
    fn a_mapped_input_truncated_underneath_is_named() {
        let dir = tempfile::TempDir::new().unwrap();
        let input = dir.path().join("in.bin");
        std::fs::write(&input, pattern(1 << 20)).unwrap();
        let file = File::open(&input).unwrap();
        let map = crate::cli::map::map(&file, 0, 1 << 20, "in.bin").unwrap().unwrap();
        File::options().write(true).open(&input).unwrap().set_len(4096).unwrap();
        let mut out = OutFile::create(&dir.path().join("out.bin")).unwrap();
        let err = out.write_slices([&map[..]], || "in.bin".to_owned()).unwrap_err().to_string();
        assert_eq!(err, "in.bin shrank while being read");
        drop(out);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
