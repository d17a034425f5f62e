//! Ways of putting 1 GiB of computed bytes into a new file (issue 36, item 4; docs/relayout.md
//! "The command line"): each copies the input (read from a shared mapping, as the tool reads
//! it) into a new output, as the tool's parts would, by one of
//!
//! * `write BUF CHUNK`: a buffer of BUF bytes filled with `memcpy`, then `write` calls of at most
//!   CHUNK bytes (the tool: BUF 16 MiB, CHUNK 128 KiB; before issue 36, CHUNK = BUF);
//! * `fwrite BUF CHUNK`: the same after `fallocate` of the whole output (the tool now);
//! * `map`: `ftruncate`, a shared writable mapping of the output, `memcpy` into it (every page
//!   a write fault); `mappop`: the same with `MAP_POPULATE`; `fmap`: after `fallocate`.
//!
//!     rustc -O --edition 2021 benches/peers/write_paths.rs -o target/write_paths
//!     target/write_paths MODE IN OUT [BUF [CHUNK]]     # prints MODE and the seconds
//!
//! `benches/peers/write_paths.sh` alternates them with `cp`. Linux only: the system calls are
//! declared here, so the program needs no crate.
use std::ffi::c_void;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;

extern "C" {
    fn mmap(addr: *mut c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> i32;
    fn fallocate(fd: i32, mode: i32, off: i64, len: i64) -> i32;
}
const PROT_READ: i32 = 1;
const PROT_WRITE: i32 = 2;
const MAP_SHARED: i32 = 1;
const MAP_POPULATE: i32 = 0x8000;

fn map(file: &File, len: usize, prot: i32, flags: i32) -> *mut u8 {
    // SAFETY: a new mapping of `len` bytes of an open file; checked below.
    let p = unsafe { mmap(std::ptr::null_mut(), len, prot, flags, file.as_raw_fd(), 0) };
    assert!(p as isize != -1, "mmap: {}", std::io::Error::last_os_error());
    p.cast()
}

fn preallocate(file: &File, len: usize) {
    // SAFETY: a plain system call on an open file descriptor.
    let r = unsafe { fallocate(file.as_raw_fd(), 0, 0, len as i64) };
    assert!(r == 0, "fallocate: {}", std::io::Error::last_os_error());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, mode, input, output, rest @ ..] = args.as_slice() else {
        panic!("usage: write_paths MODE IN OUT [BUF [CHUNK]]")
    };
    let buf_len: usize = rest.first().map_or(16 << 20, |b| b.parse().unwrap());
    let chunk: usize = rest.get(1).map_or(buf_len, |c| c.parse().unwrap());
    let start = std::time::Instant::now();
    let input = File::open(input).unwrap();
    let len = usize::try_from(input.metadata().unwrap().len()).unwrap();
    let src = map(&input, len, PROT_READ, MAP_SHARED);
    // SAFETY: the mapping is `len` bytes, read-only, and lives until the process ends.
    let src = unsafe { std::slice::from_raw_parts(src, len) };
    let mut out = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(output).unwrap();
    match mode.as_str() {
        "write" | "fwrite" => {
            if mode == "fwrite" {
                preallocate(&out, len);
            }
            let mut buf = vec![0u8; buf_len];
            for part in src.chunks(buf_len) {
                buf[..part.len()].copy_from_slice(part);
                for piece in buf[..part.len()].chunks(chunk) {
                    out.write_all(piece).unwrap();
                }
            }
        }
        "map" | "mappop" | "fmap" => {
            if mode == "fmap" {
                preallocate(&out, len);
            } else {
                out.set_len(len as u64).unwrap();
            }
            let flags = if mode == "mappop" { MAP_SHARED | MAP_POPULATE } else { MAP_SHARED };
            let dst = map(&out, len, PROT_READ | PROT_WRITE, flags);
            // SAFETY: the output's writable mapping of `len` bytes, unmapped below.
            let slice = unsafe { std::slice::from_raw_parts_mut(dst, len) };
            for (d, s) in slice.chunks_mut(buf_len).zip(src.chunks(buf_len)) {
                d.copy_from_slice(s);
            }
            // SAFETY: unmaps the mapping made above, no longer used.
            unsafe { munmap(dst.cast(), len) };
        }
        other => panic!("unknown mode {other}"),
    }
    drop(out);
    println!("{mode} {:.3}", start.elapsed().as_secs_f64());
}
