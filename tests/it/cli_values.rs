//! `xla-shape values`: the literals of HLO modules, snapshots and bare `LiteralProto`s, in
//! XLA's text, as typed JSON and as `.npy` files (fixtures: tests/fixtures/literals/).

use std::path::Path;

use prost::Message;
use xla_shape::literal::make_array_literal;
use xla_shape::proto::LiteralProto;
use xla_shape::{PrimitiveType, make};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/literals");

fn run(args: &[&str], stdin: &[u8]) -> (u8, String, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut command_line = vec!["xla-shape", "values"];
    command_line.extend_from_slice(args);
    let status = xla_shape::cli::run(command_line, &mut &stdin[..], &mut stdout, &mut stderr);
    (status, String::from_utf8(stdout).unwrap(), String::from_utf8(stderr).unwrap())
}

#[test]
fn snapshot_lists_constants_arguments_and_result() {
    let (status, out, err) = run(&["--type", "snapshot", &format!("{DIR}/snapshot.pb")], b"");
    assert_eq!((status, err.as_str()), (0, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "main.1/constant.13: f32[2,3]{1,0} { { 1.5, 4, -9.75 }, { 1.6e-07, 2.5e+11, 36.6 } }");
    assert!(lines.contains(&"main.1/constant.20: pred[3]{0} {1, 0, 1}"));
    assert!(lines.contains(&"main.1/constant.21: c64[2]{0} {(1, 2), (-0, -0.5)}"));
    assert!(lines.contains(&"main.1/constant.24: s4[3]{0} {-8, 7, 1}"));
    assert_eq!(lines[lines.len() - 3], "arguments[0]: f32[2,3]{1,0} { { 1.5, 4, -9.75 }, { 1.6e-07, 2.5e+11, 36.6 } }");
    assert_eq!(lines[lines.len() - 2], "arguments[1]: f32[3]{0} {0.1, -2.5, 0}");
    // 24 elements: elided as XLA does beyond 10, unless asked for all.
    assert_eq!(lines[lines.len() - 1], "result: u8[2,3,4]{2,1,0} {...}");
    let (_, all, _) = run(&["--type", "snapshot", "--all", &format!("{DIR}/snapshot.pb")], b"");
    assert!(all.ends_with("result: u8[2,3,4]{2,1,0} { { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 } }, { { 12, 13, 14, 15 }, { 16, 17, 18, 19 }, { 20, 21, 22, 23 } } }\n"), "{all}");
    let (_, limited, _) = run(&["--type", "snapshot", "--limit", "2", &format!("{DIR}/snapshot.pb")], b"");
    assert!(limited.contains("arguments[1]: f32[3]{0} {...}\n"));
}

#[test]
fn module_from_stdin_matches_xla_text() {
    let bytes = std::fs::read(format!("{DIR}/jax_compiled.pb")).unwrap();
    let (status, out, _) = run(&[], &bytes);
    assert_eq!(status, 0);
    let text = std::fs::read_to_string(format!("{DIR}/jax_compiled.hlo.txt")).unwrap();
    // Every printed constant appears in XLA's own text of the module. (The instruction's shape
    // may differ from the literal's: `s4[3]{0:E(4)}` holds a literal of `s4[3]{0}`, as XLA's
    // `Literal` drops element sizes.)
    for line in out.lines() {
        let (site, rest) = line.split_once(": ").unwrap();
        let instruction = site.rsplit('/').next().unwrap();
        let (shape, values) = rest.split_once(' ').unwrap();
        let written = text.lines().find(|l| l.trim_start().starts_with(&format!("%{instruction} = "))).unwrap();
        assert!(written.contains(&format!(" constant({values})")), "{line}");
        assert!(written.contains(shape.split('{').next().unwrap()), "{line}");
    }
}

#[test]
fn bare_literal_and_typed_json() {
    let shape = make::make_shape_with_dense_layout(PrimitiveType::F32, &[2, 3], &[0, 1]).unwrap();
    let values = [1.5f32, f32::NAN, -9.75, 1.6e-7, f32::NEG_INFINITY, 36.6];
    let proto = make_array_literal(shape.as_array().unwrap(), &values).unwrap();
    let bytes = proto.encode_to_vec();
    let (status, out, _) = run(&["--type", "literal"], &bytes);
    assert_eq!(status, 0);
    assert_eq!(out, "literal: f32[2,3]{0,1} { { 1.5, nan, -9.75 }, { 1.6e-07, -inf, 36.6 } }\n");
    let (status, out, _) = run(&["--type", "literal", "--json"], &bytes);
    assert_eq!(status, 0);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let value = &json["literals"][0]["value"];
    assert_eq!(value["element_type"], "f32");
    assert_eq!(value["dimensions"], serde_json::json!([2, 3]));
    assert_eq!(value["values"], serde_json::json!([1.5, "nan", -9.75, 1.6e-7, "-inf", 36.6]));

    let pred =
        make_array_literal(make::make_shape(PrimitiveType::PRED, &[2]).unwrap().as_array().unwrap(), &[true, false])
            .unwrap();
    let (_, out, _) = run(&["--type", "literal", "--json"], &pred.encode_to_vec());
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["literals"][0]["value"]["values"], serde_json::json!([true, false]));
}

#[test]
fn invalid_literals_fail_with_their_path() {
    let shape = make::make_shape(PrimitiveType::S32, &[3]).unwrap().into_proto();
    let proto = LiteralProto { shape: Some(shape), s32s: vec![1, 2], ..LiteralProto::default() };
    let (status, out, err) = run(&["--type", "literal"], &proto.encode_to_vec());
    assert_eq!(status, 1);
    assert_eq!(
        out,
        "literal: s32[3]{0}  [invalid: invalid literal at s32s: expected 3 elements in literalproto field s32s, has 2]\n"
    );
    assert!(err.starts_with("error: 1 invalid literal(s); first: literal: invalid literal at s32s"), "{err}");
    // Garbage and empty input.
    assert_eq!(run(&["--type", "literal"], &[0xff]).0, 1);
    assert_eq!(run(&["--type", "literal"], &[]).0, 1);
    // An unknown field inside a literal is named on stderr; the values still print.
    let mut bytes = make_array_literal(make::make_shape(PrimitiveType::U8, &[1]).unwrap().as_array().unwrap(), &[7u8])
        .unwrap()
        .encode_to_vec();
    bytes.extend_from_slice(&[0x98, 0x06, 0x01]);
    let (status, out, err) = run(&["--type", "literal"], &bytes);
    assert_eq!((status, out.as_str()), (0, "literal: u8[1]{0} {7}\n"));
    assert_eq!(err, "warning: literal / unknown field 99 (varint) at <root>\n");
}

/// `.npy` header and data: numpy's `descr` and `shape`, values row-major.
#[test]
fn npy_files() {
    let tmp = tempfile::TempDir::new().unwrap();
    let dir = tmp.path().join("npy");
    let (status, _, err) =
        run(&["--type", "snapshot", "--npy", dir.to_str().unwrap(), &format!("{DIR}/snapshot.pb")], b"");
    assert_eq!(status, 0);
    assert!(err.contains("numpy has no bf16 type"), "{err}");
    let file = std::fs::read(dir.join("arguments.0.npy")).unwrap();
    assert!(file.starts_with(b"\x93NUMPY"));
    let header = String::from_utf8_lossy(&file[..128]);
    assert!(header.contains("'descr': '<f4'") && header.contains("'shape': (2, 3, )"), "{header}");
    let data: Vec<f32> = file[file.len() - 24..].chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(data, [1.5, 4.0, -9.75, 1.6e-7, 2.5e11, 36.6]);
    assert!(Path::new(&dir.join("result.npy")).exists());
    assert!(!dir.join("main.1.constant.16.npy").exists(), "bf16 has no numpy type");
}

#[test]
fn lines_reads_one_file_per_line() {
    let paths = format!("{DIR}/snapshot.pb\n{DIR}/missing.pb\n");
    let (status, out, _) = run(&["--type", "snapshot", "--lines", "--limit", "0"], paths.as_bytes());
    assert_eq!(status, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with(&format!("{DIR}/snapshot.pb: main.1/constant.13: f32[2,3]{{1,0}} {{...}}; ")),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("; result: u8[2,3,4]{2,1,0} {...}"));
    assert!(lines[1].starts_with("error: "), "{}", lines[1]);
    let (status, out, _) = run(&["--type", "snapshot", "--lines", "--json"], format!("{DIR}/snapshot.pb\n").as_bytes());
    assert_eq!(status, 0);
    let json: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(json["literals"].as_array().unwrap().len(), 16);
}
