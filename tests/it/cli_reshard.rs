//! `xla-shape shards SHAPE SHARDING --reshard IN_DIR --to SHARDING2 --out-dir OUT_DIR` (issue 39,
//! `docs/shard-buffers.md` §9): the files the binary writes are byte for byte the library's
//! `ReshardPlan::run` (itself checked against split ∘ assemble in `reshard.rs`), through byte runs
//! copied file to file and through parts; `--only-devices`, `--plan --json`; bad sets of files
//! are exit 1 and write nothing; memory stays under `--max-memory`.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tempfile::TempDir;
use xla_shape::ShapeBuf;
use xla_shape::sharding::DeviceId;
use xla_shape::sharding::buffers::{ShardBuffers, ShardForm};
use xla_shape::sharding::reshard::ReshardPlan;

use super::cli_shard_stream::peak_of;

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xla-shape"))
}

/// Runs the binary; exit status, stdout and stderr.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = binary().args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|k| u8::try_from((k * 13 + k / 4093) % 251).unwrap()).collect()
}

fn side(shape: &str, sharding: &str, devices: Option<u64>, padded: bool) -> ShardBuffers {
    let shape: ShapeBuf = shape.parse().unwrap();
    let array = shape.as_array().unwrap();
    let placement = xla_shape::sharding::parse(sharding).unwrap().placement(&array, devices).unwrap();
    let form = if padded { ShardForm::padded_to_tile(&placement) } else { ShardForm::Exact };
    ShardBuffers::from_placement(array, &placement, &form).unwrap()
}

/// (name, what spoils the input directory, extra arguments, the message).
type BadCase<'a> = (&'a str, &'a dyn Fn(&Path), &'a [&'a str], &'a str);

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().into_string().unwrap()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// (shape, sharding, target shape, target sharding, --devices, --to-devices, padded either side).
type Case = (&'static str, &'static str, &'static str, &'static str, Option<u64>, Option<u64>, (bool, bool));

const CASES: [Case; 10] = [
    // Byte runs of 4 KiB to 64 KiB, written from the mapped inputs (`writev`).
    ("f32[16,4096]", "{devices=[2,4]<=[8]}", "f32[16,4096]", "{devices=[8,1]<=[8]}", None, None, (false, false)),
    ("f32[16,4096]", "{devices=[2,4]<=[8]}", "f32[16,4096]", "{devices=[1,4]0,1,2,3}", None, None, (false, false)),
    (
        "f32[16,4096]",
        "{devices=[1,4]0,1,2,3}",
        "f32[16,4096]",
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        None,
        None,
        (false, false),
    ),
    // Parts: short runs, another target layout, tiles, sub-byte, padding, replication, maximal.
    ("f32[64,96]", "{devices=[2,4]<=[8]}", "f32[64,96]", "{devices=[1,8]7,6,5,4,3,2,1,0}", None, None, (false, false)),
    (
        "f32[64,256]{1,0:T(8,128)}",
        "{devices=[2,2]<=[4]}",
        "f32[64,256]{0,1}",
        "{devices=[4,1]<=[4]}",
        None,
        None,
        (false, false),
    ),
    (
        "s4[30,50]{1,0:E(4)}",
        "{devices=[3,2]<=[6]}",
        "s4[30,50]{0,1:E(4)}",
        "{devices=[2,3]<=[3,2]T(1,0)}",
        None,
        None,
        (true, false),
    ),
    ("bf16[33,17]", "{replicated}", "bf16[33,17]", "{devices=[4,1]<=[4]}", Some(3), Some(4), (false, true)),
    ("s8[40,8]", "{devices=[4,1]<=[4]}", "s8[40,8]", "{maximal device=6}", None, Some(8), (false, false)),
    (
        "f32[512,256]",
        r#"{mesh["x"=2,"y"=4], [{"x"}, {"y"}]}"#,
        "f32[512,256]",
        "{devices=[8,1]<=[8]}",
        None,
        None,
        (false, false),
    ),
    // Byte runs of 64 KiB and more (whole source shards of 128 KiB), copied file to file.
    ("f32[64,4096]", "{devices=[8,1]<=[8]}", "f32[64,4096]", "{devices=[4,1]7,6,5,4}", None, None, (false, false)),
];

/// Every case resharded by the binary in parts of 256 KiB gives the library's bytes; only the
/// target files are written.
#[test]
fn reshard_writes_the_library_bytes() {
    for (a, from, b, to, n_from, n_to, (pad_from, pad_to)) in CASES {
        let case = format!("{a} {from} → {b} {to}");
        let source = side(a, from, n_from, pad_from);
        let target = side(b, to, n_to, pad_to);
        let global = pattern(usize::try_from(source.global_len()).unwrap());
        let shards = source.split(&global).unwrap();
        let plan = ReshardPlan::new(source, target).unwrap();
        let expected = plan.run(shards.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        let dir = TempDir::new().unwrap();
        let (input, output) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::create_dir(&input).unwrap();
        for (device, bytes) in &shards {
            std::fs::write(input.join(format!("device-{device}.bin")), bytes).unwrap();
        }
        let (n_from, n_to) = (n_from.map(|n| n.to_string()), n_to.map(|n| n.to_string()));
        let mut args = vec!["shards", a, from, "--reshard", s(&input), "--to", to, "--to-shape", b];
        args.extend(["--out-dir", s(&output), "--max-memory", "1"]);
        if let Some(n) = &n_from {
            args.extend(["--devices", n]);
        }
        if let Some(n) = &n_to {
            args.extend(["--to-devices", n]);
        }
        if pad_from {
            args.push("--pad-to-tile");
        }
        if pad_to {
            args.push("--to-pad-to-tile");
        }
        let (status, _, err) = run(&args);
        assert_eq!(status, 0, "{case}: {err}");
        let wanted: Vec<String> = {
            let mut w: Vec<String> = expected.iter().map(|(d, _)| format!("device-{d}.bin")).collect();
            w.sort();
            w
        };
        assert_eq!(names(&output), wanted, "{case}");
        for (device, bytes) in &expected {
            let written = std::fs::read(output.join(format!("device-{device}.bin"))).unwrap();
            assert!(written == *bytes, "{case}: device {device}'s file differs from the library's");
        }
        // --only-devices: the last target alone.
        let (last, bytes) = expected.last().unwrap();
        let only = dir.path().join("only");
        let last_text = last.to_string();
        let only_args = [&args[..], &["--only-devices", &last_text]].concat();
        let only_args: Vec<&str> = only_args.iter().map(|a| if *a == s(&output) { s(&only) } else { a }).collect();
        let (status, _, err) = run(&only_args);
        assert_eq!(status, 0, "{case}: {err}");
        assert_eq!(names(&only), [format!("device-{last}.bin")], "{case}");
        assert!(std::fs::read(only.join(format!("device-{last}.bin"))).unwrap() == *bytes, "{case}");
    }
}

#[test]
fn the_plan_is_printed_as_json_without_reading_files() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("nothing-here");
    let (status, out, err) = run(&[
        "shards",
        "f32[8,4]",
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
        "--reshard",
        s(&missing),
        "--to",
        "{devices=[4,1]4,5,6,7}",
        "--plan",
        "--json",
    ]);
    assert_eq!(status, 0, "{err}");
    let plan: Value = serde_json::from_str(&out).unwrap();
    let transfers = plan["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 4);
    assert_eq!(
        transfers[1],
        serde_json::json!({
            "target": 5, "source": 1, "replicas": [0, 1], "global_start": [2, 0], "extent": [2, 4],
            "source_start": [2, 0], "target_start": [0, 0], "elements": 8, "bytes": 32,
        })
    );
    let devices = plan["devices"].as_array().unwrap();
    let ids: Vec<u64> = devices.iter().map(|d| d["device"].as_u64().unwrap()).collect();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(devices[0]["bytes_out"], 32);
    assert_eq!(devices[0]["source_len"], 64);
    assert_eq!(devices[0]["target_len"], Value::Null);
    assert_eq!(devices[5]["bytes_in"], 32);
    assert_eq!(devices[5]["replicas_read"], 1);
    assert!(!missing.exists());
    // The same plan in words, and for one target.
    let (status, out, err) = run(&[
        "shards",
        "f32[8,4]",
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
        "--reshard",
        s(&missing),
        "--to",
        "{devices=[4,1]4,5,6,7}",
        "--plan",
        "--only-devices",
        "6",
    ]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(
        out,
        "device 6 <- device 2: global [4:6,0:4] from [0:2,0:4] to [0:2,0:4], 32 bytes (replicas 2,3)\n\
         device 2: 0 bytes in (0 transfers, 0 from replicas), 32 bytes out (1 transfers)\n\
         device 6: 32 bytes in (1 transfers, 1 from replicas), 0 bytes out (0 transfers)\n"
    );
}

/// A missing, extra or short file, replicas that differ, shapes or device sets that do not fit:
/// exit 1 naming the problem, and nothing written (the output directory is not even made).
#[test]
fn bad_input_is_exit_1_and_writes_nothing() {
    let (a, from, to) = ("u8[64,64]", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[1,2]<=[2]}");
    let source = side(a, from, None, false);
    let shards = source.split(&pattern(4096)).unwrap();
    let cases: [BadCase<'_>; 8] = [
        ("missing", &|d| std::fs::remove_file(d.join("device-2.bin")).unwrap(), &[], "no buffer for device 2"),
        ("extra", &|d| std::fs::write(d.join("device-9.bin"), b"").unwrap(), &[], "device-9.bin is not a device"),
        ("short", &|d| std::fs::write(d.join("device-1.bin"), [0u8; 10]).unwrap(), &[], "has 10 bytes, expected 2048"),
        (
            "replicas",
            &|d| std::fs::write(d.join("device-3.bin"), [7u8; 2048]).unwrap(),
            &[],
            "buffer of device 3 differs from its replica on device 2",
        ),
        ("shape", &|_| (), &["--to-shape", "u8[64,32]"], "dimensions[1] is 64 in the source and 32 in the target"),
        ("type", &|_| (), &["--to-shape", "s8[64,64]"], "the source's element type is u8, the target's s8"),
        ("devices", &|_| (), &["--to-devices", "4"], "should have 4 devices but has 2"),
        ("only", &|_| (), &["--only-devices", "0,5"], "device 5 is not a device of the target sharding"),
    ];
    for (name, spoil, extra, message) in cases {
        let dir = TempDir::new().unwrap();
        let (input, output) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::create_dir(&input).unwrap();
        for (device, bytes) in &shards {
            std::fs::write(input.join(format!("device-{device}.bin")), bytes).unwrap();
        }
        spoil(&input);
        let args =
            [&["shards", a, from, "--reshard", s(&input), "--to", to, "--out-dir", s(&output)][..], extra].concat();
        let (status, _, err) = run(&args);
        assert_eq!(status, 1, "{name}: {err}");
        assert!(err.to_lowercase().contains(&message.to_lowercase()), "{name}: {err}");
        assert!(!output.exists(), "{name}: the output directory was made");
    }
}

/// 128 MiB resharded with `--max-memory 8`, through byte runs (2×4 blocks to rows) and through
/// parts (a tiled source to row-major columns): the files are right and the anonymous memory
/// never passes 16 MiB.
#[test]
fn reshard_memory_stays_under_the_bound() {
    let dir = TempDir::new().unwrap();
    for (a, from, b, to) in [
        ("f32[4096,8192]", "{devices=[2,4]<=[8]}", "f32[4096,8192]", "{devices=[8,1]<=[8]}"),
        ("f32[4096,8192]{1,0:T(8,128)}", "{devices=[2,4]<=[8]}", "f32[4096,8192]", "{devices=[1,4]0,1,2,3}"),
    ] {
        let source = side(a, from, None, false);
        let (input, output) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::create_dir_all(&input).unwrap();
        let shard_len = usize::try_from(source.shard_len(DeviceId(0)).unwrap()).unwrap();
        for device in source.devices() {
            let mut bytes = pattern(shard_len);
            bytes[..8].copy_from_slice(&device.0.to_le_bytes());
            std::fs::write(input.join(format!("device-{device}.bin")), bytes).unwrap();
        }
        let peak = peak_of(&[
            "shards",
            a,
            from,
            "--reshard",
            s(&input),
            "--to",
            to,
            "--to-shape",
            b,
            "--out-dir",
            s(&output),
            "--max-memory",
            "8",
        ]);
        let target = side(b, to, None, false);
        let plan = ReshardPlan::new(source, target).unwrap();
        let files: Vec<(DeviceId, Vec<u8>)> = plan
            .source()
            .devices()
            .map(|d| (d, std::fs::read(input.join(format!("device-{d}.bin"))).unwrap()))
            .collect();
        let sources = plan.sources(files.iter().map(|(d, b)| (*d, b.as_slice()))).unwrap();
        let last = plan.target().devices().last().unwrap();
        let written = std::fs::read(output.join(format!("device-{last}.bin"))).unwrap();
        let mut expected = vec![0u8; written.len()];
        sources.target_into(last, &mut expected).unwrap();
        assert!(written == expected, "{a} {from} → {to}: device {last}'s file");
        if cfg!(target_os = "linux") {
            assert!(peak > 0, "no sample of /proc");
            assert!(peak <= 16 << 10, "{a} {from} → {to}: RssAnon peaked at {peak} kB");
        }
        std::fs::remove_dir_all(&input).unwrap();
        std::fs::remove_dir_all(&output).unwrap();
    }
}
