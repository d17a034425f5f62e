//! The temporary files of a run, and the one process-wide registry of their names.
//!
//! Every file the tool creates only to rename or delete it later — an output's `.NAME.PID.K.tmp`
//! beside its final name (`outfile.rs`), the spool of a long piped input (`data.rs`) or of
//! `hlo`'s listing — is a [`TempFile`], and its name is in the registry from the moment the
//! file exists until it is renamed into place or removed. [`remove_all`] removes every name
//! still registered; the interrupt thread (`interrupt.rs`) calls it when SIGINT, SIGTERM or SIGHUP
//! arrives, so an interrupted run leaves nothing behind and never a half-written file under a
//! final name.
//!
//! Each change of the registry and of the file system that goes with it happens under one lock:
//! a name is registered while its file is created (`create_new`), and renamed or removed and
//! deregistered together. So whenever [`remove_all`] holds the lock, the registry names exactly
//! the temporary files that exist; and it keeps the lock until the process ends, so no new one
//! appears meanwhile and no rename completes after it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The longest part of a temporary file's name taken from the file it stands for.
const MAX_STEM_BYTES: usize = 200;

/// The names of the temporary files that exist now.
static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry, locked (a panic elsewhere while it was held does not make it unusable: each
/// change is one push or one removal).
fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes `path` from the registry.
fn deregister(names: &mut Vec<PathBuf>, path: &Path) {
    if let Some(at) = names.iter().position(|p| p == path) {
        names.swap_remove(at);
    }
}

/// The registry, held after [`remove_all`] emptied it: while it lives no temporary file can be
/// created, renamed or removed.
pub struct Held {
    _names: MutexGuard<'static, Vec<PathBuf>>,
}

/// Removes every registered temporary file and returns the registry still locked, so that the
/// caller can end the process before any other thread creates or renames one.
pub fn remove_all() -> Held {
    let mut names = registry();
    for path in names.drain(..) {
        // A file already gone is what was wanted.
        let _ = std::fs::remove_file(&path);
    }
    Held { _names: names }
}

/// A temporary file: removed when dropped, unless [`TempFile::persist`] renamed it or
/// [`TempFile::unlink`] removed its name first.
#[derive(Debug)]
pub struct TempFile {
    file: File,
    path: PathBuf,
    /// Whether the name is still registered (and the file still has it).
    named: bool,
}

impl TempFile {
    /// Creates a new file `.{stem}.{pid}.{k}.tmp` in `dir` (readable and writable) for the first
    /// free `k`, registered before anyone can see it.
    ///
    /// # Errors
    ///
    /// What creating the file reports; `AlreadyExists` when 100 names are taken.
    pub fn new_in(dir: &Path, stem: &str) -> io::Result<Self> {
        let pid = std::process::id();
        // A name of at most 255 bytes (NAME_MAX) whatever the stem: 200 of it, whole characters.
        let end = (0..=stem.len().min(MAX_STEM_BYTES)).rev().find(|&i| stem.is_char_boundary(i)).unwrap_or(0);
        let stem = stem.get(..end).unwrap_or_default();
        let mut names = registry();
        let mut last = io::Error::other("no free temporary name");
        for k in 0..100u32 {
            let path = dir.join(format!(".{stem}.{pid}.{k}.tmp"));
            match File::options().write(true).read(true).create_new(true).open(&path) {
                Ok(file) => {
                    names.push(path.clone());
                    return Ok(Self { file, path, named: true });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// A file in the system's temporary directory whose name is removed at once where the
    /// system keeps an open file's data (Unix), so that nothing is left even if the process is
    /// killed; elsewhere the name stays registered until the file is dropped.
    ///
    /// # Errors
    ///
    /// As [`TempFile::new_in`].
    pub fn anonymous(stem: &str) -> io::Result<Self> {
        let mut temp = Self::new_in(&std::env::temp_dir(), stem)?;
        if cfg!(unix) {
            temp.unlink();
        }
        Ok(temp)
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The open file, to write.
    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Renames the file onto `target` (atomically, within one file system); the name leaves the
    /// registry with it.
    ///
    /// # Errors
    ///
    /// What `rename` reports; the temporary file is then removed when dropped.
    pub fn persist(mut self, target: &Path) -> io::Result<()> {
        let mut names = registry();
        std::fs::rename(&self.path, target)?;
        deregister(&mut names, &self.path);
        self.named = false;
        Ok(())
    }

    /// Removes the file's name, keeping it open (its data lives until it is closed, on Unix).
    fn unlink(&mut self) {
        let mut names = registry();
        if std::fs::remove_file(&self.path).is_ok() {
            deregister(&mut names, &self.path);
            self.named = false;
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.named {
            let mut names = registry();
            let _ = std::fs::remove_file(&self.path);
            deregister(&mut names, &self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(path: &Path) -> bool {
        registry().iter().any(|p| p == path)
    }

    #[test]
    fn a_name_is_registered_exactly_while_the_file_has_it() {
        let dir = std::env::temp_dir().join(format!("xla-shape-temp-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let temp = TempFile::new_in(&dir, "out").unwrap();
        let path = temp.path.clone();
        assert!(path.exists() && registered(&path));
        drop(temp);
        assert!(!path.exists() && !registered(&path));

        let temp = TempFile::new_in(&dir, "out").unwrap();
        let path = temp.path.clone();
        let target = dir.join("out");
        temp.persist(&target).unwrap();
        assert!(target.exists() && !path.exists() && !registered(&path));

        // A long name is cut to fit the file system's 255 bytes, at a character boundary.
        let long = "é".repeat(200);
        let temp = TempFile::new_in(&dir, &long).unwrap();
        let name = temp.path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.len() <= 255 && name.starts_with(&format!(".{}.", "é".repeat(100))), "{name}");
        drop(temp);

        let temp = TempFile::anonymous("spool").unwrap();
        assert_eq!(temp.named, !cfg!(unix));
        assert_eq!(temp.path.exists(), !cfg!(unix));
        drop(temp);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
