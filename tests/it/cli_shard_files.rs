//! `xla-shape shards --split / --assemble` in-process (issue 24, `docs/shard-buffers.md` §5): every JAX fixture's global
//! buffer split into `device-D.bin` files holding exactly JAX's shard bytes, assembled back; bad
//! sets of files are exit 1 naming the device and the file.

use std::fs;

use serde_json::Value;
use xla_shape::cli;

use crate::common::bytes_from_hex;

fn run(args: &[&str]) -> (u8, String, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut command = vec!["xla-shape", "shards"];
    command.extend_from_slice(args);
    let status = cli::run(command, &mut &b""[..], &mut stdout, &mut stderr);
    (status, String::from_utf8(stdout).unwrap(), String::from_utf8(stderr).unwrap())
}

/// A fresh directory, removed when dropped (even when the test fails).
fn dir() -> tempfile::TempDir {
    tempfile::TempDir::new().unwrap()
}

fn s(path: &std::path::Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn jax_buffers_split_into_device_files_and_back() {
    let text = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sharding/shard_buffers.jsonl"))
        .unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        if case["status"] != "ok" {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let tmp = dir();
        let work = tmp.path();
        let global = bytes_from_hex(case["global_hex"].as_str().unwrap());
        let input = work.join("global.bin");
        fs::write(&input, &global).unwrap();
        let (shape, sharding) = (case["shape"].as_str().unwrap(), case["hlo_sharding"].as_str().unwrap());
        let out = work.join("shards");
        let (status, _, err) = run(&[shape, sharding, "--devices", "8", "--split", s(&input), "--out-dir", s(&out)]);
        assert_eq!(status, 0, "{name}: {err}");
        for shard in case["shards"].as_array().unwrap() {
            let file = out.join(format!("device-{}.bin", shard["device"]));
            assert_eq!(fs::read(&file).unwrap(), bytes_from_hex(shard["hex"].as_str().unwrap()), "{name}: {file:?}");
        }
        assert_eq!(fs::read_dir(&out).unwrap().count(), 8, "{name}");
        let back = work.join("back.bin");
        let (status, _, err) = run(&[shape, sharding, "--devices", "8", "--assemble", s(&out), "--output", s(&back)]);
        assert_eq!(status, 0, "{name}: {err}");
        assert_eq!(fs::read(&back).unwrap(), global, "{name}");
        checked += 1;
    }
    assert_eq!(checked, 18);
}

#[test]
fn padded_shards_have_the_tile_shape() {
    // f32[5,3] over 2 row tiles: device 1 holds rows 3..5 of a 3-row tile, the last row zero.
    let tmp = dir();
    let work = tmp.path();
    let global: Vec<u8> = (1..=15u32).flat_map(|v| f32::to_le_bytes(f32::from(u16::try_from(v).unwrap()))).collect();
    let input = work.join("g.bin");
    fs::write(&input, &global).unwrap();
    let out = work.join("out");
    let args = ["f32[5,3]", "{devices=[2,1]0,1}", "--pad-to-tile"];
    let (status, _, err) = run(&[&args[..], &["--split", s(&input), "--out-dir", s(&out)]].concat());
    assert_eq!(status, 0, "{err}");
    let device1 = fs::read(out.join("device-1.bin")).unwrap();
    assert_eq!(device1.len(), 36);
    assert_eq!(device1[..24], global[36..]);
    assert_eq!(device1[24..], [0; 12]);
    let back = work.join("back.bin");
    let (status, _, err) = run(&[&args[..], &["--assemble", s(&out), "--output", s(&back)]].concat());
    assert_eq!((status, fs::read(&back).unwrap()), (0, global), "{err}");
}

#[test]
fn bad_files_are_exit_1_naming_the_device() {
    let tmp = dir();
    let work = tmp.path();
    let input = work.join("g.bin");
    fs::write(&input, [7u8; 16]).unwrap();
    let out = work.join("out");
    let args = ["s8[4,4]", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"];
    let split = |input: &str| run(&[&args[..], &["--split", input, "--out-dir", s(&out)]].concat());
    let assemble = || run(&[&args[..], &["--assemble", s(&out), "--output", s(&work.join("back.bin"))]].concat());
    assert_eq!(split(s(&input)).0, 0);

    fs::write(work.join("short.bin"), [7u8; 15]).unwrap();
    let (status, _, err) = split(s(&work.join("short.bin")));
    assert_eq!(status, 1);
    assert!(err.contains("global buffer has 15 bytes, expected 16"), "{err}");

    fs::write(out.join("device-3.bin"), [1u8; 9]).unwrap();
    let (status, _, err) = assemble();
    assert_eq!(status, 1);
    assert!(err.contains("buffer of device 3 has 9 bytes, expected 8") && err.contains("device-3.bin"), "{err}");

    fs::write(out.join("device-3.bin"), [1u8; 8]).unwrap();
    let (status, _, err) = assemble();
    assert_eq!(status, 1);
    assert!(err.contains("buffer of device 3 differs from its replica on device 2 at byte 0"), "{err}");

    fs::remove_file(out.join("device-3.bin")).unwrap();
    let (status, _, err) = assemble();
    assert_eq!(status, 1);
    assert!(err.contains("no buffer for device 3"), "{err}");

    fs::write(out.join("device-3.bin"), [7u8; 8]).unwrap();
    fs::write(out.join("device-4.bin"), [7u8; 8]).unwrap();
    let (status, _, err) = assemble();
    assert_eq!(status, 1);
    assert!(err.contains("device-4.bin is not a device of the sharding"), "{err}");
    fs::remove_file(out.join("device-4.bin")).unwrap();
    assert_eq!(assemble().0, 0);

    // --split without --out-dir is a usage error (clap's).
    assert_eq!(run(&[&args[..], &["--split", s(&input)]].concat()).0, 2);
}
