//! The binary interrupted (issue 31, item 3; `docs/relayout.md` rules 17 and 21): SIGINT, SIGTERM
//! and SIGHUP sent to a child `xla-shape` in the middle of every command that writes files end it
//! by that signal with no temporary file left and nothing half-written under a final name (an
//! output already complete stays); an input truncated while mapped is exit 1 naming it, with no
//! zeros written and no temporary file left; and a run of every writing command, spools included,
//! leaves the temporary directory empty.
//!
//! Each test makes the child wait where the test wants it — on a FIFO it reads or writes, which
//! the test holds open — and polls the directory (or reads the output) for the state that says
//! the child is there before it signals: no test depends on how long anything takes.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use tempfile::TempDir;

/// The signals, by `kill -s` name and number.
const SIGNALS: [(&str, i32); 3] = [("INT", 2), ("TERM", 15), ("HUP", 1)];

/// The binary with `TMPDIR` set to `tmp`, no standard input or output, stderr captured.
fn binary(tmp: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xla-shape"));
    command.env("TMPDIR", tmp).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Whether `name` is a temporary file's (`.NAME.PID.K.tmp`).
fn is_temporary(name: &str) -> bool {
    name.starts_with('.') && has_extension(name, "tmp")
}

fn has_extension(name: &str, extension: &str) -> bool {
    Path::new(name).extension().is_some_and(|e| e == extension)
}

/// The child's stderr, once it has ended.
fn stderr(child: &mut Child) -> String {
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    err
}

/// One step of a poll: the state the test waits for is observable, so the length of the pause
/// only sets how often it is looked at.
fn pause() {
    std::thread::sleep(std::time::Duration::from_millis(1));
}

/// Fails the test if the child has ended (a FIFO it should open would otherwise wait forever).
fn alive(child: &mut Child) {
    if let Some(status) = child.try_wait().unwrap() {
        panic!("the child ended first ({status}): {}", stderr(child));
    }
}

/// The FIFO opened for writing without blocking, once the child has opened it for reading; its
/// writes do not block either ([`feed`]).
fn fifo_writer(path: &Path, child: &mut Child) -> File {
    loop {
        match File::options().write(true).custom_flags(libc::O_NONBLOCK).open(path) {
            Ok(file) => return file,
            // No reader yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => panic!("{}: {e}", path.display()),
        }
        alive(child);
        pause();
    }
}

/// Writes all of `bytes` to a non-blocking FIFO the child reads.
fn feed(fifo: &mut File, mut bytes: &[u8], child: &mut Child) {
    while !bytes.is_empty() {
        match fifo.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                alive(child);
                pause();
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// The FIFO opened for reading without blocking (the child's open for writing then returns).
fn fifo_reader(path: &Path) -> File {
    File::options().read(true).custom_flags(libc::O_NONBLOCK).open(path).unwrap()
}

/// The next bytes the child writes to a non-blocking FIFO; 0 once it has ended and all is read.
fn take(fifo: &mut File, buf: &mut [u8], child: &mut Child) -> usize {
    loop {
        match fifo.read(buf) {
            Ok(0) if child.try_wait().unwrap().is_some() => return 0,
            // Not opened by the child yet (or between its writes).
            Ok(0) => {}
            Ok(n) => return n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
        pause();
    }
}

/// Everything `child` writes into the FIFO `fifo`, truncating `input` to 4 KiB once 1 MiB has
/// come through (the output's length tells whether it came that far).
fn read_truncating(fifo: &Path, child: &mut Child, input: &Path) -> Vec<u8> {
    let mut reader = fifo_reader(fifo);
    let (mut got, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
    let mut truncated = false;
    loop {
        let n = take(&mut reader, &mut buf, child);
        if n == 0 {
            return got;
        }
        got.extend_from_slice(&buf[..n]);
        if !truncated && got.len() >= 1 << 20 {
            File::options().write(true).open(input).unwrap().set_len(4096).unwrap();
            truncated = true;
        }
    }
}

/// Polls `dir` until `ready` holds of its names (the child is then where the test wants it),
/// and returns them; fails if the child ends first.
fn wait_for(dir: &Path, child: &mut Child, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
    loop {
        let now = names(dir);
        if ready(&now) {
            return now;
        }
        alive(child);
        pause();
    }
}

/// Whether this process ignores `signal` (then so does a child, which keeps it ignored).
fn ignored(signal: i32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap_or(0);
    mask >> (signal - 1) & 1 == 1
}

/// Sends `name` to the child and checks that it ended by that signal.
fn interrupt(child: &mut Child, name: &str, number: i32) {
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-s", name, &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(number), "SIG{name}: {status}: {}", stderr(child));
}

/// A `shards` run writing `out/device-1.bin`, a FIFO: once it has written a byte there (and
/// so holds `device-0.bin`'s temporary file), the signal; after it only the FIFO is left.
fn interrupt_at_device_1(child: &mut Child, out: &Path, (name, number): (&str, i32)) {
    let mut reader = fifo_reader(&out.join("device-1.bin"));
    assert_eq!(take(&mut reader, &mut [0u8; 1], child), 1);
    let now = names(out);
    assert!(now.iter().any(|n| is_temporary(n) && n.starts_with(".device-0.bin.")), "SIG{name}: {now:?}");
    interrupt(child, name, number);
    drop(reader);
    assert_eq!(names(out), ["device-1.bin"], "SIG{name}");
}

/// The signals this process does not ignore (a child would ignore the others, as it should).
fn signals() -> impl Iterator<Item = (&'static str, i32)> {
    SIGNALS.into_iter().filter(|&(_, number)| !ignored(number))
}

/// `relayout -o` reading a FIFO: its temporary output exists from the start and a spool holds
/// the input read so far; each signal removes the temporary file, and the spool (unlinked from
/// the start) leaves nothing in the temporary directory.
#[test]
fn an_interrupted_relayout_leaves_no_temporary_file() {
    for (name, number) in signals() {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let (fifo, out) = (dir.path().join("in.fifo"), dir.path().join("out.bin"));
        mkfifo(&fifo);
        std::fs::write(&out, b"old").unwrap();
        let mut child = binary(tmp.path())
            .args(["relayout", "--max-memory", "2", "f32[1024,1024]{1,0}", "f32[1024,1024]{0,1}"])
            .arg(&fifo)
            .arg("-o")
            .arg(&out)
            .spawn()
            .unwrap();
        // Opening the FIFO waits for the child to open it; 2 of its 4 MiB pass half the bound
        // (1 MiB), so the rest is spooled; then the child waits for more.
        let mut input = fifo_writer(&fifo, &mut child);
        feed(&mut input, &vec![7u8; 2 << 20], &mut child);
        let seen = wait_for(dir.path(), &mut child, |n| n.iter().any(|n| is_temporary(n)));
        assert_eq!(seen.len(), 3, "{seen:?}");
        interrupt(&mut child, name, number);
        assert_eq!(names(dir.path()), ["in.fifo", "out.bin"], "SIG{name}");
        assert_eq!(std::fs::read(&out).unwrap(), b"old", "SIG{name}: the old output changed");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}: the temporary directory");
    }
}

/// `draw -o` opens its output before it reads the shape (`--file`, a FIFO nobody writes): the
/// temporary SVG is removed.
#[test]
fn an_interrupted_draw_leaves_no_temporary_file() {
    for (name, number) in signals() {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let fifo = dir.path().join("shape.fifo");
        mkfifo(&fifo);
        let mut child = binary(tmp.path())
            .args(["draw", "--file"])
            .arg(&fifo)
            .arg("-o")
            .arg(dir.path().join("x.svg"))
            .spawn()
            .unwrap();
        wait_for(dir.path(), &mut child, |n| n.iter().any(|n| is_temporary(n)));
        interrupt(&mut child, name, number);
        assert_eq!(names(dir.path()), ["shape.fifo"], "SIG{name}");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// `shards --split`: device 0's file is complete (renamed into place) when the child waits to
/// write device 1's, a FIFO; the signal leaves device 0's file whole, no other, and no temporary
/// file.
#[test]
fn an_interrupted_split_keeps_the_complete_files() {
    let global: Vec<u8> = (0..128u8).collect();
    for (name, number) in signals() {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let input = dir.path().join("global.bin");
        std::fs::write(&input, &global).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        mkfifo(&out.join("device-1.bin"));
        let mut child = binary(tmp.path())
            .args(["shards", "f32[8,4]{1,0}", "{devices=[4,1]<=[4]}", "--split"])
            .arg(&input)
            .arg("--out-dir")
            .arg(&out)
            .spawn()
            .unwrap();
        wait_for(&out, &mut child, |n| n.iter().any(|n| n == "device-0.bin"));
        interrupt(&mut child, name, number);
        assert_eq!(names(&out), ["device-0.bin", "device-1.bin"], "SIG{name}");
        assert_eq!(std::fs::read(out.join("device-0.bin")).unwrap(), global[..32], "SIG{name}");
        assert!(std::fs::symlink_metadata(out.join("device-1.bin")).unwrap().file_type().is_fifo());
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// `shards --assemble` into a FIFO: the child is part-way through the output (the test has read
/// some of it and holds the rest back); the signal leaves the device files and no other file.
#[test]
fn an_interrupted_assemble_leaves_no_file() {
    let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let (shape, sharding) = ("u8[1024,1024]{1,0}", "{devices=[2,1]<=[2]}");
    let input = dir.path().join("global.bin");
    std::fs::write(&input, vec![3u8; 1 << 20]).unwrap();
    let parts = dir.path().join("parts");
    let split = binary(tmp.path())
        .args(["shards", shape, sharding, "--split"])
        .arg(&input)
        .arg("--out-dir")
        .arg(&parts)
        .output();
    assert!(split.unwrap().status.success());
    for (name, number) in signals() {
        let out = dir.path().join("out.fifo");
        mkfifo(&out);
        let mut child = binary(tmp.path())
            .args(["shards", shape, sharding, "--assemble"])
            .arg(&parts)
            .arg("--output")
            .arg(&out)
            .spawn()
            .unwrap();
        // 1 MiB cannot fit in the FIFO: once a byte is read, the child is writing the rest.
        let mut reader = fifo_reader(&out);
        assert_eq!(take(&mut reader, &mut [0u8; 1], &mut child), 1);
        interrupt(&mut child, name, number);
        drop(reader);
        std::fs::remove_file(&out).unwrap();
        assert_eq!(names(dir.path()), ["global.bin", "parts"], "SIG{name}");
        assert_eq!(names(&parts), ["device-0.bin", "device-1.bin"], "SIG{name}");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// `shards --split` through parts (issue 31, item 5): two replicas written part by part, device
/// 0's file a temporary one holding the first part and device 1's a FIFO the test has read a
/// byte of (the child is writing the rest of the part into it); each signal removes the
/// temporary file and leaves no `device-0.bin`.
#[test]
fn an_interrupted_streaming_split_leaves_no_temporary_file() {
    let (shape, sharding) = ("f32[512,512]{1,0}", "{devices=[1,2,2]<=[4] last_tile_dim_replicate}");
    for (name, number) in signals() {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let input = dir.path().join("global.bin");
        std::fs::write(&input, pattern(1 << 20)).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        mkfifo(&out.join("device-1.bin"));
        let mut child = binary(tmp.path())
            .args(["shards", shape, sharding, "--max-memory", "1", "--split"])
            .arg(&input)
            .arg("--out-dir")
            .arg(&out)
            .spawn()
            .unwrap();
        interrupt_at_device_1(&mut child, &out, (name, number));
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// `shards --split` with its input truncated mid-run, through parts (replicas of column halves of
/// a tiled layout: the mapped input) and through byte runs copied file to file (row halves of a
/// dense one): device 0's file is a
/// FIFO the test reads; once it has 1 MiB the input shrinks to a page. Exit 1 naming the input,
/// every byte written is the split's, and no temporary file is left.
#[test]
fn a_split_input_truncated_while_read_is_exit_1_naming_it() {
    for (shape, sharding) in [
        ("f32[2048,2048]{1,0:T(8,128)}", "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"),
        ("f32[2048,2048]{1,0}", "{devices=[2,1]<=[2]}"),
    ] {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let source = pattern(16 << 20);
        let expected = {
            let global: xla_shape::ShapeBuf = shape.parse().unwrap();
            let array = global.as_array().unwrap();
            let sharding = xla_shape::sharding::parse(sharding).unwrap();
            let placement = sharding.placement(&array, None).unwrap();
            let form = xla_shape::sharding::buffers::ShardForm::Exact;
            let plan = xla_shape::sharding::buffers::ShardBuffers::from_placement(array, &placement, &form).unwrap();
            plan.split(&source).unwrap().swap_remove(0).1
        };
        let input = dir.path().join("in.bin");
        std::fs::write(&input, &source).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let fifo = out.join("device-0.bin");
        mkfifo(&fifo);
        let mut child = binary(tmp.path())
            .args(["shards", shape, sharding, "--max-memory", "1", "--split"])
            .arg(&input)
            .arg("--out-dir")
            .arg(&out)
            .spawn()
            .unwrap();
        let got = read_truncating(&fifo, &mut child, &input);
        assert!(got.len() >= 1 << 20, "{sharding}: the output ended before 1 MiB");
        let status = child.wait().unwrap();
        let err = stderr(&mut child);
        assert_eq!(status.code(), Some(1), "{sharding}: {status}: {err}");
        assert_eq!(err, format!("error: {} shrank while being read\n", input.display()), "{sharding}");
        assert!(got.len() < expected.len(), "{sharding}: the whole shard was written");
        assert!(got == expected[..got.len()], "{sharding}: zeros were written");
        assert_eq!(names(&out), ["device-0.bin"], "{sharding}");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "{sharding}");
    }
}

/// `values --npy` reading HLO text from a FIFO: the first constant's `.npy` is written (complete,
/// renamed into place) while the child waits for the rest of the module; the signal leaves it
/// whole and no temporary file.
#[test]
fn an_interrupted_values_keeps_the_complete_npy() {
    for (name, number) in signals() {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let (fifo, npy) = (dir.path().join("module.fifo"), dir.path().join("npy"));
        mkfifo(&fifo);
        let mut child =
            binary(tmp.path()).args(["values", "--format", "text", "--npy"]).arg(&npy).arg(&fifo).spawn().unwrap();
        let mut module = fifo_writer(&fifo, &mut child);
        let text = b"HloModule m\n\nENTRY %main () -> f32[2] {\n  %c0 = f32[2]{0} constant({1.5, -2})\n";
        feed(&mut module, text, &mut child);
        let seen = wait_for(dir.path(), &mut child, |n| n.iter().any(|n| n == "npy"));
        assert_eq!(seen, ["module.fifo", "npy"]);
        let written = wait_for(&npy, &mut child, |n| n.iter().any(|n| has_extension(n, "npy")));
        interrupt(&mut child, name, number);
        assert_eq!(names(&npy), written, "SIG{name}");
        let [file] = written.as_slice() else { panic!("{written:?}") };
        let bytes = std::fs::read(npy.join(file)).unwrap();
        assert!(bytes.starts_with(b"\x93NUMPY"), "{file}");
        assert!(bytes.ends_with(&[1.5f32.to_le_bytes(), (-2f32).to_le_bytes()].concat()), "{file}");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

/// Bytes whose every 4 KiB page differs.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|k| u8::try_from((k * 7 + k / 4093) % 251).unwrap()).collect()
}

/// A mapped input truncated while the relayout reads it, its output a FIFO the test reads: the
/// child is mid-run (it has written 1 MiB of 16, in parts of 256 KiB) when the file shrinks to a
/// page; it is exit 1 naming the file, and every byte it wrote is the relayout's, none the zeros
/// it read past the new end. (The FIFOs of these tests are opened without blocking, so a child
/// that fails early fails the test instead of leaving it waiting.)
#[test]
fn an_input_truncated_while_mapped_is_exit_1_naming_it() {
    let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let (from, to) = ("f32[2048,2048]{1,0}", "f32[2048,2048]{0,1}");
    let source = pattern(16 << 20);
    let expected = {
        let (a, b): (xla_shape::ShapeBuf, xla_shape::ShapeBuf) = (from.parse().unwrap(), to.parse().unwrap());
        let plan = xla_shape::relayout::RelayoutPlan::new(a.as_array().unwrap(), b.as_array().unwrap()).unwrap();
        plan.run_to_vec(&source).unwrap()
    };
    let (input, out) = (dir.path().join("in.bin"), dir.path().join("out.fifo"));
    std::fs::write(&input, &source).unwrap();
    mkfifo(&out);
    let mut child = binary(tmp.path())
        .args(["relayout", "--max-memory", "1", "--threads", "1", from, to])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .spawn()
        .unwrap();
    let got = read_truncating(&out, &mut child, &input);
    assert!(got.len() >= 1 << 20, "the output ended before 1 MiB");
    let status = child.wait().unwrap();
    let err = stderr(&mut child);
    assert_eq!(status.code(), Some(1), "{status}: {err}");
    assert_eq!(err, format!("error: {} shrank while being read\n", input.display()));
    assert!(got.len() < expected.len(), "the whole output was written");
    assert!(got == expected[..got.len()], "zeros were written");
    assert_eq!(names(dir.path()), ["in.bin", "out.fifo"]);
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}

/// The same into a regular file: once the temporary output holds a part, the input (a sparse
/// 1 GiB file) shrinks to nothing; exit 1 naming it, the temporary file removed, the old output
/// as it was.
#[test]
fn an_input_truncated_while_mapped_leaves_no_temporary_file() {
    let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let (input, out) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
    File::create(&input).unwrap().set_len(1 << 30).unwrap();
    std::fs::write(&out, b"old").unwrap();
    let mut child = binary(tmp.path())
        .args(["relayout", "--max-memory", "1", "--threads", "1", "f32[16384,16384]{1,0}", "f32[16384,16384]{0,1}"])
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .spawn()
        .unwrap();
    let written = |n: &[String]| {
        n.iter().any(|n| is_temporary(n) && std::fs::metadata(dir.path().join(n)).is_ok_and(|m| m.len() > 0))
    };
    wait_for(dir.path(), &mut child, written);
    File::options().write(true).open(&input).unwrap().set_len(0).unwrap();
    let status = child.wait().unwrap();
    let err = stderr(&mut child);
    assert_eq!(status.code(), Some(1), "{status}: {err}");
    assert!(err.contains(&format!("{} shrank while being read", input.display())), "{err}");
    assert_eq!(names(dir.path()), ["in.bin", "out.bin"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}

/// Every command that writes a file or spools, run to its end (and one failing), with `TMPDIR`
/// a fresh directory: it is empty afterwards. The spools are a relayout's piped input past half
/// of `--max-memory` and `hlo`'s listing past 4 MiB.
#[test]
fn the_commands_leave_nothing_in_the_temporary_directory() {
    let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
    let d = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let run = |args: &[&str], stdin: Vec<u8>| {
        let mut child = binary(tmp.path()).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || pipe.write_all(&stdin));
        let output = child.wait_with_output().unwrap();
        feeder.join().unwrap().unwrap();
        (output.status.code(), output.stdout.len(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    // A piped input of 4 MiB with --max-memory 2: spooled past 1 MiB.
    let (status, len, err) =
        run(&["relayout", "--max-memory", "2", "f32[1024,1024]{1,0}", "f32[1024,1024]{0,1}"], vec![1; 4 << 20]);
    assert_eq!((status, len), (Some(0), 4 << 20), "{err}");
    let (status, _, err) = run(
        &["relayout", "--max-memory", "2", "f32[1024,1024]{1,0}", "f32[1024,1024]{0,1}", "-o", &d("a.bin")],
        vec![1; 4 << 20],
    );
    assert_eq!(status, Some(0), "{err}");
    // Short: a failure after the output was opened.
    let (status, _, _) = run(&["relayout", "f32[2,3]", "f32[2,3]{0,1}", "-o", &d("b.bin")], vec![1; 23]);
    assert_eq!(status, Some(1));
    // A listing of more than 4 MiB.
    let mut text =
        String::from("HloModule big\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n");
    for i in 0..220_000 {
        writeln!(text, "  %n.{i} = f32[2]{{0}} negate(%p)").unwrap();
    }
    text.push_str("}\n");
    let (status, len, err) = run(&["hlo"], text.into_bytes());
    assert_eq!(status, Some(0), "{err}");
    assert!(len > 4 << 20, "{len}");
    let snapshot = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/literals/snapshot.pb");
    let (status, _, err) = run(&["values", "--type", "snapshot", "--npy", &d("npy"), snapshot], Vec::new());
    assert_eq!(status, Some(0), "{err}");
    std::fs::write(d("global.bin"), [5u8; 128]).unwrap();
    let (status, _, err) = run(
        &["shards", "f32[8,4]", "{devices=[4,1]<=[4]}", "--split", &d("global.bin"), "--out-dir", &d("parts")],
        vec![],
    );
    assert_eq!(status, Some(0), "{err}");
    let (status, _, err) = run(
        &["shards", "f32[8,4]", "{devices=[4,1]<=[4]}", "--assemble", &d("parts"), "--output", &d("back.bin")],
        vec![],
    );
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(std::fs::read(d("back.bin")).unwrap(), [5u8; 128]);
    let (status, _, err) = run(&["draw", "bf16[16,256]{1,0:T(8,128)(2,1)}", "-o", &d("x.svg")], vec![]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(names(tmp.path()), Vec::<String>::new());
    let left: Vec<String> = names(dir.path()).into_iter().filter(|n| is_temporary(n)).collect();
    assert_eq!(left, Vec::<String>::new());
}

/// `shards --reshard` through parts (issue 39): 2×2 blocks of a tiled layout resharded to two
/// replicas of the whole array, part by part; device 0's output a temporary file holding the
/// first part and device 1's a FIFO the test has read a byte of. Each signal removes the
/// temporary file and leaves no `device-0.bin`; the source files are untouched.
#[test]
fn an_interrupted_reshard_leaves_no_temporary_file() {
    let shape = "f32[512,512]{1,0:T(8,128)}";
    for (name, number) in signals() {
        let (dir, tmp) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let (input, out) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::create_dir(&input).unwrap();
        for device in 0..4 {
            std::fs::write(input.join(format!("device-{device}.bin")), pattern(256 << 10)).unwrap();
        }
        std::fs::create_dir(&out).unwrap();
        mkfifo(&out.join("device-1.bin"));
        let mut child = binary(tmp.path())
            .args(["shards", shape, "{devices=[2,2]<=[4]}", "--max-memory", "1", "--reshard"])
            .arg(&input)
            .args(["--to", "{replicated}", "--to-devices", "2", "--out-dir"])
            .arg(&out)
            .spawn()
            .unwrap();
        interrupt_at_device_1(&mut child, &out, (name, number));
        assert_eq!(names(&input).len(), 4, "SIG{name}");
        assert_eq!(names(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}
