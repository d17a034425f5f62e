//! Outputs on a disk too small (issue 36, item 4): `relayout -o`, `shards --split` and
//! `--assemble`, through byte runs and through parts, run as a child whose file size limit
//! (`ulimit -f`, with `SIGXFSZ` ignored, so that the kernel answers `EFBIG` as a full disk answers
//! `ENOSPC`) is far below their outputs' size. Each is exit 1 with `cannot write`, leaves no file
//! (not even a temporary one) and an existing output as it was. The output's blocks are reserved
//! before any work (`OutFile::reserve`), so the failure comes first; the limit only binds files
//! written, not the inputs read.

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

/// The file size limit in the shell's blocks (512 bytes for dash, 1024 for bash): at most
/// 1 MiB, under every output below (4 MiB).
const LIMIT_BLOCKS: &str = "1000";

/// `xla-shape ARGS` under the file size limit, with `TMPDIR` set to `tmp`: its exit code and
/// stderr.
fn limited(tmp: &Path, args: &[&str]) -> (Option<i32>, String) {
    let script = format!("trap '' XFSZ; ulimit -f {LIMIT_BLOCKS}; exec \"$0\" \"$@\"");
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_xla-shape"))
        .args(args)
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// `xla-shape ARGS` with no limit, which must succeed.
fn unlimited(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_xla-shape")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|k| u8::try_from((k * 7 + k / 251) % 251).unwrap()).collect()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn assert_too_large(what: &str, (code, err): &(Option<i32>, String)) {
    assert_eq!(*code, Some(1), "{what}: {err}");
    assert!(err.starts_with("error: cannot write ") && err.contains("File too large"), "{what}: {err}");
}

#[test]
fn relayout_to_a_disk_too_small_leaves_nothing() {
    let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let input = dir.path().join("in.bin");
    std::fs::write(&input, pattern(4 << 20)).unwrap();
    let out = dir.path().join("out.bin");
    let args = ["relayout", "f32[1024,1024]{0,1}", "f32[1024,1024]{1,0}", s(&input), "-o", s(&out)];
    assert_too_large("a new output", &limited(tmp.path(), &args));
    assert_eq!(names(dir.path()), ["in.bin"]);
    std::fs::write(&out, b"old").unwrap();
    assert_too_large("an existing output", &limited(tmp.path(), &args));
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["in.bin", "out.bin"]);
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}

/// Dense row blocks (byte runs written from the mapped input) and a tiled layout (parts), split
/// and assembled, each shard 4 MiB.
#[test]
fn split_and_assemble_on_a_disk_too_small_leave_nothing() {
    for shape in ["f32[2048,2048]{1,0}", "f32[2048,2048]{1,0:T(8,128)}"] {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let sharding = "{devices=[2,2]<=[4]}";
        let input = dir.path().join("in.bin");
        std::fs::write(&input, pattern(16 << 20)).unwrap();
        let shards = dir.path().join("shards");
        unlimited(&["shards", shape, sharding, "--split", s(&input), "--out-dir", s(&shards)]);
        let out = dir.path().join("out");
        let split = ["shards", shape, sharding, "--split", s(&input), "--out-dir", s(&out)];
        assert_too_large(shape, &limited(tmp.path(), &split));
        assert_eq!(names(&out), Vec::<String>::new(), "{shape}");
        let back = dir.path().join("back.bin");
        let assemble = ["shards", shape, sharding, "--assemble", s(&shards), "--output", s(&back)];
        assert_too_large(shape, &limited(tmp.path(), &assemble));
        std::fs::write(&back, b"old").unwrap();
        assert_too_large(shape, &limited(tmp.path(), &assemble));
        assert_eq!(std::fs::read(&back).unwrap(), b"old", "{shape}");
        assert_eq!(names(dir.path()), ["back.bin", "in.bin", "out", "shards"], "{shape}");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "{shape}");
        // Without the limit the same command assembles the input's bytes.
        unlimited(&assemble);
        assert!(std::fs::read(&back).unwrap() == std::fs::read(&input).unwrap(), "{shape}");
    }
}
