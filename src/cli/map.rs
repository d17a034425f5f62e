//! Read-only memory maps of input files (`memmap2`), and what happens when one shrinks
//! underneath: the command-line tool's one `unsafe` module, beside the library's
//! `src/relayout/stream.rs`. The library never maps anything: it takes `&[u8]`; mapping a file
//! is the tool's way of handing it one without reading a file larger than memory into memory.
//!
//! **What can go wrong, and what the tool does about it.** A mapping shows the file's pages as
//! they are *now*: the operating system does not stop another process from writing to the file
//! or truncating it while the tool reads it, and Rust's `&[u8]` promises that the bytes do not
//! change. The tool cannot prevent another process from doing that (no lock is mandatory on
//! Linux); it narrows the window and limits the damage:
//!
//! * it maps only regular files, only after checking their length from their metadata, and
//!   only for the time of one relayout, read-only (a private mapping would not help: Linux
//!   shows other processes' writes through it too, until a page is copied on write);
//! * the bytes are only copied (the relayout kernels never branch on element values or derive
//!   an offset from them), so a file changed underneath gives output that mixes old and new
//!   contents, never an access outside the mapping;
//! * a file truncated underneath makes the pages past its new end unreadable: reading one
//!   raises `SIGBUS`. On Linux the tool *watches* every mapping: a `SIGBUS` handler (installed
//!   once, on the first mapping, through `signal-hook-registry`) looks the faulting address up
//!   in a fixed table of watched ranges; inside one, it marks that mapping as shrunk and
//!   replaces the pages from the faulting one to the mapping's end by zero-filled anonymous
//!   pages (one `mmap` with `MAP_FIXED`), and the read resumes and reads zeros. The caller asks
//!   [`Mapped::shrank`] before it writes anything computed from the bytes
//!   (`data::Source::check`), and fails with `FILE shrank while being read`; the output's
//!   temporary file is then removed as on any failure. A `SIGBUS` outside every watched range
//!   (or sent by a process) gets the default action, as without the handler.
//!
//! The handler only reads atomics and calls `mmap` (a system call that takes no lock in user
//! space; the registry saves and restores `errno`). Elsewhere than Linux, or when the table is
//! full, a mapping is not watched and a truncation kills the process by `SIGBUS` as before.
//! Users who cannot rule out writers use `--no-mmap`: the input is then read into memory with
//! ordinary reads (the safe fallback, also taken under Miri and when a file cannot be mapped),
//! at the cost of memory as large as the input.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::ops::Deref;

/// A read-only mapping of part of a file.
pub struct Mapped {
    map: memmap2::Mmap,
    /// Where the `SIGBUS` handler records that the file shrank, if it watches this mapping.
    watch: Option<&'static watch::Slot>,
    /// The file's name, for messages.
    name: String,
}

impl Mapped {
    /// Whether the file was truncated underneath while mapped: some of the bytes read since
    /// were zeros, not the file's.
    pub fn shrank(&self) -> bool {
        self.watch.is_some_and(watch::Slot::shrank)
    }

    /// The name given to [`map`].
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // Before the fields drop: the range leaves the table before it is unmapped.
        if let Some(slot) = self.watch {
            slot.release();
        }
    }
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}

/// Maps `len` bytes of `file` from byte `offset`, read-only, watched for truncation (`name`
/// names it in messages); `Ok(None)` under Miri (whose checks cover the safe path only) and for
/// an empty range, which `mmap` refuses. The caller has checked from the file's metadata that
/// the range is inside the file.
///
/// # Errors
///
/// What `mmap` reports (a file system that cannot map, too little address space).
pub fn map(file: &File, offset: u64, len: u64, name: &str) -> io::Result<Option<Mapped>> {
    if cfg!(miri) || len == 0 {
        return Ok(None);
    }
    let len = usize::try_from(len).map_err(|_| io::Error::other("the input does not fit in the address space"))?;
    let mut options = memmap2::MmapOptions::new();
    options.offset(offset).len(len);
    // SAFETY: the mapping is read-only, of a regular file the process opened for
    // reading, and lives no longer than the `Mapped` that owns it. What `memmap2` cannot rule
    // out is another process writing to or truncating the file meanwhile; the module's docs say
    // what follows (mixed old and new bytes, or zeros and `shrank`, or SIGBUS when unwatched;
    // never an access outside the mapping, since the bytes are only copied) and `--no-mmap`
    // avoids it.
    let map = unsafe { options.map(file)? };
    let start = map.as_ptr() as usize;
    let watch = watch::watch(start, start.saturating_add(map.len()));
    Ok(Some(Mapped { map, watch, name: name.to_owned() }))
}

/// The table of watched ranges and the `SIGBUS` handler that reads it (Linux).
#[cfg(any(target_os = "linux", target_os = "android"))]
mod watch {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

    /// Mappings watched at once; a mapping made while all are taken is not watched (the tool
    /// maps one input at a time; only in-process callers running many relayouts at once meet
    /// the limit).
    const SLOTS: usize = 16;

    /// One watched range `start..end` of addresses. A free slot has `start == 0`. It is claimed
    /// by setting `start` (compare-and-swap from 0), then clearing `shrank`, then setting `end`;
    /// released by clearing `end`, then `start`. The handler reads `start`, then `end`: a slot
    /// being claimed or released shows an `end` of 0 (an empty range) or its own.
    pub struct Slot {
        start: AtomicUsize,
        end: AtomicUsize,
        shrank: AtomicBool,
    }

    impl Slot {
        const fn new() -> Self {
            Self { start: AtomicUsize::new(0), end: AtomicUsize::new(0), shrank: AtomicBool::new(false) }
        }

        pub fn shrank(&self) -> bool {
            self.shrank.load(SeqCst)
        }

        pub fn release(&self) {
            self.end.store(0, SeqCst);
            self.start.store(0, SeqCst);
        }
    }

    static TABLE: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];

    /// The system's page size, set before the handler is installed.
    static PAGE: AtomicUsize = AtomicUsize::new(0);

    /// Whether the handler is installed (tried once per process).
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    fn install() -> bool {
        *INSTALLED.get_or_init(|| {
            // SAFETY: `sysconf` reads a constant of the system; it has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let Some(page) = usize::try_from(page).ok().filter(|p| p.is_power_of_two()) else {
                return false;
            };
            PAGE.store(page, SeqCst);
            // SAFETY: `signal` with `SIG_DFL` only restores the default action of SIGBUS. The
            // registry calls the handler it finds before its own actions, and the one Rust's
            // runtime installs (to name a stack overflow) resets the signal to its default action
            // when the fault is not one: the next watched fault would then kill the process.
            // Linux reports stack overflows by SIGSEGV, whose handler stays.
            if unsafe { libc::signal(libc::SIGBUS, libc::SIG_DFL) } == libc::SIG_ERR {
                return false;
            }
            // SAFETY: `on_bus` is async-signal-safe: it reads and writes atomics only, calls
            // `mmap` (a bare system call) and signal-hook's async-signal-safe
            // `emulate_default_handler`, allocates nothing, takes no lock and cannot panic (no
            // indexing, no unchecked arithmetic).
            unsafe { signal_hook_registry::register_sigaction(libc::SIGBUS, on_bus) }.is_ok()
        })
    }

    /// Watches `start..end`: the slot that will say whether the file shrank, or `None` when the
    /// handler cannot be installed or every slot is taken.
    pub fn watch(start: usize, end: usize) -> Option<&'static Slot> {
        if start == 0 || !install() {
            return None;
        }
        let slot = TABLE.iter().find(|slot| slot.start.compare_exchange(0, start, SeqCst, SeqCst).is_ok())?;
        slot.shrank.store(false, SeqCst);
        slot.end.store(end, SeqCst);
        Some(slot)
    }

    /// The `SIGBUS` handler: a read past the end of a watched mapping's file marks every watched
    /// range holding the address as shrunk and maps zero pages from the faulting page to the
    /// end of the shortest of them, so that the read resumes; anything else gets the default
    /// action.
    fn on_bus(info: &libc::siginfo_t) {
        // Only a fault of the kernel's says where it was (a signal sent by a process says nothing).
        let address = if info.si_code == libc::BUS_ADRERR {
            // SAFETY: for a SIGBUS the kernel raised with `BUS_ADRERR`, `si_addr` is the faulting
            // address (the union member the kernel filled).
            unsafe { info.si_addr() as usize }
        } else {
            0
        };
        let mut end = usize::MAX;
        for slot in &TABLE {
            let start = slot.start.load(SeqCst);
            let stop = slot.end.load(SeqCst);
            if start != 0 && start <= address && address < stop {
                slot.shrank.store(true, SeqCst);
                end = end.min(stop);
            }
        }
        let page = PAGE.load(SeqCst);
        if end == usize::MAX || page == 0 {
            // Not a watched read: what would have happened without the handler (the process
            // ends by SIGBUS).
            let _ = signal_hook::low_level::emulate_default_handler(libc::SIGBUS);
            return;
        }
        // `page` is a power of two, and `from <= address < end`.
        let from = address & !(page.wrapping_sub(1));
        let len = end.wrapping_sub(from);
        // SAFETY: `from..end` lies inside the mapping that faulted: `from` is the faulting
        // page, at or after the start of the watched range's first page (the mapping starts on a
        // page), and `end` is the end of a watched range holding the address, whose mapping
        // covers every page up to it and is still mapped (a range leaves the table before it is
        // unmapped, and a thread is reading it). Replacing its pages by zero-filled private
        // anonymous ones, read-only like the mapping, changes what the slice reads (zeros, which
        // the relayout only copies and the caller discards once `shrank` is set) and nothing
        // else of the process.
        let mapped = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            let _ = signal_hook::low_level::emulate_default_handler(libc::SIGBUS);
        }
    }
}

/// Elsewhere, mappings are not watched: a truncated input ends the process by `SIGBUS`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod watch {
    /// Never made.
    pub enum Slot {}

    impl Slot {
        pub fn shrank(&self) -> bool {
            match *self {}
        }

        pub fn release(&self) {
            match *self {}
        }
    }

    pub fn watch(_start: usize, _end: usize) -> Option<&'static Slot> {
        None
    }
}
