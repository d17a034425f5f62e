//! A real `--xla_dump_to` folder (`tests/fixtures/xla_dump/`, written by
//! `tools/fixtures/stablehlo.py`: a sharded JAX program and a single-device one, with
//! `--xla_dump_hlo_as_proto --xla_dump_hlo_as_text --xla_dump_hlo_snapshots`), every file read by
//! `hlo`, `info` and `values` with no flags: the `.hlo.pb` files are `HloProto`s and the snapshot
//! an `HloSnapshot`, told from the bytes (`docs/hlo.md`, "Which message").

use std::fs;

use serde_json::Value;
use xla_shape::hlo::{self, HloMessage};

use crate::common::run_cli as run;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/xla_dump");

/// Every file of the folder, with the message it holds (`None` for text) and the number of
/// computations of its module.
const FILES: [(&str, Option<HloMessage>, u64); 9] = [
    ("module_0000.jit__lambda.before_optimizations.hlo.pb", Some(HloMessage::Proto), 2),
    ("module_0000.jit__lambda.before_optimizations.txt", None, 2),
    ("module_0000.jit__lambda.cpu_after_optimizations.hlo.pb", Some(HloMessage::Proto), 6),
    ("module_0000.jit__lambda.cpu_after_optimizations.txt", None, 6),
    ("module_0002.jit__lambda.before_optimizations.hlo.pb", Some(HloMessage::Proto), 1),
    ("module_0002.jit__lambda.before_optimizations.txt", None, 1),
    ("module_0002.jit__lambda.cpu_after_optimizations.hlo.pb", Some(HloMessage::Proto), 2),
    ("module_0002.jit__lambda.cpu_after_optimizations.txt", None, 2),
    ("module_0002.jit__lambda.snapshot.-498289016.pb", Some(HloMessage::Snapshot), 2),
];

fn json(args: &[&str]) -> Value {
    let (status, out, err) = run(args, b"");
    assert_eq!(status, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// The host program shape's entries of a listing.
fn host(listing: &Value) -> Vec<(String, String)> {
    listing["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "host_program_shape")
        .map(|e| (e["site"].as_str().unwrap().to_owned(), e["shape"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn every_dumped_file_is_read_with_no_flags() {
    let mut names: Vec<String> =
        fs::read_dir(DIR).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let listed: Vec<&str> = FILES.iter().map(|(name, ..)| *name).collect();
    assert_eq!(names, listed, "the folder holds exactly the listed files");
    for (name, message, computations) in FILES {
        let path = format!("{DIR}/{name}");
        let bytes = fs::read(&path).unwrap();
        if let Some(message) = message {
            assert_eq!(hlo::detect(&bytes, Some(name)), Some(message), "{name}");
            // The bytes alone say it, without the name's hint.
            assert_eq!(hlo::detect(&bytes, None), Some(message), "{name}");
        }
        let listing = json(&["hlo", "--json", &path]);
        assert_eq!(listing["module"], "jit__lambda", "{name}");
        assert_eq!(listing["computations"], computations, "{name}");
        assert_eq!(listing["invalid"], 0, "{name}");
        // The proto lists the host program shape its text twin states.
        if message == Some(HloMessage::Proto) {
            let twin = json(&["hlo", "--json", &format!("{DIR}/{}", name.replace(".hlo.pb", ".txt"))]);
            assert_eq!(host(&listing), host(&twin), "{name}");
            assert_eq!(listing["counts"], twin["counts"], "{name}");
        }
        let info = json(&["info", "--json", &path]);
        assert_eq!(info["computations"], computations, "{name}");
    }
}

#[test]
fn a_snapshot_shows_its_arguments_and_result_with_no_flags() {
    let path = format!("{DIR}/{}", FILES[8].0);
    let (status, out, err) = run(&["values", &path], b"");
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("arguments[0]: f32[2,3]{1,0} { { 0, 1, 2 }, { 3, 4, 5 } }"), "{out}");
    assert!(out.contains("result: f32[2,3]{1,0}"), "{out}");
}

#[test]
fn a_wrong_type_says_which_reads_the_file() {
    let path = format!("{DIR}/{}", FILES[0].0);
    let (status, _, err) = run(&["hlo", "--type", "module", &path], b"");
    assert_eq!(status, 1);
    assert!(err.contains("string is not valid UTF-8"), "{err}");
    assert!(err.contains("the bytes read as an HloProto: give `--type proto`"), "{err}");
    let (status, _, err) = run(&["info", "--type", "snapshot", &path], b"");
    assert_eq!(status, 1);
    assert!(err.contains("`--type proto`"), "{err}");
    // Bytes none of the three reads: the error says so.
    let (status, _, err) = run(&["hlo"], &[0x0a, 0x02, 0x08]);
    assert_eq!(status, 1);
    assert!(err.contains("none of HloModuleProto, HloProto and HloSnapshot"), "{err}");
}
