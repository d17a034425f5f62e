//! `shards --split` and `--assemble` in bounded memory (issue 31, item 5; `docs/shard-buffers.md`
//! §5): the files the streaming command writes are byte for byte those of the library's
//! in-memory `ShardBuffers::split` and `assemble` (the command's implementation before it
//! streamed), for dense layouts (byte runs copied file to file) and every other (parts), with
//! parts far smaller than the files; and the process's anonymous memory stays under
//! `--max-memory` on arrays many times larger.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::cli_relayout::process::watch;

use tempfile::TempDir;
use xla_shape::ShapeBuf;
use xla_shape::sharding::DeviceId;
use xla_shape::sharding::buffers::{ShardBuffers, ShardForm};

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-shape"))
}

/// Runs the binary; exit status and stderr.
fn run(args: &[&str]) -> (i32, String) {
    let out = binary().args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Deterministic bytes, no two pages alike.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|k| u8::try_from((k * 13 + k / 4093) % 251).unwrap()).collect()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The library's plan for a case.
fn plan(shape: &str, sharding: &str, devices: Option<u64>, padded: bool) -> ShardBuffers {
    let shape: ShapeBuf = shape.parse().unwrap();
    let array = shape.as_array().unwrap();
    let sharding = xla_shape::sharding::parse(sharding).unwrap();
    let placement = sharding.placement(&array, devices).unwrap();
    let form = if padded { ShardForm::padded_to_tile(&placement) } else { ShardForm::Exact };
    ShardBuffers::from_placement(array, &placement, &form).unwrap()
}

/// (shape, sharding, --devices, --pad-to-tile): dense layouts whose shards are long byte runs
/// (copied file to file), dense ones with short runs, tiled, sub-byte, uneven and padded, empty
/// shards (tiles past the end), partially and fully replicated, named.
const CASES: [(&str, &str, Option<u64>, bool); 14] = [
    ("f32[512,256]{1,0}", "{devices=[8,1]<=[8]}", None, false),
    ("f32[64,65536]{1,0}", "{devices=[1,4]<=[4]}", None, false),
    ("u8[1024,1024]{0,1}", "{devices=[1,4]<=[4]}", None, false),
    ("f32[512,256]{1,0}", "{devices=[2,4]<=[8]}", None, false),
    ("f32[512,256]{0,1}", "{devices=[2,4]<=[8]}", None, false),
    ("f32[512,256]{1,0}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", None, false),
    ("f32[2048,256]{1,0}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", None, false),
    ("f32[509,250]{1,0}", "{devices=[4,3]<=[12]}", None, false),
    ("u8[5,65536]{1,0}", "{devices=[8,1]<=[8]}", None, false),
    ("f32[509,250]{1,0}", "{devices=[4,3]<=[12]}", None, true),
    ("bf16[512,256]{1,0:T(8,128)(2,1)}", "{devices=[2,4]<=[8]}", None, false),
    ("s4[512,256]{1,0:E(4)}", "{devices=[2,2]<=[4]}", None, false),
    ("f32[512,256]{1,0}", r#"{mesh["x"=2,"y"=4], [{"x"}, {"y"}]}"#, None, false),
    ("f32[512,256]{1,0}", "{replicated}", Some(3), false),
];

/// Each case split by the binary in parts of 256 KiB (`--max-memory 1`) gives the in-memory
/// split's files, and assembled back the in-memory assembly's bytes; nothing else is left in
/// the directories.
#[test]
fn split_and_assemble_write_the_in_memory_bytes() {
    for (shape, sharding, devices, padded) in CASES {
        let case = format!("{shape} {sharding}");
        let plan = plan(shape, sharding, devices, padded);
        let global = pattern(usize::try_from(plan.global_len()).unwrap());
        let shards = plan.split(&global).unwrap();
        let expected = plan.assemble(shards.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        let dir = TempDir::new().unwrap();
        let (input, parts, back) = (dir.path().join("in.bin"), dir.path().join("parts"), dir.path().join("back.bin"));
        std::fs::write(&input, &global).unwrap();
        let devices = devices.map(|d| d.to_string());
        let mut args = vec!["shards", shape, sharding, "--max-memory", "1"];
        if let Some(d) = &devices {
            args.extend(["--devices", d]);
        }
        if padded {
            args.push("--pad-to-tile");
        }
        let split = [&args[..], &["--split", s(&input), "--out-dir", s(&parts)]].concat();
        let (status, err) = run(&split);
        assert_eq!(status, 0, "{case}: {err}");
        let mut names: Vec<String> =
            std::fs::read_dir(&parts).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        let mut wanted: Vec<String> = shards.iter().map(|(d, _)| format!("device-{d}.bin")).collect();
        wanted.sort();
        assert_eq!(names, wanted, "{case}");
        for (device, bytes) in &shards {
            let written = std::fs::read(parts.join(format!("device-{device}.bin"))).unwrap();
            assert!(written == *bytes, "{case}: device {device}'s file differs from the in-memory split");
        }
        let assemble = [&args[..], &["--assemble", s(&parts), "--output", s(&back)]].concat();
        let (status, err) = run(&assemble);
        assert_eq!(status, 0, "{case}: {err}");
        assert!(std::fs::read(&back).unwrap() == expected, "{case}: the assembly differs from the in-memory one");
        let mut left: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, ["back.bin", "in.bin", "parts"], "{case}");
    }
}

/// Replicas that differ past the first chunk of the comparison: exit 1 naming both devices and
/// the byte, and no output (nor temporary file) left.
#[test]
fn differing_replicas_are_found_in_any_chunk() {
    let (shape, sharding) = ("f32[1024,1024]{1,0}", "{replicated}");
    let dir = TempDir::new().unwrap();
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    let global = pattern(4 << 20);
    std::fs::write(parts.join("device-0.bin"), &global).unwrap();
    let mut other = global.clone();
    other[3 << 20] ^= 1;
    std::fs::write(parts.join("device-1.bin"), &other).unwrap();
    let back = dir.path().join("back.bin");
    let (status, err) =
        run(&["shards", shape, sharding, "--devices", "2", "--assemble", s(&parts), "--output", s(&back)]);
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("buffer of device 1 differs from its replica on device 0 at byte 3145728"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "an output was left");
}

/// Runs the binary, sampling its anonymous memory; its peak in kB.
pub(crate) fn peak_of(args: &[&str]) -> u64 {
    let child = binary().args(args).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let watcher = watch(child.id(), Arc::clone(&done));
    let out = child.wait_with_output().unwrap();
    done.store(true, Ordering::Relaxed);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    watcher.join().unwrap()
}

/// 128 MiB split into 8 and assembled back with `--max-memory 8`, through byte runs (rows, 2×4
/// blocks of a dense layout) and through parts (a tiled layout; replicas): the files are right
/// and the process's
/// anonymous memory never exceeds 16 MiB, where the in-memory path held the array twice (256
/// MiB).
#[test]
fn split_and_assemble_memory_stays_under_the_bound() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("big.bin");
    let len = 128usize << 20;
    {
        let mut file = std::fs::File::create(&input).unwrap();
        for chunk in pattern(len).chunks(4 << 20) {
            file.write_all(chunk).unwrap();
        }
    }
    for (shape, sharding) in [
        ("f32[4096,8192]{1,0}", "{devices=[8,1]<=[8]}"),
        ("f32[4096,8192]{1,0}", "{devices=[2,4]<=[8]}"),
        ("f32[4096,8192]{1,0}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
        ("f32[4096,8192]{1,0:T(8,128)}", "{devices=[2,4]<=[8]}"),
        ("f32[4096,8192]{1,0:T(8,128)}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
    ] {
        let (parts, back) = (dir.path().join("parts"), dir.path().join("back.bin"));
        let split =
            peak_of(&["shards", shape, sharding, "--max-memory", "8", "--split", s(&input), "--out-dir", s(&parts)]);
        let assemble =
            peak_of(&["shards", shape, sharding, "--max-memory", "8", "--assemble", s(&parts), "--output", s(&back)]);
        let plan = plan(shape, sharding, None, false);
        let first = std::fs::read(parts.join("device-7.bin")).unwrap();
        let global = std::fs::read(&input).unwrap();
        let mut out = vec![0u8; first.len()];
        plan.split_range(DeviceId(7), &global, &mut out, 0..first.len()).unwrap();
        assert!(out == first, "{sharding}: device 7's file");
        assert!(std::fs::read(&back).unwrap() == global, "{sharding}: the assembly");
        drop(global);
        if cfg!(target_os = "linux") {
            assert!(split > 0 && assemble > 0, "no sample of /proc");
            assert!(split <= 16 << 10, "{sharding}: --split's RssAnon peaked at {split} kB");
            assert!(assemble <= 16 << 10, "{sharding}: --assemble's RssAnon peaked at {assemble} kB");
        }
        std::fs::remove_dir_all(&parts).unwrap();
        std::fs::remove_file(&back).unwrap();
    }
}
